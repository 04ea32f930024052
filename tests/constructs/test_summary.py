"""allocation_summary: what a user's own app can print after a synth, warnings included."""

from __future__ import annotations

from aws_cdk import Annotations, App, Stack, Stage

from quota_constructs import (
    ALLOCATION_WARNING_ID,
    CapacityLimit,
    QuotaManagedTrainingQueue,
    QuotaShare,
    ShareProvisioning,
    SharingStrategy,
    TrainingJobQueue,
    allocation_summary,
)

from .support import G5, QUEUE_ARN, spec, warnings_of


def test_the_summary_describes_each_queue_and_shows_the_allocation_warnings() -> None:
    app = App()
    stack = Stack(app, "Training")
    shares = [
        spec("research", SharingStrategy.LEND_AND_BORROW, count=2, borrow_limit_percent=50),
        spec("product", SharingStrategy.LEND, count=3),
    ]
    queue = QuotaManagedTrainingQueue(
        stack, "Queue", capacity_limits=[CapacityLimit(G5, 4)], shares=shares,
        provisioning=ShareProvisioning.CLOUDFORMATION,
    )
    app.synth()
    lines = allocation_summary(app)
    assert lines[0] == "Training/Queue/JobQueue: service environment 4 x ml.g5.xlarge"
    assert lines[1].startswith("  research  limit 2 x ml.g5.xlarge; LEND_AND_BORROW; borrow 50%")
    assert "can reach 3 x ml.g5.xlarge; borrows from product" in lines[1]
    assert lines[2].startswith("  product   limit 3 x ml.g5.xlarge; LEND; borrow n/a")
    # Over-allocated (2 + 3 of 4): the CDK annotation only the CLI prints is in the summary too.
    (warning,) = warnings_of(queue.job_queue)
    assert "research=2 + product=3 = 5 of ml.g5.xlarge" in warning
    assert lines[3:] == [f"  warning: {warning}"]
    assert allocation_summary(stack) == lines


def test_queues_in_stages_and_imported_queues_are_summarized() -> None:
    app = App()
    stack = Stack(Stage(app, "Prod"), "Team")
    queue = TrainingJobQueue.from_job_queue_attributes(
        stack, "Platform", job_queue_arn=QUEUE_ARN, capacity_limits=[CapacityLimit(G5, 2)]
    )
    queue.add_quota_share("Vision", spec=spec("vision", count=1),
                          provisioning=ShareProvisioning.CLOUDFORMATION)
    unknown = TrainingJobQueue.from_job_queue_arn(
        stack, "Elsewhere", QUEUE_ARN.replace("platform-queue", "other-queue")
    )
    QuotaShare(stack, "Audio", job_queue=unknown, spec=spec("audio"),
               provisioning=ShareProvisioning.CLOUDFORMATION)
    # The same queue again, with nothing declared through it: listed once, under Platform.
    TrainingJobQueue.from_job_queue_arn(stack, "ObservedOnly", QUEUE_ARN)
    TrainingJobQueue.from_job_queue_arn(stack, "NeverUsed", QUEUE_ARN.replace("platform", "x"))
    lines = allocation_summary(app)
    assert lines[0] == "Prod-Team/Platform: service environment 2 x ml.g5.xlarge"
    assert lines[1].startswith("  vision  limit 1 x ml.g5.xlarge; LEND;")
    assert lines[2].startswith("  warning: ")
    assert "1 of 2 ml.g5.xlarge belong to no share" in lines[2]
    assert lines[3] == (
        "Prod-Team/Elsewhere: capacity of the service environment unknown to this app "
        "(imported without capacity_limits); shares declared here: audio"
    )
    assert len(lines) == 4


def test_an_acknowledged_allocation_warning_leaves_the_cli_quiet_and_the_summary_whole() -> None:
    app = App()
    stack = Stack(app, "Training")
    queue = QuotaManagedTrainingQueue(
        stack, "Queue", capacity_limits=[CapacityLimit(G5, 4)],
        shares=[spec("research", SharingStrategy.LEND_AND_BORROW, count=2)],
        provisioning=ShareProvisioning.CLOUDFORMATION,
    )
    Annotations.of(queue).acknowledge_warning(ALLOCATION_WARNING_ID, "kept for borrowing")
    app.synth()
    assert warnings_of(queue.job_queue) == []
    assert "2 of 4 ml.g5.xlarge belong to no share" in allocation_summary(app)[-1]
