"""The AWS walkthrough (seeds/001), step by step, against ``quota-constructs emulate``.

The emulator runs as a process (``--port 0 --clock manual``; its URL is the first line it
prints); boto3 and the SageMaker SDK v3's ``TrainingQueue`` reach it through
``AWS_ENDPOINT_URL_BATCH`` (only the SDK's IAM role check is replaced); the live commands
read it; the control API moves time and finishes a job; SIGTERM stops it with status 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from quota_constructs.cli import main as console

from .support import QUEUE, EmulatorProcess, names, statuses, training_payload

QS1_JOBS = (("qs1_job_high", 3), ("qs1_job_med", 2), ("qs1_job_low", 1))


@pytest.fixture
def emulator(monkeypatch: pytest.MonkeyPatch) -> Iterator[EmulatorProcess]:
    process = EmulatorProcess()
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", process.url)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    try:
        yield process
    finally:
        process.kill()


@pytest.fixture
def model_trainer(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The walkthrough's ModelTrainer, built offline: the role check replaced, and no source
    code (which the SDK would upload to S3)."""
    from sagemaker.core.training.configs import (
        Compute,
        OutputDataConfig,
        StoppingCondition,
    )
    from sagemaker.train import ModelTrainer
    from sagemaker.train.defaults import TrainDefaults

    monkeypatch.setattr(TrainDefaults, "get_role",
                        staticmethod(lambda role=None, sagemaker_session=None: role))
    return ModelTrainer(
        training_image="763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.5",
        role="arn:aws:iam::123456789012:role/training",
        base_job_name="hello-world-simple-job",
        compute=Compute(instance_type="ml.g5.xlarge", instance_count=1),
        stopping_condition=StoppingCondition(max_runtime_in_seconds=300),
        output_data_config=OutputDataConfig(s3_output_path="s3://walkthrough/output"),
    )


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert console([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def share_row(status: dict[str, Any], name: str) -> dict[str, Any]:
    (row,) = [s for s in status["shares"] if s["name"] == name]
    return dict(row["units"][0], runnable=row["runnable"], head_job=row["head_job"])


def listed(batch: Any, share: str, status: str | None = None) -> set[str]:
    kwargs: dict[str, Any] = {"jobQueue": QUEUE,
                              "filters": [{"name": "QUOTA_SHARE_NAME", "values": [share]}]}
    if status is not None:
        kwargs["jobStatus"] = status
    return names(batch.list_service_jobs(**kwargs)["jobSummaryList"])


def test_the_walkthrough_step_by_step(
    emulator: EmulatorProcess, model_trainer: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from sagemaker.train.aws_batch.training_queue import TrainingQueue

    batch = boto3.client("batch")
    queue = TrainingQueue(QUEUE)

    # Three QS1 jobs, highest priority first: SUBMITTED until a scheduling pass.
    queued = {name: queue.submit(training_job=model_trainer, inputs=None, job_name=name,
                                 quota_share_name="QS1", priority=priority)
              for name, priority in QS1_JOBS}
    jobs = {name: job.job_arn for name, job in queued.items()}
    assert set(statuses(batch, jobs).values()) == {"SUBMITTED"}

    # A pass: high runs on QS1's own instance, med borrows QS2's idle one, low waits
    # (QS3 reserves its instance).
    emulator.advance(10)
    assert statuses(batch, jobs) == {
        "qs1_job_high": "RUNNING", "qs1_job_med": "RUNNING", "qs1_job_low": "RUNNABLE"}
    assert listed(batch, "QS1") == {"qs1_job_high", "qs1_job_med"}  # no status: RUNNING
    assert listed(batch, "QS1", "RUNNABLE") == {"qs1_job_low"}
    snapshot = batch.get_job_queue_snapshot(jobQueue=QUEUE)
    usage = snapshot["queueUtilization"]["quotaShareUtilization"]["topCapacityUtilization"]
    assert usage == [{"quotaShareName": "QS1",
                      "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 2.0}]}]
    (front,) = snapshot["frontOfQuotaShares"]["quotaShares"]["QS1"]
    assert front["jobArn"] == jobs["qs1_job_low"]
    status = cli_json(capsys, "status", "--queue", QUEUE)
    assert share_row(status, "QS1")["borrowed"] == 1
    assert share_row(status, "QS2")["lent"] == 1

    # QS2's owner submits: its lent instance is reclaimed from the borrowing QS1 job.
    qs2 = batch.submit_service_job(
        jobName="qs2_job_1", jobQueue=QUEUE, serviceJobType="SAGEMAKER_TRAINING",
        serviceRequestPayload=training_payload(), quotaShareName="QS2", schedulingPriority=1,
    )
    jobs["qs2_job_1"] = qs2["jobId"]
    emulator.advance(10)
    assert statuses(batch, jobs) == {
        "qs1_job_high": "RUNNING", "qs1_job_med": "RUNNABLE", "qs1_job_low": "RUNNABLE",
        "qs2_job_1": "RUNNING"}
    med = batch.describe_service_job(jobId=jobs["qs1_job_med"])
    assert med["preemptionSummary"]["preemptedAttemptCount"] == 1
    assert "Cross-share" in med["preemptionSummary"]["recentPreemptedAttempts"][0]["statusReason"]

    # low's priority raised above high's: nothing to borrow, so high is preempted in-share.
    queued["qs1_job_low"].update(scheduling_priority=4)
    assert statuses(batch, jobs) == {
        "qs1_job_high": "RUNNABLE", "qs1_job_med": "RUNNABLE", "qs1_job_low": "RUNNING",
        "qs2_job_1": "RUNNING"}
    high = batch.describe_service_job(jobId=jobs["qs1_job_high"])
    assert high["schedulingPriority"] == 3
    assert "In-share" in high["preemptionSummary"]["recentPreemptedAttempts"][0]["statusReason"]
    assert batch.describe_service_job(jobId=jobs["qs1_job_low"])["schedulingPriority"] == 4
    assert listed(batch, "QS1", "RUNNABLE") == {"qs1_job_high", "qs1_job_med"}

    # The live commands read the same picture.
    status = cli_json(capsys, "status", "--queue", QUEUE)
    qs1 = share_row(status, "QS1")
    assert (qs1["in_use"], qs1["borrowed"], qs1["runnable"]) == (1, 0, 2)
    high_id = high["jobId"]
    assert qs1["head_job"]["job_id"] in (high_id, jobs["qs1_job_high"])
    explained = cli_json(capsys, "explain", "--queue", QUEUE, "--job", high_id)
    assert (explained["job_id"], explained["share"], explained["status"]) == (
        high_id, "QS1", "RUNNABLE")
    assert explained["reason_code"] == "NOTHING_IDLE_TO_BORROW"

    # QS2's job finished through the control API: its instance is idle again, and QS1's
    # head (high, priority 3) borrows it.
    finished = emulator.control("POST", f"/_emulator/jobs/{jobs['qs2_job_1']}/finish",
                                {"status": "SUCCEEDED"})
    assert finished["status"] == "SUCCEEDED"
    assert statuses(batch, jobs)["qs1_job_high"] == "RUNNING"
    assert listed(batch, "QS2", "SUCCEEDED") == {"qs2_job_1"}

    # Bad requests: ClientException naming the field and the value.
    check_bad_requests(batch, jobs)

    # Jobs run for their payload's MaxRuntimeInSeconds (300 s) of emulated time.
    emulator.advance(300)
    assert statuses(batch, jobs)["qs1_job_low"] == "SUCCEEDED"
    emulator.advance(600)
    assert set(statuses(batch, jobs).values()) == {"SUCCEEDED"}

    check_events(emulator, jobs)
    assert emulator.terminate() == 0


def check_bad_requests(batch: Any, jobs: dict[str, str]) -> None:
    def refused(call: Any, **kwargs: Any) -> str:
        with pytest.raises(ClientError) as caught:
            call(**kwargs)
        assert caught.value.response["Error"]["Code"] == "ClientException"
        assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        return str(caught.value.response["Error"]["Message"])

    submit = {"jobName": "bad", "jobQueue": QUEUE, "serviceJobType": "SAGEMAKER_TRAINING",
              "serviceRequestPayload": training_payload(), "quotaShareName": "QS1"}
    assert "schedulingPriority: 10000" in refused(
        batch.update_service_job, jobId=jobs["qs1_job_med"], schedulingPriority=10000)
    assert "QS9" in refused(batch.submit_service_job, **{**submit, "quotaShareName": "QS9"})
    assert "no-such-queue" in refused(
        batch.submit_service_job, **{**submit, "jobQueue": "no-such-queue"})
    assert "serviceRequestPayload" in refused(
        batch.submit_service_job, **{**submit, "serviceRequestPayload": training_payload(
            padding=11 * 1024)})
    assert "not-a-job" in refused(batch.describe_service_job, jobId="not-a-job")
    qs3 = batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"][2]
    assert "QS3" in refused(
        batch.create_quota_share, quotaShareName="QS3", jobQueue=QUEUE,
        capacityLimits=[{"capacityUnit": "ml.g5.xlarge", "maxCapacity": 1}],
        resourceSharingConfiguration={"strategy": "RESERVE"},
        preemptionConfiguration={"inSharePreemption": "DISABLED"})
    batch.update_quota_share(quotaShareArn=qs3["quotaShareArn"], state="DISABLED")
    assert "DISABLED" in refused(batch.submit_service_job, **{**submit, "quotaShareName": "QS3"})
    batch.update_quota_share(quotaShareArn=qs3["quotaShareArn"], state="ENABLED")


def check_events(emulator: EmulatorProcess, jobs: dict[str, str]) -> None:
    events = emulator.control("GET", "/_emulator/events")
    kinds = [(e["detail-type"], e["resources"][0]) for e in events]
    med_arn = emulator_arn(events, "qs1_job_med")
    high_arn = emulator_arn(events, "qs1_job_high")
    assert ("Batch Service Job Preemption Started", med_arn) in kinds
    assert ("Batch Service Job Preemption Completed", med_arn) in kinds
    assert ("Batch Service Job Preemption Started", high_arn) in kinds
    med_states = [e["detail"]["status"] for e in events
                  if e["detail-type"] == "Batch Service Job State Change"
                  and e["resources"][0] == med_arn]
    # No event for the submission itself (as AWS documents).
    assert med_states[:5] == ["RUNNABLE", "SCHEDULED", "STARTING", "RUNNING", "RUNNABLE"]
    assert med_states[-1] == "SUCCEEDED"
    assert all(e["source"] == "aws.batch" for e in events)
    assert all("quotaShareName" not in e["detail"] for e in events)


def emulator_arn(events: list[dict[str, Any]], name: str) -> str:
    return next(e["resources"][0] for e in events
                if e["detail-type"] == "Batch Service Job State Change"
                and e["detail"]["jobName"] == name)
