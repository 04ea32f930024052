"""What the start-estimate tests need of the emulator: submitting with a known maximum run time,
reading the estimate through boto3, and the moment a job actually (re)started."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import boto3

from quota_constructs.emulator import Emulator
from quota_constructs.live.estimate import StartEstimate
from quota_constructs.live.explain import explain
from quota_constructs.live.queue_reader import QueueReader

G5 = "ml.g5.xlarge"


def client(emu: Emulator) -> Any:
    return boto3.client("batch", endpoint_url=emu.endpoint_url, region_name="us-east-1",
                        aws_access_key_id="emulator", aws_secret_access_key="emulator")


def submit(batch: Any, queue: str, share: str, runtime: int, *, priority: int = 0,
           count: int = 1, instance_type: str = G5, name: str = "job") -> str:
    request = {"ResourceConfig": {"InstanceType": instance_type, "InstanceCount": count},
               "StoppingCondition": {"MaxRuntimeInSeconds": runtime}}
    return str(batch.submit_service_job(
        jobName=name, jobQueue=queue, serviceJobType="SAGEMAKER_TRAINING",
        serviceRequestPayload=json.dumps(request), quotaShareName=share,
        schedulingPriority=priority)["jobId"])


def estimate_of(batch: Any, queue: str, job_id: str) -> StartEstimate:
    """``explain``'s start estimate for a job, read through boto3."""
    answer = explain(queue, job_id=job_id, reader=QueueReader(batch))
    assert answer.start_estimate is not None
    return answer.start_estimate


def emulated(emu: Emulator, seconds: float | None = None) -> datetime:
    """The emulator's time (now, or ``seconds`` since it started) as the API shows it."""
    service = emu.service
    return datetime.fromtimestamp(service.ms(service.synced if seconds is None else seconds)
                                  / 1000, UTC)


def started_since(batch: Any, job_id: str, since: datetime) -> datetime | None:
    """When the job first started at or after ``since`` (any attempt), None if it has not."""
    job = batch.describe_service_job(jobId=job_id)
    starts = [job.get("startedAt")] + [a.get("startedAt") for a in job.get("attempts") or []]
    moments = [_time(s) for s in starts if s is not None]
    after = [m for m in moments if m >= since]
    return min(after) if after else None


def _time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    return datetime.fromtimestamp(int(value) / 1000, UTC)


def run_until_started(
    emu: Emulator, batch: Any, job_id: str, since: datetime, *, step: Callable[[], None],
    steps: int = 200,
) -> datetime | None:
    """Call ``step`` (which moves the clock and may end jobs early) until the job has started
    or ``steps`` ran out; when it started (read through boto3 once it has)."""
    job = emu.service.jobs.find(job_id)
    assert job is not None
    attempts = len(job.attempts)
    for _ in range(steps):
        # Between steps, the emulator's own record says whether it started (cheaper than a
        # call); the moment itself is read back through the API.
        if job.status not in ("RUNNABLE", "SUBMITTED") or len(job.attempts) > attempts:
            break
        step()
    return started_since(batch, job_id, since)
