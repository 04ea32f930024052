"""The provider as a first-class choice: its request budget, a VPC, a role of the user's own.

Each scenario synthesizes the public constructs (a ``QuotaManagedTrainingQueue`` and its shares)
with the project's feature flags, then reads the template and runs cdk-nag and cfn-lint on it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs, lint

from quota_constructs import (
    CapacityLimit,
    CapacityUnit,
    QuotaManagedTrainingQueue,
    QuotaShareProvider,
    QuotaShareSpec,
    SharingStrategy,
)

from .test_share_provider import ENV, project_context

G5 = CapacityUnit.ML_G5_XLARGE
CLOUDFORMATION_LIMIT_SECONDS = 3600


def training_queue(stack: Stack) -> QuotaManagedTrainingQueue:
    return QuotaManagedTrainingQueue(
        stack,
        "TrainingQueue",
        capacity_limits=[CapacityLimit(G5, 2)],
        shares=[
            QuotaShareSpec(name="QS1", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND_AND_BORROW),
            QuotaShareSpec(name="QS2", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND),
        ],
    )


def synthesized(app: App, stack: Stack) -> dict[str, Any]:
    template: dict[str, Any] = app.synth().get_stack_by_name(stack.stack_name).template
    return template


def of_type(template: dict[str, Any], resource_type: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == resource_type}


def nag_findings(app: App) -> list[str]:
    found = []
    for pack in (AwsSolutionsChecks(app), ServerlessChecks(app)):
        for violation in pack.validate_scope(app).violations:
            found += [f"{violation.rule_name}: {r.construct_path}"
                      for r in violation.violating_resources]
    return found


def lint_findings(template: dict[str, Any]) -> list[str]:
    config = ManualArgs(regions=[ENV.region], ignore_checks=["W3005"])
    return [str(match) for match in lint(json.dumps(template), config=config)]


def waiter_seconds(template: dict[str, Any]) -> int:
    """How long the waiter state machine polls at most, read from its definition."""
    (machine,) = of_type(template, "AWS::StepFunctions::StateMachine").values()
    definition = "".join(
        p for p in machine["Properties"]["DefinitionString"]["Fn::Join"][1] if isinstance(p, str)
    )
    found = re.search(r'"IntervalSeconds":(\d+),"MaxAttempts":(\d+)', definition)
    assert found is not None
    return int(found[1]) * int(found[2])


@pytest.mark.parametrize("total_minutes", [None, 10, 52])
def test_every_share_waits_as_long_as_one_request_can_live_and_no_longer_than_an_hour(
    total_minutes: int | None,
) -> None:
    app = App(context=project_context())
    stack = Stack(app, "Budget", env=ENV)
    if total_minutes is not None:
        QuotaShareProvider(stack, "QuotaShareProvider",
                           total_timeout=Duration.minutes(total_minutes))
    training_queue(stack)
    template = synthesized(app, stack)

    shares = of_type(template, "Custom::BatchQuotaShare")
    assert len(shares) == 2
    (service_timeout,) = {int(s["Properties"]["ServiceTimeout"]) for s in shares.values()}
    handlers = {
        f["Properties"]["Handler"].rsplit(".", 1)[-1]: f["Properties"]["Timeout"]
        for f in of_type(template, "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"].startswith("quota_constructs.")
    }
    life = handlers["on_event"] + waiter_seconds(template) + handlers["is_complete"]
    assert life < service_timeout <= CLOUDFORMATION_LIMIT_SECONDS
    assert service_timeout == QuotaShareProvider.for_stack(stack).service_timeout.to_seconds()


def test_a_provider_in_a_vpc_puts_every_function_there_and_stays_clean() -> None:
    app = App(context=project_context())
    stack = Stack(app, "InVpc", env=ENV)
    vpc = ec2.Vpc.from_vpc_attributes(
        stack, "Vpc", vpc_id="vpc-0123456789abcdef0", availability_zones=["eu-west-1a"],
        private_subnet_ids=["subnet-0123456789abcdef0"],
    )
    provider = QuotaShareProvider(
        stack, "QuotaShareProvider", vpc=vpc,
        vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
    )
    training_queue(stack)
    template = synthesized(app, stack)

    functions = of_type(template, "AWS::Lambda::Function").values()
    assert len(list(functions)) == 5  # two handlers, three framework functions
    (group,) = of_type(template, "AWS::EC2::SecurityGroup")
    for function in functions:
        config = function["Properties"]["VpcConfig"]
        assert config["SubnetIds"] == ["subnet-0123456789abcdef0"]
        assert config["SecurityGroupIds"] == [{"Fn::GetAtt": [group, "GroupId"]}]
    assert provider.security_groups
    assert nag_findings(app) == []
    assert lint_findings(template) == []


def test_subnets_without_a_vpc_are_refused() -> None:
    from quota_constructs import QuotaConfigError

    stack = Stack(App(), "Scratch")
    with pytest.raises(QuotaConfigError, match="vpc_subnets"):
        QuotaShareProvider(stack, "QuotaShareProvider",
                           vpc_subnets=ec2.SubnetSelection(subnet_group_name="x"))


def test_a_role_of_the_users_own_runs_the_handlers_with_the_providers_policy() -> None:
    app = App(context=project_context())
    stack = Stack(app, "OwnRole", env=ENV)
    role = iam.Role(stack, "PlatformRole",
                    assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    provider = QuotaShareProvider(stack, "QuotaShareProvider", role=role)
    training_queue(stack)
    template = synthesized(app, stack)

    role_id = stack.resolve(stack.get_logical_id(role.node.default_child))  # type: ignore[arg-type]
    handlers = [f for f in of_type(template, "AWS::Lambda::Function").values()
                if f["Properties"]["Handler"].startswith("quota_constructs.")]
    assert [h["Properties"]["Role"] for h in handlers] == [{"Fn::GetAtt": [role_id, "Arn"]}] * 2
    assert provider.handler_role is role
    assert "HandlerRole" not in {c.node.id for c in provider.node.children}
    (policy,) = [p for k, p in of_type(template, "AWS::IAM::Policy").items()
                 if k.startswith("QuotaShareProviderHandlerPolicy")]
    assert policy["Properties"]["Roles"] == [{"Ref": role_id}]
    actions = {a for s in policy["Properties"]["PolicyDocument"]["Statement"]
               for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    assert {"batch:CreateQuotaShare", "batch:DeleteQuotaShare", "batch:ListServiceJobs",
            "logs:PutLogEvents"} <= actions
    assert nag_findings(app) == []
    assert lint_findings(template) == []


def test_a_second_provider_under_its_own_id_serves_what_it_is_given() -> None:
    app = App(context=project_context())
    stack = Stack(app, "TwoProviders", env=ENV)
    queue = training_queue(stack)
    team = QuotaShareProvider(stack, "TeamProvider", total_timeout=Duration.minutes(20))
    team.manage_shares_of(queue.job_queue.job_queue_arn)
    assert team.service_timeout.to_seconds() == (20 + 5 + 2 + 1) * 60
    template = synthesized(app, stack)
    handlers = [f for f in of_type(template, "AWS::Lambda::Function").values()
                if f["Properties"]["Handler"].startswith("quota_constructs.")]
    assert len(handlers) == 4
    assert nag_findings(app) == []
