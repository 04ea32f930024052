"""The job ledger: what QuotaShareMonitoring(job_ledger=...) deploys, that it is off by default
and nag-clean, and, end to end against the fakes (Batch, SNS, S3 on loopback), that the
functions as deployed keep every terminal attempt and ``usage --ledger`` reads them back."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks, ServerlessChecks

from quota_constructs import (
    JobLedger,
    QuotaConfigError,
    QuotaShareMonitoring,
    TrainingJobQueue,
)
from quota_constructs.cli import main as console
from quota_constructs.wire.job_ledger import LEDGER_BUCKET_ENV, LEDGER_PREFIX_ENV

from ..constructs.support import logical_id
from ..monitoring_runtime.conftest import G5, Monitor, context, reference_shares
from ..monitoring_runtime.events import preemption_completed, state_change
from ..monitoring_runtime.fake_s3 import FakeS3, FakeS3Server
from .test_template_handlers import run_as_deployed

ENV = cdk.Environment(account="123456789012", region="us-east-1")
QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/training"
T0 = 1_793_491_200_000
"""2026-11-01T00:00:00Z."""
SECOND = 1000


def monitored(stack: cdk.Stack, **props: Any) -> QuotaShareMonitoring:
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", QUEUE_ARN)
    return QuotaShareMonitoring(stack, "Monitoring", job_queue=queue,
                                shares=reference_shares(), **props)


def resources(stack: cdk.Stack, kind: str) -> dict[str, Any]:
    found: dict[str, Any] = Template.from_stack(stack).find_resources(kind)
    return found


def test_off_by_default_nothing_changes() -> None:
    stack = cdk.Stack(cdk.App(), "Plain", env=ENV)
    monitoring = monitored(stack)
    assert monitoring.job_ledger is None
    assert resources(stack, "AWS::S3::Bucket") == {}
    rule = Template.from_stack(stack).to_json()["Resources"][
        logical_id(monitoring.job_events.state_change_rule)]  # type: ignore[union-attr]
    assert rule["Properties"]["EventPattern"]["detail"]["status"] == ["FAILED"]


def test_on_it_deploys_a_bucket_with_a_lifecycle_rule_and_the_writers_grants() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Ledgered", env=ENV)
    monitoring = monitored(stack, job_ledger=True)
    template = Template.from_stack(stack)
    assert monitoring.job_ledger is not None
    template.has_resource("AWS::S3::Bucket", {
        "DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain",
        "Properties": Match.object_like({
            "LifecycleConfiguration": {"Rules": [{
                "Id": "ExpireJobRecords", "Status": "Enabled", "ExpirationInDays": 400,
                "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}}]},
            "BucketEncryption": {"ServerSideEncryptionConfiguration": [
                {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]},
            "PublicAccessBlockConfiguration": {
                "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True,
                "RestrictPublicBuckets": True},
        }),
    })
    template.has_resource_properties("AWS::S3::BucketPolicy", {"PolicyDocument": {
        "Statement": Match.array_with([Match.object_like({
            "Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}})])}})
    # Both event functions write it, PutObject only, under the ledger's prefix.
    bucket_id = logical_id(monitoring.job_ledger.bucket)
    writers = [
        policy for policy in resources(stack, "AWS::IAM::Policy").values()
        if any(statement["Action"] == "s3:PutObject"
               for statement in policy["Properties"]["PolicyDocument"]["Statement"])
    ]
    assert len(writers) == 2
    for policy in writers:
        [statement] = [s for s in policy["Properties"]["PolicyDocument"]["Statement"]
                       if s["Action"] == "s3:PutObject"]
        assert statement["Resource"] == {"Fn::Join": ["", [
            {"Fn::GetAtt": [bucket_id, "Arn"]}, "/job-ledger/*"]]}
    events = template.to_json()["Resources"]
    function = events[logical_id(monitoring.job_events.function)]  # type: ignore[union-attr]
    variables = function["Properties"]["Environment"]["Variables"]
    assert variables[LEDGER_BUCKET_ENV] == {"Ref": bucket_id}
    assert variables[LEDGER_PREFIX_ENV] == "job-ledger/"
    rule = events[logical_id(monitoring.job_events.state_change_rule)]  # type: ignore[union-attr]
    assert rule["Properties"]["EventPattern"]["detail"]["status"] == ["SUCCEEDED", "FAILED"]
    app.synth()  # the stack's preemptions function gets the queue's ledger at synthesis
    preemptions = Template.from_stack(stack).to_json()["Resources"][
        logical_id(monitoring.preemptions.function)]  # type: ignore[union-attr]
    entries = json.loads(json.dumps(
        preemptions["Properties"]["Environment"]["Variables"]["QUOTA_MONITOR_QUEUES"]))
    assert LEDGER_BUCKET_ENV in json.dumps(entries)
    outputs = Template.from_stack(stack).to_json()["Outputs"]
    assert any("JobLedgerUrl" in key for key in outputs)


@pytest.mark.parametrize("pack", [AwsSolutionsChecks, ServerlessChecks])
def test_cdk_nag_reports_no_unacknowledged_finding(pack: Any) -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Ledgered", env=ENV)
    monitored(stack, job_ledger=True)
    report = pack(app).validate_scope(app)
    assert report.success, [v.rule_name for v in report.violations]


def test_one_ledger_shared_by_two_monitors_is_granted_once_to_the_stacks_function() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Shared", env=ENV)
    ledger = JobLedger(stack, "Ledger", retention=cdk.Duration.days(90))
    for name in ("a", "b"):
        queue = TrainingJobQueue.from_job_queue_arn(
            stack, f"Queue{name}", f"arn:aws:batch:us-east-1:123456789012:job-queue/{name}")
        QuotaShareMonitoring(stack, f"Monitoring{name}", job_queue=queue,
                             shares=reference_shares(), job_ledger=ledger)
    app.synth()
    buckets = resources(stack, "AWS::S3::Bucket")
    assert len(buckets) == 1
    [bucket] = buckets.values()
    assert bucket["Properties"]["LifecycleConfiguration"]["Rules"][0]["ExpirationInDays"] == 90
    puts = [statement for policy in resources(stack, "AWS::IAM::Policy").values()
            for statement in policy["Properties"]["PolicyDocument"]["Statement"]
            if statement["Action"] == "s3:PutObject"]
    assert len(puts) == 3  # each queue's job-events function, and the stack's function once


def test_mistakes_are_refused_when_the_app_is_built() -> None:
    stack = cdk.Stack(cdk.App(), "Wrong", env=ENV)
    with pytest.raises(QuotaConfigError, match="job_events_enabled"):
        monitored(stack, job_ledger=True, job_events_enabled=False)
    with pytest.raises(QuotaConfigError, match="retention"):
        JobLedger(stack, "Short", retention=cdk.Duration.days(3))
    with pytest.raises(QuotaConfigError, match="prefix"):
        JobLedger(stack, "Slash", prefix="ledger")


# -- end to end against the fakes ----------------------------------------------------------------

@pytest.fixture
def fake_s3(monitor: Monitor) -> Iterator[FakeS3]:
    server = FakeS3Server().start()
    monitor.monkeypatch.setenv("AWS_ENDPOINT_URL_S3", server.endpoint)
    state = server.reset()
    state.add_bucket("platform-ledger")
    yield state
    server.stop()


def deploy_with_ledger(monitor: Monitor, outdir: Path) -> QuotaShareMonitoring:
    app = cdk.App(outdir=str(outdir))
    stack = cdk.Stack(app, "Monitored", env=ENV)
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", monitor.training)
    topics = {owner: sns.Topic.from_topic_arn(stack, f"{owner}Topic", arn)
              for owner, arn in monitor.topics.items()}
    ledger = JobLedger(stack, "Ledger", bucket=s3.Bucket.from_bucket_name(
        stack, "Bucket", "platform-ledger"))
    monitoring = QuotaShareMonitoring(stack, "Monitoring", job_queue=queue, owner_topics=topics,
                                      shares=reference_shares(), job_ledger=ledger)
    app.synth()
    return monitoring


DECLARATION = '''
from types import SimpleNamespace
from quota_constructs import CapacityLimit
from tests.monitoring_runtime.conftest import reference_shares
REFERENCE = SimpleNamespace(capacity_limits=[CapacityLimit("ml.g5.xlarge", 3)],
                            shares=reference_shares())
'''


def test_the_functions_as_deployed_keep_every_terminal_attempt_and_usage_reads_them(
        monitor: Monitor, fake_s3: FakeS3, tmp_path: Path) -> None:
    monitoring = deploy_with_ledger(monitor, tmp_path / "cdk.out")
    assert monitoring.preemptions is not None and monitoring.job_events is not None
    monitor.create_shares()
    clock = [T0]
    monitor.batch.clock_ms = lambda: clock[0]
    preemptions = run_as_deployed(monitor, monitoring, monitoring.preemptions.function,
                                  tmp_path / "cdk.out")

    # a (QS1, LEND_AND_BORROW, own 1): 2 instances from T0, preempted at 1 h, again from
    # 4000 s to 7600 s. b (QS2, LEND, budget 0): from 1800 s, preempted at 3000 s: failed.
    a = monitor.batch.add_service_job(monitor.training, "QS1", "RUNNING", {G5: 2},
                                      age_seconds=600)
    clock[0] = T0 + 1800 * SECOND
    b = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNING", {G5: 1},
                                      age_seconds=0, retries_before_termination=0)
    clock[0] = T0 + 3000 * SECOND
    monitor.batch.preempt(b.job_id, ran_seconds=1200)
    preemptions(preemption_completed(b), context())
    clock[0] = T0 + 3600 * SECOND
    monitor.batch.preempt(a.job_id, ran_seconds=3600)
    preemptions(preemption_completed(a), context())
    preemptions(preemption_completed(a), context())  # delivered twice: kept once
    other = monitor.batch.add_service_job(monitor.research, "QS1", "RUNNING", {G5: 1})
    monitor.batch.preempt(other.job_id)
    preemptions(preemption_completed(other), context())  # another queue: not kept

    job_events = run_as_deployed(monitor, monitoring, monitoring.job_events.function,
                                 tmp_path / "cdk.out")
    job_events(state_change(b, "FAILED", "Job failed: preemption retries exhausted"), context())
    clock[0] = T0 + 4000 * SECOND
    monitor.batch.run_again(a.job_id)
    clock[0] = T0 + 7600 * SECOND
    monitor.batch.finish(a.job_id)
    job_events(state_change(a, "SUCCEEDED", "Training job completed"), context())

    keys = fake_s3.keys("platform-ledger")
    assert keys == sorted([
        f"job-ledger/training/2026/11/01/{a.job_id}/final.json",
        f"job-ledger/training/2026/11/01/{a.job_id}/preempted-{T0}.json",
        f"job-ledger/training/2026/11/01/{b.job_id}/final.json",
        f"job-ledger/training/2026/11/01/{b.job_id}/preempted-{T0 + 1800 * SECOND}.json",
    ])

    declaration = tmp_path / "reference.py"
    declaration.write_text(DECLARATION)
    out = tmp_path / "usage"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = console(["usage", "--ledger", "s3://platform-ledger/job-ledger/training",
                        "--declaration", f"{declaration}:REFERENCE", "--out", str(out)])
    assert code == 0, err.getvalue()
    got = json.loads((out / "usage.json").read_text())
    # From a's submission (600 s before T0) to its end (7600 s).
    assert got["window"]["hours"] == pytest.approx(8200 / 3600)
    qs1 = got["shares"]["QS1"]["instance_types"][G5]
    assert (qs1["used_hours"], qs1["borrowed_hours"], qs1["preempted_hours"]) == pytest.approx(
        (4.0, 2.0, 2.0))
    qs2 = got["shares"]["QS2"]
    # QS2 lent its idle instance while a borrowed: 0-1800 s, 3000-3600 s and 4000-7600 s.
    assert qs2["instance_types"][G5]["lent_hours"] == pytest.approx(
        (1800 + 600 + 3600) / 3600)
    assert qs2["instance_types"][G5]["preempted_hours"] == pytest.approx(1200 / 3600)
    assert (qs2["jobs"], qs2["preemptions"], qs2["budget_failures"]) == (1, 1, 1)
    assert got["shares"]["QS1"]["preemptions"] == 1


def test_a_ledger_the_reader_may_not_read_is_one_line(monitor: Monitor, fake_s3: FakeS3,
                                                      tmp_path: Path) -> None:
    fake_s3.denied.add("platform-ledger")
    declaration = tmp_path / "reference.py"
    declaration.write_text(DECLARATION)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = console(["usage", "--ledger", "s3://platform-ledger/job-ledger/training",
                        "--declaration", f"{declaration}:REFERENCE", "--out",
                        str(tmp_path / "o")])
    assert code == 2
    (line,) = err.getvalue().strip().splitlines()
    assert "AccessDenied" in line and "s3://platform-ledger/job-ledger/training/" in line
