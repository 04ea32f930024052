"""The live commands are team- and operator-side: they start without aws_cdk, and say which
botocore they need when the installed one predates the quota-share API."""

from __future__ import annotations

import subprocess
import sys

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live import queue_reader


@pytest.mark.parametrize("command", ["status", "explain", "estimate", "preview", "history"])
def test_help_runs_without_aws_cdk(command: str) -> None:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['quota-constructs', {command!r}, '--help']\n"
        "try:\n"
        "    runpy.run_module('quota_constructs', run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    assert exit.code == 0, exit.code\n"
        f"import quota_constructs.live.{command}\n"
        "assert not any(m == 'aws_cdk' or m.startswith('aws_cdk.') for m in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "--queue" in result.stdout


def test_an_old_botocore_is_named_with_the_version_needed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setattr(queue_reader, "LIVE_OPERATIONS", ("DescribeSomethingNewer",))
    assert cli(["status", "--queue", "training"]) == 2
    err = capsys.readouterr().err
    assert "DescribeSomethingNewer" in err and "botocore >= 1.42.72" in err
