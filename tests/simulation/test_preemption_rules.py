"""Cross-share and in-share preemption, victims, retries budgets and checkpoints."""

from __future__ import annotations

import pytest

from quota_constructs.simulation import PriorityChange, SimulationOptions, VictimOrder

from .support import LEND, LEND_AND_BORROW, RESERVE, job, run, share, starts


def test_cross_share_preemption_reclaims_only_borrowed_capacity() -> None:
    shares = [share("A", LEND_AND_BORROW), share("B", LEND_AND_BORROW)]
    jobs = [job("b1", "B", 0.0), job("b2", "B", 0.0), job("a1", "A", 10.0),
            job("a2", "A", 10.0)]
    result = run(2, shares, jobs)
    victim = next(j for j in ("b1", "b2") if len(result.jobs[j].attempts) == 2)
    first = result.jobs[victim].attempts[0]
    assert (first.ended_at, first.preemption, first.borrowed) == (10.0, "CROSS_SHARE", True)
    # a2 would have to borrow: cross-share preemption is never used to borrow, and B's
    # remaining job runs within B's own limit. At 100 the requeued B job, within B's limit,
    # goes before a2, which waits for a1's instance.
    assert starts(result, victim)[1] == 100.0
    assert starts(result, "a2") == [110.0]


def test_no_preemption_of_jobs_within_their_limits_when_over_allocated() -> None:
    # Limits add up to 4 in an environment of 2: both shares within their limits.
    result = run(2, [share("A", LEND, 2), share("B", LEND, 2)],
                 [job("a1", "A"), job("a2", "A"), job("b1", "B", 10.0)])
    assert starts(result, "b1") == [100.0]
    assert all(len(j.attempts) == 1 for j in result.jobs.values())


def test_a_share_back_within_its_limit_is_not_reclaimed_from() -> None:
    shares = [share("A", LEND_AND_BORROW), share("B", LEND)]
    # a2 borrows B's instance; a1 ends at 50, so from then on a2 runs within A's limit.
    jobs = [job("a1", "A", 0.0, 50.0), job("a2", "A", 0.0, 200.0), job("b1", "B", 60.0)]
    result = run(2, shares, jobs)
    assert result.jobs["a2"].attempts[0].borrowed
    assert len(result.jobs["a2"].attempts) == 1
    assert starts(result, "b1") == [60.0]  # the instance a1 left idle


def test_cross_share_victims_lowest_priority_then_newest() -> None:
    shares = [share("A", LEND_AND_BORROW), share("B", LEND_AND_BORROW, 1),
              share("L", LEND, 3)]
    jobs = [job("a0", "A", 0.0, priority=1), job("b0", "B", 0.0, priority=1),
            job("a-old", "A", 1.0, priority=1), job("a-new", "A", 2.0, priority=1),
            job("b-low", "B", 3.0, priority=0), job("l1", "L", 10.0),
            job("l2", "L", 11.0)]
    result = run(5, shares, jobs)
    assert result.jobs["b-low"].attempts[0].preempted_by == "l1"  # lowest priority first
    assert result.jobs["a-new"].attempts[0].preempted_by == "l2"  # then most recent
    assert len(result.jobs["a-old"].attempts) == 1

    newest = run(5, shares, jobs, options=SimulationOptions(victim_order=VictimOrder.NEWEST))
    assert newest.jobs["b-low"].attempts[0].preempted_by == "l1"
    assert newest.jobs["a-new"].attempts[0].preempted_by == "l2"


def test_minimal_victim_set() -> None:
    shares = [share("A", LEND_AND_BORROW, 1), share("L", LEND, 3)]
    jobs = [job("a0", "A", 0.0, 500.0), job("small", "A", 1.0, 500.0, priority=0),
            job("big", "A", 2.0, 500.0, count=2, priority=1),
            job("l", "L", 10.0, count=2)]
    result = run(4, shares, jobs)
    # Lowest priority first would take "small" (1) then "big" (2); "big" alone frees enough.
    assert result.jobs["big"].attempts[0].preempted_by == "l"
    assert len(result.jobs["small"].attempts) == 1

    wasteful = run(4, shares, jobs, options=SimulationOptions(minimal_victim_set=False))
    assert wasteful.jobs["small"].attempts[0].preempted_by == "l"
    assert wasteful.jobs["big"].attempts[0].preempted_by == "l"


def test_in_share_preemption_only_where_enabled() -> None:
    jobs = [job("low", "S", 0.0, priority=1), job("high", "S", 10.0, priority=5)]
    enabled = run(1, [share("S", RESERVE, in_share=True)], jobs)
    assert starts(enabled, "high") == [10.0]
    first = enabled.jobs["low"].attempts[0]
    assert (first.ended_at, first.preemption, first.preempted_by) == (10.0, "IN_SHARE", "high")
    disabled = run(1, [share("S", RESERVE)], jobs)
    assert starts(disabled, "high") == [100.0]


def test_in_share_preemption_needs_strictly_lower_priority() -> None:
    result = run(1, [share("S", RESERVE, in_share=True)],
                 [job("first", "S", 0.0, priority=3), job("same", "S", 10.0, priority=3)])
    assert starts(result, "same") == [100.0]


def test_no_preemption_unless_the_preemptor_can_then_start() -> None:
    result = run(
        2,
        [share("S", RESERVE, 2, in_share=True)],
        [job("low", "S", 0.0, priority=1), job("high", "S", 0.0, priority=9),
         job("big", "S", 10.0, count=2, priority=5)],
    )
    # Preempting "low" alone would not make room for "big"; "high" outranks it.
    assert len(result.jobs["low"].attempts) == 1
    assert starts(result, "big") == [100.0]


def test_in_share_preemption_is_never_cross_share() -> None:
    shares = [share("A", LEND, in_share=True), share("B", LEND_AND_BORROW, in_share=True)]
    result = run(1, shares, [job("b", "B", 0.0, priority=0), job("a", "A", 10.0, priority=9),
                             job("b-high", "B", 20.0, priority=9)])
    # b runs within B's own limit (the environment has one instance for two shares).
    assert starts(result, "b-high") == [20.0]
    assert result.jobs["b"].attempts[0].preemption == "IN_SHARE"
    # At 120 both waiting jobs are within their limits; b was submitted first.
    assert starts(result, "b") == [0.0, 120.0]
    assert starts(result, "a") == [220.0]


def test_priority_raised_while_waiting_reorders_the_queue() -> None:
    jobs = [job("run", "S", 0.0), job("first", "S", 1.0, priority=2),
            job("second", "S", 2.0, priority=1)]
    changes = [PriorityChange(at=50.0, job_id="second", priority=3)]
    result = run(1, [share("S", RESERVE)], jobs, changes)
    assert starts(result, "second") == [100.0]
    assert starts(result, "first") == [200.0]


def test_priority_lowered_while_running_makes_it_a_victim() -> None:
    jobs = [job("runner", "S", 0.0, priority=5), job("waiter", "S", 1.0, priority=3)]
    changes = [PriorityChange(at=30.0, job_id="runner", priority=1)]
    result = run(1, [share("S", RESERVE, in_share=True)], jobs, changes)
    assert starts(result, "waiter") == [30.0]
    assert result.jobs["runner"].attempts[0].preempted_by == "waiter"
    assert result.jobs["runner"].priority == 1


def test_priority_change_after_the_end_does_nothing() -> None:
    result = run(1, [share("S", RESERVE)], [job("j", "S", 0.0, 10.0)],
                 [PriorityChange(at=50.0, job_id="j", priority=7)])
    assert result.jobs["j"].priority == 0
    assert result.jobs["j"].finished_at == 10.0


@pytest.mark.parametrize(("retries", "attempts", "status"),
                         [(0, 1, "FAILED"), (1, 2, "FAILED"), (2, 3, "SUCCEEDED"),
                          (None, 3, "SUCCEEDED")])
def test_preemption_retries_budget(retries: int | None, attempts: int, status: str) -> None:
    jobs = [job("victim", "S", 0.0, 100.0, priority=0, retries=retries),
            job("p1", "S", 10.0, 10.0, priority=5), job("p2", "S", 30.0, 10.0, priority=5)]
    result = run(1, [share("S", RESERVE, in_share=True)], jobs)
    victim = result.jobs["victim"]
    assert (len(victim.attempts), victim.status) == (attempts, status)
    if status == "FAILED":
        assert victim.finished_at == victim.attempts[-1].ended_at
        assert result.shares["S"].failed_preemption_budget == 1


def test_checkpoints_keep_progress_and_count_lost_work() -> None:
    jobs = [job("ck", "S", 0.0, 100.0, checkpoint=30.0), job("p", "S", 70.0, 10.0, priority=5)]
    result = run(1, [share("S", RESERVE, in_share=True)], jobs)
    ck = result.jobs["ck"]
    # Preempted at 70: checkpoints at 30 and 60 keep 60 s, 10 s are lost; 40 s remain.
    assert ck.lost_seconds == 10.0
    assert [(a.started_at, a.ended_at) for a in ck.attempts] == [(0.0, 70.0), (80.0, 120.0)]
    assert result.shares["S"].lost_instance_hours == pytest.approx(10.0 / 3600)

    no_checkpoints = run(1, [share("S", RESERVE, in_share=True)],
                         [job("ck", "S", 0.0, 100.0), jobs[1]])
    assert no_checkpoints.jobs["ck"].lost_seconds == 70.0
    assert no_checkpoints.jobs["ck"].finished_at == 180.0

    ignored = run(1, [share("S", RESERVE, in_share=True)], jobs,
                  options=SimulationOptions(keep_checkpoint_progress=False))
    assert ignored.jobs["ck"].lost_seconds == 70.0


def test_lost_work_is_counted_per_instance() -> None:
    shares = [share("A", LEND_AND_BORROW, 1), share("L", LEND, 2)]
    jobs = [job("a0", "A", 0.0), job("a2", "A", 0.0, count=2), job("l", "L", 25.0, count=2)]
    result = run(3, shares, jobs)
    assert result.jobs["a2"].lost_seconds == 25.0
    assert result.shares["A"].lost_instance_hours == pytest.approx(50.0 / 3600)


def test_capacity_freed_elsewhere_completes_an_in_share_preemption() -> None:
    shares = [share("S", LEND_AND_BORROW, in_share=True), share("T", LEND), share("U", LEND)]
    jobs = [job("low", "S", 0.0, priority=1), job("t", "T", 0.0), job("u", "U", 0.0, 50.0),
            job("high", "S", 10.0, count=2, priority=9)]
    result = run(3, shares, jobs)
    # At 10 preempting "low" would free one instance of the two "high" needs; at 50 U's job
    # ends and the two together make room.
    assert starts(result, "high") == [50.0]
    assert result.jobs["low"].attempts[0].preempted_by == "high"
    assert result.jobs["low"].attempts[0].ended_at == 50.0
