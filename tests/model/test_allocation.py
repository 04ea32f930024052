"""Queue-level rules: shares together against the service environment."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.model import (
    CapacityLimit,
    JobStateTimeLimitAction,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
    check_queue_priority,
    validate_time_limit_actions,
)

G5 = "ml.g5.xlarge"
STRATEGIES = st.sampled_from(list(SharingStrategy))


def spec(
    name: str, strategy: SharingStrategy, count: int = 1, borrow: int | None = None, unit: str = G5
) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name,
        capacity_limits=[CapacityLimit(unit, count)],
        strategy=strategy,
        borrow_limit_percent=borrow,
    )


def check(env: int, *shares: QuotaShareSpec) -> QuotaAllocation:
    return QuotaAllocation.check(
        environment_limits=[CapacityLimit(G5, env)], shares=shares, queue_name="training"
    )


def test_reference_example_reaches() -> None:
    allocation = check(
        3,
        spec("QS1", SharingStrategy.LEND_AND_BORROW, borrow=200),
        spec("QS2", SharingStrategy.LEND),
        spec("QS3", SharingStrategy.RESERVE),
    )
    assert allocation.warnings == ()
    # QS1 may borrow 200 % but only QS2 lends: one of its own plus QS2's idle one.
    assert allocation.reach("QS1") == {G5: 2}
    assert allocation.reach("QS2") == {G5: 1}
    assert allocation.reach("QS3") == {G5: 1}


def test_zero_borrow_limit_reaches_only_own_capacity() -> None:
    allocation = check(
        3, spec("A", SharingStrategy.LEND_AND_BORROW, borrow=0), spec("B", SharingStrategy.LEND, 2)
    )
    assert allocation.reach("A") == {G5: 1}


def test_unlimited_borrow_is_capped_by_environment() -> None:
    allocation = check(
        3, spec("A", SharingStrategy.LEND_AND_BORROW), spec("B", SharingStrategy.LEND, 2)
    )
    assert allocation.reach("A") == {G5: 3}


@given(
    env=st.integers(1, 40),
    shares=st.lists(
        st.tuples(STRATEGIES, st.integers(1, 10), st.one_of(st.none(), st.integers(0, 400))),
        min_size=1,
        max_size=20,
    ),
)
def test_reach_is_bounded_by_own_limit_ceiling_and_environment(
    env: int, shares: list[tuple[SharingStrategy, int, int | None]]
) -> None:
    specs = [
        spec(
            f"S{i}",
            strategy,
            count,
            borrow if strategy is SharingStrategy.LEND_AND_BORROW else None,
        )
        for i, (strategy, count, borrow) in enumerate(shares)
    ]
    reserved = sum(s.limit_of(G5) for s in specs if s.strategy is SharingStrategy.RESERVE)
    if reserved > env:
        with pytest.raises(QuotaConfigError) as caught:
            check(env, *specs)
        assert caught.value.field.endswith(".max_capacity")
        assert "RESERVE shares together" in caught.value.allowed
        return
    allocation = check(env, *specs)
    total = sum(s.limit_of(G5) for s in specs)
    assert bool(allocation.warnings) == (total != env)
    for s in specs:
        reach = allocation.reach(s.name)[G5]
        # What RESERVE shares other than s hold is never lent, even when idle.
        room = env - sum(o.limit_of(G5) for o in specs
                         if o is not s and o.strategy is SharingStrategy.RESERVE)
        assert reach <= room
        assert reach <= s.ceiling_of(G5)
        assert reach >= min(s.limit_of(G5), room)
        if not s.strategy.borrows:
            assert reach == min(s.limit_of(G5), room)


def test_over_reservation_names_the_share_that_overflows() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        check(
            3,
            spec("A", SharingStrategy.RESERVE, 2),
            spec("L", SharingStrategy.LEND, 1),
            spec("B", SharingStrategy.RESERVE, 2),
        )
    error = caught.value
    assert (error.subject, error.field, error.value) == (
        "quota share 'B'", "capacity_limits[0].max_capacity", 2
    )
    assert error.allowed.startswith("at most 1 ml.g5.xlarge: RESERVE shares together would hold "
                                    "A=2 + B=2 = 4 of the environment's 3")


def test_unit_missing_from_environment_names_the_share() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        check(2, spec("A", SharingStrategy.LEND, unit="ml.p5.48xlarge"))
    error = caught.value
    assert (error.subject, error.field, error.value) == (
        "quota share 'A'",
        "capacity_limits[0].unit",
        "ml.p5.48xlarge",
    )
    assert "wait" in error.allowed


def test_over_allocation_and_unowned_capacity_are_warnings() -> None:
    over = check(2, spec("A", SharingStrategy.LEND, 2), spec("B", SharingStrategy.LEND, 1))
    assert len(over.warnings) == 1
    assert "A=2 + B=1 = 3" in over.warnings[0]
    unowned = check(5, spec("A", SharingStrategy.LEND, 2))
    assert "3 of 5 ml.g5.xlarge belong to no share" in unowned.warnings[0]


def test_duplicate_names() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        check(3, spec("A", SharingStrategy.LEND), spec("A", SharingStrategy.RESERVE))
    assert (caught.value.subject, caught.value.field) == ("quota share 'A'", "name")


def test_at_most_twenty_shares() -> None:
    shares = [spec(f"S{i}", SharingStrategy.LEND) for i in range(21)]
    with pytest.raises(QuotaConfigError) as caught:
        check(30, *shares)
    assert (caught.value.field, caught.value.value) == ("shares", "21 shares")


def test_environment_limits_are_validated() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        QuotaAllocation.check(
            environment_limits=[CapacityLimit(G5, 0)], shares=[], queue_name="training"
        )
    assert caught.value.subject == "service environment of job queue 'training'"
    assert caught.value.field == "capacity_limits[0].max_capacity"


@given(st.integers(0, 1000))
def test_priority_in_range(priority: int) -> None:
    check_queue_priority(priority, subject="job queue")


@pytest.mark.parametrize("priority", [-1, 1001, True, 1.0])
def test_priority_out_of_range(priority: object) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        check_queue_priority(priority, subject="job queue 'q'")
    assert (caught.value.field, caught.value.allowed) == (
        "priority",
        "an integer between 0 and 1000",
    )


@pytest.mark.parametrize(
    ("action", "field"),
    [
        (JobStateTimeLimitAction(max_time_seconds=599, reason="r"), "max_time_seconds"),
        (JobStateTimeLimitAction(max_time_seconds=86401, reason="r"), "max_time_seconds"),
        (JobStateTimeLimitAction(max_time_seconds=600, reason="r", action="CANCEL"), "action"),
        (JobStateTimeLimitAction(max_time_seconds=600, reason="r", state="RUNNING"), "state"),
        (JobStateTimeLimitAction(max_time_seconds=600, reason=""), "reason"),
    ],
)
def test_time_limit_actions(action: JobStateTimeLimitAction, field: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        validate_time_limit_actions([action], subject="job queue 'q'")
    assert caught.value.field == f"job_state_time_limit_actions[0].{field}"


def test_time_limit_bounds_are_inclusive() -> None:
    actions = [JobStateTimeLimitAction(max_time_seconds=s, reason="stuck") for s in (600, 86400)]
    assert validate_time_limit_actions(actions, subject="q") == tuple(actions)


def test_summary_lists_every_share_with_its_reach() -> None:
    from quota_constructs.model import allocation_summary

    allocation = check(
        3,
        spec("QS1", SharingStrategy.LEND_AND_BORROW, borrow=200),
        spec("QS2", SharingStrategy.LEND),
        spec("QS3", SharingStrategy.RESERVE),
    )
    lines = allocation_summary(allocation, title="training")
    assert lines[0] == "training: service environment 3 x ml.g5.xlarge"
    assert lines[1] == (
        "  QS1  limit 1 x ml.g5.xlarge; LEND_AND_BORROW; borrow 200%; in-share preemption off; "
        "enabled; can reach 2 x ml.g5.xlarge; borrows from QS2"
    )
    assert lines[2].endswith("can reach 1 x ml.g5.xlarge; lends to QS1")
    assert "borrow n/a" in lines[3] and "RESERVE" in lines[3]


def test_a_borrower_with_nothing_left_to_borrow_is_told_the_environments_figures() -> None:
    """Issue 30 item 5: a LEND share exists, so the cause is the environment's size less
    what the RESERVE share keeps, and the warning says so with its numbers."""
    allocation = check(2, spec("A", SharingStrategy.LEND_AND_BORROW),
                       spec("B", SharingStrategy.LEND), spec("C", SharingStrategy.RESERVE),
                       spec("D", SharingStrategy.LEND))
    (warning,) = allocation.borrow_warnings
    assert warning.startswith("quota share 'A': can borrow no ml.g5.xlarge: ")
    assert ("the service environment's 2 x ml.g5.xlarge, less the 1 that RESERVE share 'C' "
            "keeps, leaves 1, no more than its own limit of 1") in warning
    assert "although 'B', 'D' lend it" in warning
    assert "no other share lends" not in warning


@given(st.lists(st.tuples(STRATEGIES, st.integers(1, 3)), min_size=1, max_size=5),
       st.integers(1, 8), st.booleans())
def test_every_nothing_to_borrow_reason_states_figures_that_hold(
    layout: list[tuple[SharingStrategy, int]], environment: int, unowned_borrowable: bool
) -> None:
    shares = [spec(f"s{i}", strategy, count) for i, (strategy, count) in enumerate(layout)]
    try:
        allocation = QuotaAllocation.check(
            environment_limits=[CapacityLimit(G5, environment)], shares=shares,
            unowned_capacity_borrowable=unowned_borrowable)
    except QuotaConfigError:
        return  # over-reservation: refused
    rules = allocation.rules
    for share in shares:
        for rule in rules.nothing_to_borrow(share):
            reason = rules.why_nothing_to_borrow(share, rule)
            kept = sum(s.limit_of(G5) for s in shares
                       if s is not share and s.strategy is SharingStrategy.RESERVE)
            usable = rules.usable_capacity(G5)
            assert rule.room == max(0, usable - kept) <= rule.own
            assert f"leaves {rule.room}, no more than its own limit of {share.limit_of(G5)}" \
                in reason
            assert (f"less the {kept} that RESERVE" in reason) == (kept > 0)
            others_lend = any(s is not share and s.strategy.lends for s in shares)
            assert ("no other share lends" in reason) == (not others_lend)


def test_a_capacity_of_zero_names_its_instance_type() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        QuotaAllocation.check(environment_limits=[CapacityLimit(G5, 2),
                                                  CapacityLimit("ml.p4d.24xlarge", 0)],
                              shares=[spec("A", SharingStrategy.LEND)], queue_name="training")
    assert caught.value.field == "capacity_limits[1].max_capacity"
    assert str(caught.value).endswith(
        "got 0; allowed: an integer >= 1 of ml.p4d.24xlarge (for none of it, leave "
        "ml.p4d.24xlarge out of capacity_limits)")
