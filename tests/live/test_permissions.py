"""The read-status grant allows every call the live commands make, and nothing that writes."""

from __future__ import annotations

import fnmatch
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from quota_constructs import TrainingJobQueue
from quota_constructs.live.explain import explain
from quota_constructs.live.permissions import READ_STATUS_ACTIONS, read_status_policy
from quota_constructs.live.preview import DeclaredShare, preview
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.live.status import read_status

from ..runtime.cloudformation import STACK_ID, StackResource, share_properties
from ..runtime.conftest import G5, Batch
from ..runtime.declarations import share_spec

QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/training"
WRITE_VERBS = ("Create", "Update", "Delete", "Tag", "Untag", "Submit", "Terminate", "Cancel",
               "Register", "Deregister", "Put")
# The request field that names the resource an action is authorized against.
RESOURCE_FIELDS = {"GetJobQueueSnapshot": "jobQueue", "ListQuotaShares": "jobQueue",
                   "DescribeQuotaShare": "quotaShareArn", "ListTagsForResource": "resourceArn"}


def granted_statements() -> list[dict[str, Any]]:
    stack = cdk.Stack(cdk.App(), "Reader", env=cdk.Environment(account="123456789012",
                                                               region="us-east-1"))
    queue = TrainingJobQueue.from_job_queue_attributes(stack, "Queue", job_queue_arn=QUEUE_ARN)
    role = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
    queue.grant_read_status(role)
    policies = Template.from_stack(stack).find_resources("AWS::IAM::Policy")
    (policy,) = policies.values()
    statements: list[dict[str, Any]] = policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def allows(statements: list[dict[str, Any]], action: str, resource: str) -> bool:
    for statement in statements:
        actions = statement["Action"] if isinstance(statement["Action"], list) else [
            statement["Action"]]
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [
            statement["Resource"]]
        if statement["Effect"] == "Allow" and action in actions and any(
            fnmatch.fnmatchcase(resource, pattern) for pattern in resources
        ):
            return True
    return False


def test_the_grant_is_the_documented_policy_and_reads_only() -> None:
    statements = granted_statements()
    assert statements == [
        {**s, "Action": s["Action"] if len(s["Action"]) > 1 else s["Action"][0]}
        for s in read_status_policy(QUEUE_ARN)["Statement"]
    ]
    granted = {a for s in statements for a in
               (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])}
    assert granted == set(READ_STATUS_ACTIONS)
    assert not [a for a in granted if a.split(":")[1].startswith(WRITE_VERBS)]


def test_every_call_of_the_commands_is_granted(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(share_spec(), batch.training)).ok
    arn = resource.physical_id
    assert arn is not None
    batch.state.add_job(arn, "RUNNING", {G5: 4})
    waiting = batch.state.add_job(arn, "RUNNABLE", {G5: 1})
    batch.state.calls.clear()

    read_status("training", reader=QueueReader.connect())
    explain("training", job_id=waiting, reader=QueueReader.connect())
    explain("training", share="team-a", reader=QueueReader.connect())
    shrunk = DeclaredShare.of_spec(share_spec(limits={G5: 1}), batch.training,
                                   logical_id="TeamShare")
    assert preview("training", [shrunk], reader=QueueReader.connect(), stack_id=STACK_ID).refused
    # By the stack's name: preview asks CloudFormation for its id (DescribeStacks).
    assert preview("training", [], reader=QueueReader.connect(), stack_name="platform").refused

    statements = granted_statements()
    calls = {(operation, params.get(RESOURCE_FIELDS.get(operation, ""), "*"))
             for operation, params in batch.state.calls}
    assert {operation for operation, _ in calls} >= {
        "DescribeJobQueues", "DescribeServiceEnvironments", "ListQuotaShares",
        "DescribeQuotaShare", "GetJobQueueSnapshot", "ListServiceJobs", "DescribeServiceJob"}
    for operation, resource_arn in sorted(calls):
        assert allows(statements, f"batch:{operation}", resource_arn), (operation, resource_arn)
    assert batch.state.mutations() == []
    (asked,) = batch.state.cloudformation.calls
    assert asked["Action"] == "DescribeStacks"
    assert allows(statements, "cloudformation:DescribeStacks", STACK_ID)
    assert not allows(statements, "cloudformation:DescribeStacks",
                      STACK_ID.replace("us-east-1", "eu-west-1"))
