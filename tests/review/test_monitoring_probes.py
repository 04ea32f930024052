"""Reviewer's probes of issue 14 on cases the feature's own tests do not build: a share added in
another stack after monitoring, a second monitor through an import, two monitored queues in one
stack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs import (
    CapacityLimit,
    QuotaConfigError,
    QuotaManagedTrainingQueue,
    QuotaShareMonitoring,
    SharingStrategy,
    TrainingJobQueue,
)
from quota_constructs.monitoring._asset import DECLARATION_FILE

from ..constructs.support import G5, logical_id, spec
from ..monitoring.test_quota_share_monitoring import ENV, PRODUCT, RESEARCH, managed

QUEUE_NAME = "platform-training"


def _platform(app: cdk.App) -> tuple[cdk.Stack, Any]:
    stack = cdk.Stack(app, "Platform", env=ENV)
    queue = managed(stack, shares=[spec("QS1", SharingStrategy.LEND, agreement=RESEARCH)])
    return stack, queue


def _declared_share_names(outdir: Path, template: dict[str, Any], function: Any) -> list[str]:
    props = template["Resources"][logical_id(function)]["Properties"]
    asset = outdir / f"asset.{props['Code']['S3Key'].removesuffix('.zip')}"
    declared = json.loads((asset / DECLARATION_FILE).read_text())
    return [share["QuotaShareName"] for share in declared["Shares"]]


def test_a_share_a_team_stack_adds_after_monitoring_is_monitored(tmp_path: Path) -> None:
    app = cdk.App(outdir=str(tmp_path))
    platform, queue = _platform(app)
    monitoring = queue.add_monitoring()
    team = cdk.Stack(app, "Team", env=ENV)
    # The team stack imports the platform's queue by the ARN token CDK passes between stacks.
    imported = TrainingJobQueue.from_job_queue_arn(team, "Queue", queue.job_queue.job_queue_arn)
    imported.add_quota_share("Late", spec=spec("LATE", SharingStrategy.LEND_AND_BORROW,
                                                agreement=PRODUCT))

    assembly = app.synth()
    rendered = assembly.get_stack_by_name(platform.stack_name).template

    assert [s.name for s in monitoring.shares] == ["QS1", "LATE"]
    assert "Starved" in {a.node.id for a in monitoring.alarms_of("LATE")}
    assert "product" in monitoring.owner_topics
    assert _declared_share_names(tmp_path, rendered, monitoring.metrics_function) == [
        "QS1", "LATE"]


def test_a_second_monitor_through_an_import_in_another_stack_is_refused() -> None:
    app = cdk.App()
    _, queue = _platform(app)
    queue.add_monitoring()
    team = cdk.Stack(app, "Team", env=ENV)
    imported = TrainingJobQueue.from_job_queue_arn(team, "Queue", queue.job_queue.job_queue_arn)
    with pytest.raises(QuotaConfigError) as raised:
        QuotaShareMonitoring(team, "Monitoring", job_queue=imported)
    assert raised.value.field == "job_queue"
    assert "Platform/TrainingQueue/Monitoring already watches it" in raised.value.allowed


def test_a_second_monitor_through_a_literal_arn_of_a_named_queue_is_refused() -> None:
    app = cdk.App()
    platform = cdk.Stack(app, "Platform", env=ENV)
    queue = TrainingJobQueue.from_job_queue_arn(
        platform, "Queue", f"arn:aws:batch:us-east-1:123456789012:job-queue/{QUEUE_NAME}")
    queue.add_quota_share("QS1", spec=spec("QS1", SharingStrategy.LEND, agreement=RESEARCH))
    QuotaShareMonitoring(platform, "Monitoring", job_queue=queue)
    team = cdk.Stack(app, "Team", env=ENV)
    again = TrainingJobQueue.from_job_queue_arn(
        team, "Queue", f"arn:aws:batch:us-east-1:123456789012:job-queue/{QUEUE_NAME}")
    with pytest.raises(QuotaConfigError):
        QuotaShareMonitoring(team, "Monitoring", job_queue=again)


def test_two_monitored_queues_in_one_stack_synthesize_apart(tmp_path: Path) -> None:
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Two", env=ENV)
    first = managed(stack, shares=[spec("QS1", SharingStrategy.LEND, agreement=RESEARCH)])
    second = QuotaManagedTrainingQueue(
        stack, "SecondQueue", capacity_limits=[CapacityLimit(G5, 2)],
        shares=[spec("QS1", SharingStrategy.LEND, agreement=PRODUCT)],
    )
    one = first.add_monitoring()
    two = second.add_monitoring()

    template = Template.from_stack(stack).to_json()

    # One lookup per preemption however many queues a stack (or account) monitors.
    functions = template["Resources"]
    handlers = [r for r in functions.values() if r["Type"] == "AWS::Lambda::Function"]
    assert len(handlers) >= 4
    preemption_rules = [
        r for r in functions.values() if r["Type"] == "AWS::Events::Rule"
        and "Preemption" in json.dumps(r["Properties"].get("EventPattern", {}))
    ]
    assert len(preemption_rules) == 1, preemption_rules
    # Each queue's state-change rule names its own queue only.
    state_rules = [
        json.dumps(r["Properties"]["EventPattern"]) for r in functions.values()
        if r["Type"] == "AWS::Events::Rule"
        and "Batch Service Job State Change" in json.dumps(r["Properties"].get("EventPattern"))
    ]
    assert len(state_rules) == 2
    # Each owner is told by the monitor of the queue its share is on.
    assert set(one.owner_topics) == {"research"} and set(two.owner_topics) == {"product"}
    # Each queue has its own health alarm.
    health = [r for r in functions.values() if r["Type"] == "AWS::CloudWatch::Alarm"
              and r["Properties"].get("TreatMissingData") == "breaching"]
    assert len(health) == 2
