"""The synth summary's cdk-nag line: packs that ran are named with what they checked; a pack
that was never asked to validate is not reported as clean."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk import App, Stack, Validations
from aws_cdk import aws_sqs as sqs
from cdk_nag import AwsSolutionsChecks, ServerlessChecks

from quota_constructs import QuotaManagedTrainingQueue
from quota_constructs.nag_report import CountedNagPack, nag_summary

from .support import G5, spec


def reference_app(outdir: Path) -> App:
    from quota_constructs import CapacityLimit

    app = App(outdir=str(outdir))
    for name in ("One", "Two"):
        QuotaManagedTrainingQueue(
            Stack(app, name), "TrainingQueue", capacity_limits=[CapacityLimit(G5, 2)],
            shares=[spec("a", count=1), spec("b", count=1)])
    return app


def test_a_clean_run_names_its_packs_and_counts_every_resource(tmp_path: Path) -> None:
    app = reference_app(tmp_path)
    packs = [CountedNagPack(AwsSolutionsChecks(app)), CountedNagPack(ServerlessChecks(app))]
    Validations.of(app).add_plugins(*packs)
    assembly = app.synth()
    resources = sum(len(stack.template["Resources"]) for stack in assembly.stacks)
    assert nag_summary(packs) == (
        f"cdk-nag AwsSolutions and Serverless checked {resources} resources in 2 templates: "
        "no unacknowledged findings")


def test_packs_never_registered_did_not_run(tmp_path: Path) -> None:
    app = reference_app(tmp_path)
    packs = [CountedNagPack(AwsSolutionsChecks(app))]
    app.synth()  # the plugin was never added: nothing validated
    assert nag_summary(packs) == "cdk-nag: no pack ran (AwsSolutions)"
    assert nag_summary([]) == "cdk-nag: no pack ran (none registered)"


def test_a_finding_still_fails_the_synth_through_the_wrapper(tmp_path: Path) -> None:
    app = App(outdir=str(tmp_path))
    sqs.Queue(Stack(app, "Bare"), "Queue")  # AwsSolutions-SQS3/SQS4: no DLQ, no TLS
    Validations.of(app).add_plugins(CountedNagPack(AwsSolutionsChecks(app)))
    with pytest.raises(RuntimeError, match="AwsSolutions-SQS"):
        app.synth()
