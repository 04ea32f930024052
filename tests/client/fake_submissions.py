"""The fake Batch of the monitoring tests plus what a team does: SubmitServiceJob and
UpdateServiceJob, with a stand-in for IAM that enforces one team's grant the way the AWS Batch
service authorization reference describes it (the share named in the request, the share's tag
on the request, ``batch:SchedulingPriority`` at most the ceiling and present under one).

Written from the API reference, not from the library: nothing here imports quota_constructs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.monitoring_runtime.fake_service_jobs import (
    FakeServiceJob,
    MonitoringFakeBatch,
    MonitoringFakeBatchServer,
    now_ms,
)
from tests.runtime import fake_batch
from tests.runtime.fake_batch import BatchError

fake_batch.ROUTES.update({
    ("POST", "/v1/submitservicejob"): "SubmitServiceJob",
    ("POST", "/v1/updateservicejob"): "UpdateServiceJob",
})

TAG_KEY = "quota-constructs:quota-share"


@dataclass(frozen=True)
class TeamGrant:
    """What the caller's role was granted: submit into ``share`` with its tag, at most
    ``ceiling`` (None: any priority); update the priority of jobs tagged with ``share``."""

    share: str
    ceiling: int | None


@dataclass
class SubmittedJob(FakeServiceJob):
    tags: dict[str, str] = field(default_factory=dict)
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class TeamFakeBatch(MonitoringFakeBatch):
    grant: TeamGrant | None = None
    """None: no IAM stand-in, every request is allowed."""
    denied: list[str] = field(default_factory=list)
    unfiltered_listing: bool = False
    """ListServiceJobs ignores jobStatus and filters (every job of the queue, every call): what
    a client must survive without showing another share's job or one job twice."""

    def submitted(self) -> list[SubmittedJob]:
        return [job for job in self.jobs if isinstance(job, SubmittedJob)]

    def _deny(self, why: str) -> None:
        self.denied.append(why)
        raise BatchError(f"not authorized: {why}", "AccessDeniedException", 403)

    def _authorize_priority(self, p: dict[str, Any]) -> None:
        assert self.grant is not None
        if self.grant.ceiling is None:
            return
        if "schedulingPriority" not in p:
            self._deny("batch:SchedulingPriority absent under a NumericLessThanEquals condition")
        if p["schedulingPriority"] > self.grant.ceiling:
            self._deny(f"priority {p['schedulingPriority']} above {self.grant.ceiling}")

    def _ListServiceJobs(self, p: dict[str, Any]) -> dict[str, Any]:
        if not self.unfiltered_listing:
            return super()._ListServiceJobs(p)
        queue = self._queue(p.get("jobQueue", ""))
        jobs = [job.summary() for job in self.jobs if job.queue_arn == queue.arn]
        return self._page(jobs, "jobSummaryList", p)

    def _SubmitServiceJob(self, p: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(p.get("jobQueue", ""))
        share_name = p.get("quotaShareName")
        if p.get("serviceJobType") != "SAGEMAKER_TRAINING":
            raise BatchError(f"serviceJobType {p.get('serviceJobType')!r} not supported")
        if self.share(queue.arn, str(share_name)) is None:
            raise BatchError(f"quota share {share_name} does not exist on {queue.name}")
        priority = p.get("schedulingPriority", 0)
        if not 0 <= priority <= 9999:
            raise BatchError(f"schedulingPriority {priority} out of range")
        tags = dict(p.get("tags") or {})
        if self.grant is not None:
            if share_name != self.grant.share:
                self._deny(f"quota share {share_name} not in the grant")
            if tags.get(TAG_KEY) != self.grant.share:
                self._deny(f"aws:RequestTag/{TAG_KEY} is {tags.get(TAG_KEY)!r}")
            self._authorize_priority(p)
        number = next(self._ids)
        retries = (p.get("preemptionConfiguration") or {}).get(
            "preemptionRetriesBeforeTermination"
        )
        job = SubmittedJob(
            job_id=f"7{number:07d}-1b93-4a0b-8c6d-5838adde25b9",
            name=p["jobName"], queue_arn=queue.arn, share_name=str(share_name),
            status="SUBMITTED", usage={}, created_at=now_ms(), priority=priority,
            retries_before_termination=retries, tags=tags,
            payload=json.loads(p["serviceRequestPayload"]),
        )
        self.jobs.append(job)
        return {"jobArn": job.arn, "jobName": job.name, "jobId": job.job_id}

    def _UpdateServiceJob(self, p: dict[str, Any]) -> dict[str, Any]:
        job = self.service_job(p["jobId"])
        if self.grant is not None:
            tags = job.tags if isinstance(job, SubmittedJob) else {}
            if tags.get(TAG_KEY) != self.grant.share:
                self._deny(f"aws:ResourceTag/{TAG_KEY} is {tags.get(TAG_KEY)!r}")
            self._authorize_priority(p)
        job.priority = p["schedulingPriority"]
        return {"jobArn": job.arn, "jobName": job.name, "jobId": job.job_id}


class TeamFakeBatchServer(MonitoringFakeBatchServer):
    def __init__(self) -> None:
        super().__init__()
        self.state = TeamFakeBatch()

    def reset(self) -> TeamFakeBatch:
        self.state = TeamFakeBatch()
        return self.state
