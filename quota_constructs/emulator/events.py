"""The EventBridge events AWS Batch documents for service jobs, in their documented shapes.

Shapes follow the AWS Batch user guide's samples ("Service job state change events",
"Service job queue blocked events", "Service job preemption events"): no event for the
initial submission; the state change's detail is DescribeServiceJob's answer without tags or
payload (and without ``quotaShareName``, which AWS does not document there); the preemption
events carry the job's ARN, no queue and no share. The in-share reason text is the emulator's (AWS
documents only the cross-share one).
"""

from __future__ import annotations

import itertools
import time
from functools import lru_cache
from typing import Any

from ..wire.monitoring_contract import (
    PREEMPTION_COMPLETED_DETAIL_TYPE,
    PREEMPTION_STARTED_DETAIL_TYPE,
    QUEUE_BLOCKED_DETAIL_TYPE,
    STATE_CHANGE_DETAIL_TYPE,
)

SOURCE = "aws.batch"
CROSS_SHARE_REASON = "Cross-share preemption triggered to reclaim borrowed capacity"
"""AWS's documented reason (the preempted attempt's ``statusReason``)."""
IN_SHARE_REASON = "In-share preemption triggered by a higher priority job"
"""The emulator's wording (AWS documents none); the job-events handler reads it as in-share."""
IN_PROGRESS = "PREEMPTION_IN_PROGRESS: "
_IDS = itertools.count(1)
"""Event ids: unique in the process, in emission order, shaped as EventBridge's UUIDs (and far
cheaper than uuid4 at tens of thousands of events)."""


@lru_cache(maxsize=4096)
def _iso(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))


def event(detail_type: str, *, account: str, region: str, at_ms: int, resource: str,
          detail: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": "0",
        "id": f"00000000-0000-4000-8000-{next(_IDS):012x}",
        "detail-type": detail_type,
        "source": SOURCE,
        "account": account,
        "time": _iso(at_ms // 1000),
        "region": region,
        "resources": [resource],
        "detail": detail,
    }


def state_change(description: dict[str, Any], **where: Any) -> dict[str, Any]:
    """``description``: DescribeServiceJob's answer without tags or payload (the caller
    leaves them out rather than this copying the rest)."""
    return event(STATE_CHANGE_DETAIL_TYPE, resource=description["jobArn"], detail=description,
                 **where)


def queue_blocked(description: dict[str, Any], **where: Any) -> dict[str, Any]:
    blocked = state_change(description, **where)
    blocked["detail-type"] = QUEUE_BLOCKED_DETAIL_TYPE
    return blocked


def preemption_started(job_arn: str, reason: str, **where: Any) -> dict[str, Any]:
    return event(PREEMPTION_STARTED_DETAIL_TYPE, resource=job_arn, detail={
        "statusReason": IN_PROGRESS + reason, "preemptedJobArn": job_arn, "status": "RUNNING",
    }, **where)


def preemption_completed(job_arn: str, summary: dict[str, Any], status: str,
                         **where: Any) -> dict[str, Any]:
    return event(PREEMPTION_COMPLETED_DETAIL_TYPE, resource=job_arn, detail={
        "preemptedJobArn": job_arn, "preemptionSummary": summary, "status": status,
    }, **where)
