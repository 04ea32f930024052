"""Reviewer's held-out check of issue 15: a workload with one job that can never run (larger
than its share can ever reach, in an environment where RESERVE shares hold most capacity)
replays with the AWS-like option and reports that job as blocked; the others run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]

DECLARATION = '''
from types import SimpleNamespace
from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
G5 = "ml.g5.xlarge"
declaration = SimpleNamespace(
    capacity_limits=[CapacityLimit(G5, 6)],
    shares=[
        QuotaShareSpec(name="held", capacity_limits=[CapacityLimit(G5, 4)],
                       strategy=SharingStrategy.RESERVE),
        QuotaShareSpec(name="flex", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100),
        QuotaShareSpec(name="idle", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND),
    ],
)
'''

WORKLOAD = """job_id,share,submitted_at,duration,instance_type,instance_count
f1,flex,0,600,ml.g5.xlarge,2
too-big,flex,10,600,ml.g5.xlarge,3
f2,flex,20,600,ml.g5.xlarge,1
h1,held,30,600,ml.g5.xlarge,4
"""


def run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "blocked_decl.py").write_text(DECLARATION)
    (tmp_path / "jobs.csv").write_text(WORKLOAD)
    return subprocess.run(
        [sys.executable, "-m", "quota_constructs", "simulate", "--declaration",
         "blocked_decl:declaration", "--workload", "jobs.csv", "--out", "out", "--quiet",
         *extra],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"},
    )


def test_by_default_the_job_is_refused_naming_it(tmp_path: Path) -> None:
    done = run(tmp_path)
    assert done.returncode == 2
    assert "too-big" in done.stderr and "--blocked-jobs" in done.stderr


def test_with_the_aws_like_option_it_is_reported_blocked(tmp_path: Path) -> None:
    done = run(tmp_path, "--blocked-jobs")
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    declared = metrics["arrangements"]["declared"]
    assert declared["shares"]["flex"]["blocked_jobs"] == 1
    assert declared["shares"]["flex"]["succeeded"] == 2
    assert declared["shares"]["held"]["succeeded"] == 1
    assert "too-big" in json.dumps(declared["blocked"])
    page = (tmp_path / "out" / "report.html").read_text()
    assert "1 job(s) can never run under the declaration" in page
