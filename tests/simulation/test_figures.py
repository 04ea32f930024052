"""Per-share figures, the comparison with a hard partition and a shared pool, and exports."""

from __future__ import annotations

import pytest

from quota_constructs import CapacityLimit
from quota_constructs.simulation import JOB_RECORD_FIELDS, SimulationOptions, compare_policies

from .support import G5, LEND, LEND_AND_BORROW, job, run, share

SHARES = [share("A", LEND_AND_BORROW), share("B", LEND)]
# a2 borrows B's idle instance until b1 reclaims it at 50; a2 restarts when a1 ends at 100.
JOBS = [job("a1", "A", 0.0, 100.0), job("a2", "A", 0.0, 100.0), job("b1", "B", 50.0, 100.0)]
H = 3600.0


def test_declared_figures() -> None:
    result = run(2, SHARES, JOBS)
    assert (result.started_at, result.ended_at) == (0.0, 200.0)
    a, b = result.shares["A"], result.shares["B"]
    assert a.own_capacity_hours == pytest.approx(200 / H)
    assert a.used_capacity_hours == pytest.approx(200 / H)
    assert a.utilization == pytest.approx(1.0)
    assert a.borrowed_capacity_hours == pytest.approx(50 / H)
    assert a.lent_capacity_hours == 0.0
    assert b.utilization == pytest.approx(0.5)
    assert b.lent_capacity_hours == pytest.approx(50 / H)
    assert (a.wait_p50, a.wait_max) == (0.0, 0.0)
    assert a.completion_median == pytest.approx(150.0)
    assert a.completion_p95 == pytest.approx(195.0)
    assert (a.cross_share_preemptions, a.in_share_preemptions) == (1, 0)
    assert a.lost_instance_hours == pytest.approx(50 / H)
    assert (a.jobs, a.succeeded, a.failed_preemption_budget, a.not_runnable) == (2, 2, 0, 0)
    assert b.wait_p95 == 0.0


def test_lent_capacity_is_shared_by_idle_amount_including_unowned() -> None:
    shares = [share("A", LEND_AND_BORROW), share("B", LEND, 2)]
    # Environment 4: 1 unowned, borrowable by default. A runs 3 for 90 s: 2 borrowed, from 3
    # idle (B's 2, 1 unowned).
    result = run(4, shares, [job(f"a{i}", "A", 0.0, 90.0) for i in range(3)])
    assert result.shares["A"].borrowed_capacity_hours == pytest.approx(180 / H)
    assert result.shares["B"].lent_capacity_hours == pytest.approx(120 / H)


def test_unowned_capacity_is_not_borrowed_when_the_assumption_is_lifted() -> None:
    shares = [share("A", LEND_AND_BORROW), share("B", LEND, 2)]
    # Environment 4, 1 unowned, unowned_capacity_borrowable=False: only B's 2 idle can be
    # borrowed, so A holds at most 3 and B is credited with all of A's borrowing.
    result = run(4, shares, [job(f"a{i}", "A", 0.0, 90.0) for i in range(4)],
                 options=SimulationOptions(unowned_capacity_borrowable=False))
    assert result.shares["A"].borrowed_capacity_hours == pytest.approx(2 * 90 / H)
    timeline = result.capacity_timeline("A", G5)
    assert max(timeline.in_use) == 3
    assert result.shares["B"].lent_capacity_hours == pytest.approx(result.shares[
        "A"].borrowed_capacity_hours)


def test_compare_policies() -> None:
    jobs = [*JOBS, job("a-big", "A", 300.0, 10.0, count=2)]
    comparison = compare_policies(
        capacity_limits=[CapacityLimit(G5, 2)], shares=SHARES, jobs=jobs
    )
    declared = comparison.declared
    assert declared.arrangement == "declared"
    assert declared.jobs["a-big"].attempts[0].borrowed

    partition = comparison.hard_partition
    assert partition.not_runnable == ("a-big",)
    assert partition.shares["A"].not_runnable == 1
    assert partition.shares["A"].jobs == 3
    assert [a.started_at for a in partition.jobs["a2"].attempts] == [100.0]
    assert partition.shares["A"].borrowed_capacity_hours == 0.0

    pool = comparison.shared_pool
    assert pool.arrangement == "shared_pool"
    assert set(pool.shares) == {"A", "B"}  # still grouped by each job's share
    assert [a.started_at for a in pool.jobs["b1"].attempts] == [100.0]
    assert pool.shares["B"].wait_max == 50.0
    assert pool.shares["A"].borrowed_capacity_hours == pytest.approx(110 / H)
    assert pool.shares["B"].lent_capacity_hours == pytest.approx(110 / H)
    assert pool.shares["A"].cross_share_preemptions == 0


def test_job_records_for_csv() -> None:
    result = run(2, SHARES, JOBS)
    records = {r["job_id"]: r for r in result.job_records()}
    assert list(records["a2"]) == list(JOB_RECORD_FIELDS)
    assert records["a2"] | {} == {
        "job_id": "a2", "share": "A", "instance_type": G5, "instance_count": 1,
        "priority": 0, "submitted_at": 0.0, "first_started_at": 0.0, "finished_at": 200.0,
        "status": "SUCCEEDED", "wait_seconds": 0.0, "completion_seconds": 200.0,
        "attempts": 2, "cross_share_preemptions": 1, "in_share_preemptions": 0,
        "borrowed_attempts": 1, "lost_seconds": 50.0,
    }


def test_capacity_timeline() -> None:
    result = run(2, SHARES, JOBS)
    timeline = result.capacity_timeline("A")
    assert list(timeline.times) == [0.0, 50.0, 100.0, 200.0]
    assert list(timeline.in_use) == [2, 1, 1, 0]
    assert list(timeline.borrowed) == [1, 0, 0, 0]
    with pytest.raises(KeyError):
        result.capacity_timeline("nope")


def test_outcome_mapping() -> None:
    result = run(2, SHARES, JOBS)
    assert len(result.jobs) == 3 and "a1" in result.jobs and "zz" not in result.jobs
    assert list(result.jobs) == ["a1", "a2", "b1"]
    a2 = result.jobs["a2"]
    assert (a2.wait_seconds, a2.completion_seconds, a2.preemptions) == (0.0, 200.0, 1)


def test_comparison_when_limits_add_up_to_more_than_the_environment() -> None:
    shares = [share("A", LEND, 2), share("B", LEND_AND_BORROW, 2)]
    jobs = [job("a1", "A", 0.0), job("a2", "A", 0.0), job("b1", "B", 10.0),
            job("b2", "B", 10.0, count=3)]
    comparison = compare_policies(capacity_limits=[CapacityLimit(G5, 3)], shares=shares,
                                  jobs=jobs)
    partition = comparison.hard_partition
    assert partition.not_runnable == ("b2",)
    # Nobody borrows, but the environment still caps what the shares hold together.
    assert [a.started_at for a in partition.jobs["b1"].attempts] == [10.0]
    # b2 needs all three instances: it waits for b1 as well as for A.
    assert [a.started_at for a in comparison.declared.jobs["b2"].attempts] == [110.0]


def test_capacity_timeline_per_type_and_summed() -> None:
    from quota_constructs import QuotaShareSpec

    from .support import P4, RESERVE

    environment = [CapacityLimit(G5, 2), CapacityLimit(P4, 2)]
    shares = [QuotaShareSpec(name="S", capacity_limits=[CapacityLimit(G5, 1),
                                                        CapacityLimit(P4, 2)],
                             strategy=LEND_AND_BORROW),
              share("R", RESERVE, unit=P4)]
    jobs = [job("g", "S", 0.0, 100.0, count=2), job("p", "S", 50.0, 100.0, unit=P4)]
    result = run(environment, shares, jobs)
    g5 = result.capacity_timeline("S", G5)
    assert (list(g5.times), list(g5.in_use), list(g5.borrowed)) == ([0.0, 100.0], [2, 0], [1, 0])
    p4 = result.capacity_timeline("S", P4)
    assert (list(p4.times), list(p4.in_use), list(p4.borrowed)) == ([50.0, 150.0], [1, 0], [0, 0])
    total = result.capacity_timeline("S")
    assert list(total.times) == [0.0, 50.0, 100.0, 150.0]
    assert list(total.in_use) == [2, 3, 1, 0]
    assert list(total.borrowed) == [1, 1, 0, 0]
    assert list(result.capacity_timeline("R").times) == []


def test_compared_arrangements_are_measured_over_one_window() -> None:
    # A's second job borrows B's idle instance under the declaration; the hard partition runs
    # it after the first (nobody borrows), so the two arrangements end at different times.
    shares = [share("A", LEND_AND_BORROW), share("B", LEND)]
    jobs = [job("a1", "A", 0.0, 100.0), job("a2", "A", 0.0, 100.0)]
    comparison = compare_policies(capacity_limits=[CapacityLimit(G5, 2)], shares=shares,
                                  jobs=jobs)
    ends = {comparison.declared.ended_at, comparison.hard_partition.ended_at}
    assert ends == {100.0, 200.0}
    windows = {r.window for r in (comparison.declared, comparison.hard_partition,
                                  comparison.shared_pool)}
    assert windows == {(0.0, 200.0)}
    # Over one window: the partition keeps A's own instance busy for all 200 s; the
    # declaration for 100 s (the other job borrowed B's). Each over its own span, both would
    # have read 100 %.
    assert comparison.hard_partition.shares["A"].utilization == pytest.approx(1.0)
    assert comparison.declared.shares["A"].utilization == pytest.approx(100 / 200)
    assert comparison.declared.shares["B"].lent_capacity_hours == pytest.approx(100 / H)
