"""Helpers shared by the construct tests.

Synthesis is the slow part, and an App synthesizes once: each test module builds all of its
scenarios into one App (a module-scoped fixture) and then only reads templates. Tests that
expect an error build into a throw-away stack that is never synthesized.
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from quota_constructs.model import (
    CapacityLimit,
    CapacityUnit,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
)

G5 = CapacityUnit.ML_G5_XLARGE
G6 = CapacityUnit.ML_G6_XLARGE
QUEUE_ARN = "arn:aws:batch:eu-west-1:123456789012:job-queue/platform-queue"
ENV = cdk.Environment(account="123456789012", region="eu-west-1")


def spec(
    name: str,
    strategy: SharingStrategy = SharingStrategy.LEND,
    count: int = 1,
    unit: str = G5,
    **options: Any,
) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name, capacity_limits=[CapacityLimit(unit, count)], strategy=strategy, **options
    )


def scratch_stack() -> cdk.Stack:
    """A stack for constructs expected to fail; never synthesized."""
    return cdk.Stack(cdk.App(), "Scratch")


def only_resource(stack: cdk.Stack, resource_type: str) -> dict[str, Any]:
    """The one resource of ``resource_type`` in ``stack`` (its Type, Properties, ...)."""
    found = Template.from_stack(stack).find_resources(resource_type)
    assert len(found) == 1, f"expected one {resource_type}, found {sorted(found)}"
    return dict(next(iter(found.values())))


def properties(stack: cdk.Stack, resource_type: str) -> dict[str, Any]:
    return only_resource(stack, resource_type)["Properties"]  # type: ignore[no-any-return]


def logical_id(construct: Any) -> str:
    """The logical id of a construct's CloudFormation resource (its innermost default child)."""
    while not isinstance(construct, cdk.CfnElement):
        construct = construct.node.default_child
    stack = cdk.Stack.of(construct)
    return stack.resolve(stack.get_logical_id(construct))  # type: ignore[no-any-return]


def policy_statements(role: iam.Role) -> list[dict[str, Any]]:
    """Every statement of ``role``'s default policy, as synthesized."""
    policy = role.node.find_child("DefaultPolicy")
    template = Template.from_stack(cdk.Stack.of(role)).to_json()
    document = template["Resources"][logical_id(policy)]["Properties"]["PolicyDocument"]
    return document["Statement"]  # type: ignore[no-any-return]


def resolve(scope: Any, value: Any) -> Any:
    return cdk.Stack.of(scope).resolve(value)


def warnings_of(construct: Any) -> list[str]:
    """The synth warnings attached to ``construct`` (without the acknowledgement tag)."""
    stack = cdk.Stack.of(construct)
    found = Annotations.from_stack(stack).find_warning(f"/{construct.node.path}", Match.any_value())
    return [str(message.entry.data).split(" [ack: ")[0] for message in found]


def model_warnings(
    environment: list[CapacityLimit], shares: list[QuotaShareSpec], queue_name: str
) -> list[str]:
    """What the model warns about this allocation (its wording is the model's to choose); the
    construct tests check that a queue reports exactly these, once, on the right node."""
    warnings = QuotaAllocation.check(
        environment_limits=environment, shares=shares, queue_name=queue_name
    ).warnings
    assert warnings, "a warning test needs an allocation the model warns about"
    assert all(queue_name in warning for warning in warnings)
    return list(warnings)


def assert_config_error(
    error: QuotaConfigError, subject: str, field: str, value: Any, allowed_part: str
) -> None:
    """``error`` names exactly this subject, field and value, and its ``allowed`` says
    ``allowed_part``; the message carries all four."""
    assert (error.subject, error.field, error.value) == (subject, field, value), str(error)
    assert allowed_part in error.allowed, str(error)
    assert str(error).startswith(f"{subject}: {field} got ")
    assert str(error).endswith(f"; allowed: {error.allowed}")
