"""The constructs are aws-cdk-lib references: they go wherever aws-cdk-lib takes an
``IJobQueueRef``, ``ISchedulingPolicyRef``, ``IServiceEnvironmentRef`` or ``IQuotaShareRef``, and
their physical names go through the CDK's machinery."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template
from aws_cdk.interfaces import aws_batch as batch_refs
from typing_extensions import get_protocol_members

from quota_constructs import (
    CapacityLimit,
    IQuotaShare,
    IQuotaShareSchedulingPolicy,
    ITrainingJobQueue,
    ITrainingServiceEnvironment,
    QuotaManagedTrainingQueue,
    QuotaShare,
    QuotaShareSchedulingPolicy,
    ShareProvisioning,
    TrainingJobQueue,
    TrainingServiceEnvironment,
)

from .support import ENV, G5, QUEUE_ARN, logical_id, spec

POLICY_ARN = "arn:aws:batch:eu-west-1:123456789012:scheduling-policy/platform"
ENVIRONMENT_ARN = "arn:aws:batch:eu-west-1:123456789012:service-environment/pool"


@pytest.fixture(scope="module")
def built() -> SimpleNamespace:
    app = cdk.App()
    b = SimpleNamespace()
    b.stack = stack = cdk.Stack(app, "Refs", env=ENV)
    b.queue = QuotaManagedTrainingQueue(
        stack, "Queue", capacity_limits=[CapacityLimit(G5, 2)], shares=[spec("A")]
    )
    b.cfn_share = b.queue.job_queue.add_quota_share(
        "Cfn", spec=spec("Cfn"), provisioning=ShareProvisioning.CLOUDFORMATION
    )
    b.imports = SimpleNamespace(
        policy=QuotaShareSchedulingPolicy.from_scheduling_policy_arn(stack, "Policy", POLICY_ARN),
        environment=TrainingServiceEnvironment.from_service_environment_arn(
            stack, "Environment", ENVIRONMENT_ARN
        ),
        queue=TrainingJobQueue.from_job_queue_arn(stack, "ImportedQueue", QUEUE_ARN),
        share=QuotaShare.from_quota_share_arn(stack, "Share", f"{QUEUE_ARN}/quota-share/t"),
    )
    # L1 props typed with the reference interfaces.
    b.l1_queue = batch.CfnJobQueue(
        stack, "PlainQueue", priority=1, compute_environment_order=[],
        scheduling_policy_arn=b.queue.scheduling_policy,
    )
    b.l1_imported_queue = batch.CfnJobQueue(
        stack, "PlainImportedQueue", priority=1, compute_environment_order=[],
        scheduling_policy_arn=b.imports.policy,
    )
    b.job_definition = batch.EcsJobDefinition(
        stack, "JobDefinition",
        container=batch.EcsEc2ContainerDefinition(
            stack, "Container", image=cdk.aws_ecs.ContainerImage.from_registry("busybox"),
            cpu=1, memory=cdk.Size.mebibytes(512),
        ),
    )
    b.submitter = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    b.job_definition.grant_submit_job(b.submitter, b.queue.job_queue)
    b.template = Template.from_stack(stack).to_json()
    return b


def test_created_and_imported_constructs_are_reference_interfaces(
    built: SimpleNamespace,
) -> None:
    queue = built.queue
    for construct, interface in (
        (queue.job_queue, batch_refs.IJobQueueRef),
        (built.imports.queue, batch_refs.IJobQueueRef),
        (queue.scheduling_policy, batch_refs.ISchedulingPolicyRef),
        (built.imports.policy, batch_refs.ISchedulingPolicyRef),
        (queue.service_environment, batch_refs.IServiceEnvironmentRef),
        (built.imports.environment, batch_refs.IServiceEnvironmentRef),
        (queue.share("A"), batch_refs.IQuotaShareRef),
        (built.cfn_share, batch_refs.IQuotaShareRef),
        (built.imports.share, batch_refs.IQuotaShareRef),
    ):
        assert interface in type(construct).__jsii_ifaces__, (construct, interface)


def test_the_references_carry_the_arns(built: SimpleNamespace) -> None:
    stack, queue = built.stack, built.queue
    r = stack.resolve
    assert r(queue.job_queue.job_queue_ref.job_queue_arn) == r(queue.job_queue.job_queue_arn)
    assert r(queue.scheduling_policy.scheduling_policy_ref.scheduling_policy_arn) == {
        "Fn::GetAtt": [logical_id(queue.scheduling_policy), "Arn"]
    }
    assert r(queue.service_environment.service_environment_ref.service_environment_arn) == {
        "Fn::GetAtt": [logical_id(queue.service_environment), "ServiceEnvironmentArn"]
    }
    assert r(queue.share("A").quota_share_ref.quota_share_arn) == {
        "Ref": logical_id(queue.share("A"))
    }
    assert built.imports.queue.job_queue_ref.job_queue_arn == QUEUE_ARN
    assert built.imports.policy.scheduling_policy_ref.scheduling_policy_arn == POLICY_ARN


def test_aws_cdk_lib_resolves_them_through_jsii(built: SimpleNamespace) -> None:
    """aws-cdk-lib (TypeScript) calls back into the Python constructs for the ``*Ref``."""
    stack, queue = built.stack, built.queue
    r = stack.resolve
    assert r(batch.CfnJobQueue.arn_for_job_queue(queue.job_queue)) == r(
        queue.job_queue.job_queue_arn
    )
    assert batch.CfnJobQueue.arn_for_job_queue(built.imports.queue) == QUEUE_ARN
    assert r(batch.CfnQuotaShare.arn_for_quota_share(built.cfn_share)) == {
        "Fn::GetAtt": [logical_id(built.cfn_share), "QuotaShareArn"]
    }
    assert r(batch.CfnSchedulingPolicy.arn_for_scheduling_policy(queue.scheduling_policy)) == (
        r(queue.scheduling_policy.scheduling_policy_arn)
    )
    assert r(
        batch.CfnServiceEnvironment.arn_for_service_environment(built.imports.environment)
    ) == ENVIRONMENT_ARN
    resources = built.template["Resources"]
    assert resources[logical_id(built.l1_queue)]["Properties"]["SchedulingPolicyArn"] == {
        "Fn::GetAtt": [logical_id(queue.scheduling_policy), "Arn"]
    }
    assert resources[logical_id(built.l1_imported_queue)]["Properties"][
        "SchedulingPolicyArn"
    ] == POLICY_ARN


def test_an_aws_cdk_lib_grant_takes_the_queue(built: SimpleNamespace) -> None:
    policies = [
        r for r in built.template["Resources"].values() if r["Type"] == "AWS::IAM::Policy"
    ]
    (statement,) = [
        s for p in policies for s in p["Properties"]["PolicyDocument"]["Statement"]
        if s["Action"] == "batch:SubmitJob"
    ]
    assert built.stack.resolve(built.queue.job_queue.job_queue_arn) in statement["Resource"]


def test_generate_if_needed_names_a_queue_referenced_from_another_environment() -> None:
    app = cdk.App()
    home = cdk.Stack(app, "Home", env=ENV)
    elsewhere = cdk.Stack(
        app, "Elsewhere", env=cdk.Environment(account="123456789012", region="us-east-1")
    )
    queue = QuotaManagedTrainingQueue(
        home, "Queue", capacity_limits=[CapacityLimit(G5, 1)], shares=[spec("A")],
        queue_name=cdk.PhysicalName.GENERATE_IF_NEEDED,
    )
    cdk.CfnOutput(elsewhere, "QueueArn", value=queue.job_queue.job_queue_arn)
    cdk.CfnOutput(elsewhere, "QueueName", value=queue.job_queue.job_queue_name)
    (resource,) = Template.from_stack(home).find_resources("AWS::Batch::JobQueue").values()
    generated = resource["Properties"]["JobQueueName"]
    assert isinstance(generated, str) and generated
    outputs = Template.from_stack(elsewhere).to_json()["Outputs"]
    assert outputs["QueueName"]["Value"] == generated
    assert outputs["QueueArn"]["Value"] == {
        "Fn::Join": ["", [
            "arn:", {"Ref": "AWS::Partition"},
            f":batch:eu-west-1:123456789012:job-queue/{generated}",
        ]]
    }


def test_generate_if_needed_stays_unnamed_when_no_other_environment_refers() -> None:
    stack = cdk.Stack(cdk.App(), "Home", env=ENV)
    policy = QuotaShareSchedulingPolicy(
        stack, "Policy", scheduling_policy_name=cdk.PhysicalName.GENERATE_IF_NEEDED
    )
    environment = TrainingServiceEnvironment(
        stack, "Environment", capacity_limits=[CapacityLimit(G5, 1)],
        service_environment_name=cdk.PhysicalName.GENERATE_IF_NEEDED,
    )
    template = Template.from_stack(stack)
    for resource_type, name in (
        ("AWS::Batch::SchedulingPolicy", "Name"),
        ("AWS::Batch::ServiceEnvironment", "ServiceEnvironmentName"),
    ):
        (resource,) = template.find_resources(resource_type).values()
        assert name not in resource["Properties"]
    assert stack.resolve(policy.scheduling_policy_name) == {
        "Fn::Select": [1, {"Fn::Split": ["/", {"Fn::Select": [5, {"Fn::Split": [
            ":", {"Fn::GetAtt": [logical_id(policy), "Arn"]}
        ]}]}]}]
    }
    assert environment.service_environment_arn is not None


@pytest.mark.parametrize(
    "protocol",
    [IQuotaShare, IQuotaShareSchedulingPolicy, ITrainingJobQueue, ITrainingServiceEnvironment],
)
def test_public_protocols_have_no_private_members(protocol: Any) -> None:
    members = get_protocol_members(protocol)
    assert "job_queue_arn" in members or "scheduling_policy_arn" in members or (
        "service_environment_arn" in members
    )
    assert sorted(n for n in members if n.startswith("_") and not n.startswith("__")) == []
