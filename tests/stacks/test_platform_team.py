"""The composition example: the platform owns the queue, a team adds its share cross-stack."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Template


@pytest.fixture(scope="module")
def platform(all_stacks: dict[str, Stack]) -> Template:
    return Template.from_stack(all_stacks["QuotaPlatformExample"])


@pytest.fixture(scope="module")
def team(all_stacks: dict[str, Stack]) -> Template:
    return Template.from_stack(all_stacks["QuotaTeamVisionExample"])


def statements(template: Template) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for policy in template.find_resources("AWS::IAM::Policy").values():
        found.extend(policy["Properties"]["PolicyDocument"]["Statement"])
    return found


def test_platform_owns_policy_environment_and_queue_but_no_share(platform: Template) -> None:
    for resource_type in (
        "AWS::Batch::SchedulingPolicy",
        "AWS::Batch::ServiceEnvironment",
        "AWS::Batch::JobQueue",
    ):
        platform.resource_count_is(resource_type, 1)
    platform.resource_count_is("Custom::BatchQuotaShare", 0)
    assert platform.find_outputs("*"), "the queue ARN must be exported for the team stack"


def test_team_share_points_at_the_platform_queue_across_stacks(team: Template) -> None:
    (share,) = team.find_resources("Custom::BatchQuotaShare").values()
    assert share["Properties"]["QuotaShareName"] == "vision"
    assert "Fn::ImportValue" in share["Properties"]["JobQueue"]
    team.resource_count_is("AWS::Batch::JobQueue", 0)


def test_team_may_submit_only_into_its_share_up_to_its_ceiling(team: Template) -> None:
    submit = [s for s in statements(team) if s["Action"] == "batch:SubmitServiceJob"]
    assert len(submit) == 1
    assert submit[0]["Condition"] == {
        "NumericLessThanEquals": {"batch:SchedulingPriority": 50},
        "StringEquals": {"aws:RequestTag/quota-constructs:quota-share": "vision"},
        # Other tags may come along, but none of the keys the library reserves.
        "ForAllValues:StringNotEqualsIgnoreCase": {"aws:TagKeys": [
            "quota-constructs:owner", "quota-constructs:adopting", "quota-constructs:lifecycle",
            "quota-constructs:deployed-config", "quota-constructs:adopted",
        ]},
    }
    pass_role = [s for s in statements(team) if s["Action"] == "iam:PassRole"]
    assert len(pass_role) == 1
    assert pass_role[0]["Condition"] == {
        "StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}
    }


def test_team_may_reprioritise_only_its_own_jobs(team: Template) -> None:
    update = [s for s in statements(team) if s["Action"] == "batch:UpdateServiceJob"]
    assert len(update) == 1
    assert update[0]["Condition"] == {
        "NumericLessThanEquals": {"batch:SchedulingPriority": 50},
        "StringEquals": {"aws:ResourceTag/quota-constructs:quota-share": "vision"},
    }
