"""Reviewer's held-out check of issue 15's grants.

The synthesized TagResource statement is evaluated by a small IAM condition evaluator written
here (StringEquals, ForAllValues:StringEquals, ForAllValues:StringNotEqualsIgnoreCase, Null — as
the IAM policy reference defines them)
against request contexts the tests in tests/constructs do not try; and grants to principals of
another account, in shapes other than the existing test's, are refused at synth.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from quota_constructs import (
    SHARE_TAG_KEY,
    CapacityLimit,
    QuotaConfigError,
    QuotaManagedTrainingQueue,
    QuotaShareSpec,
    SharingStrategy,
)

G5 = "ml.g5.xlarge"
HOME = cdk.Environment(account="123456789012", region="eu-west-1")
OTHER = "210987654321"


def build(stack: cdk.Stack) -> QuotaManagedTrainingQueue:
    return QuotaManagedTrainingQueue(
        stack, "Queue", queue_name="gpu", capacity_limits=[CapacityLimit(G5, 4)],
        shares=[QuotaShareSpec(name=name, capacity_limits=[CapacityLimit(G5, 2)],
                               strategy=SharingStrategy.LEND)
                for name in ("vision", "speech")],
    )


def condition_holds(operator: str, expected: dict[str, Any], context: dict[str, Any]) -> bool:
    for key, wanted in expected.items():
        allowed = wanted if isinstance(wanted, list) else [wanted]
        if operator == "StringEquals":
            if key not in context or context[key] not in allowed:
                return False
        elif operator == "ForAllValues:StringEquals":
            # Every value of the multi-valued key in the request is among the allowed ones
            # (true for an absent or empty key: the IAM reference's warning).
            if any(value not in allowed for value in context.get(key, [])):
                return False
        elif operator == "ForAllValues:StringNotEqualsIgnoreCase":
            # Every value in the request equals none of the listed ones (ignoring case).
            barred = {value.lower() for value in allowed}
            if any(value.lower() in barred for value in context.get(key, [])):
                return False
        elif operator == "Null":
            if (key not in context) != (allowed[0] == "true"):
                return False
        else:
            raise AssertionError(f"unexpected operator {operator}")
    return True


def tag_resource_allowed(stack: cdk.Stack, context: dict[str, Any]) -> bool:
    template = Template.from_stack(stack).to_json()
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::IAM::Policy":
            continue
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            if "batch:TagResource" not in (actions if isinstance(actions, list) else [actions]):
                continue
            if "service-job" not in str(statement["Resource"]):
                continue
            if all(condition_holds(op, body, context)
                   for op, body in statement.get("Condition", {}).items()):
                return True
    return False


def request(tags: dict[str, str], existing: dict[str, str] | None) -> dict[str, Any]:
    context: dict[str, Any] = {f"aws:RequestTag/{k}": v for k, v in tags.items()}
    context["aws:TagKeys"] = list(tags)
    for key, value in (existing or {}).items():
        context[f"aws:ResourceTag/{key}"] = value
    return context


@pytest.fixture(name="granted")
def granted_stack() -> cdk.Stack:
    stack = cdk.Stack(cdk.App(), "Granted", env=HOME)
    built = build(stack)
    role = iam.Role(stack, "Vision", assumed_by=iam.AccountPrincipal(HOME.account))
    built.share("vision").grant_submit(role, max_priority=10)
    return stack


def test_the_job_being_submitted_may_carry_its_share_tag(granted: cdk.Stack) -> None:
    assert tag_resource_allowed(granted, request({SHARE_TAG_KEY: "vision"}, None))


def test_the_job_being_submitted_may_carry_other_tags_too(granted: cdk.Stack) -> None:
    # Issue 26 item 8: cost-allocation and experiment tags go with the share's tag.
    assert tag_resource_allowed(granted, request({SHARE_TAG_KEY: "vision", "cost": "x"}, None))


@pytest.mark.parametrize("tags, existing", [
    ({SHARE_TAG_KEY: "speech"}, None),                          # another share's name
    ({SHARE_TAG_KEY: "vision", "quota-constructs:owner": "x"}, None),  # a reserved key
    ({"cost": "x"}, None),                                      # no share key at all
    ({SHARE_TAG_KEY: "vision"}, {SHARE_TAG_KEY: "speech"}),     # relabel another's job
    ({SHARE_TAG_KEY: "vision"}, {SHARE_TAG_KEY: "vision"}),     # re-tag its own existing job
])
def test_tagging_anything_else_is_denied(
    granted: cdk.Stack, tags: dict[str, str], existing: dict[str, str] | None
) -> None:
    assert not tag_resource_allowed(granted, request(tags, existing))


def test_no_tag_resource_without_a_grant() -> None:
    stack = cdk.Stack(cdk.App(), "Bare", env=HOME)
    build(stack)
    assert not tag_resource_allowed(stack, request({SHARE_TAG_KEY: "vision"}, None))


@pytest.mark.parametrize("permission", ["grant_submit", "grant_update_priority"])
@pytest.mark.parametrize("kind", ["arn", "imported_role", "role_in_other_account_stack"])
def test_principals_of_another_account_are_refused(permission: str, kind: str) -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Home", env=HOME)
    built = build(stack)
    grantee: iam.IGrantable
    if kind == "arn":
        grantee = iam.ArnPrincipal(f"arn:aws:iam::{OTHER}:role/speech-team")
    elif kind == "imported_role":
        grantee = iam.Role.from_role_arn(stack, "Imported", f"arn:aws:iam::{OTHER}:role/speech")
    else:
        other = cdk.Stack(app, "Other", env=cdk.Environment(account=OTHER, region="eu-west-1"))
        grantee = iam.Role(other, "Speech", assumed_by=iam.AccountPrincipal(OTHER))
    with pytest.raises(QuotaConfigError) as raised:
        getattr(built.share("speech"), permission)(grantee)
    assert raised.value.field == "grantee" and OTHER in str(raised.value)
    assert built.share("speech").grants == ()


def test_an_unpinned_stack_warns_of_a_role_imported_from_a_named_account() -> None:
    from ..constructs.support import warnings_of

    stack = cdk.Stack(cdk.App(), "Agnostic")  # no env: its account is known at deploy only
    built = build(stack)
    role = iam.Role.from_role_arn(stack, "Imported", f"arn:aws:iam::{OTHER}:role/speech")
    built.share("speech").grant_submit(role)
    (warning,) = [w for w in warnings_of(built.share("speech")) if OTHER in w]
    assert "not pinned" in warning and "speech" in warning
    # A role this stack creates names no account: no warning.
    own = iam.Role(stack, "Own", assumed_by=iam.AccountRootPrincipal())
    built.share("vision").grant_submit(own)
    assert not [w for w in warnings_of(built.share("vision")) if "not pinned" in w]


def test_the_unpinned_account_warning_can_be_acknowledged() -> None:
    from quota_constructs import GRANTEE_ACCOUNT_WARNING_ID

    from ..constructs.support import warnings_of

    stack = cdk.Stack(cdk.App(), "Acknowledged")
    built = build(stack)
    share = built.share("speech")
    share.grant_submit(iam.Role.from_role_arn(stack, "Imported",
                                              f"arn:aws:iam::{OTHER}:role/speech"))
    cdk.Annotations.of(share).acknowledge_warning(GRANTEE_ACCOUNT_WARNING_ID, "same account")
    assert not [w for w in warnings_of(share) if "not pinned" in w]
