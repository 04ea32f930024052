"""Reviewer's probe of ``grant_read_status`` on a queue the app creates (its ARN a token): the
policy is the documented one, scoped to that queue, and reads only."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from quota_constructs.live.permissions import (
    QUEUE_ACTIONS,
    READ_STATUS_ACTIONS,
    SHARE_ACTIONS,
    UNSCOPED_ACTIONS,
)

from ..monitoring.test_quota_share_monitoring import ENV, managed

READ_PREFIXES = ("Describe", "List", "Get")


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return action if isinstance(action, list) else [action]


def test_the_grant_on_a_created_queue_reads_only_that_queue() -> None:
    stack = cdk.Stack(cdk.App(), "Platform", env=ENV)
    queue = managed(stack)
    operators = iam.Role(stack, "Operators", assumed_by=iam.AccountRootPrincipal())

    queue.grant_read_status(operators)

    role_id = stack.get_logical_id(operators.node.default_child)  # type: ignore[arg-type]
    (policy,) = [p for p in Template.from_stack(stack).find_resources("AWS::IAM::Policy").values()
                 if {"Ref": role_id} in p["Properties"]["Roles"]]
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    granted = [a for s in statements for a in _actions(s)]
    assert sorted(granted) == sorted(READ_STATUS_ACTIONS)
    assert all(a.split(":")[1].startswith(READ_PREFIXES) for a in granted), granted
    assert all(s["Effect"] == "Allow" for s in statements)
    queue_arn = stack.resolve(queue.job_queue.job_queue_arn)
    by_actions = {tuple(sorted(_actions(s))): s["Resource"] for s in statements}
    assert by_actions[tuple(sorted(QUEUE_ACTIONS))] == queue_arn
    share_resource = json.dumps(by_actions[tuple(sorted(SHARE_ACTIONS))])
    assert json.dumps(queue_arn)[1:-1] in share_resource and "/quota-share/*" in share_resource
    assert by_actions[tuple(sorted(UNSCOPED_ACTIONS))] == "*"
