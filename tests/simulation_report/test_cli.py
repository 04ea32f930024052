"""``python3 dev.py simulate``: declarations, workloads, progress, errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quota_constructs import CapacityLimit, QuotaConfigError, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation.cli import declaration_of, main, resolve
from stacks.launch import PROJECT_ROOT

WALKTHROUGH = PROJECT_ROOT / "examples" / "workloads" / "walkthrough.csv"

# A declaration for --declaration: any object with capacity_limits and shares.
POOL = {
    "capacity_limits": [CapacityLimit("ml.g5.xlarge", 2)],
    "shares": [
        QuotaShareSpec(name="research", capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW),
        QuotaShareSpec(name="product", capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)],
                       strategy=SharingStrategy.LEND),
    ],
}


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_synthetic_dev_run_writes_the_three_files_and_reports_progress(tmp_path: Path) -> None:
    code, out, err = run("--env", "dev", "--synthetic", "--jobs", "150", "--hours", "48",
                         "--seed", "3", "--out", str(tmp_path / "r"))
    assert code == 0, err
    for name in ("report.html", "metrics.json", "jobs.csv"):
        assert f"wrote {tmp_path / 'r' / name}" in out
    assert out.startswith("The declared policy")
    for arrangement in ("declared", "hard_partition", "shared_pool"):
        assert f"{arrangement}: 100 % (150 of 150)" in err
    assert "jobs.csv: 100 % (150 of 150)" in err
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["workload"]["synthetic"] == {"seed": 3, "jobs": 150, "hours": 48.0,
                                                "load": 0.7}
    assert len((tmp_path / "r" / "jobs.csv").read_text().splitlines()) == 151


def test_a_workload_file_and_a_saved_synthetic_workload_replay_the_same(tmp_path: Path) -> None:
    saved = tmp_path / "w.json"
    code, _, err = run("--jobs", "60", "--hours", "10", "--save-workload", str(saved),
                       "--out", str(tmp_path / "a"), "--quiet")
    assert (code, err) == (0, "")
    code, _, _ = run("--workload", str(saved), "--out", str(tmp_path / "b"), "--quiet")
    assert code == 0
    a = json.loads((tmp_path / "a" / "metrics.json").read_text())["arrangements"]
    b = json.loads((tmp_path / "b" / "metrics.json").read_text())["arrangements"]
    assert a == b
    assert (tmp_path / "a" / "jobs.csv").read_text() == (tmp_path / "b" / "jobs.csv").read_text()


def test_any_declaration_by_module_or_file(tmp_path: Path) -> None:
    code, _, err = run("--declaration", f"{__name__}:POOL", "--workload", str(WALKTHROUGH),
                       "--out", str(tmp_path / "m"))
    # The walkthrough names a share (evaluation) this declaration does not have.
    assert code == 2
    assert "evaluation" in err
    # Checked while reading: the line is named.
    assert ("walkthrough.csv' line 7: share got 'evaluation'; allowed: a share of the "
            "declaration: product, research") in err
    module = tmp_path / "platform_quotas.py"
    module.write_text(
        "from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy\n"
        "class Training:\n"
        "    capacity_limits = [CapacityLimit('ml.g5.xlarge', 1)]\n"
        "    shares = [QuotaShareSpec(name='solo', strategy=SharingStrategy.RESERVE,\n"
        "              capacity_limits=[CapacityLimit('ml.g5.xlarge', 1)])]\n"
    )
    declaration = declaration_of(f"{module}:Training", "t")
    assert [s.name for s in declaration.shares] == ["solo"]
    code, _, err = run("--declaration", f"{module}:Training", "--jobs", "20", "--hours", "5",
                       "--out", str(tmp_path / "f"), "--quiet")
    assert code == 0, err
    assert resolve("stacks.environments:ENVIRONMENTS.prod").name == "prod"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--env", "qa"], "--env got 'qa'; allowed: one of dev, prod, staging"),
        (["--declaration", "stacks.environments"], "module:attribute"),
        (["--declaration", "stacks.nowhere:X"], "an importable module"),
        (["--declaration", "stacks.environments:ENVIRONMENTS.qa"], "'qa' not found; known: dev"),
        (["--declaration", "stacks.environments:select_environments"],
         "with capacity_limits and shares"),
        (["--jobs", "0"], "jobs >= 1"),
    ],
)
def test_bad_arguments_exit_2_with_the_reason(
    argv: list[str], message: str, tmp_path: Path
) -> None:
    code, out, err = run(*argv, "--out", str(tmp_path))
    assert code == 2
    assert out == ""
    assert message in err


def test_a_bad_workload_file_is_named_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "jobs.csv"
    bad.write_text("job_id,share,submitted_at,duration,instance_type\n"
                   "a,research,0,-1,ml.g5.xlarge\n")
    code, _, err = run("--workload", str(bad), "--out", str(tmp_path / "r"), "--quiet")
    assert code == 2
    assert f"workload '{bad}' line 2: duration got '-1'" in err
    assert not (tmp_path / "r").exists()


def test_declaration_errors_raise_quota_config_errors() -> None:
    with pytest.raises(QuotaConfigError):
        declaration_of("stacks.environments:ENVIRONMENTS", "x")


def test_dev_py_simulate_runs_from_the_project_root(tmp_path: Path) -> None:
    env = dict(os.environ, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20")
    result = subprocess.run(
        [sys.executable, "dev.py", "simulate", "--env", "dev", "--synthetic", "--jobs", "40",
         "--hours", "12", "--out", str(tmp_path)],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "report.html").stat().st_size > 0
    assert "declaration dev: 3 × ml.g5.xlarge, 3 shares" in result.stderr
