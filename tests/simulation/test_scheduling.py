"""Queue order, head-of-line blocking, simultaneous events and awkward but valid workloads."""

from __future__ import annotations

import random

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec
from quota_constructs.simulation import BorrowerOrder, SimulationOptions

from .invariants import check_no_needless_waiting
from .support import G5, LEND, LEND_AND_BORROW, P4, RESERVE, job, run, share, starts

P5 = "ml.p5.48xlarge"


def test_jobs_submitted_together_start_by_priority_not_list_order() -> None:
    result = run(1, [share("S", RESERVE)],
                 [job("low", "S", 0.0, priority=1), job("high", "S", 0.0, priority=8)])
    assert starts(result, "high") == [0.0]
    assert starts(result, "low") == [100.0]
    # ... and equal priorities by submission time, then list order.
    result = run(1, [share("S", RESERVE)],
                 [job("later", "S", 5.0), job("b", "S", 1.0), job("c", "S", 1.0)])
    assert [starts(result, j)[0] for j in ("b", "c", "later")] == [1.0, 101.0, 201.0]


def test_head_of_line_blocking_and_backfill() -> None:
    shares = [share("S", RESERVE, 2)]
    jobs = [job("running", "S", 0.0, 100.0), job("big", "S", 1.0, 100.0, count=2, priority=5),
            job("small", "S", 2.0, 10.0, priority=1)]
    blocking = run(2, shares, jobs)
    assert starts(blocking, "small") == [200.0]  # waits behind "big"
    assert starts(blocking, "big") == [100.0]
    backfill = run(2, shares, jobs, options=SimulationOptions(head_of_line_blocking=False))
    assert starts(backfill, "small") == [2.0]
    assert starts(backfill, "big") == [100.0]


def test_a_blocked_head_holds_back_only_its_own_instance_type() -> None:
    environment = [CapacityLimit(G5, 1), CapacityLimit(P4, 1)]
    shares = [QuotaShareSpec(name="S", capacity_limits=environment, strategy=RESERVE)]
    jobs = [job("g", "S", 0.0), job("g2", "S", 1.0, priority=9), job("p", "S", 2.0, unit=P4)]
    result = run(environment, shares, jobs)
    assert starts(result, "p") == [2.0]


def test_borrower_order_priority_option() -> None:
    shares = [share("A", LEND_AND_BORROW), share("C", LEND_AND_BORROW), share("L", LEND)]
    jobs = [job("a1", "A", 0.0), job("c1", "C", 0.0), job("l1", "L", 0.0, 50.0),
            job("a2", "A", 10.0, priority=1), job("c2", "C", 20.0, priority=9)]
    fifo = run(3, shares, jobs)
    assert starts(fifo, "a2") == [50.0]
    by_priority = run(3, shares, jobs,
                      options=SimulationOptions(borrower_order=BorrowerOrder.PRIORITY))
    assert starts(by_priority, "c2") == [50.0]


def test_zero_duration_jobs_and_a_crowd_at_one_moment() -> None:
    jobs = [job(f"z{i}", "S", 0.0, 0.0) for i in range(50)]
    jobs += [job(f"c{i}", "S", 0.0, 10.0, priority=i % 7) for i in range(50)]
    result = run(3, [share("S", LEND_AND_BORROW, 2)], jobs)
    assert all(j.status == "SUCCEEDED" for j in result.jobs.values())
    assert all(result.jobs[f"z{i}"].finished_at == result.jobs[f"z{i}"].attempts[0].started_at
               for i in range(50))


def test_huge_jobs_take_the_whole_environment() -> None:
    jobs = [job("whole", "S", 0.0, 10.0, count=1000), job("one", "S", 0.0, 10.0, priority=1)]
    result = run(1000, [share("S", LEND_AND_BORROW, 500)], jobs)
    assert starts(result, "one") == [0.0]
    assert starts(result, "whole") == [10.0]


@pytest.mark.parametrize("seed", [1, 3])
def test_a_messy_trace_like_workload_obeys_every_rule(seed: int) -> None:
    """Heavy-tailed sizes, many jobs at one moment, zero durations, priorities 0-99."""
    rng = random.Random(seed)
    units = {G5: 120, P4: 60, P5: 36}
    strategies = [LEND_AND_BORROW, LEND, RESERVE, LEND_AND_BORROW]
    shares = [
        QuotaShareSpec(
            name=f"s{i}",
            capacity_limits=[CapacityLimit(u, c // 12) for u, c in units.items()],
            strategy=strategies[i % 4],
            in_share_preemption=i % 2 == 0,
        )
        for i in range(10)
    ]
    environment = [CapacityLimit(u, c) for u, c in units.items()]
    jobs = []
    for i in range(700):
        spec = shares[rng.randrange(10)]
        unit, capacity = rng.choice(list(units.items()))
        own = capacity // 12
        # What the share can reach: its own limit, or all but the RESERVE shares' limits.
        most = own if not spec.strategy.borrows else capacity - 3 * own
        jobs.append(job(
            f"j{i}", spec.name, float(rng.randrange(70)),
            float(rng.choice([0, rng.randrange(1, 400)])),
            count=min(most, max(1, int(rng.paretovariate(1.1)))), unit=unit,
            priority=rng.randrange(100), checkpoint=rng.choice([None, 60.0]),
            retries=rng.choice([None, None, 2]),
        ))
    result = run(environment, shares, jobs)
    check_no_needless_waiting(result, capacity_limits=environment, shares=shares, jobs=jobs,
                              in_share=True)
    assert sum(f.cross_share_preemptions for f in result.shares.values()) > 0
    assert sum(f.in_share_preemptions for f in result.shares.values()) > 0


def test_progress_is_reported() -> None:
    from quota_constructs.simulation import simulate

    seen: list[tuple[int, int]] = []
    simulate(capacity_limits=[CapacityLimit(G5, 1)], shares=[share("S", RESERVE)],
             jobs=[job(f"j{i}", "S", float(i), 1.0) for i in range(500)],
             progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (500, 500)
    assert 50 <= len(seen) <= 110
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
