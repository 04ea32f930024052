"""Reviewer's held-out check of issue 18: recommend on a workload where an allocation meeting
every target is known to exist (shown by the reference replay in reference_replay.py, written
independently of the library), and on one where a share's demand alone exceeds the
environment."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.model import QuotaAllocation
from quota_constructs.simulation import SimJob, recommend
from quota_constructs.simulation.workloads.files import Workload, write_workload

from .reference_replay import first_start_waits, p95

G5 = "ml.g5.xlarge"
SIZE = 7
TARGETS = {"A": 600.0, "B": 1800.0, "C": 1800.0}


def share(name: str, count: int, strategy: SharingStrategy) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name, capacity_limits=[CapacityLimit(G5, count)], strategy=strategy,
        agreement=ShareAgreement(owner=name, target_wait_p95=TARGETS[name]),
    )


TODAY = [share("A", 1, SharingStrategy.RESERVE), share("B", 5, SharingStrategy.LEND),
         share("C", 1, SharingStrategy.LEND_AND_BORROW)]


def workload() -> list[SimJob]:
    jobs = []
    for burst in range(6):  # A: three one-hour jobs at once, every ten hours
        jobs += [SimJob(job_id=f"a{burst}-{i}", share="A", submitted_at=burst * 36000.0,
                        duration=3600.0, instance_type=G5) for i in range(3)]
    for i in range(120):  # B: about two at a time, all along
        jobs.append(SimJob(job_id=f"b{i}", share="B", submitted_at=i * 1800.0,
                           duration=3600.0, instance_type=G5))
    for burst in range(6):  # C: two half-hour jobs at once, between A's bursts
        jobs += [SimJob(job_id=f"c{burst}-{i}", share="C",
                        submitted_at=burst * 36000.0 + 18000.0, duration=1800.0,
                        instance_type=G5) for i in range(2)]
    return jobs


def meets(shares: list[QuotaShareSpec], jobs: list[SimJob]) -> dict[str, float]:
    waits = first_start_waits(SIZE, G5, shares, jobs)
    return {name: p95(values) for name, values in waits.items()}


def test_the_reference_replay_shows_today_fails_and_a_known_allocation_meets() -> None:
    jobs = workload()
    today = meets(TODAY, jobs)
    assert today["A"] > TARGETS["A"]
    known = [share("A", 3, SharingStrategy.RESERVE), share("B", 2, SharingStrategy.LEND),
             share("C", 2, SharingStrategy.LEND_AND_BORROW)]
    assert all(wait <= TARGETS[name] for name, wait in meets(known, jobs).items())


def test_the_recommendation_meets_every_target_in_the_reference_replay() -> None:
    jobs = workload()
    with ThreadPoolExecutor(2) as pool:
        rec = recommend(capacity_limits=[CapacityLimit(G5, SIZE)], shares=TODAY, jobs=jobs,
                        executor=pool)
    assert rec.meets_targets and rec.unmet == []
    QuotaAllocation.check(environment_limits=[CapacityLimit(G5, SIZE)], shares=rec.shares)
    assert sum(s.limit_of(G5) for s in rec.shares) <= SIZE
    for name, wait in meets(rec.shares, jobs).items():
        assert wait <= TARGETS[name], (name, wait, rec.shares)
    # The agreements (where the targets live) are kept.
    assert [s.agreement for s in rec.shares] == [s.agreement for s in TODAY]


def test_the_command_names_the_target_no_allocation_meets_and_why(tmp_path: Path) -> None:
    declaration = tmp_path / "held_out_decl.py"
    declaration.write_text(
        "from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, "
        "SharingStrategy\n"
        "from types import SimpleNamespace\n"
        "capacity_limits = [CapacityLimit('ml.g5.xlarge', 3)]\n"
        "shares = [\n"
        "  QuotaShareSpec(name='big', capacity_limits=[CapacityLimit('ml.g5.xlarge', 2)],\n"
        "    strategy=SharingStrategy.LEND_AND_BORROW,\n"
        "    agreement=ShareAgreement(owner='big', target_wait_p95=60.0)),\n"
        "  QuotaShareSpec(name='small', capacity_limits=[CapacityLimit('ml.g5.xlarge', 1)],\n"
        "    strategy=SharingStrategy.LEND,\n"
        "    agreement=ShareAgreement(owner='small', target_wait_p95=86400.0)),\n"
        "]\n"
        "declaration = SimpleNamespace(capacity_limits=capacity_limits, shares=shares)\n"
    )
    # 'big' asks for six instances at once, twice; the environment has three.
    jobs = [SimJob(job_id=f"big{b}-{i}", share="big", submitted_at=b * 20000.0,
                   duration=7200.0, instance_type=G5) for b in range(2) for i in range(6)]
    jobs += [SimJob(job_id=f"small{i}", share="small", submitted_at=i * 5000.0 + 100.0,
                    duration=60.0, instance_type=G5) for i in range(4)]
    workload_path = tmp_path / "jobs.csv"
    write_workload(workload_path, Workload(jobs=jobs))
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "quota_constructs", "recommend", "--declaration",
         "held_out_decl:declaration", "--workload", str(workload_path), "--out", str(out),
         "--workers", "1", "--quiet", "--no-report"],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
        env={"PYTHONPATH": f"{tmp_path}:{Path(__file__).parents[2]}", "PATH": "/usr/bin:/bin"},
    )
    said = run.stdout + run.stderr
    assert run.returncode == 1, said
    (unmet,) = [line for line in said.splitlines() if "cannot meet" in line]
    # Which target, what it reaches against it, and why.
    assert "cannot meet big" in unmet and "wait p95" in unmet and "60 s" in unmet
    assert "demand alone exceeds the environment" in unmet and "6 x ml.g5.xlarge" in unmet
    assert "today/report.html" not in (out / "report.html").read_text()
    document = json.loads((out / "recommendation.json").read_text())
    assert document["meets_targets"] is False and document["unmet"] == ["big"]
    # DESIGN.md §9's shape.
    assert set(document) >= {"meets_targets", "unmet", "shares"}
    for entry in document["shares"]:
        assert set(entry) >= {"name", "strategy", "borrow_limit_percent",
                              "in_share_preemption", "capacity_limits"}
        assert isinstance(entry["capacity_limits"], dict)
        assert all(isinstance(v, int) for v in entry["capacity_limits"].values())
        assert entry["strategy"] in {"RESERVE", "LEND", "LEND_AND_BORROW"}
        assert isinstance(entry["in_share_preemption"], bool)


def test_a_dask_local_cluster_gives_the_same_recommendation() -> None:
    import pytest

    distributed = pytest.importorskip("dask.distributed")
    jobs = workload()
    environment = [CapacityLimit(G5, SIZE)]
    with ThreadPoolExecutor(2) as pool:
        local = recommend(capacity_limits=environment, shares=TODAY, jobs=jobs, executor=pool)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_dask = recommend(capacity_limits=environment, shares=TODAY, jobs=jobs,
                            executor=client.get_executor())
    assert (local.shares, local.unmet, local.outcomes, local.simulations) == (
        on_dask.shares, on_dask.unmet, on_dask.outcomes, on_dask.simulations)
