"""A service job of a quota share, as ListServiceJobs summarises it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

WAITING_STATUSES = ("SUBMITTED", "PENDING", "RUNNABLE")
"""Jobs not yet dispatched (botocore's ``ServiceJobStatus`` before SCHEDULED). A SUBMITTED or
PENDING job becomes RUNNABLE by itself, with nothing more asked of anyone, so whatever a RUNNABLE
job may do (start, preempt) a SUBMITTED or PENDING one will do shortly."""
DISPATCHED_STATUSES = ("SCHEDULED", "STARTING", "RUNNING")
"""Jobs that hold capacity, and so could be preempted when a share shrinks."""
ACTIVE_STATUSES = (*WAITING_STATUSES, *DISPATCHED_STATUSES)
"""Jobs a deleted share would terminate (every status but SUCCEEDED and FAILED)."""


@dataclass(frozen=True)
class ServiceJob:
    job_id: str
    name: str
    status: str
    capacity_usage: Mapping[str, float]

    @classmethod
    def from_api(cls, summary: Mapping[str, Any]) -> ServiceJob:
        usage: dict[str, float] = {}
        for item in summary.get("capacityUsage") or []:
            unit = str(item.get("capacityUnit", ""))
            usage[unit] = usage.get(unit, 0.0) + float(item.get("quantity", 0.0))
        return cls(
            job_id=str(summary.get("jobId", "")),
            name=str(summary.get("jobName", "")),
            status=str(summary.get("status", "")),
            capacity_usage=usage,
        )

    def describe(self) -> str:
        return f"{self.name} ({self.job_id}, {self.status})"
