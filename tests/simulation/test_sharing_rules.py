"""Lending and borrowing: what each strategy may do with idle capacity (DESIGN §7)."""

from __future__ import annotations

import pytest

from quota_constructs import CapacityLimit

from .support import G5, LEND, LEND_AND_BORROW, P4, RESERVE, job, run, share, starts


def test_reserve_never_lends_its_idle_allocation() -> None:
    result = run(
        2,
        [share("R", RESERVE), share("B", LEND_AND_BORROW)],
        [job("b1", "B"), job("b2", "B")],
    )
    assert starts(result, "b1") == [0.0]
    assert starts(result, "b2") == [100.0]  # R's idle instance is never lent


def test_reserve_never_borrows() -> None:
    result = run(2, [share("R", RESERVE), share("L", LEND)], [job("r1", "R"), job("r2", "R")])
    assert starts(result, "r2") == [100.0]


def test_lend_lends_but_never_borrows() -> None:
    result = run(
        3,
        [share("L1", LEND), share("L2", LEND), share("B", LEND_AND_BORROW)],
        [job("l1", "L1"), job("l1b", "L1"), job("b1", "B"), job("b2", "B", 1.0)],
    )
    assert starts(result, "l1b") == [100.0]  # L2's idle instance is not for L1
    assert starts(result, "b2") == [1.0]  # but B borrows it
    assert result.jobs["b2"].attempts[0].borrowed


@pytest.mark.parametrize(
    ("borrow", "own", "running_at_once"),
    [(None, 1, 6), (0, 1, 1), (100, 1, 2), (200, 1, 3), (50, 2, 3), (50, 1, 1)],
)
def test_borrow_limit_is_a_percentage_of_the_own_limit(
    borrow: int | None, own: int, running_at_once: int
) -> None:
    result = run(
        6,
        [share("B", LEND_AND_BORROW, own, borrow=borrow), share("L", LEND, 6 - own)],
        [job(f"b{i}", "B") for i in range(6)],
    )
    at_zero = [j for j in result.jobs.values() if j.attempts[0].started_at == 0.0]
    assert len(at_zero) == running_at_once


def test_borrowing_is_capped_by_what_lenders_have_idle() -> None:
    result = run(
        3,
        [share("B", LEND_AND_BORROW), share("L", LEND, 2)],
        [job("l1", "L"), job("b1", "B", 1.0), job("b2", "B", 1.0), job("b3", "B", 1.0)],
    )
    assert starts(result, "b1") == [1.0]
    assert starts(result, "b2") == [1.0]
    assert starts(result, "b3") == [100.0]


def test_capacity_no_share_owns_is_borrowed_but_not_by_lenders() -> None:
    result = run(
        3,
        [share("B", LEND_AND_BORROW), share("L", LEND)],
        [job("b1", "B"), job("b2", "B"), job("b3", "B"), job("l1", "L", 50.0),
         job("l2", "L", 50.0)],
    )
    # B takes the unowned instance and L's idle one.
    assert [starts(result, b)[0] for b in ("b1", "b2", "b3")] == [0.0, 0.0, 0.0]
    # L reclaims its own instance; its second job would have to borrow, which L never does,
    # so the unowned instance stays with B.
    assert starts(result, "l1") == [50.0]
    assert result.jobs["b3"].attempts[0].preempted_by == "l1"
    assert starts(result, "l2") == [150.0]


def test_capacity_is_counted_per_instance_type() -> None:
    environment = [CapacityLimit(G5, 1), CapacityLimit(P4, 1)]
    shares = [
        share("B", LEND_AND_BORROW),
        share("L", LEND, unit=P4),
    ]
    # B lists only g5; L's idle p4d cannot become g5 capacity.
    result = run(environment, shares, [job("b1", "B"), job("b2", "B")])
    assert starts(result, "b2") == [100.0]


def test_idle_capacity_goes_to_the_earliest_submitted_borrower() -> None:
    shares = [share("A", LEND_AND_BORROW), share("C", LEND_AND_BORROW), share("L", LEND)]
    jobs = [
        job("a1", "A", 0.0), job("c1", "C", 0.0), job("l1", "L", 0.0, 50.0),
        job("c2", "C", 10.0, priority=9), job("a2", "A", 20.0),
    ]
    result = run(3, shares, jobs)
    assert starts(result, "c2") == [50.0]  # submitted first: FIFO, whatever the priority
    assert starts(result, "a2") == [100.0]


def test_lender_jobs_within_limit_go_before_borrowers() -> None:
    shares = [share("B", LEND_AND_BORROW, 1), share("L", LEND, 1)]
    jobs = [job("b1", "B", 0.0, 100.0), job("l1", "L", 0.0, 50.0), job("b2", "B", 10.0),
            job("l2", "L", 20.0)]
    result = run(2, shares, jobs)
    # At 50 L's instance frees: b2 (submitted earlier) would borrow it, but L's own job
    # within its limit comes first.
    assert starts(result, "l2") == [50.0]
    assert starts(result, "b2") == [100.0]
