"""The handlers as deployed: found in a synthesized template, run from their staged asset in a
fresh interpreter with the template's environment, against the fake Batch and the fake SNS.

Nothing is patched inside the handler's process: what it knows comes from the environment the
constructs wrote and the declaration file in the asset, as in Lambda.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import aws_cdk as cdk
import pytest

from quota_constructs import (
    CapacityLimit,
    QuotaManagedTrainingQueue,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.wire.monitoring_contract import (
    BUDGET_FAILURES,
    CAPACITY_IN_USE,
    JOB_EVENTS_HANDLER,
    JOB_QUEUE_ARN_ENV,
    JOB_QUEUE_NAME_ENV,
    MONITORED_QUEUES_ENV,
    OWNER_TOPICS_ENV,
    PREEMPTIONS,
    PREEMPTIONS_HANDLER,
    RUNNABLE_JOBS,
    SHARE_DRIFT,
    SHARE_METRICS_HANDLER,
    WAIT_TIME,
)

from ..conftest import OLD_BOTOCORE
from .conftest import G5, Monitor
from .emf_lines import data_points, values
from .events import preemption_completed, preemption_started, state_change_now

ENV = cdk.Environment(account="123456789012", region="us-east-1")
SHARES = [
    QuotaShareSpec(name="QS1", capacity_limits=[CapacityLimit(G5, 1)],
                   strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200,
                   in_share_preemption=True,
                   agreement=ShareAgreement(owner="vision-team", interruption_budget=1,
                                            target_wait_p95=timedelta(hours=4))),
    QuotaShareSpec(name="QS2", capacity_limits=[CapacityLimit(G5, 1)],
                   strategy=SharingStrategy.LEND,
                   agreement=ShareAgreement(owner="nlp-team", interruption_budget=0)),
    QuotaShareSpec(name="QS3", capacity_limits=[CapacityLimit(G5, 1)],
                   strategy=SharingStrategy.RESERVE),
]
_RUN = (
    "import importlib, json, sys\n"
    "module, function = sys.argv[1].rsplit('.', 1)\n"
    "loaded = importlib.import_module(module)\n"
    "assert loaded.__file__.startswith(sys.argv[2]), loaded.__file__\n"
    "result = getattr(loaded, function)(json.loads(sys.stdin.read()), None)\n"
    "print('RESULT ' + json.dumps(result, default=str))\n"
)


@dataclass(frozen=True)
class DeployedFunction:
    handler: str
    asset: Path
    environment: Mapping[str, Any]
    """As the template has it: strings and CloudFormation intrinsics."""


@dataclass(frozen=True)
class DeployedMonitor:
    metrics: DeployedFunction
    events: DeployedFunction
    preemptions: DeployedFunction
    """The stack's one function for preemption events (of every monitored queue)."""
    topics: tuple[str, ...]
    """Logical ids of the owner topics the stack creates."""
    queue: str
    """Logical id of the job queue."""


@pytest.fixture(scope="module")
def deployed() -> Iterator[dict[str, DeployedMonitor]]:
    # One app per deployment: both create the job queue "training" in the same account and
    # region, which one app refuses (AWS Batch names are unique there).
    with TemporaryDirectory() as outdir:
        monitors = {}
        for stack_name, enforce in (("Watched", False), ("Enforcing", True)):
            app_outdir = Path(outdir, stack_name)
            app = cdk.App(outdir=str(app_outdir), context={"aws:cdk:enable-asset-metadata": True})
            stack = cdk.Stack(app, stack_name, env=ENV)
            QuotaManagedTrainingQueue(
                stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 3)], shares=SHARES,
                queue_name="training",
            ).add_monitoring(enforce_interruption_budget=enforce)
            template = app.synth().get_stack_by_name(stack_name).template
            monitors[stack_name] = _monitor_of(template, app_outdir)
        yield monitors


def _monitor_of(template: Mapping[str, Any], outdir: Path) -> DeployedMonitor:
    resources: Mapping[str, Any] = template["Resources"]
    functions = {}
    for resource in resources.values():
        if resource["Type"] != "AWS::Lambda::Function":
            continue
        props = resource["Properties"]
        if props.get("Handler") in (SHARE_METRICS_HANDLER, JOB_EVENTS_HANDLER,
                                    PREEMPTIONS_HANDLER):
            functions[props["Handler"]] = DeployedFunction(
                handler=props["Handler"],
                asset=outdir / resource["Metadata"]["aws:asset:path"],
                environment=props["Environment"]["Variables"],
            )
    [queue] = [lid for lid, r in resources.items() if r["Type"] == "AWS::Batch::JobQueue"]
    topics = tuple(lid for lid, r in resources.items() if r["Type"] == "AWS::SNS::Topic")
    return DeployedMonitor(functions[SHARE_METRICS_HANDLER], functions[JOB_EVENTS_HANDLER],
                           functions[PREEMPTIONS_HANDLER], topics, queue)


def _resolve(value: Any, refs: Mapping[str, str]) -> Any:
    """The few intrinsics a function's environment uses, with ``refs`` for Ref / GetAtt."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return [_resolve(item, refs) for item in value]
    [(name, argument)] = value.items()
    if name == "Ref":
        return refs[argument]
    if name == "Fn::GetAtt":
        return refs[argument[0]]
    if name == "Fn::Join":
        return str(argument[0]).join(_resolve(argument[1], refs))
    if name == "Fn::Split":
        return _resolve(argument[1], refs).split(argument[0])
    if name == "Fn::Select":
        return _resolve(argument[1], refs)[int(argument[0])]
    raise AssertionError(f"intrinsic {name} is not resolved by this test")


@dataclass(frozen=True)
class Invocation:
    result: dict[str, Any]
    stdout: str
    environment: dict[str, str]
    """The function's environment, intrinsics resolved against the fakes."""


def run_function(function: DeployedFunction, monitor: Monitor, deployed: DeployedMonitor,
                 event: Mapping[str, Any], python: Path | None = None) -> Invocation:
    """One invocation in a fresh interpreter (a fresh execution environment's process):
    ``python``, when given, plays the Lambda runtime's."""
    refs = {deployed.queue: monitor.training}
    refs.update({lid: monitor.sns.add_topic(lid) for lid in deployed.topics})
    environment = {name: str(_resolve(value, refs))
                   for name, value in function.environment.items()}
    for settings in (json.loads(environment[MONITORED_QUEUES_ENV])
                     if MONITORED_QUEUES_ENV in environment else [environment]):
        assert settings[JOB_QUEUE_ARN_ENV] == monitor.training
        assert settings[JOB_QUEUE_NAME_ENV] == "training"
    scratch = monitor.directory / "lambda-tmp"  # Lambda's /tmp, kept between invocations
    scratch.mkdir(exist_ok=True)
    process_env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(function.asset),
        "PYTHONDONTWRITEBYTECODE": "1",
        "LAMBDA_TASK_ROOT": str(function.asset),
        "TMPDIR": str(scratch),
        **{name: os.environ[name] for name in (
            "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION",
            "AWS_ENDPOINT_URL_BATCH", "AWS_ENDPOINT_URL_SNS")},
        **environment,
    }
    completed = subprocess.run(
        [str(python or sys.executable), "-c", _RUN, function.handler, str(function.asset)],
        input=json.dumps(event), env=process_env, cwd=function.asset,
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    result = json.loads(lines[-1].removeprefix("RESULT "))
    return Invocation(result, "\n".join(lines[:-1]), environment)


def test_metrics_from_the_deployed_function_equal_the_fakes_state(
    monitor: Monitor, deployed: dict[str, DeployedMonitor]
) -> None:
    monitor.create_shares(SHARES)
    for _ in range(2):
        monitor.batch.add_service_job(monitor.training, "QS1", "RUNNING", {G5: 1})
    monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", {G5: 1})
    monitor.batch.add_service_job(monitor.research, "QS2", "RUNNABLE", {G5: 1})

    watched = deployed["Watched"]
    run = run_function(watched.metrics, monitor, watched, {})

    points = data_points(run.stdout)
    assert run.result["missing"] == []
    assert values(points, CAPACITY_IN_USE, QuotaShare="QS1", CapacityUnit=G5) == [2]
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS2") == [1]
    assert values(points, SHARE_DRIFT) == [0, 0, 0]
    assert {p.dimension("JobQueue") for p in points} == {"training"}


@pytest.mark.parametrize(("stack", "terminated"), [("Watched", 0), ("Enforcing", 1)])
def test_a_preemption_reaches_its_owner_once_and_termination_needs_the_opt_in(
    monitor: Monitor, deployed: dict[str, DeployedMonitor], stack: str, terminated: int
) -> None:
    monitor.create_shares(SHARES)
    target = deployed[stack]
    # QS2's budget is 0: its first preemption is over budget.
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNING", {G5: 1},
                                        name="qs2-job")
    started = preemption_started(job)
    monitor.batch.preempt(job.job_id)
    completed = preemption_completed(job)

    # Each delivery in its own process; the last is a duplicate of the Completed event.
    runs = [run_function(target.preemptions, monitor, target, event)
            for event in (started, completed, completed)]

    assert [r.result["outcome"] for r in runs] == [
        "logged", "terminated" if terminated else "reported", "duplicate"]
    [message] = monitor.sns.published
    [settings] = json.loads(runs[1].environment[MONITORED_QUEUES_ENV])
    assert message.topic_arn == settings[OWNER_TOPICS_ENV]["nlp-team"]
    assert message.subject.startswith(
        "Job qs2-job terminated" if terminated else "Job qs2-job over the interruption budget")
    assert monitor.batch.count("TerminateServiceJob") == terminated
    assert values(data_points(runs[1].stdout), PREEMPTIONS, QuotaShare="QS2") == [1]
    assert values(data_points(runs[2].stdout), PREEMPTIONS) == []


def test_another_queues_job_is_ignored_by_the_deployed_function(
    monitor: Monitor, deployed: dict[str, DeployedMonitor]
) -> None:
    monitor.create_shares(SHARES)
    monitor.create_shares(SHARES, queue=monitor.research)
    job = monitor.batch.add_service_job(monitor.research, "QS2", "RUNNING", {G5: 1})
    monitor.batch.preempt(job.job_id)
    target = deployed["Enforcing"]

    run = run_function(target.preemptions, monitor, target, preemption_completed(job))

    assert run.result["outcome"] == "ignored: another job queue"
    assert monitor.sns.published == []
    assert monitor.batch.count("TerminateServiceJob") == 0
    assert values(data_points(run.stdout), PREEMPTIONS) == []


def test_the_deployed_functions_use_the_batch_model_they_carry_on_an_old_botocore(
    monitor: Monitor, deployed: dict[str, DeployedMonitor], old_python: Path
) -> None:
    # The runtime's botocore predates the quota-share API (ListQuotaShares, which the metrics
    # call); the asset carries the model of the botocore the app was synthesized with.
    bundled = subprocess.run(
        [str(old_python), "-I", "-c", "import botocore, botocore.session; print(botocore."
         "__version__, 'ListQuotaShares' in botocore.session.get_session()"
         ".get_service_model('batch').operation_names)"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert bundled == [OLD_BOTOCORE, "False"]
    target = deployed["Enforcing"]
    for function in (target.metrics, target.events, target.preemptions):
        assert list(function.asset.glob(
            "quota_constructs/runtime/botocore_data/batch/*/service-2.json"))
    monitor.create_shares(SHARES)
    monitor.batch.add_service_job(monitor.training, "QS1", "RUNNING", {G5: 1})
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNING", {G5: 1},
                                        name="qs2-job")
    monitor.batch.preempt(job.job_id)

    metrics = run_function(target.metrics, monitor, target, {}, python=old_python)
    events = run_function(target.preemptions, monitor, target, preemption_completed(job),
                          python=old_python)

    points = data_points(metrics.stdout)
    assert values(points, CAPACITY_IN_USE, QuotaShare="QS1", CapacityUnit=G5) == [1]
    assert values(points, SHARE_DRIFT) == [0, 0, 0]
    assert events.result["outcome"] == "terminated"
    assert monitor.batch.count("TerminateServiceJob") == 1
    [message] = monitor.sns.published
    assert message.subject.startswith("Job qs2-job terminated")


def test_the_deployed_job_events_function_publishes_the_agreements_figures(
    monitor: Monitor, deployed: dict[str, DeployedMonitor]
) -> None:
    monitor.create_shares(SHARES)
    target = deployed["Watched"]
    waited = monitor.batch.add_service_job(monitor.training, "QS1", "RUNNABLE", {G5: 1},
                                           age_seconds=1800)
    monitor.batch.start(waited.job_id)
    # QS2's budget is 0; its job was submitted without retries and fails on its preemption.
    lost = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNING", {G5: 1},
                                         retries_before_termination=0)
    monitor.batch.preempt(lost.job_id)
    now = monitor.batch.clock_ms()

    runs = [run_function(target.events, monitor, target,
                         state_change_now(job, now, event_id=job.job_id))
            for job in (waited, lost)]

    assert [r.result["outcome"] for r in runs] == ["published", "reported"]
    [wait] = values(data_points(runs[0].stdout), WAIT_TIME, QuotaShare="QS1")
    assert 1800 <= wait < 1900  # the fakes run on the wall clock here
    assert values(data_points(runs[1].stdout), BUDGET_FAILURES, QuotaShare="QS2") == [1]
