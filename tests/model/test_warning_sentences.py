"""Every warning the model gives about a declaration is a whole sentence: it is printed by the
CDK CLI, the summary, the agreement and the validation report as it is, never cut short."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.model import (
    CapacityLimit,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.model.queue import share_warnings

UNITS = ("ml.g5.xlarge", "ml.p4d.24xlarge", "ml.g5.12xlarge")
SENTENCE_END = re.compile(r"[.!?][)\"'`]?$")


def assert_sentences(warnings: tuple[str, ...] | list[str]) -> None:
    for warning in warnings:
        assert SENTENCE_END.search(warning), f"not a full sentence: {warning!r}"
        # One warning is one line: a reader never has to join pieces.
        assert "\n" not in warning


@st.composite
def share(draw: st.DrawFn, index: int) -> QuotaShareSpec:
    units = draw(st.lists(st.sampled_from(UNITS), min_size=1, max_size=3, unique=True))
    strategy = draw(st.sampled_from(list(SharingStrategy)))
    borrow = (
        draw(st.one_of(st.none(), st.integers(0, 300)))
        if strategy is SharingStrategy.LEND_AND_BORROW else None
    )
    budget = draw(st.one_of(st.none(), st.integers(0, 3)))
    return QuotaShareSpec(
        name=f"team{index}",
        capacity_limits=[CapacityLimit(unit, draw(st.integers(1, 4))) for unit in units],
        strategy=strategy,
        borrow_limit_percent=borrow,
        in_share_preemption=draw(st.booleans()),
        agreement=draw(st.one_of(
            st.none(), st.just(ShareAgreement(owner=f"owner{index}", interruption_budget=budget))
        )),
    )


@st.composite
def declaration(draw: st.DrawFn) -> tuple[list[CapacityLimit], list[QuotaShareSpec]]:
    count = draw(st.integers(1, 6))
    shares = [draw(share(index)) for index in range(count)]
    environment = [CapacityLimit(unit, draw(st.integers(1, 12))) for unit in UNITS]
    return environment, shares


@settings(max_examples=300, deadline=None)
@given(declaration(), st.booleans())
def test_every_warning_of_any_declaration_ends_a_sentence(
    declared: tuple[list[CapacityLimit], list[QuotaShareSpec]], unowned_borrowable: bool
) -> None:
    environment, shares = declared
    try:
        allocation = QuotaAllocation.check(
            environment_limits=environment, shares=shares,
            unowned_capacity_borrowable=unowned_borrowable,
        )
    except QuotaConfigError:
        return  # refused outright (over-reservation): no warning to read
    assert_sentences(allocation.all_warnings)


def test_each_kind_of_warning_is_produced_and_whole() -> None:
    """The property above is not vacuous: every kind of model warning appears at least once."""
    g5 = UNITS[0]
    shares = [
        QuotaShareSpec(name="a", capacity_limits=[CapacityLimit(g5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=50,
                       in_share_preemption=True,
                       agreement=ShareAgreement(owner="a", interruption_budget=0)),
        QuotaShareSpec(name="b", capacity_limits=[CapacityLimit(g5, 1)],
                       strategy=SharingStrategy.LEND),
    ]
    for borrowable in (True, False):
        unowned = QuotaAllocation.check(environment_limits=[CapacityLimit(g5, 4)], shares=shares,
                                        unowned_capacity_borrowable=borrowable)
        over = QuotaAllocation.check(environment_limits=[CapacityLimit(g5, 1)], shares=shares,
                                     unowned_capacity_borrowable=borrowable)
        assert len(unowned.warnings) == len(over.warnings) == 1
        assert unowned.borrow_warnings and unowned.share_warnings
        assert_sentences([*unowned.all_warnings, *over.all_warnings])
    assert "so no job is sure to run on them." in QuotaAllocation.check(
        environment_limits=[CapacityLimit(g5, 4)], shares=shares).warnings[0]


def test_in_share_preemption_with_a_budget_of_zero_is_warned() -> None:
    def spec(*, preemption: bool, budget: int | None) -> QuotaShareSpec:
        return QuotaShareSpec(
            name="vision", capacity_limits=[CapacityLimit(UNITS[0], 1)],
            strategy=SharingStrategy.LEND, in_share_preemption=preemption,
            agreement=ShareAgreement(owner="vision-team", interruption_budget=budget),
        )

    [warning] = share_warnings(spec(preemption=True, budget=0))
    assert warning.startswith("quota share 'vision': in-share preemption is on")
    assert "fails a running lower-priority job outright" in warning
    assert share_warnings(spec(preemption=True, budget=1)) == []
    assert share_warnings(spec(preemption=True, budget=None)) == []
    assert share_warnings(spec(preemption=False, budget=0)) == []
