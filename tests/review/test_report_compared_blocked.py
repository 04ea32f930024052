"""Reviewer's finding on the rendered report: a compared declaration that can never run some
jobs (replayed with the AWS-like --blocked-jobs) must say so, in the summary and on its wait
rows, since its bars leave those jobs out and would otherwise look well served."""

from __future__ import annotations

from pathlib import Path

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import NeverRunnable, SimJob, SimulationOptions, compare_policies
from quota_constructs.simulation.report import write_report

G5 = "ml.g5.xlarge"


def shares(pairs_limit: int) -> list[QuotaShareSpec]:
    return [
        QuotaShareSpec(name="pairs", capacity_limits=[CapacityLimit(G5, pairs_limit)],
                       strategy=SharingStrategy.RESERVE),
        QuotaShareSpec(name="solo", capacity_limits=[CapacityLimit(G5, 4 - pairs_limit)],
                       strategy=SharingStrategy.RESERVE),
    ]


def test_a_compared_declaration_s_blocked_jobs_are_told(tmp_path: Path) -> None:
    environment = [CapacityLimit(G5, 4)]
    jobs = [SimJob(job_id=f"p{i}", share="pairs", submitted_at=i * 100.0, duration=600.0,
                   instance_type=G5, instance_count=2) for i in range(7)]
    jobs += [SimJob(job_id=f"s{i}", share="solo", submitted_at=i * 100.0, duration=600.0,
                    instance_type=G5) for i in range(5)]
    comparison = compare_policies(
        capacity_limits=environment, shares=shares(2), jobs=jobs,
        options=SimulationOptions(never_runnable=NeverRunnable.BLOCK),
        alternatives={"narrow": (environment, shares(1))},
    )
    assert comparison.alternatives["narrow"].shares["pairs"].blocked_jobs == 7
    write_report(tmp_path, comparison, capacity_limits=environment, shares=shares(2))
    page = (tmp_path / "report.html").read_text()
    assert "It can never run 7 job(s) (pairs: 7), which its figures leave out." in page
    assert "pairs · narrow (7 blocked)" in page
    assert "solo · narrow (" not in page


def test_without_blocked_jobs_the_refusal_names_the_compared_declaration() -> None:
    import pytest

    from quota_constructs import QuotaConfigError

    environment = [CapacityLimit(G5, 4)]
    jobs = [SimJob(job_id="p0", share="pairs", submitted_at=0.0, duration=60.0,
                   instance_type=G5, instance_count=2)]
    with pytest.raises(QuotaConfigError) as raised:
        compare_policies(capacity_limits=environment, shares=shares(2), jobs=jobs,
                         alternatives={"narrow": (environment, shares(1))})
    assert raised.value.subject.startswith("compared declaration 'narrow', ")
    assert raised.value.field == "instance_count" and "p0" in str(raised.value)
