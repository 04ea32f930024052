"""QuotaShare.grant_team: one call that gives a team's principal exactly what the three
separate grants give — the same synthesized statements, the same recorded grants, the same
scoped cdk-nag acknowledgments — on every kind of principal and share."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks, ServerlessChecks

from quota_constructs import (
    CapacityLimit,
    IQuotaShare,
    QuotaShare,
    QuotaShareSchedulingPolicy,
    SharingStrategy,
    TrainingJobQueue,
    TrainingServiceEnvironment,
)
from quota_constructs.nag_acknowledgments import acknowledge_grant_wildcards
from quota_constructs.quota_share import TEAM_GRANT_REASON, TeamPrincipal

from .support import ENV, G5, QUEUE_ARN, spec
from .test_nag_acknowledgments import EXECUTION_ROLE_ARN, PRINCIPALS

SHARE_ARN = f"{QUEUE_ARN}/quota-share/vision"

Layout = Callable[[App], tuple[Stack, IQuotaShare, TrainingJobQueue]]


def imported_share(app: App) -> tuple[Stack, IQuotaShare, TrainingJobQueue]:
    team = Stack(app, "Team", env=ENV)
    queue = TrainingJobQueue.from_job_queue_arn(team, "Queue", QUEUE_ARN)
    return team, QuotaShare.from_quota_share_arn(team, "Share", SHARE_ARN), queue


def cross_stack_share(app: App) -> tuple[Stack, IQuotaShare, TrainingJobQueue]:
    platform = Stack(app, "Platform", env=ENV)
    queue = TrainingJobQueue(
        platform, "Queue",
        service_environment=TrainingServiceEnvironment(
            platform, "Environment", capacity_limits=[CapacityLimit(G5, 4)]),
        scheduling_policy=QuotaShareSchedulingPolicy(platform, "Policy"),
    )
    team = Stack(app, "Team", env=ENV)
    share = QuotaShare(team, "Share", job_queue=queue,
                       spec=spec("vision", SharingStrategy.LEND_AND_BORROW, 2))
    return team, share, queue


LAYOUTS: dict[str, Layout] = {"imported share": imported_share, "cross-stack": cross_stack_share}


def build(
    layout: Layout, principal: Callable[[Stack], TeamPrincipal], *, one_call: bool,
    max_priority: int | None = 50, nag_reason: str | None = TEAM_GRANT_REASON,
) -> tuple[App, IQuotaShare]:
    app = App()
    team, share, queue = layout(app)
    grantee = principal(team)
    execution = iam.Role.from_role_arn(team, "ExecutionRole", EXECUTION_ROLE_ARN)
    if one_call:
        share.grant_team(grantee, max_priority=max_priority, execution_roles=[execution],
                         nag_reason=nag_reason)
    else:
        grants = [
            share.grant_submit(grantee, max_priority=max_priority, execution_roles=[execution]),
            share.grant_update_priority(grantee, max_priority=max_priority),
            queue.grant_observe(grantee),
        ]
        if nag_reason is not None:
            for grant in grants:
                acknowledge_grant_wildcards(grantee, grant, reason=nag_reason)
    return app, share


def templates(app: App) -> dict[str, Any]:
    return {
        stack.stack_name: Template.from_stack(stack).to_json()
        for stack in app.node.children if isinstance(stack, Stack)
    }


def nag_findings(app: App) -> list[str]:
    return sorted(
        f"{violation.rule_name} at {resource.construct_path}"
        for pack in (AwsSolutionsChecks(app), ServerlessChecks(app))
        for violation in pack.validate_scope(app).violations
        for resource in violation.violating_resources
    )


def policy_statements(template: dict[str, Any]) -> list[Any]:
    return [
        statement
        for resource in template.get("Resources", {}).values()
        if resource["Type"] == "AWS::IAM::Policy"
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
    ]


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
@pytest.mark.parametrize("principal", PRINCIPALS.values(), ids=list(PRINCIPALS))
def test_one_call_synthesizes_exactly_the_three_grants(
    layout: Layout, principal: Callable[[Stack], TeamPrincipal]
) -> None:
    one_app, one_share = build(layout, principal, one_call=True)
    three_app, three_share = build(layout, principal, one_call=False)
    one, three = templates(one_app), templates(three_app)
    assert json.dumps(one, sort_keys=True) == json.dumps(three, sort_keys=True)
    assert one_share.grants == three_share.grants
    assert [g.permission for g in one_share.grants] == ["submit", "update_priority"]
    # Both cdk-nag packs clean, the acknowledgments scoped as the separate calls scope them.
    assert nag_findings(one_app) == nag_findings(three_app) == []


def test_the_grants_are_the_documented_actions_under_the_ceiling() -> None:
    app, _ = build(imported_share, PRINCIPALS["created role"], one_call=True)
    statements = policy_statements(templates(app)["Team"])
    actions = {
        action
        for statement in statements
        for action in ([statement["Action"]] if isinstance(statement["Action"], str)
                       else statement["Action"])
    }
    assert actions == {
        "batch:SubmitServiceJob", "batch:TagResource", "iam:PassRole", "batch:UpdateServiceJob",
        "batch:GetJobQueueSnapshot", "batch:ListQuotaShares", "batch:DescribeQuotaShare",
        "batch:DescribeServiceJob", "batch:ListServiceJobs",
    }
    ceilings = [
        statement["Condition"]["NumericLessThanEquals"]["batch:SchedulingPriority"]
        for statement in statements
        if "NumericLessThanEquals" in statement.get("Condition", {})
    ]
    assert ceilings == ["50", "50"] or ceilings == [50, 50]


def test_without_a_reason_nothing_is_acknowledged() -> None:
    app, _ = build(imported_share, PRINCIPALS["imported role"], one_call=True, nag_reason=None)
    findings = nag_findings(app)
    assert findings
    assert all(f.startswith("AwsSolutions-IAM5[Resource::") for f in findings)
    assert {f.split(" at ")[1] for f in findings} == {"Team/Submitter/Policy/Resource"}


def test_only_the_grants_wildcards_are_acknowledged() -> None:
    app = App()
    team, share, _ = imported_share(app)
    role = iam.Role(team, "Submitter", assumed_by=iam.AccountRootPrincipal())
    share.grant_team(role, max_priority=10)
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=["s3:GetObject"], resources=["arn:aws:s3:::data/*"]))
    assert [f for f in nag_findings(app) if "IAM5" in f] == [
        "AwsSolutions-IAM5[Resource::arn:aws:s3:::data/*] at Team/Submitter/DefaultPolicy/Resource"
    ]
