"""Stack outputs under documented keys: the queue, each share, each granted role, the
dashboard and each owner topic."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from quota_constructs import (
    CapacityLimit,
    CapacityUnit,
    QuotaManagedTrainingQueue,
    QuotaShare,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.stack_outputs import key_part, output_key

G5 = CapacityUnit.ML_G5_XLARGE


def test_key_part_keeps_letters_and_digits_and_capitalises_words() -> None:
    assert key_part("llm-research") == "LlmResearch"
    assert key_part("vision_team") == "VisionTeam"
    assert key_part("QS1") == "QS1"
    assert key_part("a.b/c:d e") == "ABCDE"


def test_every_output_a_team_needs_under_its_documented_key() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "GpuQuotas-prod")
    queue = QuotaManagedTrainingQueue(
        stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 2)], queue_name="gpu-prod",
        shares=[
            QuotaShareSpec(name="llm-research", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND,
                           agreement=ShareAgreement(owner="llm_team")),
            QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND,
                           agreement=ShareAgreement(owner="llm-team")),
        ],
    )
    role = iam.Role(stack, "llm-submitter", assumed_by=iam.AccountRootPrincipal())
    queue.share("llm-research").grant_submit(role, max_priority=10)
    imported = iam.Role.from_role_arn(stack, "VisionSubmitter",
                                      "arn:aws:iam::123456789012:role/vision-submitter")
    queue.share("vision").grant_submit(imported, max_priority=10)
    queue.add_monitoring()
    outputs = Template.from_stack(stack).to_json()["Outputs"]
    assert set(outputs) == {
        "TrainingQueueJobQueueName", "TrainingQueueJobQueueArn",
        "TrainingQueueLlmResearchShareName", "TrainingQueueLlmResearchShareArn",
        "TrainingQueueVisionShareName", "TrainingQueueVisionShareArn",
        "LlmSubmitterArn", "VisionSubmitterArn",
        "TrainingQueueMonitoringDashboardName",
        # Two owners that differ only in punctuation: numbered in name order.
        "TrainingQueueMonitoringOwnerTopicLlmTeamArn",
        "TrainingQueueMonitoringOwnerTopicLlmTeam2Arn",
    }
    assert outputs["TrainingQueueLlmResearchShareName"]["Value"] == "llm-research"
    assert outputs["LlmSubmitterArn"]["Value"] == {
        "Fn::GetAtt": [stack.get_logical_id(role.node.default_child), "Arn"]}
    assert outputs["VisionSubmitterArn"]["Value"] == (
        "arn:aws:iam::123456789012:role/vision-submitter")
    assert output_key(queue.job_queue, "Name") == "TrainingQueueJobQueueName"
    assert queue.job_queue.name_output.output_key == "TrainingQueueJobQueueName"
    assert queue.job_queue.name_output.stack == "GpuQuotas-prod"


def test_a_share_in_a_team_stack_has_its_outputs_there() -> None:
    app = cdk.App()
    platform = cdk.Stack(app, "Platform")
    queue = QuotaManagedTrainingQueue(platform, "Queue", capacity_limits=[CapacityLimit(G5, 2)],
                                      shares=[])
    team = cdk.Stack(app, "TeamVision")
    QuotaShare(team, "QuotaShare", job_queue=queue.job_queue,
               spec=QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 1)],
                                   strategy=SharingStrategy.LEND))
    assert set(Template.from_stack(team).to_json()["Outputs"]) >= {
        "QuotaShareShareName", "QuotaShareShareArn"}
    assert "QueueJobQueueArn" in Template.from_stack(platform).to_json()["Outputs"]
