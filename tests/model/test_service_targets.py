"""Service targets in the agreement: validated with the share's name, carried, written."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from quota_constructs.model import (
    CapacityLimit,
    CapacityUnit,
    QuotaConfigError,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.model.agreement_report import QueueAgreement, allocation_agreement_markdown
from quota_constructs.wire.monitoring_declaration import (
    monitoring_declaration,
    parse_monitoring_declaration,
)

G5 = CapacityUnit.ML_G5_XLARGE


def share(**agreement: Any) -> QuotaShareSpec:
    return QuotaShareSpec(
        name="vision", capacity_limits=[CapacityLimit(G5, 2)], strategy=SharingStrategy.LEND,
        agreement=ShareAgreement(owner="vision-team", **agreement),
    )


def test_targets_are_optional_and_off_by_default() -> None:
    agreement = ShareAgreement(owner="a")
    assert agreement.target_wait_p95 is None and agreement.max_budget_failures is None
    assert agreement.target_wait_p95_seconds is None
    assert not agreement.has_targets


@pytest.mark.parametrize("value", [14400, 14400.0, timedelta(hours=4)])
def test_wait_target_in_seconds_or_timedelta(value: Any) -> None:
    spec = share(target_wait_p95=value, max_budget_failures=0)
    assert spec.agreement is not None
    assert spec.agreement.target_wait_p95_seconds == 14400.0
    assert spec.agreement.max_budget_failures == 0


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("target_wait_p95", 0),
        ("target_wait_p95", -5.0),
        ("target_wait_p95", timedelta(0)),
        ("target_wait_p95", float("inf")),
        ("target_wait_p95", "4h"),
        ("target_wait_p95", True),
        ("max_budget_failures", -1),
        ("max_budget_failures", 1.5),
        ("max_budget_failures", False),
    ],
)
def test_bad_targets_name_share_field_value_and_what_is_allowed(field: str, value: Any) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        share(**{field: value})
    error = caught.value
    assert error.subject == "quota share 'vision'"
    assert error.field == f"agreement.{field}"
    assert error.value == value
    assert error.allowed


def test_targets_travel_in_the_monitoring_declaration_and_parse_back() -> None:
    spec = share(target_wait_p95=timedelta(minutes=30), max_budget_failures=2)
    document = monitoring_declaration([spec])
    agreement = document["Shares"][0]["Agreement"]
    assert agreement["TargetWaitP95Seconds"] == 1800.0
    assert agreement["MaxBudgetFailures"] == 2
    # CloudFormation delivers numbers as strings.
    agreement["TargetWaitP95Seconds"] = "1800"
    agreement["MaxBudgetFailures"] = "2"
    (parsed,) = parse_monitoring_declaration(document)
    assert parsed.agreement is not None
    assert parsed.agreement.target_wait_p95_seconds == 1800.0
    assert parsed.agreement.max_budget_failures == 2


def test_a_declaration_without_targets_renders_as_before() -> None:
    document = monitoring_declaration([share()])
    assert set(document["Shares"][0]["Agreement"]) == {
        "Owner", "Purpose", "Recoverable", "InterruptionBudget",
    }


def test_a_bad_target_in_the_wire_format_is_refused() -> None:
    document = monitoring_declaration([share(target_wait_p95=60)])
    document["Shares"][0]["Agreement"]["TargetWaitP95Seconds"] = "-1"
    with pytest.raises(QuotaConfigError) as caught:
        parse_monitoring_declaration(document)
    assert "TargetWaitP95Seconds" in caught.value.field or "target_wait_p95" in caught.value.field


def test_the_agreement_document_states_the_targets() -> None:
    text = allocation_agreement_markdown(title="t", queues=[QueueAgreement(
        title="q", shares=(share(target_wait_p95=timedelta(hours=4), max_budget_failures=0),),
    )])
    assert "**Service targets:** 95% of jobs start within 4 h of submission; no job lost to an "\
        "exhausted preemption budget" in text
    plain = allocation_agreement_markdown(title="t", queues=[QueueAgreement(
        title="q", shares=(share(),))])
    assert "Service targets" not in plain
