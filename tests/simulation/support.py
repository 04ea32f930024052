"""Small builders for simulator tests: shares, jobs and a run checked against every rule."""

from __future__ import annotations

from collections.abc import Sequence

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import (
    PriorityChange,
    SimJob,
    SimulationOptions,
    SimulationResult,
    simulate,
)

from .invariants import check_invariants

G5 = "ml.g5.xlarge"
P4 = "ml.p4d.24xlarge"
RESERVE = SharingStrategy.RESERVE
LEND = SharingStrategy.LEND
LEND_AND_BORROW = SharingStrategy.LEND_AND_BORROW


def share(
    name: str,
    strategy: SharingStrategy,
    count: int = 1,
    *,
    borrow: int | None = None,
    in_share: bool = False,
    unit: str = G5,
) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name,
        capacity_limits=[CapacityLimit(unit, count)],
        strategy=strategy,
        borrow_limit_percent=borrow,
        in_share_preemption=in_share,
    )


def job(
    job_id: str,
    share: str,
    at: float = 0.0,
    duration: float = 100.0,
    *,
    count: int = 1,
    priority: int = 0,
    checkpoint: float | None = None,
    retries: int | None = None,
    unit: str = G5,
) -> SimJob:
    return SimJob(
        job_id=job_id,
        share=share,
        submitted_at=at,
        duration=duration,
        instance_type=unit,
        instance_count=count,
        priority=priority,
        checkpoint_interval=checkpoint,
        preemption_retries=retries,
    )


def run(
    environment: int | Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    jobs: Sequence[SimJob],
    changes: Sequence[PriorityChange] = (),
    options: SimulationOptions | None = None,
) -> SimulationResult:
    """Simulate and check every documented rule on the outcome before returning it."""
    limits = [CapacityLimit(G5, environment)] if isinstance(environment, int) else environment
    options = options or SimulationOptions()
    result = simulate(
        capacity_limits=limits,
        shares=shares,
        jobs=jobs,
        priority_changes=changes,
        options=options,
    )
    check_invariants(
        result, capacity_limits=limits, shares=shares, jobs=jobs, priority_changes=changes,
        unowned_capacity_borrowable=options.unowned_capacity_borrowable,
    )
    return result


def starts(result: SimulationResult, job_id: str) -> list[float]:
    return [a.started_at for a in result.jobs[job_id].attempts]
