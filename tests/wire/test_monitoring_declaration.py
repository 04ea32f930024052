"""The monitoring declaration: the custom resource's wire format + agreements, parsed strictly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.model import (
    CapacityLimit,
    QuotaConfigError,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.wire.monitoring_declaration import (
    monitoring_declaration,
    monitoring_declaration_json,
    parse_monitoring_declaration,
)
from quota_constructs.wire.share_codec import resource_properties

from .test_share_codec import specs, stringify

G5 = "ml.g5.xlarge"


def spec(name: str = "QS1", agreement: ShareAgreement | None = None,
         **overrides: Any) -> QuotaShareSpec:
    props: dict[str, Any] = {
        "name": name,
        "capacity_limits": [CapacityLimit(G5, 1)],
        "strategy": SharingStrategy.LEND_AND_BORROW,
        "borrow_limit_percent": 200,
        "in_share_preemption": True,
        "agreement": agreement,
    }
    props.update(overrides)
    return QuotaShareSpec(**props)


VISION = ShareAgreement(
    owner="vision-team", purpose="nightly fine-tuning", recoverable=True, interruption_budget=2
)


def test_the_documented_shape() -> None:
    declaration = monitoring_declaration([spec(agreement=VISION), spec("QS2")])
    assert declaration == {
        "Version": 1,
        "Shares": [
            {
                "QuotaShareName": "QS1",
                "CapacityLimits": [{"CapacityUnit": G5, "MaxCapacity": 1}],
                "ResourceSharingConfiguration": {"Strategy": "LEND_AND_BORROW",
                                                 "BorrowLimit": 200},
                "PreemptionConfiguration": {"InSharePreemption": "ENABLED"},
                "State": "ENABLED",
                "Agreement": {"Owner": "vision-team", "Purpose": "nightly fine-tuning",
                              "Recoverable": True, "InterruptionBudget": 2},
            },
            {
                "QuotaShareName": "QS2",
                "CapacityLimits": [{"CapacityUnit": G5, "MaxCapacity": 1}],
                "ResourceSharingConfiguration": {"Strategy": "LEND_AND_BORROW",
                                                 "BorrowLimit": 200},
                "PreemptionConfiguration": {"InSharePreemption": "ENABLED"},
                "State": "ENABLED",
            },
        ],
    }


def test_share_properties_are_the_custom_resources_own() -> None:
    rendered = monitoring_declaration([spec(agreement=VISION, tags={"team": "v"})])["Shares"][0]
    wire = resource_properties(spec(tags={"team": "v"}), "arn:queue")
    del wire["JobQueue"], wire["Tags"]
    assert {k: v for k, v in rendered.items() if k != "Agreement"} == wire


@given(specs(), st.one_of(st.none(), st.integers(0, 50)), st.booleans())
def test_round_trip_through_json(
    declared: QuotaShareSpec, budget: int | None, recoverable: bool
) -> None:
    agreement = ShareAgreement(owner="team é", purpose="why", recoverable=recoverable,
                               interruption_budget=budget)
    with_agreement = QuotaShareSpec(**{**declared.__dict__, "tags": {}, "agreement": agreement})
    text = monitoring_declaration_json([with_agreement])
    assert parse_monitoring_declaration(json.loads(text)) == (with_agreement,)


def test_numbers_and_booleans_as_strings_parse_strictly() -> None:
    document = stringify(monitoring_declaration([spec(agreement=VISION)]))
    document["Version"] = 1
    assert parse_monitoring_declaration(document) == (spec(agreement=VISION),)


def test_a_budget_of_none_and_of_zero_survive() -> None:
    zero = spec(agreement=ShareAgreement(owner="o", interruption_budget=0))
    unlimited = spec("QS2", agreement=ShareAgreement(owner="o"))
    parsed = parse_monitoring_declaration(
        json.loads(monitoring_declaration_json([zero, unlimited]))
    )
    assert [s.agreement.interruption_budget for s in parsed if s.agreement] == [0, None]


def test_json_is_stable() -> None:
    specs_ = [spec(agreement=VISION), spec("QS2")]
    assert monitoring_declaration_json(specs_) == monitoring_declaration_json(list(specs_))
    assert monitoring_declaration_json(specs_).endswith("}\n")


def error_of(document: Any) -> QuotaConfigError:
    with pytest.raises(QuotaConfigError) as caught:
        parse_monitoring_declaration(document)
    return caught.value


def valid() -> dict[str, Any]:
    return monitoring_declaration([spec(agreement=VISION)])


@pytest.mark.parametrize("version", [None, 2, "1", True])
def test_unknown_versions_are_refused(version: Any) -> None:
    document = {**valid(), "Version": version}
    error = error_of(document)
    assert (error.subject, error.field, error.value) == ("monitoring declaration", "Version",
                                                         version)


def test_errors_name_the_share_and_the_field() -> None:
    document = valid()
    document["Shares"][0]["Agreement"]["InterruptionBudget"] = "two"
    error = error_of(document)
    assert (error.subject, error.field, error.value) == (
        "quota share 'QS1'", "Agreement.InterruptionBudget", "two")

    document = valid()
    document["Shares"][0]["Agreement"]["Owner"] = ""
    error = error_of(document)
    assert (error.subject, error.field) == ("quota share 'QS1'", "Agreement.owner")

    document = valid()
    document["Shares"][0]["Agreement"]["Team"] = "x"
    error = error_of(document)
    assert (error.subject, error.field, error.value) == ("quota share 'QS1'", "Agreement",
                                                         ["Team"])

    document = valid()
    document["Shares"][0]["CapacityLimits"][0]["MaxCapacity"] = "1.0"
    error = error_of(document)
    assert error.field == "CapacityLimits[0].MaxCapacity"


def test_duplicate_shares_and_bad_documents_are_refused() -> None:
    document = valid()
    document["Shares"].append(document["Shares"][0])
    assert error_of(document).field == "name"
    assert error_of([]).field == "document"
    assert error_of({"Version": 1}).field == "Shares"
    assert error_of({"Version": 1, "Shares": ["QS1"]}).field == "Shares[0]"


def test_shares_with_tokens_cannot_be_monitored() -> None:
    token = -1.8881545897087626e289
    with pytest.raises(QuotaConfigError) as caught:
        monitoring_declaration([spec(capacity_limits=[CapacityLimit(G5, token)])])  # type: ignore[arg-type]
    assert (caught.value.subject, caught.value.field) == (
        "quota share 'QS1'", "CapacityLimits[0].MaxCapacity")
