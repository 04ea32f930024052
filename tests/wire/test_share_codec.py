"""Rendering for AWS and strict parsing of CloudFormation's stringified properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.model import (
    CapacityLimit,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
)
from quota_constructs.wire.share_codec import (
    api_configuration,
    parse_bool,
    parse_int,
    resource_properties,
    spec_from_properties,
)

UNITS = ["ml.g5.xlarge", "ml.g5.2xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g6.xlarge"]


def stringify(value: Any) -> Any:
    """What CloudFormation does to custom-resource properties on the way to the Lambda."""
    if isinstance(value, dict):
        return {k: stringify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stringify(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def tag_values(max_size: int) -> st.SearchStrategy[str]:
    """Tag values AWS's tag restrictions allow: any text not starting with ``aws:``."""
    return st.text(max_size=max_size).filter(
        lambda text: not text.lower().startswith("aws:"))


@st.composite
def specs(draw: st.DrawFn) -> QuotaShareSpec:
    strategy = draw(st.sampled_from(list(SharingStrategy)))
    units = draw(st.lists(st.sampled_from(UNITS), min_size=1, max_size=5, unique=True))
    return QuotaShareSpec(
        name=draw(st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)),
        capacity_limits=[CapacityLimit(u, draw(st.integers(1, 500))) for u in units],
        strategy=strategy,
        borrow_limit_percent=draw(st.one_of(st.none(), st.integers(0, 1000)))
        if strategy.borrows
        else None,
        in_share_preemption=draw(st.booleans()),
        enabled=draw(st.booleans()),
        tags=draw(
            st.dictionaries(
                st.from_regex(r"[a-z]{1,8}", fullmatch=True), tag_values(10), max_size=3
            )
        ),
    )


@given(specs())
def test_properties_survive_cloudformation_stringification(spec: QuotaShareSpec) -> None:
    parsed, queue = spec_from_properties(stringify(resource_properties(spec, "arn:queue")))
    assert parsed == spec
    assert queue == "arn:queue"


def test_borrow_limit_zero_is_sent_as_zero() -> None:
    spec = QuotaShareSpec(
        name="A",
        capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)],
        strategy=SharingStrategy.LEND_AND_BORROW,
        borrow_limit_percent=0,
    )
    assert resource_properties(spec, "q")["ResourceSharingConfiguration"] == {
        "Strategy": "LEND_AND_BORROW",
        "BorrowLimit": 0,
    }
    assert api_configuration(spec)["resourceSharingConfiguration"] == {
        "strategy": "LEND_AND_BORROW",
        "borrowLimit": 0,
    }
    parsed, _ = spec_from_properties(stringify(resource_properties(spec, "q")))
    assert parsed.borrow_limit_percent == 0


def test_unlimited_is_minus_one_and_lend_sends_no_borrow_limit() -> None:
    unlimited = QuotaShareSpec(
        name="A",
        capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)],
        strategy=SharingStrategy.LEND_AND_BORROW,
    )
    lend = QuotaShareSpec(
        name="B", capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)], strategy=SharingStrategy.LEND
    )
    assert api_configuration(unlimited)["resourceSharingConfiguration"]["borrowLimit"] == -1
    assert "BorrowLimit" not in resource_properties(lend, "q")["ResourceSharingConfiguration"]


@pytest.mark.parametrize("text", ["1.5", "", "one", "1e3", None, True])
def test_parse_int_is_strict(text: object) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        parse_int(text, subject="quota share 'A'", field="MaxCapacity")
    assert caught.value.field == "MaxCapacity"


@pytest.mark.parametrize("text", ["yes", "1", "", None, "TRUEISH"])
def test_parse_bool_is_strict(text: object) -> None:
    with pytest.raises(QuotaConfigError):
        parse_bool(text, subject="quota share 'A'", field="AdoptExisting")


@pytest.mark.parametrize(("text", "value"), [("true", True), ("False", False), (True, True)])
def test_parse_bool_accepts_cloudformation_forms(text: object, value: bool) -> None:
    assert parse_bool(text, subject="s", field="f") is value


def test_stringified_garbage_names_share_and_field() -> None:
    props = stringify(
        resource_properties(
            QuotaShareSpec(
                name="A",
                capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)],
                strategy=SharingStrategy.LEND,
            ),
            "q",
        )
    )
    props["CapacityLimits"][0]["MaxCapacity"] = "1.5"
    with pytest.raises(QuotaConfigError) as caught:
        spec_from_properties(props)
    assert str(caught.value).startswith("quota share 'A': CapacityLimits[0].MaxCapacity got '1.5'")
