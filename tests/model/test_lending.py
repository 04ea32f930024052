"""The lending attribution (model/lending.py): who lent what, by its stated assumption."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.model import (
    BorrowingRules,
    LendingParties,
    LentOverTime,
    QuotaShareSpec,
    UnitUse,
)
from quota_constructs.model.capacity import CapacityLimit
from quota_constructs.model.share import SharingStrategy

G5 = "ml.g5.xlarge"


def share(name: str, strategy: SharingStrategy, limit: int,
          borrow: int | None = None) -> QuotaShareSpec:
    return QuotaShareSpec(name=name, capacity_limits=[CapacityLimit(G5, limit)],
                          strategy=strategy, borrow_limit_percent=borrow)


BORROWER = share("B", SharingStrategy.LEND_AND_BORROW, 1, borrow=500)
LENDER_A = share("A", SharingStrategy.LEND, 2)
LENDER_C = share("C", SharingStrategy.LEND, 4)
KEEPER = share("K", SharingStrategy.RESERVE, 1)


def lent(parties: LendingParties, usage: dict[str, float]) -> dict[str, float]:
    """What each lender lent, leaving out the lenders that lent nothing."""
    return {name: amount for name, amount in parties.lent(usage).items() if amount}


def by_rules(capacity: int, *, borrowable: bool = True) -> LendingParties:
    rules = BorrowingRules.of(environment={G5: capacity},
                              shares=[BORROWER, LENDER_A, LENDER_C, KEEPER],
                              unowned_capacity_borrowable=borrowable)
    return LendingParties.of_rules(rules, G5)


def test_one_lender_is_exact() -> None:
    parties = LendingParties.by_strategy({"B": 1, "A": 2}, {"B": "LEND_AND_BORROW", "A": "LEND"})
    assert lent(parties, {"B": 3, "A": 0}) == {"A": 2.0}
    assert lent(parties, {"B": 2, "A": 0}) == {"A": 1.0}


def test_lenders_share_in_proportion_to_their_idle_capacity() -> None:
    parties = by_rules(8)       # nothing unowned
    # B borrows 3; A has 2 idle, C 4: one third and two thirds.
    assert lent(parties, {"B": 4}) == pytest.approx({"A": 1.0, "C": 2.0})


def test_every_idle_instance_in_use_is_all_lent() -> None:
    parties = by_rules(8)
    assert lent(parties, {"B": 7, "C": 0, "A": 0}) == {"A": 2.0, "C": 4.0}


def test_capacity_no_share_owns_is_borrowed_first() -> None:
    parties = by_rules(10)      # 2 unowned
    assert parties.unowned_borrowable == 2
    assert lent(parties, {"B": 3}) == {}
    assert lent(parties, {"B": 6}) == pytest.approx({"A": 1.0, "C": 2.0})
    # Unless capacity no share owns runs no job (assumption 1's other reading).
    assert lent(by_rules(10, borrowable=False), {"B": 3}) == pytest.approx(
        {"A": 2 / 3, "C": 4 / 3})


def test_a_reserve_share_never_lends() -> None:
    assert "K" not in by_rules(8).lenders
    parties = LendingParties.by_strategy({"K": 1, "B": 1}, {"K": "RESERVE",
                                                            "B": "LEND_AND_BORROW"})
    assert parties.lenders == ("B",)
    assert lent(parties, {"B": 1, "K": 0}) == {}


def test_listing_keeps_only_the_shares_with_a_limit_of_the_type() -> None:
    parties = LendingParties.by_strategy({"A": 2, "Other": 0}, {"A": "LEND", "Other": "LEND"})
    assert parties.listing() == LendingParties({"A": 2}, ("A",), 0)


def use_of(environment: int, shares: list[QuotaShareSpec], usage: dict[str, float]) -> UnitUse:
    rules = BorrowingRules.of(environment={G5: environment}, shares=shares)
    return UnitUse(G5, rules, usage)


def test_over_allocated_capacity_held_within_own_limits_is_not_idle_to_anyone() -> None:
    """Assumption 4: limits 1 + 2 + 4 + 1 in an environment of 4, all of it held within the
    shares' own limits: nobody borrows, nothing is reclaimable, and a share below its limit
    could take nothing now."""
    use = use_of(4, [BORROWER, LENDER_A, LENDER_C, KEEPER], {"A": 2, "C": 2})
    assert use.over_allocated and use.borrowers() == [] and use.reclaimable == 0
    assert [use.idle_own(name) for name in "BACK"] == [0, 0, 0, 0]
    assert use.held_within_others_limits("C") == 2
    assert use.lent() == {}


def test_a_share_below_its_limit_can_take_what_borrowers_hold_and_free_capacity() -> None:
    # B borrows 2 above its own 1; A holds 1 of its 2; 1 of 5 is free, K keeps its 1 idle.
    use = use_of(6, [BORROWER, LENDER_A, LENDER_C, KEEPER], {"B": 3, "A": 1, "C": 1})
    assert (use.borrowed("B"), use.reclaimable, use.idle, use.kept_idle("A")) == (2, 2, 1, 1)
    assert use.free_for("A") == 0 and use.free_for("K") == 1  # K's idle is its own
    assert use.idle_own("A") == 1 and use.idle_own("C") == 2  # by reclaiming B's 2
    assert use.idle_own("K") == 1
    assert sum(use.lent().values()) == 2 and all(
        use.lent()[name] <= use.idle_own(name) for name in use.lent())


# -- the rule integrated over time (LentOverTime) -------------------------------------------

def lent_by_intervals(parties: LendingParties, changes: list[tuple[float, str, float]],
                      start: float, end: float) -> dict[str, float]:
    """The rule summed interval by interval: ``lent()`` of the use between two changes, times
    the interval's length (the definition LentOverTime must reproduce)."""
    usage: dict[str, float] = {}
    totals = dict.fromkeys(parties.lenders, 0.0)
    at = start
    for when, name, value in [*changes, (end, "", 0.0)]:
        for lender, amount in parties.lent(usage).items():
            totals[lender] += amount * (when - at)
        at = when
        if name:
            usage[name] = value
    return totals


def integrated(parties: LendingParties, changes: list[tuple[float, str, float]],
               start: float, end: float) -> dict[str, float]:
    over_time = LentOverTime(parties, start)
    for when, name, value in changes:
        over_time.change(name, value, when)
    return over_time.lent(end)


def test_over_time_a_borrower_holding_a_lenders_idle_capacity_for_an_hour() -> None:
    parties = by_rules(8)  # B borrows; A (2) and C (4) lend; nothing unowned
    changes = [(0.0, "B", 4.0), (3600.0, "B", 1.0)]  # 3 borrowed for an hour, then none
    assert integrated(parties, changes, 0.0, 7200.0) == pytest.approx(
        {"A": 3600.0, "C": 7200.0})


@given(
    capacity=st.integers(min_value=7, max_value=12),
    steps=st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=500.0, allow_nan=False),
                  st.sampled_from(["B", "A", "C", "K", "X"]), st.integers(0, 9)),
        max_size=30,
    ),
)
def test_over_time_equals_the_rule_summed_interval_by_interval(
        capacity: int, steps: list[tuple[float, str, int]]) -> None:
    parties = by_rules(capacity)
    at, changes = 0.0, []
    for gap, name, value in steps:  # gaps of 0 too: several changes at one instant
        at += gap
        changes.append((at, name, float(value)))
    end = at + 100.0
    expected = lent_by_intervals(parties, changes, 0.0, end)
    got = integrated(parties, changes, 0.0, end)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-6)
