"""Reviewer's held-out check: `quota-constructs` errors are one line naming the option, never a
traceback, for mistakes the CLI tests do not try."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def run(*args: str, cwd: Path) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "quota_constructs", *args, "--quiet"],
        capture_output=True, text=True, cwd=cwd, timeout=300,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
             "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"},
    )
    return done.returncode, [line for line in done.stderr.splitlines() if line.strip()]


@pytest.fixture(scope="module", name="workload")
def saved_workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("workload")
    path = where / "jobs.csv"
    code, _ = run("simulate", "--env", "prod", "--jobs", "60", "--save-workload", str(path),
                  "--out", str(where / "report"), cwd=where)
    assert code == 0
    return path


@pytest.mark.parametrize("args, names", [
    (("simulate", "--jobs", "20", "--out", "/proc/no-such-dir/report"), "/proc/no-such-dir"),
    (("simulate", "--jobs", "20", "--compare", "no_such_module:x"), "--compare"),
    (("simulate", "--jobs", "20", "--compare", "other=os:no_such_attribute"), "--compare"),
])
def test_simulate_errors_are_one_line(tmp_path: Path, args: tuple[str, ...], names: str) -> None:
    code, lines = run(*args, cwd=tmp_path)
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("error: ") and names in lines[0], lines


@pytest.mark.parametrize("extra, names", [
    (("--workers", "0"), "workers"),
    (("--max-simulations", "-1"), "max_simulations"),
    (("--screen-jobs", "-3"), "screen_jobs"),
    (("--holdout", "1"), "holdout"),
    (("--executor", "ray:x"), "--executor"),
    (("--declaration", "no_such_module:x"), "recommend: --declaration"),
])
def test_recommend_errors_are_one_line(
    tmp_path: Path, workload: Path, extra: tuple[str, ...], names: str
) -> None:
    if extra[0] == "--declaration":
        base: tuple[str, ...] = ("recommend",)
    else:
        base = ("recommend", "--env", "prod")
    code, lines = run(*base, "--workload", str(workload), "--target", "research:wait_p95<=4h",
                      "--no-report", "--out", str(tmp_path / "out"), *extra, cwd=tmp_path)
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("error: ") and names in lines[0], lines
