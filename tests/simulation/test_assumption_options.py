"""The simulator's stated assumptions, each with its other reasonable choice."""

from __future__ import annotations

import pytest

from quota_constructs import CapacityLimit, QuotaConfigError, QuotaShareSpec
from quota_constructs.simulation import (
    HeadOfLine,
    NeverRunnable,
    RequeuePlace,
    SimulationOptions,
    compare_policies,
    simulate,
)

from .support import G5, LEND, LEND_AND_BORROW, RESERVE, job, run, share, starts

G6 = "ml.g6.xlarge"


def test_a_never_runnable_job_rejects_a_hand_written_workload_by_default() -> None:
    shares = [share("A", LEND, 1)]
    with pytest.raises(QuotaConfigError) as raised:
        simulate(capacity_limits=[CapacityLimit(G5, 2)], shares=shares,
                 jobs=[job("ok", "A", 0.0, 10.0), job("huge", "A", 0.0, 10.0, count=2)])
    assert raised.value.subject == "simulated job 'huge'"


def test_a_replay_with_a_never_runnable_job_runs_and_reports_it_blocked() -> None:
    shares = [share("A", LEND, 1), share("B", RESERVE, 1)]
    jobs = [
        job("a1", "A", 0.0, 10.0),
        job("huge", "A", 0.0, 10.0, count=2),  # more than A can ever reach
        job("other-type", "A", 1.0, 5.0, unit=G6),  # a type the environment does not list
        job("a2", "A", 5.0, 10.0),
        job("b1", "B", 0.0, 10.0),
    ]
    options = SimulationOptions(never_runnable=NeverRunnable.BLOCK)
    result = simulate(capacity_limits=[CapacityLimit(G5, 2)], shares=shares, jobs=jobs,
                      options=options)
    assert result.blocked == ("huge", "other-type")
    assert "huge" not in result.jobs
    assert result.shares["A"].blocked_jobs == 2
    assert result.shares["A"].jobs == 4
    assert result.shares["B"].blocked_jobs == 0
    # The blocked jobs hold nothing back: the runnable ones run as without them.
    assert starts(result, "a1") == [0.0] and starts(result, "a2") == [10.0]
    assert all(job.status == "SUCCEEDED" for job in result.jobs.values())
    comparison = compare_policies(capacity_limits=[CapacityLimit(G5, 2)], shares=shares,
                                  jobs=jobs, options=options)
    assert comparison.hard_partition.blocked == ("huge", "other-type")


def test_per_share_head_holds_back_the_shares_other_types() -> None:
    limits = [CapacityLimit(G5, 1), CapacityLimit(G6, 1)]
    shares = [QuotaShareSpec(name="A", capacity_limits=[CapacityLimit(G5, 1), CapacityLimit(G6, 1)],
                             strategy=LEND)]
    # A's own g5 is busy until 100; its high-priority g5 job is the share's head from 10 on.
    jobs = [
        job("a-first", "A", 0.0, 100.0),
        job("a-g5", "A", 10.0, 10.0, priority=5),
        job("a-g6", "A", 20.0, 10.0, unit=G6),
    ]
    per_type = run(limits, shares, jobs)
    assert starts(per_type, "a-g6") == [20.0]
    per_share = run(limits, shares, jobs,
                    options=SimulationOptions(head_of_line=HeadOfLine.PER_SHARE))
    # One head per share: the g6 job waits behind the g5 head until that one starts.
    assert starts(per_share, "a-g5") == [100.0]
    assert starts(per_share, "a-g6") == [100.0]
    # Off, nothing holds anyone back (the earlier flag still means the same).
    for options in (SimulationOptions(head_of_line=HeadOfLine.NONE),
                    SimulationOptions(head_of_line_blocking=False)):
        assert starts(run(limits, shares, jobs, options=options), "a-g6") == [20.0]


def test_a_preempted_job_keeps_its_place_unless_asked_to_requeue_at_the_back() -> None:
    shares = [share("A", LEND_AND_BORROW, 1), share("B", LEND, 1)]
    jobs = [
        job("a-borrow", "A", 0.0, 100.0),  # A's own instance
        job("a-early", "A", 1.0, 100.0),   # borrows B's instance
        job("b", "B", 10.0, 20.0),         # reclaims it: a-early is preempted at 10
        job("a-later", "A", 5.0, 100.0),   # waits since 5, behind a-early
    ]
    original = run(2, shares, jobs)
    assert starts(original, "a-early")[1] < starts(original, "a-later")[0]
    back = run(2, shares, jobs,
               options=SimulationOptions(requeue_place=RequeuePlace.BACK))
    assert starts(back, "a-later")[0] < starts(back, "a-early")[1]
