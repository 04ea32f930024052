"""One account and region per queue: AWS Batch has no resource policies, so a share, its queue
and the principals granted on it live in one account (and the share in the queue's region)."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from quota_constructs import (
    CapacityLimit,
    QuotaConfigError,
    QuotaShare,
    QuotaShareProvider,
    QuotaShareSchedulingPolicy,
    ShareProvisioning,
    TrainingJobQueue,
    TrainingServiceEnvironment,
)

from .support import ENV, G5, QUEUE_ARN, assert_config_error, spec

OTHER_ACCOUNT = cdk.Environment(account="210987654321", region="eu-west-1")
OTHER_REGION = cdk.Environment(account="123456789012", region="us-east-1")


def make_queue(stack: cdk.Stack) -> TrainingJobQueue:
    return TrainingJobQueue(
        stack, "Queue",
        service_environment=TrainingServiceEnvironment(
            stack, "Environment", capacity_limits=[CapacityLimit(G5, 2)]
        ),
        scheduling_policy=QuotaShareSchedulingPolicy(stack, "Policy"),
    )


@pytest.mark.parametrize(
    ("env", "differs"), [(OTHER_ACCOUNT, "account 210987654321"), (OTHER_REGION, "us-east-1")]
)
@pytest.mark.parametrize("mode", list(ShareProvisioning))
def test_a_share_beside_an_imported_queue_of_another_environment_fails(
    env: cdk.Environment, differs: str, mode: ShareProvisioning
) -> None:
    team = cdk.Stack(cdk.App(), "Team", env=env)
    queue = TrainingJobQueue.from_job_queue_arn(team, "Queue", QUEUE_ARN)
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShare(team, "Share", job_queue=queue, spec=spec("vision"), provisioning=mode)
    assert_config_error(
        caught.value, "quota share 'vision'", "job_queue",
        f"{QUEUE_ARN} (account 123456789012, region eu-west-1)",
        "a job queue in the share's own account and region — stack Team deploys to",
    )
    assert differs in caught.value.allowed
    assert team.node.try_find_child("Share") is None
    assert queue.quota_share_specs == ()


def test_a_share_in_another_environment_than_its_cross_stack_queue_fails() -> None:
    app = cdk.App()
    platform = cdk.Stack(app, "Platform", env=ENV)
    queue = make_queue(platform)
    team = cdk.Stack(app, "Team", env=OTHER_REGION)
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShare(team, "Share", job_queue=queue, spec=spec("vision"))
    assert caught.value.value == "Platform/Queue (account 123456789012, region eu-west-1)"
    assert "stack Team deploys to account 123456789012, region us-east-1" in caught.value.allowed


def test_environment_agnostic_sides_are_not_compared() -> None:
    app = cdk.App()
    agnostic = cdk.Stack(app, "Agnostic")
    QuotaShare(
        agnostic, "Share", spec=spec("vision"),
        job_queue=TrainingJobQueue.from_job_queue_arn(agnostic, "Queue", QUEUE_ARN),
    )
    platform = cdk.Stack(app, "Platform")
    QuotaShare(
        cdk.Stack(app, "Team", env=OTHER_ACCOUNT), "Share", spec=spec("speech"),
        job_queue=make_queue(platform), provisioning=ShareProvisioning.CLOUDFORMATION,
    )


def test_a_share_in_the_queues_environment_synthesizes() -> None:
    team = cdk.Stack(cdk.App(), "Team", env=ENV)
    queue = TrainingJobQueue.from_job_queue_arn(team, "Queue", QUEUE_ARN)
    QuotaShare(team, "Share", job_queue=queue, spec=spec("vision"))
    Template.from_stack(team).resource_count_is("Custom::BatchQuotaShare", 1)


def test_a_principal_of_another_account_cannot_be_granted_a_share() -> None:
    team = cdk.Stack(cdk.App(), "Team", env=ENV)
    share = TrainingJobQueue.from_job_queue_arn(team, "Queue", QUEUE_ARN).add_quota_share(
        "Share", spec=spec("vision")
    )
    foreign = iam.Role.from_role_arn(team, "Foreign", "arn:aws:iam::210987654321:role/submit")
    for grant in (share.grant_submit, share.grant_update_priority):
        with pytest.raises(QuotaConfigError) as caught:
            grant(foreign)
        assert_config_error(
            caught.value, "quota share 'vision'", "grantee",
            "arn:aws:iam::210987654321:role/submit (account 210987654321)",
            "a principal in the share's account 123456789012",
        )
    assert share.grants == ()
    share.grant_submit(iam.Role.from_role_arn(team, "Own", "arn:aws:iam::123456789012:role/s"))


def test_an_explicit_provider_from_another_stack_serves_shares_on_an_imported_queue() -> None:
    app = cdk.App()
    provider = QuotaShareProvider(cdk.Stack(app, "Shared", env=ENV), "QuotaShareProvider")
    team = cdk.Stack(app, "Team", env=ENV)
    queue = TrainingJobQueue.from_job_queue_arn(team, "Queue", QUEUE_ARN)
    queue.add_quota_share("Share", spec=spec("vision"), provider=provider)
    assert team.node.try_find_child("QuotaShareProvider") is None
    (share,) = Template.from_stack(team).find_resources("Custom::BatchQuotaShare").values()
    assert "Fn::ImportValue" in share["Properties"]["ServiceToken"]


def test_capacity_is_not_needed_to_compare_environments() -> None:
    team = cdk.Stack(cdk.App(), "Team", env=OTHER_ACCOUNT)
    queue = TrainingJobQueue.from_job_queue_attributes(
        team, "Queue", job_queue_arn=QUEUE_ARN, capacity_limits=[CapacityLimit(G5, 2)]
    )
    with pytest.raises(QuotaConfigError):
        queue.add_quota_share("Share", spec=spec("vision"))
