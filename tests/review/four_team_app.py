"""A held-out app: four teams on a named queue (new and imported roles, a ceiling of 0, a
borrow percent that rounds to zero for one type), an unnamed queue, and a share in another
stack on an imported queue."""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_iam as iam

from quota_constructs import (
    CapacityLimit,
    QuotaManagedTrainingQueue,
    QuotaShare,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
    TrainingJobQueue,
    write_allocation_agreements,
)

G5, G12 = "ml.g5.xlarge", "ml.g5.12xlarge"
ENV = cdk.Environment(account="123456789012", region="eu-west-1")


def build(outdir: str) -> list[Path]:
    app = cdk.App(outdir=outdir)
    prod = cdk.Stack(app, "Prod", env=ENV)
    shares = [
        QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 3), CapacityLimit(G12, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=50,
                       agreement=ShareAgreement(owner="vision-team", interruption_budget=2)),
        QuotaShareSpec(name="speech", capacity_limits=[CapacityLimit(G5, 2)],
                       strategy=SharingStrategy.LEND),
        QuotaShareSpec(name="ranking", capacity_limits=[CapacityLimit(G12, 1)],
                       strategy=SharingStrategy.RESERVE),
        QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 1), CapacityLimit(G12, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=None),
    ]
    named = QuotaManagedTrainingQueue(prod, "Named", queue_name="gpu-prod",
        capacity_limits=[CapacityLimit(G5, 7), CapacityLimit(G12, 4)], shares=shares)
    new_role = iam.Role(prod, "VisionSubmitter", assumed_by=iam.AccountRootPrincipal())
    named.share("vision").grant_submit(new_role, max_priority=30)
    imported = iam.Role.from_role_arn(
        prod, "SpeechRole", "arn:aws:iam::123456789012:role/speech-ci")
    named.share("speech").grant_submit(imported)
    named.share("nlp").grant_submit(imported, max_priority=0)
    unnamed = QuotaManagedTrainingQueue(prod, "Unnamed",
        capacity_limits=[CapacityLimit(G5, 2)],
        shares=[QuotaShareSpec(name="adhoc", capacity_limits=[CapacityLimit(G5, 2)],
                               strategy=SharingStrategy.LEND)])
    unnamed.share("adhoc").grant_submit(new_role, max_priority=5)
    team = cdk.Stack(app, "Team", env=ENV)
    imported_queue = TrainingJobQueue.from_job_queue_attributes(
        team, "Queue", job_queue_arn="arn:aws:batch:eu-west-1:123456789012:job-queue/gpu-other",
        capacity_limits=[CapacityLimit(G5, 3)])
    QuotaShare(team, "Share", job_queue=imported_queue, spec=QuotaShareSpec(
        name="audio", capacity_limits=[CapacityLimit(G5, 1)], strategy=SharingStrategy.LEND))
    app.synth()
    return write_allocation_agreements(app)


