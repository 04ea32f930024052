"""The ``quota-constructs`` dispatcher: commands by name, one-line errors, no aws_cdk."""

from __future__ import annotations

import subprocess
import sys

import pytest

from quota_constructs.cli import COMMANDS, main


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert f"  {name}" in out


def test_unknown_command_is_one_line_naming_the_known_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bogus"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "'bogus'" in err and "simulate" in err


def test_no_command_is_usage_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "usage:" in captured.err


def test_python_dash_m_runs_without_aws_cdk() -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['quota-constructs', '--help']\n"
        "try:\n"
        "    runpy.run_module('quota_constructs', run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        "assert not any(m == 'aws_cdk' or m.startswith('aws_cdk.') for m in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "simulate" in result.stdout
