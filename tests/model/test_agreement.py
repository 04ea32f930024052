"""The share agreement: validated with the share's name, invisible to AWS."""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs import ShareAgreement as PublicShareAgreement
from quota_constructs.model import (
    CapacityLimit,
    CapacityUnit,
    QuotaConfigError,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.wire.share_codec import api_configuration, resource_properties

G5 = CapacityUnit.ML_G5_XLARGE


def share(agreement: Any = None, **overrides: Any) -> QuotaShareSpec:
    props: dict[str, Any] = {
        "name": "QS1",
        "capacity_limits": [CapacityLimit(G5, 1)],
        "strategy": SharingStrategy.LEND_AND_BORROW,
        "borrow_limit_percent": 200,
        "agreement": agreement,
    }
    props.update(overrides)
    return QuotaShareSpec(**props)


def error_of(agreement: Any) -> QuotaConfigError:
    with pytest.raises(QuotaConfigError) as caught:
        share(agreement)
    return caught.value


def test_the_top_level_package_exports_it() -> None:
    assert PublicShareAgreement is ShareAgreement


def test_defaults_are_aws_defaults_no_budget_not_recoverable() -> None:
    agreement = ShareAgreement(owner="vision-team")
    assert agreement.purpose == ""
    assert agreement.recoverable is False
    assert agreement.interruption_budget is None
    assert share(agreement).agreement == agreement


def test_a_share_needs_no_agreement() -> None:
    assert share().agreement is None


def test_aws_never_sees_the_agreement() -> None:
    agreement = ShareAgreement(
        owner="vision-team", purpose="nightly fine-tuning", recoverable=True,
        interruption_budget=2,
    )
    assert resource_properties(share(agreement), "q") == resource_properties(share(), "q")
    assert api_configuration(share(agreement)) == api_configuration(share())


@pytest.mark.parametrize("budget", [0, 1, 25])
def test_zero_is_a_real_budget(budget: int) -> None:
    spec = share(ShareAgreement(owner="o", interruption_budget=budget))
    assert spec.agreement is not None
    assert spec.agreement.interruption_budget == budget


@pytest.mark.parametrize(
    ("agreement", "field", "value"),
    [
        (ShareAgreement(owner=""), "agreement.owner", ""),
        (ShareAgreement(owner="   "), "agreement.owner", "   "),
        (ShareAgreement(owner="x" * 257), "agreement.owner", "x" * 257),
        (ShareAgreement(owner="team\nb"), "agreement.owner", "team\nb"),
        (ShareAgreement(owner=7), "agreement.owner", 7),  # type: ignore[arg-type]
        (ShareAgreement(owner="o", purpose="p" * 1025), "agreement.purpose", "p" * 1025),
        (ShareAgreement(owner="o", purpose=None), "agreement.purpose", None),  # type: ignore[arg-type]
        (ShareAgreement(owner="o", recoverable="yes"), "agreement.recoverable", "yes"),  # type: ignore[arg-type]
        (ShareAgreement(owner="o", interruption_budget=-1), "agreement.interruption_budget", -1),
        (ShareAgreement(owner="o", interruption_budget=True), "agreement.interruption_budget",
         True),
        (ShareAgreement(owner="o", interruption_budget=1.5), "agreement.interruption_budget", 1.5),  # type: ignore[arg-type]
    ],
)
def test_errors_name_the_share_the_field_and_the_value(
    agreement: ShareAgreement, field: str, value: object
) -> None:
    error = error_of(agreement)
    assert (error.subject, error.field, error.value) == ("quota share 'QS1'", field, value)
    assert error.allowed


def test_only_a_share_agreement_is_accepted() -> None:
    error = error_of({"owner": "vision-team"})
    assert (error.subject, error.field) == ("quota share 'QS1'", "agreement")
    assert "ShareAgreement" in error.allowed


def test_owner_of_256_printable_characters_is_accepted() -> None:
    assert share(ShareAgreement(owner="Ä" * 256)).agreement is not None


def test_tokens_are_not_validated() -> None:
    token = "${Token[TOKEN.12]}"
    assert share(ShareAgreement(owner=token, purpose=token)).agreement is not None


@pytest.mark.parametrize(
    ("budget", "words"),
    [(None, "no limit on preemptions per job"), (0, "no preemption allowed"),
     (1, "at most 1 preemption per job"), (3, "at most 3 preemptions per job")],
)
def test_the_budget_in_words(budget: int | None, words: str) -> None:
    assert ShareAgreement(owner="o", interruption_budget=budget).describe_budget() == words
