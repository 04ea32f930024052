"""The constructs and the runtimes agree: the handlers the template names, run with exactly the
environment and asset the template gives them, against the fake Batch and the fake SNS."""

from __future__ import annotations

import copy
import importlib
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Template

from quota_constructs import QuotaShareMonitoring, TrainingJobQueue
from quota_constructs.runtime.monitor_settings import load_declaration
from quota_constructs.wire.monitoring_contract import (
    BLOCKED_JOBS,
    CAPACITY_IN_USE,
    JOB_QUEUE_DIMENSION,
    OLDEST_RUNNABLE_JOB_AGE,
    PREEMPTIONS,
    QUOTA_SHARE_DIMENSION,
    RUNNABLE_JOBS,
    SHARE_DRIFT,
)

from ..constructs.support import logical_id
from ..monitoring_runtime.conftest import G5, Monitor, context, reference_shares
from ..monitoring_runtime.emf_lines import data_points, values
from ..monitoring_runtime.events import preemption_completed, preemption_started, state_change
from . import sample_events


def deploy(monitor: Monitor, outdir: Path, **props: Any) -> QuotaShareMonitoring:
    app = cdk.App(outdir=str(outdir))
    stack = cdk.Stack(app, "Monitored",
                      env=cdk.Environment(account="123456789012", region="us-east-1"))
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", monitor.training)
    topics = {
        owner: sns.Topic.from_topic_arn(stack, f"{owner}Topic", arn)
        for owner, arn in monitor.topics.items()
    }
    props.setdefault("shares", reference_shares())
    monitoring = QuotaShareMonitoring(
        stack, "Monitoring", job_queue=queue, owner_topics=topics, **props,
    )
    app.synth()
    return monitoring


def run_as_deployed(
    monitor: Monitor, monitoring: QuotaShareMonitoring, function: Any, outdir: Path
) -> Any:
    """The handler module of ``function``, with the function's environment in place and its
    asset as the code root."""
    resources = Template.from_stack(cdk.Stack.of(monitoring)).to_json()["Resources"]
    props = resources[logical_id(function)]["Properties"]
    for name, value in props["Environment"]["Variables"].items():
        assert isinstance(value, str), f"{name} is not known before deployment: {value}"
        monitor.monkeypatch.setenv(name, value)
    asset = outdir / f"asset.{props['Code']['S3Key'].removesuffix('.zip')}"
    monitor.monkeypatch.setenv("LAMBDA_TASK_ROOT", str(asset))
    load_declaration.cache_clear()
    module_name, handler = props["Handler"].rsplit(".", 1)
    return getattr(importlib.import_module(module_name), handler)


def test_metrics_handler_measures_each_share_as_the_alarms_read_it(
    monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monitoring = deploy(monitor, tmp_path)
    monitor.create_shares()
    monitor.batch.add_service_job(monitor.training, "QS1", "RUNNING", {G5: 2})
    monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", age_seconds=600)
    monitor.batch.add_service_job(monitor.research, "QS2", "RUNNABLE", age_seconds=6000)
    handler = run_as_deployed(monitor, monitoring, monitoring.metrics_function, tmp_path)

    handler({}, context())

    points = data_points(capsys.readouterr().out)
    assert values(points, CAPACITY_IN_USE, QuotaShare="QS1") == [2]
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS2") == [1]
    [age] = values(points, OLDEST_RUNNABLE_JOB_AGE, QuotaShare="QS2")
    assert 600 <= age < 900  # the other queue's older job is not counted
    assert values(points, SHARE_DRIFT, QuotaShare="QS3") == [0]
    # The alarms watch exactly the dimensions the handler publishes.
    alarm = Template.from_stack(cdk.Stack.of(monitoring)).to_json()["Resources"][
        logical_id(monitoring.alarms_of("QS3")[-1])]["Properties"]
    assert alarm["Dimensions"] == [
        {"Name": JOB_QUEUE_DIMENSION, "Value": "training"},
        {"Name": QUOTA_SHARE_DIMENSION, "Value": "QS3"},
    ]
    assert {p.dimension(JOB_QUEUE_DIMENSION) for p in points} == {"training"}


def test_events_handler_tells_the_owner_once_and_ignores_other_queues(
    monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monitoring = deploy(monitor, tmp_path)
    assert monitoring.preemptions is not None
    handler = run_as_deployed(monitor, monitoring, monitoring.preemptions.function, tmp_path)
    monitor.create_shares()
    ours = monitor.batch.add_service_job(monitor.training, "QS1", "RUNNING", {G5: 1},
                                         name="ours")
    theirs = monitor.batch.add_service_job(monitor.research, "QS1", "RUNNING", {G5: 1},
                                           name="theirs")
    for job in (ours, theirs):
        handler(preemption_started(job), context())
        monitor.batch.preempt(job.job_id)
        handler(preemption_completed(job), context())

    [message] = monitor.sns.published
    assert message.topic_arn == monitor.topics["vision-team"]
    assert "ours" in message.message
    assert values(data_points(capsys.readouterr().out), PREEMPTIONS, QuotaShare="QS1") == [1]
    assert monitor.batch.count("TerminateServiceJob") == 0


def test_only_the_opt_in_terminates_a_job_past_its_budget(
    monitor: Monitor, tmp_path: Path
) -> None:
    monitoring = deploy(monitor, tmp_path, enforce_interruption_budget=True)
    assert monitoring.preemptions is not None
    handler = run_as_deployed(monitor, monitoring, monitoring.preemptions.function, tmp_path)
    monitor.create_shares()
    # QS2's contract allows no preemption at all.
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNING", {G5: 1})
    handler(preemption_started(job), context())
    monitor.batch.preempt(job.job_id)
    handler(preemption_completed(job), context())
    assert monitor.batch.count("TerminateServiceJob") == 1
    assert any(p.topic_arn == monitor.topics["nlp-team"] for p in monitor.sns.published)


def test_the_state_change_rule_delivers_this_queues_jobs_only(
    monitor: Monitor, tmp_path: Path
) -> None:
    monitoring = deploy(monitor, tmp_path)
    assert monitoring.job_events is not None
    rule = Template.from_stack(cdk.Stack.of(monitoring)).to_json()["Resources"][
        logical_id(monitoring.job_events.state_change_rule)]["Properties"]
    monitor.create_shares()
    ours = monitor.batch.add_service_job(monitor.training, "QS1", "RUNNING", {G5: 1})
    theirs = monitor.batch.add_service_job(monitor.research, "QS1", "RUNNING", {G5: 1})
    assert sample_events.matches(rule["EventPattern"], state_change(ours, "FAILED", "x"))
    assert not sample_events.matches(rule["EventPattern"], state_change(theirs, "FAILED", "x"))


def test_n_monitored_queues_cost_one_lookup_per_preemption(
    monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Monitored",
                      env=cdk.Environment(account="123456789012", region="us-east-1"))
    topics = {owner: sns.Topic.from_topic_arn(stack, f"{owner}Topic", arn)
              for owner, arn in monitor.topics.items()}
    monitors = [
        QuotaShareMonitoring(
            stack, f"Monitoring{index}",
            job_queue=TrainingJobQueue.from_job_queue_arn(stack, f"Queue{index}", arn),
            shares=reference_shares(), owner_topics=topics,
            enforce_interruption_budget=(arn == monitor.research),
        )
        for index, arn in enumerate((monitor.training, monitor.research))
    ]
    app.synth()
    resources = Template.from_stack(stack).to_json()["Resources"]
    rules = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Events::Rule"
             and "EventPattern" in r["Properties"]  # not the schedules
             and sample_events.matches(r["Properties"]["EventPattern"],
                                       sample_events.PREEMPTION_COMPLETED)]
    [rule] = rules  # one function receives the account's preemptions, for both queues
    assert monitors[0].preemptions is monitors[1].preemptions
    assert monitors[0].preemptions is not None
    assert rule["Targets"][0]["Arn"] == stack.resolve(monitors[0].preemptions.function.function_arn)
    handler = run_as_deployed(monitor, monitors[0], monitors[0].preemptions.function, tmp_path)
    monitor.create_shares()
    monitor.create_shares(queue=monitor.research)
    # QS2's budget is 0: over budget at the first preemption; only the research queue's
    # monitor opted in to terminating.
    on_training = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNING", {G5: 1})
    on_research = monitor.batch.add_service_job(monitor.research, "QS2", "RUNNING", {G5: 1})
    outcomes = []
    for job in (on_training, on_research):
        monitor.batch.preempt(job.job_id)
        before = monitor.batch.count("DescribeServiceJob")
        outcomes.append(handler(preemption_completed(job), context())["outcome"])
        assert monitor.batch.count("DescribeServiceJob") == before + 1

    assert outcomes == ["reported", "terminated"]
    assert monitor.batch.terminated_jobs == [on_research.job_id]
    assert [m.topic_arn for m in monitor.sns.published] == [monitor.topics["nlp-team"]] * 2
    points = data_points(capsys.readouterr().out)
    assert {p.dimension(JOB_QUEUE_DIMENSION) for p in points if p.name == PREEMPTIONS} == {
        "training", "research"}


def test_the_documented_queue_blocked_event_tells_the_owner_once(
    monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monitoring = deploy(monitor, tmp_path)
    handler = run_as_deployed(monitor, monitoring, monitoring.job_events_function, tmp_path)
    monitor.create_shares()
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", {G5: 9},
                                        name="too-big")
    # AWS's documented sample, pointed at this job and queue.
    event = copy.deepcopy(sample_events.QUEUE_BLOCKED)
    event["resources"] = [job.arn]
    event["detail"].update(jobArn=job.arn, jobId=job.job_id, jobQueue=monitor.training,
                           statusReason="MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED")
    resources = Template.from_stack(cdk.Stack.of(monitoring)).to_json()["Resources"]
    assert monitoring.job_events is not None
    rule = resources[logical_id(monitoring.job_events.queue_blocked_rule)]["Properties"]
    assert sample_events.matches(rule["EventPattern"], event)

    outcomes = [handler(event, context())["outcome"] for _ in range(2)]

    assert outcomes == ["reported", "duplicate"]
    [message] = monitor.sns.published
    assert message.topic_arn == monitor.topics["nlp-team"]
    assert values(data_points(capsys.readouterr().out), BLOCKED_JOBS, QuotaShare="QS2") == [1]
