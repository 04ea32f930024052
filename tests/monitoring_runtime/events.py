"""EventBridge events in the shapes AWS documents for AWS Batch service jobs.

Copied from the AWS Batch user guide ("Service job preemption events", "Service job state change
events"), with only the job ARN, queue, status and reason replaced by a test's own.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from quota_constructs.wire.monitoring_contract import (
    PREEMPTION_COMPLETED_DETAIL_TYPE,
    PREEMPTION_STARTED_DETAIL_TYPE,
    QUEUE_BLOCKED_DETAIL_TYPE,
    STATE_CHANGE_DETAIL_TYPE,
)

from .fake_service_jobs import CROSS_SHARE_STARTED_REASON, FakeServiceJob


def preemption_started(job: FakeServiceJob, reason: str = CROSS_SHARE_STARTED_REASON,
                       event_id: str = "1b4a511e-2737-226a-a1e7-fc97f1cd9681") -> dict[str, Any]:
    return {
        "version": "0",
        "id": event_id,
        "detail-type": PREEMPTION_STARTED_DETAIL_TYPE,
        "source": "aws.batch",
        "account": "123456789012",
        "time": "2026-03-16T19:57:27Z",
        "region": "us-east-1",
        "resources": [job.arn],
        "detail": {
            "statusReason": reason,
            "preemptedJobArn": job.arn,
            "status": "RUNNING",
        },
    }


def preemption_completed(job: FakeServiceJob,
                         event_id: str = "2b1c6151-c166-edf5-822c-211b3bfd46b2") -> dict[str, Any]:
    """The Completed event for the job's latest preemption (its summary as the fake has it)."""
    return {
        "version": "0",
        "id": event_id,
        "detail-type": PREEMPTION_COMPLETED_DETAIL_TYPE,
        "source": "aws.batch",
        "account": "123456789012",
        "time": "2026-03-16T19:57:47Z",
        "region": "us-east-1",
        "resources": [job.arn],
        "detail": {
            "preemptedJobArn": job.arn,
            "preemptionSummary": job.preemption_summary(),
            "status": job.status,
        },
    }


def state_change(job: FakeServiceJob, status: str, reason: str,
                 event_id: str = "c8f9c4b5-76e5-d76a-f980-7011e206042b",
                 time: str = "2022-01-11T23:36:40Z") -> dict[str, Any]:
    """A state change; ``quotaShareName`` left out, as AWS does not document it there."""
    return {
        "version": "0",
        "id": event_id,
        "detail-type": STATE_CHANGE_DETAIL_TYPE,
        "source": "aws.batch",
        "account": "123456789012",
        "time": time,
        "region": "us-east-1",
        "resources": [job.arn],
        "detail": {
            "attempts": [],
            "createdAt": job.created_at,
            "jobArn": job.arn,
            "jobId": job.job_id,
            "jobName": job.name,
            "jobQueue": job.queue_arn,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "status": status,
            "statusReason": reason,
        },
    }


def queue_blocked(job: FakeServiceJob, reason: str,
                  event_id: str = "c8f9c4b5-76e5-d76a-f980-7011e206042b",
                  time: str = "2022-01-11T23:36:40Z") -> dict[str, Any]:
    """A Queue Blocked event shaped as AWS Batch's documented sample (user guide, "Service job
    queue blocked events"): the job at the front, its queue, RUNNABLE, the reason."""
    event = state_change(job, "RUNNABLE", reason, event_id=event_id, time=time)
    event["detail-type"] = QUEUE_BLOCKED_DETAIL_TYPE
    event["detail"]["timeoutConfig"] = {"attemptDurationSeconds": 60}
    return event


def iso_time(ms: int) -> str:
    """An EventBridge ``time``: ISO 8601, whole seconds, UTC."""
    return datetime.fromtimestamp(ms // 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def state_change_now(job: FakeServiceJob, at_ms: int, *, event_id: str,
                     described: bool = True) -> dict[str, Any]:
    """The State Change AWS Batch sends as ``job`` reaches its current status at ``at_ms``.

    ``described``: the detail is the job as DescribeServiceJob describes it at that moment
    (AWS: "resembles DescribeServiceJob"), without ``quotaShareName`` (not documented there),
    its running attempt listed as the documented sample lists attempts. Otherwise only the
    documented sample's fields (no start time, no preemption summary): the handler must read
    the rest from the job.
    """
    event = state_change(job, job.status, job.status_reason, event_id=event_id,
                         time=iso_time(at_ms))
    if described:
        detail = {k: v for k, v in job.description().items() if k != "quotaShareName"}
        if job.status == "RUNNING" and job.attempt_started_at is not None:
            detail["attempts"] = [{"startedAt": job.attempt_started_at}]
        event["detail"].update(detail)
    return event
