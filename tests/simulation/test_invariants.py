"""Property-based: the documented rules hold on random workloads, whatever the options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quota_constructs import CapacityLimit, QuotaConfigError, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import (
    BorrowerOrder,
    HeadOfLine,
    PriorityChange,
    RequeuePlace,
    SimJob,
    SimulationOptions,
    VictimOrder,
    compare_policies,
    simulate,
)

from .invariants import check_invariants, check_no_needless_waiting

UNITS = ("ml.g5.xlarge", "ml.p4d.24xlarge")


@dataclass
class Scenario:
    capacity_limits: list[CapacityLimit]
    shares: list[QuotaShareSpec]
    jobs: list[SimJob]
    priority_changes: list[PriorityChange]

    @property
    def inputs(self) -> dict[str, Any]:
        """The keyword arguments simulate(), compare_policies() and the checks all take."""
        return {
            "capacity_limits": self.capacity_limits,
            "shares": self.shares,
            "jobs": self.jobs,
            "priority_changes": self.priority_changes,
        }


def reach(spec: QuotaShareSpec, unit: str, environment: dict[str, int],
          shares: list[QuotaShareSpec]) -> int:
    others = sum(
        s.limit_of(unit) for s in shares
        if s.strategy is SharingStrategy.RESERVE and s.name != spec.name
    )
    return int(min(spec.ceiling_of(unit), environment[unit] - others))


@st.composite
def scenarios(draw: st.DrawFn, single_instance: bool = False) -> Scenario:
    units = UNITS[: draw(st.integers(1, 2))]
    environment = {unit: draw(st.integers(1, 6)) for unit in units}
    shares: list[QuotaShareSpec] = []
    reserved = dict.fromkeys(units, 0)
    for index in range(draw(st.integers(1, 4))):
        strategy = draw(st.sampled_from(list(SharingStrategy)))
        limits = []
        for unit in units:
            if draw(st.booleans()) or not limits:
                most = environment[unit] - reserved[unit] if strategy is SharingStrategy.RESERVE \
                    else environment[unit]
                if most < 1:
                    continue
                limits.append(CapacityLimit(unit, draw(st.integers(1, most))))
        if not limits:
            strategy = SharingStrategy.LEND
            limits = [CapacityLimit(units[0], 1)]
        if strategy is SharingStrategy.RESERVE:
            for limit in limits:
                reserved[str(limit.unit)] += limit.max_capacity
        borrow = None
        if strategy is SharingStrategy.LEND_AND_BORROW:
            borrow = draw(st.sampled_from([None, 0, 50, 100, 200]))
        shares.append(
            QuotaShareSpec(
                name=f"S{index}",
                capacity_limits=limits,
                strategy=strategy,
                borrow_limit_percent=borrow,
                in_share_preemption=draw(st.booleans()),
            )
        )
    jobs: list[SimJob] = []
    for index in range(draw(st.integers(0, 25))):
        spec = draw(st.sampled_from(shares))
        unit = draw(st.sampled_from([str(limit.unit) for limit in spec.capacity_limits]))
        most = reach(spec, unit, environment, shares)
        if most < 1:
            continue
        jobs.append(
            SimJob(
                job_id=f"j{index}",
                share=spec.name,
                submitted_at=float(draw(st.integers(0, 20))),
                duration=float(draw(st.integers(0, 15))),
                instance_type=unit,
                instance_count=1 if single_instance else draw(st.integers(1, most)),
                priority=draw(st.integers(0, 3)),
                checkpoint_interval=draw(st.sampled_from([None, 2.0, 5.0])),
                preemption_retries=draw(st.sampled_from([None, None, 0, 1, 2])),
            )
        )
    changes = [
        PriorityChange(
            at=job.submitted_at + draw(st.integers(0, 10)),
            job_id=job.job_id,
            priority=draw(st.integers(0, 5)),
        )
        for job in jobs
        if draw(st.integers(0, 4)) == 0
    ]
    return Scenario(
        [CapacityLimit(unit, count) for unit, count in environment.items()],
        shares,
        jobs,
        changes,
    )


OPTIONS = st.builds(
    SimulationOptions,
    victim_order=st.sampled_from(list(VictimOrder)),
    minimal_victim_set=st.booleans(),
    head_of_line_blocking=st.booleans(),
    borrower_order=st.sampled_from(list(BorrowerOrder)),
    keep_checkpoint_progress=st.booleans(),
    reclaim_partly_borrowed_jobs=st.booleans(),
    head_of_line=st.sampled_from(list(HeadOfLine)),
    requeue_place=st.sampled_from(list(RequeuePlace)),
    unowned_capacity_borrowable=st.booleans(),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_default_options_obey_every_rule(scenario: Scenario) -> None:
    result = simulate(**scenario.inputs)
    check_invariants(result, **scenario.inputs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_nobody_waits_for_capacity_that_is_free_for_them(scenario: Scenario) -> None:
    result = simulate(**scenario.inputs)
    check_no_needless_waiting(result, **scenario.inputs, in_share=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(single_instance=True))
def test_within_limit_jobs_never_wait_for_capacity_that_could_be_reclaimed(
    scenario: Scenario,
) -> None:
    result = simulate(**scenario.inputs)
    check_no_needless_waiting(result, **scenario.inputs, reclaim=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_lenders_never_wait_behind_multi_instance_borrowers(scenario: Scenario) -> None:
    # With jobs of several instances, borrowed capacity can sit in a job that straddles its
    # share's limit; a lender's job within its limit still gets it back (AWS: any share can
    # reclaim what it lent).
    result = simulate(**scenario.inputs)
    check_no_needless_waiting(result, **scenario.inputs, reclaim=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), OPTIONS)
def test_every_option_obeys_every_rule(scenario: Scenario, options: SimulationOptions) -> None:
    try:
        result = simulate(**scenario.inputs, options=options)
    except QuotaConfigError:
        # A job the narrower reading of unowned capacity can never run: refused, as stated.
        assert not options.unowned_capacity_borrowable
        return
    check_invariants(result, **scenario.inputs,
                     unowned_capacity_borrowable=options.unowned_capacity_borrowable)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_baselines_never_borrow_or_preempt_as_they_should_not(scenario: Scenario) -> None:
    comparison = compare_policies(**scenario.inputs)
    limits = {
        (spec.name, str(limit.unit)): limit.max_capacity
        for spec in scenario.shares
        for limit in spec.capacity_limits
    }
    partition = comparison.hard_partition
    expected_out = {
        job.job_id for job in scenario.jobs
        if job.instance_count > limits[(job.share, job.instance_type)]
    }
    assert set(partition.not_runnable) == expected_out
    assert set(partition.jobs) == {job.job_id for job in scenario.jobs} - expected_out
    for outcome in partition.jobs.values():
        assert not any(a.borrowed or a.preemption == "CROSS_SHARE" for a in outcome.attempts)
    assert all(f.borrowed_capacity_hours == 0 for f in partition.shares.values())

    pool = comparison.shared_pool
    assert set(pool.jobs) == {job.job_id for job in scenario.jobs}
    for outcome in pool.jobs.values():
        assert outcome.status == "SUCCEEDED"
        assert len(outcome.attempts) == 1
    # One FIFO queue per instance type: jobs of a type start in submission order.
    by_type: dict[str, list[tuple[float, float, int]]] = {}
    for index, job in enumerate(scenario.jobs):
        start = pool.jobs[job.job_id].attempts[0].started_at
        by_type.setdefault(job.instance_type, []).append((job.submitted_at, start, index))
    for entries in by_type.values():
        entries.sort(key=lambda e: (e[0], e[2]))
        starts = [e[1] for e in entries]
        assert starts == sorted(starts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_one_head_per_share_never_lets_a_lower_ranked_job_start_first(
    scenario: Scenario,
) -> None:
    # Fixed priorities (changes dropped), so each job's rank is (priority desc, submission).
    inputs = {**scenario.inputs, "priority_changes": []}
    result = simulate(**inputs, options=SimulationOptions(head_of_line=HeadOfLine.PER_SHARE))
    check_invariants(result, **inputs)
    order = {job.job_id: index for index, job in enumerate(scenario.jobs)}
    given_jobs = {job.job_id: job for job in scenario.jobs}

    def rank(job_id: str) -> tuple[int, float, int]:
        job = given_jobs[job_id]
        return (-job.priority, job.submitted_at, order[job_id])

    def waiting_at(job_id: str, t: float) -> bool:
        """Waiting after the events at t: submitted, and between runs (an attempt starting at
        t ends the wait; one ending at t by preemption begins one)."""
        job = result.jobs[job_id]
        since = given_jobs[job_id].submitted_at
        for attempt in job.attempts:
            if since <= t < attempt.started_at:
                return True
            since = attempt.ended_at if attempt.ended_by == "PREEMPTED" else float("inf")
        return since <= t and job.status != "FAILED"

    for job_id, outcome in result.jobs.items():
        for attempt in outcome.attempts:
            t = attempt.started_at
            ahead = [other for other in result.jobs
                     if other != job_id and result.jobs[other].share == outcome.share
                     and rank(other) < rank(job_id) and waiting_at(other, t)]
            assert not ahead, f"{job_id} started at {t} while {ahead} waited ahead of it"
