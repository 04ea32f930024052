"""acknowledge_grant_wildcards on every kind of principal a team hands the grants to, checked by
cdk-nag 3 itself."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aws_cdk import App, Stack, Validations
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from quota_constructs import IQuotaShare, QuotaShare, TrainingJobQueue
from quota_constructs.nag_acknowledgments import acknowledge_grant_wildcards

from .support import ENV, QUEUE_ARN

SHARE_ARN = f"{QUEUE_ARN}/quota-share/vision"
ROLE_ARN = "arn:aws:iam::123456789012:role/vision-submitter"
EXECUTION_ROLE_ARN = "arn:aws:iam::123456789012:role/vision-training"
REASON = "Service jobs exist only at run time; queue, share and priority ceiling bound it."

Principal = iam.IRole | iam.IUser | iam.IGroup
PRINCIPALS: dict[str, Callable[[Construct], Principal]] = {
    "created role": lambda scope: iam.Role(
        scope, "Submitter", assumed_by=iam.AccountRootPrincipal()
    ),
    "imported role": lambda scope: iam.Role.from_role_arn(scope, "Submitter", ROLE_ARN),
    "imported role by name": lambda scope: iam.Role.from_role_name(
        scope, "Submitter", "vision-submitter"
    ),
    "created user": lambda scope: iam.User(scope, "Submitter"),
    "imported user": lambda scope: iam.User.from_user_name(scope, "Submitter", "vision-ci"),
    "created group": lambda scope: iam.Group(scope, "Submitter"),
    "imported group": lambda scope: iam.Group.from_group_name(scope, "Submitter", "vision"),
    # No policy is added to it, so cdk-nag has nothing to report and nothing is acknowledged.
    "immutable role": lambda scope: iam.Role.from_role_arn(
        scope, "Submitter", ROLE_ARN, mutable=False
    ),
}


def grant_everything(stack: Stack, principal: Principal, *, acknowledged: bool) -> None:
    share: IQuotaShare = QuotaShare.from_quota_share_arn(stack, "Share", SHARE_ARN)
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", QUEUE_ARN)
    execution_role = iam.Role.from_role_arn(stack, "ExecutionRole", EXECUTION_ROLE_ARN)
    grants = [
        share.grant_submit(principal, max_priority=50, execution_roles=[execution_role]),
        share.grant_update_priority(principal, max_priority=50),
        queue.grant_observe(principal),
    ]
    if acknowledged:
        for grant in grants:
            acknowledge_grant_wildcards(principal, grant, reason=REASON)


def build(*, acknowledged: bool, context: dict[str, object] | None = None) -> App:
    app = App(context=context or {})
    for index, make in enumerate(PRINCIPALS.values()):
        stack = Stack(app, f"Team{index}", env=ENV)
        grant_everything(stack, make(stack), acknowledged=acknowledged)
    return app


def iam5_findings(app: App) -> list[str]:
    report = AwsSolutionsChecks(app).validate_scope(app)
    return sorted(
        f"{violation.rule_name} at {resource.construct_path}"
        for violation in report.violations
        for resource in violation.violating_resources
    )


def test_without_acknowledgment_cdk_nag_reports_the_wildcards_on_each_policy() -> None:
    findings = iam5_findings(build(acknowledged=False))
    paths = {finding.split(" at ")[1].rsplit("/", 1)[0] for finding in findings}
    # Created principals and imported groups get a DefaultPolicy; imported roles and users a
    # Policy of their own; the immutable role (Team7) none.
    assert paths == {
        "Team0/Submitter/DefaultPolicy",
        "Team1/Submitter/Policy",
        "Team2/Submitter/Policy",
        "Team3/Submitter/DefaultPolicy",
        "Team4/Submitter/Policy",
        "Team5/Submitter/DefaultPolicy",
        "Team6/Submitter/DefaultPolicy",
    }
    assert all(finding.startswith("AwsSolutions-IAM5[Resource::") for finding in findings)


@pytest.mark.parametrize(
    "context",
    [{}, {"@aws-cdk/aws-iam:importedRoleStackSafeDefaultPolicyName": True}],
    ids=["default", "stack-safe-imported-policy-name"],
)
def test_acknowledged_grants_leave_cdk_nag_nothing_to_report(
    context: dict[str, object],
) -> None:
    assert iam5_findings(build(acknowledged=True, context=context)) == []


def test_an_app_with_the_cdk_nag_plugin_synthesizes() -> None:
    # The way a user turns cdk-nag 3 on: synth fails on an unacknowledged finding.
    app = build(acknowledged=True)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()

    unacknowledged = build(acknowledged=False)
    Validations.of(unacknowledged).add_plugins(AwsSolutionsChecks(unacknowledged))
    with pytest.raises(RuntimeError, match="AwsSolutions-IAM5"):
        unacknowledged.synth()


def test_only_the_grant_wildcards_are_acknowledged() -> None:
    app = App()
    stack = Stack(app, "Team", env=ENV)
    role = iam.Role.from_role_arn(stack, "Submitter", ROLE_ARN)
    grant_everything(stack, role, acknowledged=True)
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=["s3:GetObject"], resources=["arn:aws:s3:::data/*"])
    )
    assert iam5_findings(app) == [
        "AwsSolutions-IAM5[Resource::arn:aws:s3:::data/*] at Team/Submitter/Policy/Resource"
    ]
