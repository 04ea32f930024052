"""Scenarios derived independently of the engine: AWS Batch's documented rules and Kueue's
published preemption tests, driven only through the DESIGN.md §7 entry point.

Sources (cited per test):
- [AWS-QS]  AWS Batch user guide, "Quota shares" (resource sharing strategy, borrow limit,
            cross-share preemption "to restore borrowed capacity back to a quota share when
            jobs arrive"; the selection heuristic "considers the number and type of instances a
            job is borrowing").
- [AWS-QM]  "Quota management": "preemption will allow any quota share to reclaim resources
            that it has lent to others when needed".
- [AWS-PRE] "Preemption": in-share preemption lets higher-priority RUNNABLE jobs preempt lower
            priority jobs of the same share; UpdateServiceJob lowers a running job's priority
            ("increasing likelihood of preemption") or raises a waiting one's.
- [AWS-CFN] AWS::Batch::QuotaShare BorrowLimit: a percentage of the share's limit, "applied
            uniformly across all capacity units"; -1 unlimited.
- [AWS-API] ServiceJobPreemptionConfiguration.preemptionRetriesBeforeTermination: "the number
            of times a service job can be retried after it is preempted"; unset = unlimited.
- [AWS-WT]  The AWS walkthrough (seed 001): a QS2 job of priority 1 reclaims from a QS1 job of
            priority 2 -- cross-share reclaim ignores priority.
- [KQ]      kueue pkg/scheduler/preemption/preemption_test.go, TestPreemption cases, quoted by
            name. Translation: ClusterQueue -> quota share, nominalQuota -> own limit,
            cohort -> the job queue, borrowingLimit -> borrow limit, withinClusterQueue:
            LowerPriority -> in-share preemption, reclaimWithinCohort -> cross-share preemption
            (AWS always reclaims, whatever the priorities: reclaimWithinCohort Any). Kueue's
            priorities (-1, 0, 1) are shifted to AWS's 0..9999 range (+1). CPU units become
            instances of one type.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict

import pytest

from quota_constructs import CapacityLimit, QuotaConfigError, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import PriorityChange, SimJob, SimulationResult, simulate

from .invariants import check_invariants

G5 = "ml.g5.xlarge"
P4 = "ml.p4d.24xlarge"
RESERVE = SharingStrategy.RESERVE
LEND = SharingStrategy.LEND
LAB = SharingStrategy.LEND_AND_BORROW


def qs(
    name: str,
    strategy: SharingStrategy,
    limits: int | dict[str, int] = 1,
    *,
    borrow: int | None = None,
    in_share: bool = False,
) -> QuotaShareSpec:
    units = {G5: limits} if isinstance(limits, int) else limits
    return QuotaShareSpec(
        name=name,
        capacity_limits=[CapacityLimit(u, n) for u, n in units.items()],
        strategy=strategy,
        borrow_limit_percent=borrow,
        in_share_preemption=in_share,
    )


def sj(
    job_id: str,
    share: str,
    at: float = 0.0,
    duration: float = 1000.0,
    *,
    n: int = 1,
    prio: int = 0,
    unit: str = G5,
    checkpoint: float | None = None,
    retries: int | None = None,
) -> SimJob:
    return SimJob(
        job_id=job_id, share=share, submitted_at=at, duration=duration, instance_type=unit,
        instance_count=n, priority=prio, checkpoint_interval=checkpoint,
        preemption_retries=retries,
    )


def sim(
    env: int | dict[str, int],
    shares: list[QuotaShareSpec],
    jobs: list[SimJob],
    changes: list[PriorityChange] | None = None,
) -> SimulationResult:
    limits = [CapacityLimit(u, n) for u, n in ({G5: env} if isinstance(env, int) else env).items()]
    result = simulate(
        capacity_limits=limits, shares=shares, jobs=jobs, priority_changes=changes or []
    )
    check_invariants(
        result, capacity_limits=limits, shares=shares, jobs=jobs,
        priority_changes=changes or [],
    )
    return result


def first_start(result: SimulationResult, job_id: str) -> float:
    return result.jobs[job_id].attempts[0].started_at


def preempted(result: SimulationResult, job_id: str) -> list[tuple[float, str | None, str | None]]:
    return [
        (a.ended_at, a.preempted_by, a.preemption)
        for a in result.jobs[job_id].attempts
        if a.ended_by == "PREEMPTED"
    ]


def victims_of(result: SimulationResult, preemptor: str) -> set[str]:
    return {
        job_id
        for job_id, outcome in result.jobs.items()
        for a in outcome.attempts
        if a.preempted_by == preemptor
    }


def running_at(result: SimulationResult, t: float) -> set[str]:
    return {
        job_id
        for job_id, outcome in result.jobs.items()
        for a in outcome.attempts
        if a.started_at <= t < a.ended_at
    }


# --- Borrow limits ------------------------------------------------------------------------


def test_borrow_limit_zero_never_borrows() -> None:
    # [AWS-CFN] borrowLimit 0: the share may borrow nothing, even with a lender idle.
    shares = [qs("A", LAB, 2, borrow=0), qs("L", LEND, 2)]
    result = sim(4, shares, [sj(f"a{i}", "A") for i in range(3)])
    assert sorted(first_start(result, f"a{i}") for i in range(3)) == [0.0, 0.0, 1000.0]
    assert not any(a.borrowed for o in result.jobs.values() for a in o.attempts)


def test_unlimited_borrow_takes_every_idle_lendable_instance() -> None:
    # [AWS-CFN] borrowLimit -1 (None here): unlimited -- bounded only by idle capacity.
    shares = [qs("A", LAB, 1), qs("L1", LEND, 2), qs("L2", LAB, 2)]
    result = sim(5, shares, [sj(f"a{i}", "A") for i in range(6)])
    starts = sorted(first_start(result, f"a{i}") for i in range(6))
    assert starts == [0.0] * 5 + [1000.0]
    assert sum(result.jobs[f"a{i}"].attempts[0].borrowed for i in range(6)) == 4


@pytest.mark.parametrize(
    ("limit", "percent", "ceiling"),
    [(4, 50, 6), (3, 50, 4), (2, 100, 4), (1, 200, 3), (2, 25, 2)],
)
def test_borrow_limit_percent_caps_the_share(limit: int, percent: int, ceiling: int) -> None:
    # [AWS-CFN] "if the borrowLimit is 200, the quota share can borrow up to 200% of its
    # configured maxCapacity": the share may hold limit * (1 + percent/100) instances (whole
    # instances: 3 at 50% may hold 4, not 4.5).
    shares = [qs("A", LAB, limit, borrow=percent), qs("L", LEND, 20)]
    jobs = [sj(f"a{i}", "A") for i in range(ceiling + 2)]
    result = sim(limit + 20, shares, jobs)
    at_zero = sum(first_start(result, j.job_id) == 0.0 for j in jobs)
    assert at_zero == ceiling


def test_borrow_limit_percent_applies_to_each_unit_and_multi_instance_jobs() -> None:
    # [AWS-CFN] "applied uniformly across all capacity units": 50% of 2 x G5 is 1 more G5,
    # 50% of 4 x P4 is 2 more P4. A 3-instance job fits G5's ceiling exactly; a 4-instance
    # one would not, but 6 x P4 does.
    shares = [qs("A", LAB, {G5: 2, P4: 4}, borrow=50), qs("L", LEND, {G5: 4, P4: 4})]
    jobs = [
        sj("g3", "A", n=3),
        sj("p6", "A", n=6, unit=P4),
        sj("g1", "A", 1.0),  # would take A to 4 x G5 > 3: waits for g3
        sj("p1", "A", 1.0, unit=P4),  # would take A to 7 x P4 > 6: waits for p6
    ]
    result = sim({G5: 6, P4: 8}, shares, jobs)
    assert first_start(result, "g3") == 0.0 and result.jobs["g3"].attempts[0].borrowed
    assert first_start(result, "p6") == 0.0 and result.jobs["p6"].attempts[0].borrowed
    assert first_start(result, "g1") == 1000.0
    assert first_start(result, "p1") == 1000.0


# --- What a borrower may use ------------------------------------------------------------


def test_borrowing_is_capped_by_lenders_idle_capacity() -> None:
    # [AWS-QS] a share borrows *idle* compute: the lender's running job and a RESERVE
    # share's idle allocation are not available.
    shares = [qs("A", LAB, 1), qs("L", LEND, 2), qs("R", RESERVE, 2)]
    jobs = [sj("l0", "L")] + [sj(f"a{i}", "A", 1.0) for i in range(4)]
    result = sim(5, shares, jobs)
    assert len(running_at(result, 1.0) & {f"a{i}" for i in range(4)}) == 2  # own + L's idle 1


def test_capacity_no_share_owns_can_be_borrowed_but_not_by_lend_or_reserve() -> None:
    # [AWS-QS] LEND_AND_BORROW borrows idle compute, which includes instances of the service
    # environment no share is allocated (DESIGN §7); LEND and RESERVE never borrow.
    shares = [qs("A", LAB, 1), qs("L", LEND, 1), qs("R", RESERVE, 1)]
    jobs = (
        [sj(f"a{i}", "A") for i in range(5)]
        + [sj(f"l{i}", "L") for i in range(2)]
        + [sj(f"r{i}", "R") for i in range(2)]
    )
    result = sim(6, shares, jobs)  # 3 instances nobody owns
    at_zero = running_at(result, 0.0)
    assert len(at_zero & {f"a{i}" for i in range(5)}) == 4  # own 1 + 3 unowned
    assert len(at_zero & {"l0", "l1"}) == 1
    assert len(at_zero & {"r0", "r1"}) == 1


def test_reserve_idle_capacity_is_never_lent_even_to_unlimited_borrowers() -> None:
    # [AWS-QS] RESERVE: "idle compute should be reserved for only its jobs".
    shares = [qs("A", LAB, 1), qs("R", RESERVE, 3)]
    result = sim(4, shares, [sj(f"a{i}", "A") for i in range(3)] + [sj("r", "R", 2500.0)])
    assert sorted(first_start(result, f"a{i}") for i in range(3)) == [0.0, 1000.0, 2000.0]
    assert first_start(result, "r") == 2500.0
    assert not preempted(result, "a0") and not preempted(result, "a2")


def test_lend_share_never_borrows_from_an_idle_lender() -> None:
    # [AWS-QS] LEND lends idle compute; it is not allowed to borrow.
    shares = [qs("L", LEND, 1), qs("M", LEND, 3)]
    result = sim(4, shares, [sj("l0", "L"), sj("l1", "L")])
    assert first_start(result, "l1") == 1000.0


# --- Cross-share preemption --------------------------------------------------------------


def test_lender_reclaims_exactly_what_it_needs_from_borrowed_jobs_only() -> None:
    # [AWS-QS] cross-share preemption restores borrowed capacity when jobs arrive; never a
    # job within its own share's limit (a0). L needs 2 instances: exactly 2 borrowed jobs go,
    # lowest priority first (the simulator's documented victim order).
    shares = [qs("A", LAB, 1), qs("L", LEND, 4)]
    jobs = [sj("a0", "A", prio=9)] + [
        sj(f"a{i}", "A", 1.0, prio=10 - i) for i in range(1, 5)
    ] + [sj("l", "L", 10.0, n=2)]
    result = sim(5, shares, jobs)
    assert victims_of(result, "l") == {"a3", "a4"}
    assert first_start(result, "l") == 10.0
    assert not preempted(result, "a0")
    for victim in ("a3", "a4"):
        assert preempted(result, victim) == [(10.0, "l", "CROSS_SHARE")]
        assert result.jobs[victim].attempts[0].borrowed


def test_cross_share_reclaim_ignores_priority() -> None:
    # [AWS-WT] qs2_job_1 (priority 1) preempts the borrowing qs1_job_med (priority 2).
    # Kueue's "do not reclaim borrowed quota from same priority for
    # withinCohort=ReclaimFromLowerPriority" would keep the borrower; AWS reclaims regardless
    # (Kueue's reclaimWithinCohort: Any), so the priority-0 lender job wins here.
    shares = [qs("A", LAB, 1), qs("L", LEND, 1)]
    jobs = [sj("a0", "A", prio=9999), sj("a1", "A", 1.0, prio=9999), sj("l", "L", 5.0, prio=0)]
    result = sim(2, shares, jobs)
    assert preempted(result, "a1") == [(5.0, "l", "CROSS_SHARE")]


def test_kueue_reclaim_quota_from_borrower() -> None:
    # [KQ] "reclaim quota from borrower": c1 (nominal 6) runs c1-low 3; c2 (nominal 6) runs
    # c2-high 6 and borrows for c2-mid 3. An incoming 3 in c1 fits c1's nominal: c2-mid, the
    # borrowed workload, is preempted; c2-high (within c2's nominal) is not.
    shares = [qs("c1", LAB, 6, borrow=100), qs("c2", LAB, 6, borrow=100)]
    jobs = [
        sj("c1-low", "c1", n=3, prio=0),
        sj("c2-high", "c2", n=6, prio=2),
        sj("c2-mid", "c2", 1.0, n=3, prio=1),
        sj("in", "c1", 10.0, n=3, prio=2),
    ]
    result = sim(12, shares, jobs)
    assert victims_of(result, "in") == {"c2-mid"}
    assert first_start(result, "in") == 10.0


def test_kueue_no_workloads_borrowing_means_no_reclaim() -> None:
    # [KQ] "no workloads borrowing": c1 runs 4, c2 runs 4 (both within nominal 6). An
    # incoming 4 in c1 would take c1 above its nominal. Environment full (8) here, so it
    # must wait: nothing is borrowed to reclaim, and preemption is never used to borrow.
    shares = [qs("c1", LAB, 6, borrow=100), qs("c2", LAB, 6, borrow=100)]
    jobs = [sj("c1-high", "c1", n=4, prio=2), sj("c2-low-1", "c2", n=4, prio=0),
            sj("in", "c1", 10.0, n=4, prio=2)]
    result = sim(8, shares, jobs)
    assert not victims_of(result, "in")
    assert first_start(result, "in") == 1000.0


def test_kueue_not_enough_workloads_borrowing() -> None:
    # [KQ] "not enough workloads borrowing": c2 holds 8 of nominal 6 (c2-low-2 partly
    # borrowed), c1 holds 4 and wants 4 more -- beyond its nominal, so it would have to
    # borrow: AWS never preempts to borrow (Kueue needs borrowWithinCohort for that).
    shares = [qs("c1", LAB, 6, borrow=100), qs("c2", LAB, 6, borrow=100)]
    jobs = [sj("c1-high", "c1", n=4, prio=2), sj("c2-low-1", "c2", n=4, prio=0),
            sj("c2-low-2", "c2", 1.0, n=4, prio=0), sj("in", "c1", 10.0, n=4, prio=2)]
    result = sim(12, shares, jobs)
    assert not victims_of(result, "in")
    assert first_start(result, "in") == 1000.0


def test_kueue_reclaim_borrowed_quota_from_any_priority_multi_instance() -> None:
    # [KQ] "reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny":
    # c1 (nominal 6) runs c1-2 (4, priority 1) then c1-1 (4, priority 0): 8 of 6, so c1-1
    # runs 2 instances on borrowed capacity. c2 (nominal 6) runs 2 and gets a job of 4 --
    # within its nominal. Kueue preempts c1-1. [AWS-QM] "preemption will allow any quota
    # share to reclaim resources that it has lent to others when needed" and [AWS-QS] the
    # heuristic weighs "the number ... of instances a job is borrowing": a job partly on
    # borrowed capacity can be reclaimed; otherwise c2 would wait for c1's job to end
    # although c2 is below its own limit.
    shares = [qs("c1", LAB, 6, borrow=100), qs("c2", LAB, 6, borrow=100)]
    jobs = [sj("c1-2", "c1", n=4, prio=2), sj("c2", "c2", n=2, prio=1),
            sj("c1-1", "c1", 1.0, n=4, prio=1), sj("in", "c2", 10.0, n=4, prio=1)]
    result = sim(12, shares, jobs)
    assert result.jobs["c1-1"].attempts[0].borrowed
    assert victims_of(result, "in") == {"c1-1"}
    assert first_start(result, "in") == 10.0
    assert not preempted(result, "c1-2")


def test_a_borrower_spread_over_several_lenders_gives_back_to_each() -> None:
    # [AWS-QS] a borrower may use idle capacity of several lenders; each lender reclaims
    # when its own jobs arrive, and the borrower's job within its limit is never taken.
    shares = [qs("A", LAB, 1), qs("L1", LEND, 2), qs("L2", LEND, 2)]
    jobs = [sj("a0", "A")] + [sj(f"a{i}", "A", 1.0) for i in range(1, 5)]
    jobs += [sj("l1a", "L1", 10.0), sj("l1b", "L1", 10.0), sj("l2a", "L2", 20.0)]
    result = sim(5, shares, jobs)
    assert len(victims_of(result, "l1a") | victims_of(result, "l1b")) == 2
    assert len(victims_of(result, "l2a")) == 1
    assert not preempted(result, "a0")
    for name in ("l1a", "l1b"):
        assert first_start(result, name) == 10.0
    assert first_start(result, "l2a") == 20.0


def test_a_multi_instance_borrower_over_several_lenders_is_reclaimed() -> None:
    # [AWS-QM] / [AWS-QS]: A (limit 1) runs one 4-instance job borrowing from L1 and L2.
    # L1's job of 2 fits its own limit: the borrowing job must be reclaimed (it is the only
    # capacity L1 lent), not waited for.
    shares = [qs("A", LAB, 1), qs("L1", LEND, 2), qs("L2", LEND, 2)]
    jobs = [sj("a", "A", n=4, duration=10_000.0), sj("l1", "L1", 10.0, n=2)]
    result = sim(5, shares, jobs)
    assert victims_of(result, "l1") == {"a"}
    assert first_start(result, "l1") == 10.0


def test_lender_job_needing_more_than_was_borrowed_preempts_nobody() -> None:
    # Limits add up to more than the environment (4 of 3). A borrows 1; L's job of 2 fits
    # L's limit, but reclaiming A's one borrowed instance leaves it 1 short: nothing is
    # preempted (assumption 3; Kueue's "not enough workloads borrowing" likewise), and A's jobs
    # within A's limit are never taken.
    shares = [qs("A", LAB, 2), qs("L", LEND, 2)]
    jobs = [sj(f"a{i}", "A", float(i)) for i in range(3)] + [sj("l", "L", 10.0, n=2)]
    result = sim(3, shares, jobs)
    assert result.jobs["a2"].attempts[0].borrowed
    assert not any(preempted(result, j) for j in result.jobs)
    assert first_start(result, "l") == 1001.0


def test_lender_job_reclaiming_several_borrowed_jobs_at_once() -> None:
    # [AWS-QS] a 3-instance lender job reclaims three 1-instance borrowed jobs in one go.
    shares = [qs("A", LAB, 1), qs("L", LEND, 3)]
    jobs = [sj(f"a{i}", "A", float(i)) for i in range(4)] + [sj("l", "L", 10.0, n=3)]
    result = sim(4, shares, jobs)
    assert victims_of(result, "l") == {"a1", "a2", "a3"}
    assert first_start(result, "l") == 10.0


def test_simultaneous_lender_and_borrower_arrivals_lender_first() -> None:
    # [AWS-WT]/blog: "AWS Batch prioritizes quota shares that are under their capacity
    # limits": when a lender's job (within its limit) and a borrower's job arrive together
    # and only one instance is idle, the lender's runs and nobody is preempted.
    shares = [qs("A", LAB, 1), qs("L", LEND, 1)]
    jobs = [sj("a0", "A"), sj("a1", "A", 10.0, prio=9999), sj("l", "L", 10.0, prio=0)]
    result = sim(2, shares, jobs)
    assert first_start(result, "l") == 10.0
    assert first_start(result, "a1") == 1000.0
    assert not any(preempted(result, j) for j in result.jobs)


def test_capacity_freed_at_a_lenders_arrival_goes_to_the_lender_first() -> None:
    # [AWS-WT] shares under their limits are scheduled first; DESIGN §7 jobs ending at an
    # instant are processed before arrivals. a1's borrowed instance frees at 100 as L's job
    # arrives: L gets it, the waiting borrower a2 keeps waiting, nobody is preempted.
    shares = [qs("A", LAB, 1), qs("L", LEND, 1)]
    jobs = [sj("a0", "A", duration=500.0), sj("a1", "A", duration=100.0),
            sj("a2", "A", 50.0, prio=9999), sj("l", "L", 100.0)]
    result = sim(2, shares, jobs)
    assert first_start(result, "l") == 100.0
    assert first_start(result, "a2") == 500.0
    assert not any(preempted(result, j) for j in result.jobs)


def test_idle_capacity_goes_to_borrowers_first_come_first_served() -> None:
    # DESIGN §7 / the scheduling policy's idleResourceAssignmentStrategy FIFO: the
    # earliest-submitted waiting borrower gets idle capacity, whatever the priorities.
    shares = [qs("A", LAB, 1), qs("B", LAB, 1), qs("L", LEND, 1)]
    jobs = [sj("a0", "A"), sj("b0", "B"), sj("l", "L", duration=100.0),
            sj("a-early", "A", 5.0, prio=0), sj("b-late", "B", 6.0, prio=9999)]
    result = sim(3, shares, jobs)
    assert first_start(result, "a-early") == 100.0
    assert first_start(result, "b-late") == 1000.0


# --- In-share preemption (Kueue withinClusterQueue: LowerPriority) ----------------------

STANDALONE = [qs("standalone", RESERVE, 6, in_share=True)]


def test_kueue_preempt_lowest_priority() -> None:
    # [KQ] "preempt lowest priority": low/mid/high (2 each) fill 6; incoming priority high,
    # 2 -> only "low" is preempted.
    jobs = [sj("low", "standalone", n=2, prio=0), sj("mid", "standalone", n=2, prio=1),
            sj("high", "standalone", n=2, prio=2), sj("in", "standalone", 10.0, n=2, prio=2)]
    result = sim(6, STANDALONE, jobs)
    assert victims_of(result, "in") == {"low"}
    assert preempted(result, "low") == [(10.0, "in", "IN_SHARE")]


def test_kueue_preempt_multiple() -> None:
    # [KQ] "preempt multiple": incoming 3 needs both strictly lower jobs (low and mid).
    jobs = [sj("low", "standalone", n=2, prio=0), sj("mid", "standalone", n=2, prio=1),
            sj("high", "standalone", n=2, prio=2), sj("in", "standalone", 10.0, n=3, prio=2)]
    result = sim(6, STANDALONE, jobs)
    assert victims_of(result, "in") == {"low", "mid"}
    assert first_start(result, "in") == 10.0


def test_kueue_no_preemption_for_low_priority() -> None:
    # [KQ] "no preemption for low priority": an incoming job of the lowest running priority
    # preempts nobody -- [AWS-PRE] only strictly lower priority jobs are preempted.
    jobs = [sj("low", "standalone", n=3, prio=0), sj("mid", "standalone", n=3, prio=1),
            sj("in", "standalone", 10.0, n=1, prio=0)]
    result = sim(6, STANDALONE, jobs)
    assert not victims_of(result, "in")
    assert first_start(result, "in") == 1000.0


def test_kueue_not_enough_low_priority_workloads() -> None:
    # [KQ] "not enough low priority workloads": only "low" (3) is below the incoming 4's
    # priority; preempting it would not make room, so nothing is preempted (simulator
    # assumption 3; Kueue agrees).
    jobs = [sj("low", "standalone", n=3, prio=0), sj("mid", "standalone", n=3, prio=1),
            sj("in", "standalone", 10.0, n=4, prio=1)]
    result = sim(6, STANDALONE, jobs)
    assert not victims_of(result, "in")
    assert not preempted(result, "low")
    assert first_start(result, "in") == 1000.0


def test_kueue_some_free_quota_preempt_low_priority() -> None:
    # [KQ] "some free quota, preempt low priority": 1 free + low's 1 make room for 2.
    jobs = [sj("low", "standalone", n=1, prio=0), sj("mid", "standalone", n=1, prio=1),
            sj("high", "standalone", n=3, prio=2), sj("in", "standalone", 10.0, n=2, prio=2)]
    result = sim(6, STANDALONE, jobs)
    assert victims_of(result, "in") == {"low"}


def test_kueue_minimal_set_excludes_low_priority() -> None:
    # [KQ] "minimal set excludes low priority": low (1), mid (2), high (3) fill 6; incoming
    # 2 preempts only mid -- low alone is not enough, and with mid gone low is not needed.
    jobs = [sj("low", "standalone", n=1, prio=0), sj("mid", "standalone", n=2, prio=1),
            sj("high", "standalone", n=3, prio=2), sj("in", "standalone", 10.0, n=2, prio=2)]
    result = sim(6, STANDALONE, jobs)
    assert victims_of(result, "in") == {"mid"}
    assert not preempted(result, "low")


def test_kueue_preempting_locally_not_borrowing_in_one_queue_cohort() -> None:
    # [KQ] "preempting locally and not borrowing same resource in 1-queue cohort": l1
    # (nominal 6, may borrow but nobody lends) runs med 4 and low 2; incoming 4 preempts med
    # alone (low's 2 is not enough and not needed with med gone).
    shares = [qs("l1", LAB, 6, borrow=100, in_share=True)]
    jobs = [sj("l1-med", "l1", n=4, prio=1), sj("l1-low", "l1", n=2, prio=0),
            sj("in", "l1", 10.0, n=4, prio=2)]
    result = sim(6, shares, jobs)
    assert victims_of(result, "in") == {"l1-med"}


def test_kueue_preempting_locally_and_borrowing_same_resource() -> None:
    # [KQ] "preempting locally and borrowing same resource in cohort": c1 (nominal 6) runs
    # med 4 and low 4 (2 borrowed); c2 runs 4; the environment is full. Incoming 4 in c1
    # preempts c1-low in-share and runs on the same (partly borrowed) capacity; c2's job,
    # within c2's limit, is untouched. Kueue's scheduler would not get this far: its
    # scheduler_test "A workload is only eligible to do preemptions if it fits fully within
    # nominal quota" keeps a workload that must borrow from preempting at all. AWS documents
    # no such limit for in-share preemption ([AWS-PRE]; in the walkthrough the raised job
    # preempts while its share is at its limit), and DESIGN §7 only forbids *cross-share*
    # preemption to borrow -- so the simulator (assumption 7) follows the preemptor here.
    shares = [qs("c1", LAB, 6, borrow=100, in_share=True), qs("c2", LAB, 6, borrow=100)]
    jobs = [sj("c1-med", "c1", n=4, prio=1), sj("c1-low", "c1", 1.0, n=4, prio=0),
            sj("c2-low-1", "c2", n=4, prio=0), sj("in", "c1", 10.0, n=4, prio=2)]
    result = sim(12, shares, jobs)
    assert victims_of(result, "in") == {"c1-low"}
    assert preempted(result, "c1-low")[0][2] == "IN_SHARE"
    assert first_start(result, "in") == 10.0


def test_kueue_never_policy_and_equal_priority_never_preempt() -> None:
    # [KQ] "can't preempt workloads in ClusterQueue for withinClusterQueue=Never" ->
    # in-share preemption disabled. And Kueue's LowerOrNewerEqualPriority ("preempt newer
    # workloads with the same priority") has no AWS counterpart: [AWS-PRE] in-share
    # preemption needs a *higher* priority, so an equal-priority job waits.
    disabled = sim(2, [qs("S", RESERVE, 2)],
                   [sj("low", "S", n=2, prio=0), sj("in", "S", 10.0, n=1, prio=9)])
    assert first_start(disabled, "in") == 1000.0
    equal = sim(2, [qs("S", RESERVE, 2, in_share=True)],
                [sj("old", "S", n=2, prio=5), sj("new", "S", 10.0, n=1, prio=5)])
    assert first_start(equal, "new") == 1000.0


def test_in_share_preemption_only_takes_jobs_of_the_same_share() -> None:
    # [AWS-PRE] in-share preemption preempts jobs "within the same quota share": a
    # high-priority job of S never takes a low-priority job of T, even with both enabled.
    shares = [qs("S", RESERVE, 1, in_share=True), qs("T", RESERVE, 1, in_share=True)]
    jobs = [sj("s0", "S", prio=9), sj("t0", "T", prio=0), sj("s1", "S", 10.0, prio=9999)]
    result = sim(2, shares, jobs)
    assert not preempted(result, "t0")
    assert preempted(result, "s0") == [(10.0, "s1", "IN_SHARE")]


def test_multi_instance_job_needing_several_in_share_victims() -> None:
    # [AWS-PRE] + instance counts: a 3-instance job takes three 1-instance lower-priority
    # jobs; a priority-9 job above it cannot be taken.
    shares = [qs("S", RESERVE, 4, in_share=True)]
    jobs = [sj("keep", "S", prio=9)] + [sj(f"v{i}", "S", prio=i) for i in range(3)]
    jobs.append(sj("big", "S", 10.0, n=3, prio=5))
    result = sim(4, shares, jobs)
    assert victims_of(result, "big") == {"v0", "v1", "v2"}
    assert not preempted(result, "keep")


def test_multi_instance_job_that_cannot_start_preempts_nobody() -> None:
    # A 4-instance job of priority 5 in a share of 4 where one running job has priority 9:
    # the three lower jobs free only 3, so none is preempted (assumption 3, as in Kueue).
    shares = [qs("S", RESERVE, 4, in_share=True)]
    jobs = [sj("keep", "S", prio=9)] + [sj(f"v{i}", "S", prio=i) for i in range(3)]
    jobs.append(sj("big", "S", 10.0, n=4, prio=5))
    result = sim(4, shares, jobs)
    assert not victims_of(result, "big")
    assert first_start(result, "big") == 1000.0


def test_kueue_only_preempt_workloads_using_the_chosen_flavor() -> None:
    # [KQ] "only preempt workloads using the chosen flavor": capacity is counted per instance
    # type (a flavor ~ an instance type), so a P4 job preempts only lower-priority P4 jobs,
    # never a lower-priority G5 job of its share.
    shares = [qs("S", RESERVE, {G5: 1, P4: 1}, in_share=True)]
    jobs = [sj("g-low", "S", prio=0), sj("p-mid", "S", prio=1, unit=P4),
            sj("in", "S", 10.0, prio=2, unit=P4)]
    result = sim({G5: 1, P4: 1}, shares, jobs)
    assert victims_of(result, "in") == {"p-mid"}
    assert not preempted(result, "g-low")


def test_in_share_and_cross_share_preemption_are_not_combined_for_one_job() -> None:
    # Differs from [KQ] "preempt from all ClusterQueues in cohort-lend", where one incoming
    # workload preempts in its own queue *and* reclaims from another at once. L (limit 6)
    # runs 5, B borrows 1 of L's instances; L's new job of 4 would exceed L's limit, so it
    # cannot reclaim (AWS reclaims for jobs that fit the lender's limit), and preempting
    # l-low in-share would leave it 1 instance short: AWS documents neither combination, so
    # the simulator (assumptions 3 and 7) preempts nobody and the job waits for capacity.
    shares = [qs("L", LAB, 6, in_share=True), qs("B", LAB, 6)]
    jobs = [sj("l-low", "L", n=3, prio=0), sj("l-mid", "L", n=2, prio=1),
            sj("b-own", "B", n=6), sj("b-borrow", "B", 1.0, n=1), sj("in", "L", 10.0, n=4, prio=1)]
    result = sim(12, shares, jobs)
    assert not any(preempted(result, j) for j in result.jobs)
    assert first_start(result, "in") == 1000.0


# --- Priority changes ---------------------------------------------------------------------


def test_lowering_a_running_jobs_priority_makes_it_an_in_share_victim() -> None:
    # [AWS-PRE] lowering "the priority of a RUNNING job (increasing likelihood of preemption)".
    shares = [qs("S", RESERVE, 2, in_share=True)]
    jobs = [sj("r1", "S", prio=5), sj("r2", "S", prio=5), sj("w", "S", 10.0, prio=3)]
    result = sim(2, shares, jobs, [PriorityChange(at=20.0, job_id="r2", priority=1)])
    assert preempted(result, "r2") == [(20.0, "w", "IN_SHARE")]
    assert not preempted(result, "r1")
    assert first_start(result, "w") == 20.0


def test_lowering_a_running_borrowers_priority_makes_it_the_cross_share_victim() -> None:
    # [AWS-QS] the heuristic weighs relative priorities; with the simulator's order (lowest
    # priority first) a borrowed job whose priority was lowered goes before a newer one.
    shares = [qs("A", LAB, 1), qs("L", LEND, 2)]
    jobs = [sj("a0", "A"), sj("b1", "A", 1.0, prio=5), sj("b2", "A", 2.0, prio=5),
            sj("l", "L", 10.0)]
    result = sim(3, shares, jobs, [PriorityChange(at=5.0, job_id="b1", priority=0)])
    assert victims_of(result, "l") == {"b1"}


def test_raising_a_waiting_jobs_priority_moves_it_ahead_without_preempting() -> None:
    # [AWS-PRE] without in-share preemption a raised job waits for capacity, then goes
    # first.
    shares = [qs("S", RESERVE, 1)]
    jobs = [sj("run", "S", prio=1), sj("w1", "S", 1.0, prio=5), sj("w2", "S", 2.0, prio=1)]
    result = sim(1, shares, jobs, [PriorityChange(at=3.0, job_id="w2", priority=9)])
    assert not preempted(result, "run")
    assert first_start(result, "w2") == 1000.0
    assert first_start(result, "w1") == 2000.0


def test_raising_a_waiting_jobs_priority_preempts_in_share() -> None:
    # [AWS-WT] qs1_job_low raised to 4 preempts the running priority-3 job of QS1.
    shares = [qs("S", RESERVE, 1, in_share=True)]
    jobs = [sj("run", "S", prio=3), sj("w", "S", 1.0, prio=1)]
    result = sim(1, shares, jobs, [PriorityChange(at=50.0, job_id="w", priority=4)])
    assert preempted(result, "run") == [(50.0, "w", "IN_SHARE")]


def test_priority_change_at_submission_and_after_the_end() -> None:
    # [AWS-PRE] a change at the very instant of submission already orders the queue; one
    # after the job ended changes nothing (simulator assumption 8).
    shares = [qs("S", RESERVE, 1)]
    jobs = [sj("a", "S", prio=5), sj("b", "S", prio=1), sj("c", "S", 2000.0, duration=10.0)]
    changes = [PriorityChange(at=0.0, job_id="b", priority=9),
               PriorityChange(at=5000.0, job_id="c", priority=1)]
    result = sim(1, shares, jobs, changes)
    assert first_start(result, "b") == 0.0 and first_start(result, "a") == 1000.0
    assert result.jobs["c"].status == "SUCCEEDED" and result.jobs["c"].finished_at == 2010.0


def test_raising_a_running_jobs_priority_protects_it() -> None:
    # [AWS-PRE] priorities are weighed when preempting: r2 raised above the waiting job is
    # no longer a victim; r1, still lower, is taken instead.
    shares = [qs("S", RESERVE, 2, in_share=True)]
    jobs = [sj("r1", "S", prio=1), sj("r2", "S", 1.0, prio=1), sj("w", "S", 10.0, prio=5)]
    result = sim(2, shares, jobs, [PriorityChange(at=5.0, job_id="r2", priority=7)])
    assert victims_of(result, "w") == {"r1"}


def test_a_preempted_job_waiting_again_can_have_its_priority_raised() -> None:
    # [AWS-PRE] a preempted job is RUNNABLE again; raising it lets it preempt in turn.
    shares = [qs("S", RESERVE, 1, in_share=True)]
    jobs = [sj("v", "S", prio=1), sj("h", "S", 10.0, prio=5)]
    result = sim(1, shares, jobs, [PriorityChange(at=20.0, job_id="v", priority=9)])
    assert preempted(result, "v") == [(10.0, "h", "IN_SHARE")]
    assert preempted(result, "h") == [(20.0, "v", "IN_SHARE")]


# --- Preemption budgets, checkpoints and lost work ---------------------------------------


def test_preemption_retries_zero_fails_on_first_preemption() -> None:
    # [AWS-API] retries 0: "terminated when preemption retries have been exhausted".
    shares = [qs("S", RESERVE, 1, in_share=True)]
    jobs = [sj("v", "S", prio=0, retries=0), sj("h", "S", 30.0, prio=9)]
    result = sim(1, shares, jobs)
    v = result.jobs["v"]
    assert (v.status, v.finished_at, len(v.attempts)) == ("FAILED", 30.0, 1)
    assert v.lost_seconds == 30.0


def test_preemption_retries_n_allows_n_requeues() -> None:
    # [AWS-API] retries 2: preempted three times -> FAILED at the third; unset -> requeued.
    shares = [qs("S", RESERVE, 1, in_share=True)]
    highs = [sj(f"h{i}", "S", 100.0 * (i + 1), duration=10.0, prio=9) for i in range(3)]
    failing = sim(1, shares, [sj("v", "S", prio=0, retries=2), *highs])
    v = failing.jobs["v"]
    assert v.status == "FAILED" and v.finished_at == 300.0
    assert [a.ended_at for a in v.attempts] == [100.0, 200.0, 300.0]
    unlimited = sim(1, shares, [sj("v", "S", prio=0), *highs])
    v = unlimited.jobs["v"]
    assert v.status == "SUCCEEDED" and len(v.attempts) == 4
    budget_left = sim(1, shares, [sj("v", "S", prio=0, retries=3), *highs])
    assert budget_left.jobs["v"].status == "SUCCEEDED"


@pytest.mark.parametrize(
    ("checkpoint", "ran", "lost"),
    [(None, 70.0, 70.0), (30.0, 70.0, 10.0), (30.0, 60.0, 0.0), (100.0, 70.0, 70.0),
     (7.5, 70.0, 2.5)],
)
def test_checkpoint_interval_and_lost_seconds(
    checkpoint: float | None, ran: float, lost: float
) -> None:
    # Simulator assumption 9: progress saved every `checkpoint` seconds of running; a
    # preempted job resumes from its last checkpoint and the rest is lost.
    shares = [qs("S", RESERVE, 1, in_share=True)]
    jobs = [sj("v", "S", duration=100.0, checkpoint=checkpoint, prio=0),
            sj("h", "S", ran, duration=50.0, prio=9)]
    result = sim(1, shares, jobs)
    v = result.jobs["v"]
    assert math.isclose(v.lost_seconds, lost)
    second = v.attempts[1]
    assert second.started_at == ran + 50.0
    assert math.isclose(second.ended_at - second.started_at, 100.0 - (ran - lost))
    assert math.isclose(v.finished_at, ran + 50.0 + 100.0 - (ran - lost))


def test_lost_seconds_accumulate_over_preemptions_with_checkpoints() -> None:
    # Two preemptions, checkpoint every 40: first run 50 (keep 40, lose 10), second run 50
    # of the remaining 60 (keep 40 more, lose 10), last run 20.
    shares = [qs("S", RESERVE, 1, in_share=True)]
    jobs = [sj("v", "S", duration=100.0, checkpoint=40.0, prio=0),
            sj("h1", "S", 50.0, duration=10.0, prio=9),
            sj("h2", "S", 110.0, duration=10.0, prio=9)]
    result = sim(1, shares, jobs)
    v = result.jobs["v"]
    assert [(a.started_at, a.ended_at) for a in v.attempts] == [
        (0.0, 50.0), (60.0, 110.0), (120.0, 140.0)]
    assert math.isclose(v.lost_seconds, 20.0)


# --- Simultaneous arrivals and zero durations ----------------------------------------------


def test_simultaneous_arrivals_go_by_priority_not_list_order() -> None:
    # [AWS-PRE] priorities order a share's RUNNABLE jobs; jobs submitted at one instant are
    # ordered by priority (assumption 10), whatever the input order.
    shares = [qs("S", RESERVE, 1)]
    jobs = [sj("p1", "S", prio=1), sj("p7", "S", prio=7), sj("p3", "S", prio=3)]
    result = sim(1, shares, jobs)
    order = sorted(result.jobs, key=lambda j: first_start(result, j))
    assert order == ["p7", "p3", "p1"]
    assert not any(preempted(result, j) for j in result.jobs)


def test_a_job_ending_hands_its_capacity_to_a_job_arriving_at_that_instant() -> None:
    result = sim(1, [qs("S", RESERVE, 1)], [sj("a", "S", duration=100.0), sj("b", "S", 100.0)])
    assert first_start(result, "b") == 100.0


def test_zero_duration_jobs_need_an_instance_for_an_instant_and_are_never_victims() -> None:
    # Traces hold zero-duration jobs (failed at start). Simulator assumption 10: such a job
    # starts and ends at once; like any job it needs its instances to start (AWS must place
    # it), so it waits for them or preempts for them, but never holds them afterwards.
    shares = [qs("S", RESERVE, 1, in_share=True)]
    jobs = [sj("z0", "S", duration=0.0, prio=0), sj("busy", "S", 1.0, duration=100.0, prio=5),
            sj("z1", "S", 2.0, duration=0.0, prio=9), sj("z2", "S", 3.0, duration=0.0, prio=1),
            sj("after", "S", 3.0, duration=10.0, prio=0)]
    result = sim(1, shares, jobs)
    z0 = result.jobs["z0"]
    assert (z0.status, z0.finished_at, len(z0.attempts), z0.lost_seconds) == (
        "SUCCEEDED", 0.0, 1, 0.0)
    assert result.jobs["z1"].finished_at == 2.0  # outranks busy: preempts it for an instant
    assert preempted(result, "busy") == [(2.0, "z1", "IN_SHARE")]
    assert first_start(result, "busy") == 1.0 and result.jobs["busy"].finished_at == 102.0
    assert result.jobs["z2"].finished_at == 102.0  # below busy: waits for it
    # z2 ended as it started: the instance goes on to the next job at the same instant.
    assert first_start(result, "after") == 102.0


# --- Input errors --------------------------------------------------------------------------

ERR_SHARES = [qs("A", LAB, 2, borrow=50), qs("R", RESERVE, 2), qs("L", LEND, 1)]


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (sj("x", "nope"), "share"),
        (sj("x", "A", unit="ml.p5.48xlarge"), "instance_type"),
        (sj("x", "A", unit=P4), "instance_type"),  # in the environment, not in A's limits
        (sj("x", "A", -1.0), "submitted_at"),
        (sj("x", "A", duration=-5.0), "duration"),
        (sj("x", "A", n=4), "instance_count"),  # A can reach 2 + 50% = 3
        (sj("x", "L", n=2), "instance_count"),  # LEND never borrows
        (sj("x", "A", prio=-1), "priority"),
        (sj("x", "A", prio=10_000), "priority"),
        (sj("x", "A", n=0), "instance_count"),
        (sj("x", "A", retries=-1), "preemption_retries"),
        (sj("x", "A", checkpoint=0.0), "checkpoint_interval"),
    ],
)
def test_input_errors_name_the_job_and_field(bad: SimJob, field: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        simulate(capacity_limits=[CapacityLimit(G5, 6), CapacityLimit(P4, 2)],
                 shares=ERR_SHARES, jobs=[sj("ok", "A"), bad])
    assert caught.value.field == field
    assert "'x'" in str(caught.value)


def test_job_larger_than_the_environment_less_reserved_is_an_error() -> None:
    # An unlimited borrower can never hold R's reserved instances: 6 - 2 = 4 at most.
    shares = [qs("A", LAB, 1), qs("R", RESERVE, 2)]
    with pytest.raises(QuotaConfigError) as caught:
        simulate(capacity_limits=[CapacityLimit(G5, 6)], shares=shares, jobs=[sj("x", "A", n=5)])
    assert caught.value.field == "instance_count" and "'x'" in str(caught.value)
    simulate(capacity_limits=[CapacityLimit(G5, 6)], shares=shares, jobs=[sj("x", "A", n=4)])


def test_duplicate_ids_and_bad_priority_changes_are_errors() -> None:
    limits = [CapacityLimit(G5, 6)]
    with pytest.raises(QuotaConfigError) as caught:
        simulate(capacity_limits=limits, shares=ERR_SHARES, jobs=[sj("d", "A"), sj("d", "R")])
    assert caught.value.field == "job_id" and "'d'" in str(caught.value)
    for change, field in [
        (PriorityChange(at=1.0, job_id="ghost", priority=1), "job_id"),
        (PriorityChange(at=1.0, job_id="ok", priority=10_000), "priority"),
        (PriorityChange(at=-1.0, job_id="ok", priority=1), "at"),
    ]:
        with pytest.raises(QuotaConfigError) as caught:
            simulate(capacity_limits=limits, shares=ERR_SHARES, jobs=[sj("ok", "A")],
                     priority_changes=[change])
        assert caught.value.field == field
        assert repr(change.job_id) in str(caught.value)


# --- A trace-like random workload ----------------------------------------------------------


def _trace(seed: int) -> tuple[dict[str, int], list[QuotaShareSpec], list[SimJob],
                               list[PriorityChange]]:
    """Philly/Alibaba-like: bursts at one timestamp, heavy-tailed and zero durations, jobs of
    8+ instances, checkpoints, budgets, priority changes."""
    rng = random.Random(seed)
    env = {G5: 24, P4: 16}
    shares = [
        qs("train", LAB, {G5: 8, P4: 8}, borrow=100, in_share=True),
        qs("research", LAB, {G5: 4, P4: 2}, in_share=rng.random() < 0.5),
        qs("prod", RESERVE, {G5: 4, P4: 4}, in_share=True),
        qs("batch", LEND, {G5: 6}),
    ]
    reach = {("train", G5): 16, ("train", P4): 12, ("research", G5): 20, ("research", P4): 12,
             ("prod", G5): 4, ("prod", P4): 4, ("batch", G5): 6}
    jobs: list[SimJob] = []
    t = 0.0
    for i in range(400):
        if rng.random() < 0.7:  # bursts: many jobs at the same instant
            t += rng.choice([0.0, 0.0, 0.0, rng.expovariate(1 / 600)])
        share, unit = rng.choice(list(reach))
        n = min(reach[(share, unit)], rng.choice([1, 1, 1, 2, 4, 8, 8, 12, 16]))
        duration = rng.choice([0.0, rng.expovariate(1 / 3600), rng.paretovariate(1.2) * 300,
                               1e7 if rng.random() < 0.02 else 60.0])
        jobs.append(sj(
            f"j{i}", share, round(t, 3), duration, n=n, unit=unit,
            prio=rng.choice([0, 1, 5, 100, 9999]),
            checkpoint=rng.choice([None, 600.0, 3600.0]),
            retries=rng.choice([None, None, 0, 1, 3]),
        ))
    changes = [
        PriorityChange(at=jobs[i].submitted_at + rng.uniform(0, 5000), job_id=f"j{i}",
                       priority=rng.randrange(0, 10_000))
        for i in rng.sample(range(len(jobs)), 40)
    ]
    return env, shares, jobs, changes


@pytest.mark.parametrize("seed", range(6))
def test_trace_like_workload_keeps_every_rule(seed: int) -> None:
    env, shares, jobs, changes = _trace(seed)
    result = sim(env, shares, jobs, changes)  # check_invariants: capacity, RESERVE, limits
    spec = {s.name: s for s in shares}
    by_id = {j.job_id: j for j in jobs}
    usage: dict[tuple[str, str], list[tuple[float, int]]] = defaultdict(list)
    for job in jobs:
        outcome = result.jobs[job.job_id]
        assert outcome.status in ("SUCCEEDED", "FAILED")
        assert outcome.finished_at >= job.submitted_at
        if job.duration == 0.0:
            assert outcome.lost_seconds == 0.0 and outcome.status == "SUCCEEDED"
        for a in outcome.attempts:
            if a.ended_at > a.started_at:
                usage[(job.share, job.instance_type)] += [
                    (a.started_at, job.instance_count), (a.ended_at, -job.instance_count)]
    # LEND and RESERVE never above their limit; borrowers never above their ceiling.
    for (name, unit), events in usage.items():
        held = 0
        for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
            held += delta
            assert held <= spec[name].ceiling_of(unit)
            if spec[name].strategy is not LAB:
                assert held <= spec[name].limit_of(unit)
    # Every cross-share victim was borrowing and its preemptor's share is a different one.
    for outcome in result.jobs.values():
        for a in outcome.attempts:
            if a.preemption == "CROSS_SHARE":
                assert a.borrowed
                assert by_id[a.preempted_by or ""].share != outcome.share


def test_the_aws_walkthrough_replayed_through_the_entry_point() -> None:
    # [AWS-WT] three shares of one ml.g5.xlarge. QS1 (LEND_AND_BORROW, borrow 200, in-share)
    # gets priorities 3, 2, 1: high on its own instance, med borrows QS2's, low waits (QS3
    # reserves). A QS2 job reclaims med (cross-share); raising low to 4 preempts high
    # (in-share).
    shares = [qs("QS1", LAB, 1, borrow=200, in_share=True), qs("QS2", LEND, 1),
              qs("QS3", RESERVE, 1)]
    jobs = [sj("qs1_job_high", "QS1", 0.0, 3600.0, prio=3),
            sj("qs1_job_med", "QS1", 0.0, 3600.0, prio=2),
            sj("qs1_job_low", "QS1", 0.0, 3600.0, prio=1),
            sj("qs2_job_1", "QS2", 600.0, 600.0, prio=1)]
    result = sim(3, shares, jobs, [PriorityChange(at=900.0, job_id="qs1_job_low", priority=4)])
    high, med, low = (result.jobs[f"qs1_job_{p}"] for p in ("high", "med", "low"))
    assert (high.attempts[0].started_at, high.attempts[0].borrowed) == (0.0, False)
    assert (med.attempts[0].started_at, med.attempts[0].borrowed) == (0.0, True)
    assert preempted(result, "qs1_job_med")[0] == (600.0, "qs2_job_1", "CROSS_SHARE")
    assert first_start(result, "qs2_job_1") == 600.0
    assert (low.attempts[0].started_at, low.attempts[0].borrowed) == (900.0, False)
    assert preempted(result, "qs1_job_high")[0] == (900.0, "qs1_job_low", "IN_SHARE")
    assert running_at(result, 950.0) == {"qs1_job_low", "qs2_job_1"}
    assert all(o.status == "SUCCEEDED" for o in result.jobs.values())
    qs1, qs2, qs3 = (result.shares[name] for name in ("QS1", "QS2", "QS3"))
    assert (qs1.cross_share_preemptions, qs1.in_share_preemptions) == (1, 1)
    assert qs2.cross_share_preemptions == qs2.in_share_preemptions == 0
    # QS3 reserves: its idle instance is never used or lent; QS2 lends, never borrows.
    assert qs3.used_capacity_hours == qs3.lent_capacity_hours == qs3.borrowed_capacity_hours == 0
    assert qs2.borrowed_capacity_hours == 0 and qs2.lent_capacity_hours > 0
    assert math.isclose(qs1.borrowed_capacity_hours, qs2.lent_capacity_hours)
