"""quota-constructs recommend: the documented recommendation.json, code that rebuilds the
recommended declaration, a diff, a report, and the exit status saying whether targets are met."""

from __future__ import annotations

import io
import json
import runpy
from datetime import timedelta
from pathlib import Path

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.simulation import SimJob, simulate
from quota_constructs.simulation.recommend_cli import main, parse_pin
from quota_constructs.simulation.targets import parse_target
from quota_constructs.simulation.workloads import Workload, write_workload

G5 = "ml.g5.xlarge"
MODULE = "tests.simulation.test_recommend_cli"

TODAY = {
    "capacity_limits": [CapacityLimit(G5, 4)],
    "shares": [
        QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.RESERVE,
                       agreement=ShareAgreement(owner="vision-team",
                                                target_wait_p95=timedelta(hours=1))),
        QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 3)],
                       strategy=SharingStrategy.LEND, tags={"team": "nlp"}),
    ],
}


def workload(path: Path, *, burst: bool = False) -> Path:
    jobs = [SimJob(job_id=f"burst{i}", share="vision", submitted_at=50000.0, duration=3000.0,
                   instance_type=G5) for i in range(8 if burst else 0)]
    jobs += [SimJob(job_id=f"v{i}", share="vision", submitted_at=i * 600.0, duration=1500.0,
                   instance_type=G5, priority=i % 3) for i in range(12)]
    jobs += [SimJob(job_id=f"n{i}", share="nlp", submitted_at=20000.0 + i * 600.0,
                    duration=1800.0, instance_type=G5) for i in range(10)]
    write_workload(path, Workload(jobs))
    return path


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_writes_the_documented_files(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    code, stdout, stderr = run("--declaration", f"{MODULE}:TODAY", "--workload",
                               str(workload(tmp_path / "jobs.csv")), "--workers", "1",
                               "--out", str(out))
    assert code == 0, stderr
    document = json.loads((out / "recommendation.json").read_text())
    assert set(document) == {"meets_targets", "unmet", "shares"}
    assert document["meets_targets"] is True and document["unmet"] == []
    for share in document["shares"]:
        assert set(share) == {"name", "strategy", "borrow_limit_percent", "in_share_preemption",
                              "capacity_limits"}
    # The code to paste rebuilds exactly the recommended declaration, agreements and tags kept.
    namespace = runpy.run_path(str(out / "recommended.py"))
    rebuilt = namespace["SHARES"]
    assert [s.name for s in rebuilt] == [s["name"] for s in document["shares"]]
    for spec, share in zip(rebuilt, document["shares"], strict=True):
        assert spec.strategy.value == share["strategy"]
        assert {str(c.unit): c.max_capacity for c in spec.capacity_limits} == \
            share["capacity_limits"]
    assert rebuilt[0].agreement == TODAY["shares"][0].agreement
    assert dict(rebuilt[1].tags) == {"team": "nlp"}
    # Replayed independently, it meets vision's target; today's does not.
    jobs = list(_jobs(tmp_path / "jobs.csv"))
    for shares, met in ((rebuilt, True), (TODAY["shares"], False)):
        wait = simulate(capacity_limits=namespace["CAPACITY_LIMITS"], shares=shares,
                        jobs=jobs).shares["vision"].wait_p95
        assert wait is not None and (wait <= 3600) is met
    assert (out / "declaration.diff").read_text().startswith("--- today.py")
    page = (out / "report.html").read_text()
    assert "missed" in page and "met" in page
    assert (out / "today" / "report.html").is_file()
    assert (out / "recommended" / "report.html").is_file()
    assert "meets every target" in stdout


def test_a_target_that_cannot_be_met_is_named_and_exits_1(tmp_path: Path) -> None:
    code, stdout, _ = run("--declaration", f"{MODULE}:TODAY", "--workload",
                          str(workload(tmp_path / "jobs.csv", burst=True)), "--workers", "1",
                          "--target", "vision:wait_p95<=1s", "--no-report",
                          "--out", str(tmp_path / "rec"))
    assert code == 1
    assert "cannot meet vision" in stdout and "demand alone exceeds the environment" in stdout
    document = json.loads((tmp_path / "rec" / "recommendation.json").read_text())
    assert document["meets_targets"] is False and document["unmet"] == ["vision"]


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    code, _, stderr = run("--declaration", f"{MODULE}:TODAY", "--workload",
                          str(workload(tmp_path / "jobs.csv")), "--target", "vision:p99<4h",
                          "--out", str(tmp_path / "rec"))
    assert code == 2
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "--target" in errors[0]


def test_targets_and_pins_parse() -> None:
    assert parse_target("vision:wait_p95<=4h").wait_p95 == 14400.0
    assert parse_target("vision:wait_p95<=90min").wait_p95 == 5400.0
    assert parse_target("nlp:budget_failures<=0").max_budget_failures == 0
    assert parse_pin("vision:strategy").strategy
    assert parse_pin("vision:limits").limits
    assert parse_pin("vision:min:ml.g5.xlarge=2").minimum == {G5: 2}
    with pytest.raises(ValueError):
        parse_pin("vision:min:ml.g5.xlarge")


def _jobs(path: Path) -> list[SimJob]:
    from quota_constructs.simulation.workloads import read_workload

    return list(read_workload(path).jobs)


def test_dask_executor_from_the_command_line_gives_the_same_answer(tmp_path: Path) -> None:
    distributed = pytest.importorskip("dask.distributed")
    jobs = workload(tmp_path / "jobs.csv")
    code, _, stderr = run("--declaration", f"{MODULE}:TODAY", "--workload", str(jobs),
                          "--workers", "2", "--no-report", "--out", str(tmp_path / "local"))
    assert code == 0, stderr
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        code, _, stderr = run("--declaration", f"{MODULE}:TODAY", "--workload", str(jobs),
                              "--executor", f"dask:{cluster.scheduler_address}", "--no-report",
                              "--out", str(tmp_path / "dask"))
    assert code == 0, stderr
    assert (tmp_path / "local" / "recommendation.json").read_text() == \
        (tmp_path / "dask" / "recommendation.json").read_text()
    assert (tmp_path / "local" / "recommended.py").read_text() == \
        (tmp_path / "dask" / "recommended.py").read_text()
