"""The fake Batch of the monitoring tests plus what a team does: SubmitServiceJob,
UpdateServiceJob and TagResource on service jobs, each authorized by :mod:`.iam_policy` against
a policy (the team's grant as the library synthesizes it) with the request context the AWS
Batch service authorization reference describes:

- SubmitServiceJob: ``batch:SubmitServiceJob`` on the job queue, the quota share named in the
  request and the new service job, with ``aws:RequestTag/<key>`` and ``aws:TagKeys`` for the
  tags sent and ``batch:SchedulingPriority`` when a priority is sent; and, when tags are sent,
  ``batch:TagResource`` (the action the operation authorizes for tag-on-create) on the new job,
  which has no tags yet (no ``aws:ResourceTag``).
- TagResource of a service job: ``batch:TagResource`` on the job, with the tags sent and the
  job's own tags (``aws:ResourceTag/<key>``).
- UpdateServiceJob: ``batch:UpdateServiceJob`` on the job, with its tags and the priority.

``iam:PassRole`` of the request's execution role is not modelled (SageMaker's side).
Written from the API reference, not from the library: nothing here imports quota_constructs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.monitoring_runtime.fake_service_jobs import (
    FakeServiceJob,
    MonitoringFakeBatch,
    MonitoringFakeBatchServer,
    now_ms,
)
from tests.runtime import fake_batch
from tests.runtime.fake_batch import ACCOUNT, REGION, BatchError

from .iam_policy import Authorization, ContextValue, Denied, authorize, tag_context

fake_batch.ROUTES.update({
    ("POST", "/v1/submitservicejob"): "SubmitServiceJob",
    ("POST", "/v1/updateservicejob"): "UpdateServiceJob",
})

TAG_KEY = "quota-constructs:quota-share"


@dataclass
class SubmittedJob(FakeServiceJob):
    tags: dict[str, str] = field(default_factory=dict)
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass
class TeamFakeBatch(MonitoringFakeBatch):
    policy: Sequence[Mapping[str, Any]] | None = None
    """The caller's identity-policy statements; None: no IAM stand-in, everything is allowed."""
    denied: list[str] = field(default_factory=list)
    unfiltered_listing: bool = False
    """ListServiceJobs ignores jobStatus and filters (every job of the queue, every call): what
    a client must survive without showing another share's job or one job twice."""

    def submitted(self) -> list[SubmittedJob]:
        return [job for job in self.jobs if isinstance(job, SubmittedJob)]

    def _authorize(self, *authorizations: Authorization) -> None:
        if self.policy is None:
            return
        try:
            authorize(self.policy, authorizations)
        except Denied as denied:
            self.denied.append(str(denied))
            raise BatchError(f"not authorized: {denied}", "AccessDeniedException", 403) from None

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
        share = self.share(queue.arn, str(share_name))
        if share is None:
            raise BatchError(f"quota share {share_name} does not exist on {queue.name}")
        priority = p.get("schedulingPriority", 0)
        if not 0 <= priority <= 9999:
            raise BatchError(f"schedulingPriority {priority} out of range")
        tags = dict(p.get("tags") or {})
        if len(tags) > 50:
            raise BatchError("at most 50 tags")
        number = next(self._ids)
        job_id = f"7{number:07d}-1b93-4a0b-8c6d-5838adde25b9"
        job_arn = f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{job_id}"
        requested = {**tag_context(request_tags=tags, resource_tags=None), **_priority(p)}
        self._authorize(
            Authorization("batch:SubmitServiceJob", queue.arn, requested),
            Authorization("batch:SubmitServiceJob", share.arn, {
                **requested, **tag_context(request_tags=None, resource_tags=share.tags)}),
            Authorization("batch:SubmitServiceJob", job_arn, requested),
            *([Authorization("batch:TagResource", job_arn,
                             tag_context(request_tags=tags, resource_tags=None))]
              if tags else []),
        )
        retries = (p.get("preemptionConfiguration") or {}).get(
            "preemptionRetriesBeforeTermination"
        )
        job = SubmittedJob(
            job_id=job_id,
            name=p["jobName"], queue_arn=queue.arn, share_name=str(share_name),
            status="SUBMITTED", usage={}, created_at=now_ms(), priority=priority,
            retries_before_termination=retries, tags=tags,
            payload=json.loads(p["serviceRequestPayload"]),
        )
        self.jobs.append(job)
        return {"jobArn": job.arn, "jobName": job.name, "jobId": job.job_id}

    def _UpdateServiceJob(self, p: dict[str, Any]) -> dict[str, Any]:
        job = self.service_job(p["jobId"])
        tags = job.tags if isinstance(job, SubmittedJob) else {}
        self._authorize(Authorization("batch:UpdateServiceJob", job.arn, {
            **tag_context(request_tags=None, resource_tags=tags), **_priority(p)}))
        job.priority = p["schedulingPriority"]
        return {"jobArn": job.arn, "jobName": job.name, "jobId": job.job_id}

    def _TagResource(self, p: dict[str, Any]) -> dict[str, Any]:
        if ":service-job/" not in p["resourceArn"]:
            return super()._TagResource(p)
        job = next((j for j in self.submitted() if j.arn == p["resourceArn"]), None)
        if job is None:
            raise BatchError(f"Job {p['resourceArn']} not found")
        tags = dict(p.get("tags") or {})
        self._authorize(Authorization("batch:TagResource", job.arn, tag_context(
            request_tags=tags, resource_tags=job.tags)))
        job.tags = {**job.tags, **tags}
        return {}


def _priority(p: Mapping[str, Any]) -> dict[str, ContextValue]:
    if "schedulingPriority" not in p:
        return {}
    return {"batch:SchedulingPriority": int(p["schedulingPriority"])}


class TeamFakeBatchServer(MonitoringFakeBatchServer):
    def __init__(self) -> None:
        super().__init__()
        self.state = TeamFakeBatch()

    def reset(self) -> TeamFakeBatch:
        self.state = TeamFakeBatch()
        return self.state
