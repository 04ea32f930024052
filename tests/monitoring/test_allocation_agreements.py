"""write_allocation_agreements: one Markdown file per stack, with grants and enforcement."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs

from quota_constructs import (
    SHARE_TAG_KEY,
    CapacityLimit,
    QuotaManagedTrainingQueue,
    QuotaShare,
    QuotaShareMonitoring,
    QuotaShareSpec,
    ShareAgreement,
    ShareGrant,
    ShareLifecycle,
    ShareProvisioning,
    SharingStrategy,
    TrainingJobQueue,
    write_allocation_agreements,
)
from quota_constructs.agreements import agreement_json_path
from quota_constructs.client import ShareClient

from ..constructs.support import G5, G6
from .test_quota_share_monitoring import SHARES


def test_one_agreement_per_stack_with_shares_grants_and_enforcement(tmp_path: Path) -> None:
    app = cdk.App(outdir=str(tmp_path / "assembly"))
    prod = cdk.Stack(app, "TrainingQuotas-prod")
    queue = QuotaManagedTrainingQueue(
        prod, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 3)], shares=SHARES
    )
    queue.add_monitoring(enforce_interruption_budget=True)
    submitter = iam.Role(prod, "Submitter", assumed_by=iam.AccountRootPrincipal())
    grant_share = queue.share("QS1")
    grant_share.grant_submit(submitter, max_priority=40)
    grant_share.grant_update_priority(submitter)
    # A team stack adding a share to a queue of another stack.
    platform = cdk.Stack(app, "Platform")
    platform_queue = TrainingJobQueue.from_job_queue_attributes(
        platform, "Queue", job_queue_arn="arn:aws:batch:us-east-1:123456789012:job-queue/q",
        capacity_limits=[CapacityLimit(G5, 2)],
    )
    team = cdk.Stack(app, "Team")
    QuotaShare(team, "Share", job_queue=platform_queue, spec=QuotaShareSpec(
        name="vision", capacity_limits=[CapacityLimit(G5, 2)], strategy=SharingStrategy.LEND))
    cdk.Stack(app, "Empty")
    app.synth()

    written = write_allocation_agreements(app)

    directory = tmp_path / "assembly" / "agreements"
    # The team stack gets its own agreement, beside the one of the queue's stack.
    assert written == [directory / "TrainingQuotas-prod.md", directory / "Platform.md",
                       directory / "Team.md"]
    text = written[0].read_text()
    assert "## Job queue `TrainingQueue/JobQueue`" in text
    # A role CloudFormation names: the stack output that holds its ARN, beside its path.
    assert ("role whose ARN is stack output `SubmitterArn` of `TrainingQuotas-prod` "
            "(`TrainingQuotas-prod/Submitter`) may submit jobs (priority at most 40).") in text
    assert ("(`TrainingQuotas-prod/Submitter`) may change the priorities of this share's jobs "
            "(any priority).") in text
    # What the team must send: the tag grant_submit requires, as the share states it.
    assert f"`tags={{\"{SHARE_TAG_KEY}\": \"QS1\"}}`" in text
    assert "is terminated by the monitoring" in text
    platform_text = written[1].read_text()
    assert "### vision" in platform_text
    assert "### vision" in written[2].read_text()
    assert "Not watched in this app" not in platform_text  # vision declares no budget
    assert grant_share.grants == (
        ShareGrant("TrainingQuotas-prod/Submitter", "submit", 40),
        ShareGrant("TrainingQuotas-prod/Submitter", "update_priority", None),
    )


def test_outdir_can_be_given(tmp_path: Path) -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Only")
    QuotaManagedTrainingQueue(
        stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 3)], shares=SHARES
    )
    written = write_allocation_agreements(app, str(tmp_path))
    assert written == [tmp_path / "agreements" / "Only.md"]
    assert "Not watched in this app" in written[0].read_text()


def test_a_queue_imported_twice_has_one_agreement_with_what_either_import_declares(
    tmp_path: Path,
) -> None:
    app = cdk.App(outdir=str(tmp_path))
    env = cdk.Environment(account="123456789012", region="us-east-1")
    arn = "arn:aws:batch:us-east-1:123456789012:job-queue/research"
    first, second = cdk.Stack(app, "TeamA", env=env), cdk.Stack(app, "TeamB", env=env)
    TrainingJobQueue.from_job_queue_arn(first, "Queue", arn).add_quota_share(
        "Share", spec=SHARES[0])
    again = TrainingJobQueue.from_job_queue_arn(second, "Queue", arn)
    share = again.add_quota_share("Share", spec=SHARES[1])
    share.grant_submit(iam.Role(second, "Submitter", assumed_by=iam.AccountRootPrincipal()))
    QuotaShareMonitoring(second, "Monitoring", job_queue=again, enforce_interruption_budget=True)
    app.synth()

    written = write_allocation_agreements(app)

    # Listed whole under the first construct standing for the queue, as the summary lists it;
    # TeamB's own agreement names its share only, with the same grants and enforcement.
    assert written == [tmp_path / "agreements" / "TeamA.md", tmp_path / "agreements" / "TeamB.md"]
    text = written[0].read_text()
    assert f"### {SHARES[0].name}" in text and f"### {SHARES[1].name}" in text
    assert "(`TeamB/Submitter`) may submit jobs (any priority)." in text
    assert "is terminated by the monitoring" in text
    own = written[1].read_text()
    assert f"### {SHARES[1].name}" in own and f"### {SHARES[0].name}" not in own
    assert f"The queue also holds `{SHARES[0].name}`, declared in other stacks" in own
    assert "(`TeamB/Submitter`) may submit jobs (any priority)." in own
    # Where it lives, from the imported ARN.
    assert ("**Where:** job queue `research` in account `123456789012`, region `us-east-1`; "
            f"ARN `{arn}`.") in own


def test_the_agreement_says_which_shares_a_shrinking_deployment_may_preempt(
    tmp_path: Path,
) -> None:
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Quotas")
    queue = QuotaManagedTrainingQueue(
        stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 3)], shares=SHARES,
        lifecycle_by_share={SHARES[0].name: ShareLifecycle(allow_preemption_on_shrink=True)},
    )
    queue.job_queue.add_quota_share(
        "Later", provisioning=ShareProvisioning.CLOUDFORMATION,
        spec=QuotaShareSpec(name="later", capacity_limits=[CapacityLimit(G5, 1)],
                            strategy=SharingStrategy.LEND),
    )
    app.synth()

    [written] = write_allocation_agreements(app)

    text = written.read_text()
    sections = {part.split("\n", 1)[0].split(" ")[0]: part for part in text.split("\n### ")[1:]}
    assert "allow_preemption_on_shrink=True)`): its jobs above" in sections[SHARES[0].name]
    assert "is refused, and nothing changes" in sections[SHARES[1].name]
    assert "CloudFormation provisioning has no guard" in sections["later"]


def test_a_team_stack_agreement_names_where_what_which_roles_and_where_alerts_go(
    tmp_path: Path,
) -> None:
    """The platform's stack (not pinned: names and place known only at deployment) owns and
    monitors the queue and subscribes the owner; the team's stack declares the share, its
    execution roles and grants. The team's own agreement is enough to submit."""
    app = cdk.App(outdir=str(tmp_path))
    platform = cdk.Stack(app, "Platform")
    queue = QuotaManagedTrainingQueue(
        platform, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 3), CapacityLimit(G6, 2)],
        shares=[QuotaShareSpec(name="lender", capacity_limits=[CapacityLimit(G5, 1)],
                               strategy=SharingStrategy.LEND)],
    )
    monitoring = queue.add_monitoring()
    monitoring.subscribe_owner("vision-team", subscriptions.EmailSubscription("v@example.com"))
    inbox = sqs.Queue(platform, "Inbox", enforce_ssl=True)
    monitoring.subscribe_owner("vision-team", subscriptions.SqsSubscription(inbox))
    team = cdk.Stack(app, "TeamVision")
    share = QuotaShare(team, "Share", job_queue=queue.job_queue, spec=QuotaShareSpec(
        name="vision", capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(G6, 1)],
        strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=50,
        agreement=ShareAgreement(owner="vision-team")))
    created = iam.Role(team, "Execution",
                       assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    imported = iam.Role.from_role_arn(team, "Legacy", "arn:aws:iam::123456789012:role/legacy")
    submitter = iam.Role(team, "Submitter", assumed_by=iam.AccountRootPrincipal())
    share.grant_submit(submitter, max_priority=20, execution_roles=[created, imported])
    app.synth()

    written = write_allocation_agreements(app)

    assert [path.stem for path in written] == ["Platform", "TeamVision"]
    text = written[1].read_text()
    assert "### lender" not in text and "The queue also holds `lender`" in text
    assert ("**Where:** job queue named at deployment (stack output `TrainingQueueJobQueueName` "
            "of `Platform`), in the account and region its stack deploys to; ARN: stack output "
            "`TrainingQueueJobQueueArn` of `Platform` (the ARN names both).") in text
    assert f"**Instance types it can run:** `{G5}`, `{G6}` (a training request" in text
    assert ("**Execution roles the team may pass:** the role whose ARN is stack output "
            "`ExecutionArn` of `TeamVision`; `arn:aws:iam::123456789012:role/legacy` (as the "
            "request's `RoleArn`") in text
    assert "delivered to email `v@example.com`; sqs `Inbox" in text
    assert "subscribe with" not in text
    # lender lends g5; vision borrows 1 of it (50 % of 2), nothing of g6 (50 % of 1 rounds to 0).
    assert "**Borrows from:** lender: up to 1 × ml.g5.xlarge" in text
    document = json.loads(written[1].with_suffix(".json").read_text())
    [queue_entry] = document["queues"]
    assert queue_entry["other_shares"] == ["lender"]
    [entry] = queue_entry["shares"]
    assert entry["queue"]["account"] is None and entry["queue"]["region"] is None
    assert entry["queue"]["arn_output"] == {"stack": "Platform",
                                            "output_key": "TrainingQueueJobQueueArn"}
    assert entry["instance_types"] == [G5, G6]
    assert entry["borrows_from"] == {G5: {"lenders": ["lender"], "unowned": 0, "up_to": 1}}
    assert entry["lends_to"] == {G5: [], G6: []}
    assert [(role["role_arn"], role["arn_output"]) for role in entry["execution_roles"]] == [
        (None, {"stack": "TeamVision", "output_key": "ExecutionArn"}),
        ("arn:aws:iam::123456789012:role/legacy", {"stack": "TeamVision",
                                                   "output_key": "LegacyArn"}),
    ]
    alerts = entry["alerts"]
    assert alerts["monitored"] is True and alerts["topic"]["output"] is not None
    assert [item["protocol"] for item in alerts["subscriptions"]] == ["email", "sqs"]
    assert alerts["subscriptions"][0]["endpoint"] == "v@example.com"
    # The platform's agreement lists both shares; the lender's twin says whom it lends to.
    platform_doc = json.loads(written[0].with_suffix(".json").read_text())
    lender = platform_doc["queues"][0]["shares"][0]
    assert lender["lends_to"] == {G5: ["vision"]}
    assert lender["alerts"]["monitored"] is True and lender["alerts"]["topic"] is None
    client = ShareClient.from_agreement(agreement_json_path(written[1]), share="vision",
                                        queue="gpu")
    assert (client.instance_types, client.max_priority) == ((G5, G6), 20)


def test_agreements_of_stacks_not_synthesized_now_are_removed(tmp_path: Path) -> None:
    def app_with(*names: str) -> list[Path]:
        app = cdk.App(outdir=str(tmp_path))
        for name in names:
            QuotaManagedTrainingQueue(cdk.Stack(app, name), "TrainingQueue",
                                      capacity_limits=[CapacityLimit(G5, 3)], shares=SHARES)
        app.synth()
        return write_allocation_agreements(app)

    app_with("Dev", "Prod")
    directory = tmp_path / "agreements"
    (directory / "notes.md").write_text("# My notes\n")
    (directory / "other.json").write_text('{"format": "something-else"}')

    written = app_with("Prod")

    assert written == [directory / "Prod.md"]
    assert sorted(path.name for path in directory.iterdir()) == [
        "Prod.json", "Prod.md", "notes.md", "other.json"]
