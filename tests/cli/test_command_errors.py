"""Errors of every command are one line naming what is wrong, exit status 2: option mistakes
argparse finds, and synthetic-workload options given with a workload file (once ignored)."""

from __future__ import annotations

from pathlib import Path

import pytest

from quota_constructs.cli import main as cli

WALKTHROUGH = Path(__file__).parents[2] / "examples" / "workloads" / "walkthrough.csv"


@pytest.mark.parametrize("extra, named", [
    (["--jobs", "100"], "--jobs"),
    (["--load", "1.2"], "--load"),
    (["--jobs", "100", "--load", "1.2", "--seed", "4"], "--jobs, --seed, --load"),
])
def test_synthetic_options_with_a_workload_file_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], named: str
) -> None:
    code = cli(["simulate", "--env", "dev", "--workload", str(WALKTHROUGH),
                "--out", str(tmp_path / "r"), "--quiet", *extra])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"error: simulate: {named} only shape a synthetic workload")
    assert f"--workload {WALKTHROUGH}" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("argv", [
    ["status"],
    ["explain", "--queue", "q"],
    ["history", "--queue", "q"],
    ["preview", "--queue", "q"],
    ["status", "--queue", "q", "--runnable-pages", "many"],
    ["simulate", "--jobs", "many"],
    ["simulate", "--env", "dev", "--declaration", "x.py:D"],
    ["recommend", "--env", "dev"],
])
def test_option_mistakes_are_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli(argv)
    assert exited.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"quota-constructs {argv[0]}: error: ")
    assert line.endswith(f"(see quota-constructs {argv[0]} --help)")
