"""The library's own clients, unchanged, against the emulator through AWS_ENDPOINT_URL_BATCH:
the team's ShareClient, the custom-resource handler, and the job-events handler fed the
emulator's EventBridge events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.client import ShareClient
from quota_constructs.emulator import Emulator
from quota_constructs.model import (
    CapacityLimit,
    QuotaConfigError,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.runtime import job_events_handler
from quota_constructs.runtime.job_events_handler import MEMORY
from quota_constructs.runtime.monitor_settings import load_declaration
from quota_constructs.wire.monitoring_contract import notification_variables, queue_variables
from quota_constructs.wire.monitoring_declaration import monitoring_declaration_json

from ..monitoring_runtime.fake_sns import FakeSnsServer
from ..runtime.cloudformation import StackResource, share_properties
from .conftest import submit
from .support import G5, QUEUE, training_payload


def test_share_client_submits_lists_and_reprioritises(emu: Emulator, batch: Any) -> None:
    client = ShareClient(queue=QUEUE, share="QS1", max_priority=50, preemption_budget=2)
    request = json.loads(training_payload())
    first = client.submit(job_name="resnet-1", training_job_request=request, priority=10)
    second = client.submit(job_name="resnet-2", training_job_request=request, priority=5)
    other = submit(batch, "someone-elses", "QS2")
    emu.advance(5)

    # QS2 runs its own job and QS3 reserves its instance: nothing to borrow.
    assert {(j.job_name, j.status) for j in client.jobs()} == {
        ("resnet-1", "RUNNING"), ("resnet-2", "RUNNABLE")}
    assert other not in {j.job_id for j in client.jobs()}
    client.update_priority(second, 20)  # now above resnet-1: preempts it in-share
    assert {(j.job_name, j.status) for j in client.jobs()} == {
        ("resnet-1", "RUNNABLE"), ("resnet-2", "RUNNING")}
    described = batch.describe_service_job(jobId=second)
    assert described["schedulingPriority"] == 20
    assert described["preemptionConfiguration"] == {"preemptionRetriesBeforeTermination": 2}
    assert described["tags"] == dict(client.submission_tags)
    assert batch.describe_service_job(jobId=first)["quotaShareName"] == "QS1"


def test_the_custom_resource_handler_creates_updates_and_deletes_a_share(
    emu: Emulator, batch: Any
) -> None:
    spec = QuotaShareSpec(name="QS4", capacity_limits=[CapacityLimit(G5, 1)],
                          strategy=SharingStrategy.LEND)
    resource = StackResource("TeamShare")
    created = resource.create(share_properties(spec, emu.queue_arn))
    assert created.ok, created.reason
    arn = f"{emu.queue_arn}/quota-share/QS4"
    assert created.physical_id == arn
    assert batch.describe_quota_share(quotaShareArn=arn)["status"] == "VALID"

    wider = QuotaShareSpec(name="QS4", capacity_limits=[CapacityLimit(G5, 2)],
                           strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=50)
    updated = resource.update(share_properties(wider, emu.queue_arn))
    assert updated.ok, updated.reason
    live = batch.describe_quota_share(quotaShareArn=arn)
    assert live["capacityLimits"] == [{"capacityUnit": G5, "maxCapacity": 2}]
    assert live["resourceSharingConfiguration"] == {"strategy": "LEND_AND_BORROW",
                                                    "borrowLimit": 50}

    # The delete guard sees the share's active job through ListServiceJobs and refuses.
    job = submit(batch, "qs4-job", "QS4")
    emu.advance(1)
    assert batch.describe_service_job(jobId=job)["status"] == "RUNNING"  # the new share runs
    refused = resource.delete()
    assert not refused.ok and job in refused.reason
    batch.terminate_service_job(jobId=job, reason="make way")
    deleted = resource.delete()
    assert deleted.ok, deleted.reason
    assert "QS4" not in {s["quotaShareName"]
                         for s in batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"]}


@pytest.fixture
def monitored(emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """The job-events function's settings, as the constructs set them, for the emulated
    queue; the owners' topics on a fake SNS."""
    sns_server = FakeSnsServer().start()
    sns = sns_server.reset()
    topic = sns.add_topic("vision-quota")
    specs = [
        QuotaShareSpec(name=name, capacity_limits=[CapacityLimit(G5, 1)], strategy=strategy,
                       borrow_limit_percent=200 if name == "QS1" else None,
                       in_share_preemption=name == "QS1",
                       agreement=ShareAgreement(owner="vision", interruption_budget=2))
        for name, strategy in (("QS1", SharingStrategy.LEND_AND_BORROW),
                               ("QS2", SharingStrategy.LEND), ("QS3", SharingStrategy.RESERVE))
    ]
    (tmp_path / "declaration.json").write_text(monitoring_declaration_json(specs))
    load_declaration.cache_clear()
    monkeypatch.setenv("AWS_ENDPOINT_URL_SNS", sns_server.endpoint)
    monkeypatch.setenv("LAMBDA_TASK_ROOT", str(tmp_path))
    # Written by the contract's own writers, as the constructs write them.
    for name, value in {
        **queue_variables(job_queue_arn=emu.queue_arn, job_queue_name=QUEUE,
                          declaration_file="declaration.json", namespace="Test/Emulator"),
        **notification_variables(json.dumps({"vision": topic}), enforce_budget=False),
    }.items():
        monkeypatch.setenv(name, value)
    MEMORY.use_directory(tmp_path / "memory")
    yield sns, topic
    load_declaration.cache_clear()
    sns_server.stop()


def test_the_job_events_handler_reports_the_emulators_preemptions(
    emu: Emulator, batch: Any, monitored: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    sns, topic = monitored
    borrower = submit(batch, "borrower", "QS1", priority=1)
    submit(batch, "own", "QS1", priority=2)
    emu.advance(5)
    submit(batch, "lender", "QS2")
    emu.advance(5)  # the lender reclaims its instance from the borrowing QS1 job
    assert batch.describe_service_job(jobId=borrower)["status"] == "RUNNABLE"

    context = type("Context", (), {"get_remaining_time_in_millis": lambda self: 60_000})()
    outcomes = [(e["detail-type"], job_events_handler.handler(e, context)["outcome"])
                for e in emu.events()]
    assert ("Batch Service Job Preemption Completed", "reported") in outcomes
    assert all(not outcome.startswith("ignored: another job queue") for _, outcome in outcomes)
    (message,) = sns.to(topic)
    assert "borrower" in message.message or borrower in message.message


def test_share_client_estimates_a_job_before_submitting_it(emu: Emulator, batch: Any) -> None:
    """QS3 (RESERVE, one instance) runs a 600-second job: a job submitted now starts by then."""
    running = submit(batch, "qs3-now", "QS3", runtime=600)
    emu.advance(10)
    client = ShareClient(queue=QUEUE, share="QS3", max_priority=5)
    with pytest.raises(QuotaConfigError, match="priority got 6"):
        client.estimate(instance_type=G5, priority=6)  # above the ceiling: no call made

    estimate = client.estimate(instance_type=G5, priority=1)
    start = emu.service.ms(0) / 1000
    assert estimate.latest is not None and estimate.latest.timestamp() == start + 600
    assert estimate.earliest.timestamp() == start + 10
    assert estimate.blocking_jobs == (running,)
    assert client.estimate(instance_type=G5, count=2, priority=1).latest is None
