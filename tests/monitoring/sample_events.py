"""The EventBridge events AWS Batch documents for service jobs (AWS Batch user guide, "Service job
state change events", "Service job queue blocked events" and "Service job preemption events"),
and an EventBridge pattern matcher.

The samples are the documented ones with the account and region of these tests; the matcher
implements the exact-value subset of EventBridge pattern matching that the monitoring rules use
(a field's list of allowed values, nested objects), and fails loudly on anything else so that a
rule using another operator cannot pass untested.
"""

from __future__ import annotations

import copy
from typing import Any

QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/HappyPathJobQueue"
OTHER_QUEUE_ARN = "arn:aws:batch:us-east-1:123456789012:job-queue/SomeoneElsesQueue"
JOB_ARN = "arn:aws:batch:us-east-1:123456789012:service-job/51f245a9-2995-4a53-bced-7b3c00028f84"

STATE_CHANGE: dict[str, Any] = {
    "version": "0",
    "id": "c8f9c4b5-76e5-d76a-f980-7011e206042b",
    "detail-type": "Batch Service Job State Change",
    "source": "aws.batch",
    "account": "123456789012",
    "time": "2022-01-11T23:36:40Z",
    "region": "us-east-1",
    "resources": [
        "arn:aws:batch:us-east-1:123456789012:service-job/4c7599ae-0a82-49aa-ba5a-4727fcce14a8"
    ],
    "detail": {
        "attempts": [
            {
                "serviceResourceId": {
                    "name": "TrainingJobArn",
                    "value": "arn:aws:sagemaker:us-east-1:123456789012:training-job/"
                    "AWSBatchmy-training-job88b610a69aa8380ca5b0a7aba3f81cb8",
                },
                "startedAt": 1641944300058,
                "stoppedAt": 1641944400058,
                "statusReason": "Received status from SageMaker: Training job completed",
            }
        ],
        "createdAt": 1641944200058,
        "jobArn": "arn:aws:batch:us-east-1:123456789012:service-job/"
        "4c7599ae-0a82-49aa-ba5a-4727fcce14a8",
        "jobId": "0bb17543-ece6-4480-b1a7-a556d344746b",
        "jobName": "event-test",
        "jobQueue": QUEUE_ARN,
        "status": "SUCCEEDED",
    },
}

PREEMPTION_STARTED: dict[str, Any] = {
    "version": "0",
    "id": "1b4a511e-2737-226a-a1e7-fc97f1cd9681",
    "detail-type": "Batch Service Job Preemption Started",
    "source": "aws.batch",
    "account": "123456789012",
    "time": "2026-03-16T19:57:27Z",
    "region": "us-east-1",
    "resources": [JOB_ARN],
    "detail": {
        "statusReason": "PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim "
        "borrowed capacity",
        "preemptedJobArn": JOB_ARN,
        "status": "RUNNING",
    },
}

PREEMPTION_COMPLETED: dict[str, Any] = {
    "version": "0",
    "id": "2b1c6151-c166-edf5-822c-211b3bfd46b2",
    "detail-type": "Batch Service Job Preemption Completed",
    "source": "aws.batch",
    "account": "123456789012",
    "time": "2026-03-16T19:57:47Z",
    "region": "us-east-1",
    "resources": [JOB_ARN],
    "detail": {
        "preemptedJobArn": JOB_ARN,
        "preemptionSummary": {
            "preemptedAttemptCount": 1,
            "recentPreemptedAttempts": [
                {
                    "serviceResourceId": {
                        "name": "TrainingJobArn",
                        "value": "arn:aws:sagemaker:us-east-1:123456789012:training-job/"
                        "AWSBatchexample",
                    },
                    "startedAt": 1773690000000,
                    "stoppedAt": 1773691067000,
                    "statusReason": "Cross-share preemption triggered to reclaim borrowed "
                    "capacity",
                }
            ],
        },
        "status": "RUNNABLE",
    },
}

# AWS Batch user guide, "Service job queue blocked events" (the documented sample, its queue
# renamed to this module's QUEUE_ARN's HappyPathJobQueue, which it already is).
QUEUE_BLOCKED: dict[str, Any] = {
    "version": "0",
    "id": "c8f9c4b5-76e5-d76a-f980-7011e206042b",
    "detail-type": "Batch Service Job Queue Blocked",
    "source": "aws.batch",
    "account": "123456789012",
    "time": "2022-01-11T23:36:40Z",
    "region": "us-east-1",
    "resources": [
        "arn:aws:batch:us-east-1:123456789012:service-job/4c7599ae-0a82-49aa-ba5a-4727fcce14a8"
    ],
    "detail": {
        "attempts": [],
        "createdAt": 1641944200058,
        "jobArn": "arn:aws:batch:us-east-1:123456789012:service-job/"
        "4c7599ae-0a82-49aa-ba5a-4727fcce14a8",
        "jobId": "6271dfdf-d8a7-41b1-a4d2-55a2224f5375",
        "jobName": "event-test",
        "jobQueue": QUEUE_ARN,
        "serviceJobType": "SAGEMAKER_TRAINING",
        "status": "RUNNABLE",
        "statusReason": "blocked-reason",
        "timeoutConfig": {"attemptDurationSeconds": 60},
    },
}


def with_status(event: dict[str, Any], status: str) -> dict[str, Any]:
    """``event`` with its ``detail.status`` set to ``status``."""
    changed = copy.deepcopy(event)
    changed["detail"]["status"] = status
    return changed


# A state change of a classic (non-service) Batch job on the same queue name: another detail type.
CLASSIC_JOB_STATE_CHANGE: dict[str, Any] = {
    **copy.deepcopy(STATE_CHANGE),
    "detail-type": "Batch Job State Change",
}


def on_queue(event: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    """``event`` with its ``detail.jobQueue`` set to ``queue_arn``."""
    changed = copy.deepcopy(event)
    changed["detail"]["jobQueue"] = queue_arn
    return changed


def matches(pattern: dict[str, Any], event: dict[str, Any]) -> bool:
    """Whether EventBridge would deliver ``event`` to a rule with ``pattern``."""
    for key, allowed in pattern.items():
        if key not in event:
            return False
        value = event[key]
        if isinstance(allowed, dict):
            if not isinstance(value, dict) or not matches(allowed, value):
                return False
        elif isinstance(allowed, list):
            if not all(isinstance(item, (str, int, float)) for item in allowed):
                raise NotImplementedError(f"pattern operator in {key}: {allowed!r}")
            values = value if isinstance(value, list) else [value]
            if not any(item in allowed for item in values):
                return False
        else:
            raise ValueError(f"pattern field {key} must be a list or an object: {allowed!r}")
    return True
