"""The fake Batch of ``tests/runtime`` plus what the monitoring Lambdas read: service jobs with
priorities and preemption summaries, DescribeServiceJob, TerminateServiceJob, preemptions that
produce AWS's documented events, and faults injected per quota share.

Composed on top of :mod:`tests.runtime.fake_batch` (a subclass, two more routes) rather than
edited into it, so that module stays as the custom-resource tests know it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.runtime import fake_batch
from tests.runtime.fake_batch import (
    ACCOUNT,
    DISPATCHED,
    REGION,
    BatchError,
    FakeBatch,
    FakeBatchServer,
    FakeJob,
    Fault,
)

# The two operations the monitoring adds, on the paths botocore's model gives them.
fake_batch.ROUTES.update({
    ("POST", "/v1/describeservicejob"): "DescribeServiceJob",
    ("POST", "/v1/terminateservicejob"): "TerminateServiceJob",
})

CROSS_SHARE_REASON = "Cross-share preemption triggered to reclaim borrowed capacity"
CROSS_SHARE_STARTED_REASON = "PREEMPTION_IN_PROGRESS: " + CROSS_SHARE_REASON


def now_ms() -> int:
    """The wall clock in milliseconds: the fakes' clock unless a test gives its own."""
    return int(time.time() * 1000)


def job_arn(job_id: str) -> str:
    return f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{job_id}"


@dataclass
class PreemptedAttempt:
    started_at: int
    stopped_at: int
    reason: str
    training_job: str

    def as_api(self) -> dict[str, Any]:
        return {
            "serviceResourceId": {"name": "TrainingJobArn", "value": self.training_job},
            "startedAt": self.started_at,
            "stoppedAt": self.stopped_at,
            "statusReason": self.reason,
        }


@dataclass
class FakeServiceJob(FakeJob):
    priority: int = 0
    retries_before_termination: int | None = None
    status_reason: str = ""
    started_at: int | None = None
    attempts: list[PreemptedAttempt] = field(default_factory=list)
    runnable_since: int = 0
    """When the job last became RUNNABLE (submitted, or put back after a preemption)."""
    attempt_started_at: int | None = None
    """When the running attempt started, as :meth:`MonitoringFakeBatch.start` records it."""

    @property
    def arn(self) -> str:
        return job_arn(self.job_id)

    def description(self) -> dict[str, Any]:
        """DescribeServiceJob's answer."""
        described: dict[str, Any] = {
            **self.summary(),
            "jobQueue": self.queue_arn,
            "schedulingPriority": self.priority,
            "statusReason": self.status_reason,
            "attempts": [],
        }
        if self.started_at is not None:
            described["startedAt"] = self.started_at
        if self.stopped_at is not None:
            described["stoppedAt"] = self.stopped_at
        if self.retries_before_termination is not None:
            described["preemptionConfiguration"] = {
                "preemptionRetriesBeforeTermination": self.retries_before_termination
            }
        if self.attempts:
            described["preemptionSummary"] = self.preemption_summary()
        return described

    def preemption_summary(self) -> dict[str, Any]:
        return {
            "preemptedAttemptCount": len(self.attempts),
            "recentPreemptedAttempts": [a.as_api() for a in self.attempts[-5:]],
        }


@dataclass
class MonitoringFakeBatch(FakeBatch):
    share_faults: dict[str, deque[Fault]] = field(default_factory=dict)
    terse_listing: bool = False
    """ListQuotaShares answers names, ARNs and statuses only (as an endpoint might)."""
    snapshot_updated_at_ms: int | None = None
    """Every part's ``lastUpdatedAt`` in GetJobQueueSnapshot (None: now)."""
    snapshot_undated: bool = False
    """GetJobQueueSnapshot sends no ``lastUpdatedAt`` at all (AWS marks the field optional)."""
    started_at_moves_on_restart: bool = False
    """AWS does not document whether a job's ``startedAt`` is its first start or its latest
    attempt's: False, the first (kept on a restart); True, the latest."""
    position_kept_on_requeue: bool = False
    """AWS does not document what a preemption does to ``earliestTimeAtPosition``: False, the
    requeued job's time restarts when it is put back; True, it keeps its submission time."""
    clock_ms: Callable[[], int] = now_ms
    """The fake's clock (milliseconds) for job times and snapshots. A test that fixes it gives
    the handler the same time (its ``clock``), so no age depends on how fast the machine is."""

    # -- test helpers -------------------------------------------------------------------------

    def add_service_job(
        self,
        queue_arn: str,
        share: str,
        status: str,
        usage: Mapping[str, float] | None = None,
        *,
        name: str | None = None,
        age_seconds: float = 60.0,
        priority: int = 0,
        retries_before_termination: int | None = None,
    ) -> FakeServiceJob:
        """A job of ``share`` on ``queue_arn`` (the share need not exist: jobs outlive shares)."""
        with self.lock:
            number = next(self._ids)
            created = self.clock_ms() - int(age_seconds * 1000)
            job = FakeServiceJob(
                job_id=f"5{number:07d}-0a82-49aa-ba5a-4727fcce14a8",
                name=name or f"train-{number}",
                queue_arn=queue_arn,
                share_name=share,
                status=status,
                usage=dict(usage or {}),
                created_at=created,
                priority=priority,
                retries_before_termination=retries_before_termination,
                started_at=created + 1000 if status in DISPATCHED else None,
                runnable_since=created,
            )
            self.jobs.append(job)
            return job

    def start(self, job_id: str) -> FakeServiceJob:
        """``job`` starts an attempt now: RUNNING, its ``startedAt`` set on its first start
        (and on every start with :attr:`started_at_moves_on_restart`)."""
        with self.lock:
            job = self.service_job(job_id)
            now = self.clock_ms()
            job.status = "RUNNING"
            job.attempt_started_at = now
            if job.started_at is None or self.started_at_moves_on_restart:
                job.started_at = now
            return job

    def preempt(self, job_id: str, reason: str = CROSS_SHARE_REASON,
                ran_seconds: float = 141.31) -> FakeServiceJob:
        """``job`` loses its attempt: back to RUNNABLE (FAILED once past its retries). The
        attempt ran since :meth:`start` when the job was started by it, else ``ran_seconds``."""
        with self.lock:
            job = self.service_job(job_id)
            stopped = self.clock_ms()
            started = job.attempt_started_at
            job.attempt_started_at = None
            job.attempts.append(PreemptedAttempt(
                started_at=stopped - int(ran_seconds * 1000) if started is None else started,
                stopped_at=stopped,
                reason=reason,
                training_job=f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-job/"
                f"AWSBatch{job.name}{len(job.attempts)}",
            ))
            retries = job.retries_before_termination
            if retries is not None and len(job.attempts) > retries:
                job.status = "FAILED"
                job.status_reason = "Job failed: preemption retries exhausted"
            else:
                job.status = "RUNNABLE"
                job.runnable_since = stopped
            self.preempted_jobs.append(job_id)
            return job

    def run_again(self, job_id: str) -> FakeServiceJob:
        """A RUNNABLE job starts its next attempt now."""
        with self.lock:
            job = self.service_job(job_id)
            job.status, job.started_at, job.status_reason = "RUNNING", self.clock_ms(), ""
            return job

    def finish(self, job_id: str, status: str = "SUCCEEDED") -> FakeServiceJob:
        """A running job's attempt ends now, and the job with it."""
        with self.lock:
            job = self.service_job(job_id)
            job.status, job.stopped_at = status, self.clock_ms()
            return job

    def service_job(self, job_id: str) -> FakeServiceJob:
        job = self.job(job_id)
        assert isinstance(job, FakeServiceJob)
        return job

    def fail_share_next(self, share: str, times: int = 1, code: str = "ThrottlingException",
                        status: int = 400, message: str = "Rate exceeded") -> None:
        """The next ``times`` ListServiceJobs calls filtered on ``share`` fail."""
        with self.lock:
            queue = self.share_faults.setdefault(share, deque())
            queue.extend(Fault(error=BatchError(message, code, status)) for _ in range(times))

    def fail_describe_next(self, share: str, times: int = 1, code: str = "ServerException",
                           status: int = 500) -> None:
        """The next ``times`` DescribeQuotaShare calls of ``share`` fail."""
        self.fail_share_next(f"describe:{share}", times, code=code, status=status,
                             message="Internal error")

    def slow_share_next(self, share: str, seconds: float, times: int = 1) -> None:
        """The next ``times`` ListServiceJobs calls filtered on ``share`` answer late."""
        with self.lock:
            queue = self.share_faults.setdefault(share, deque())
            queue.extend(Fault(latency=seconds) for _ in range(times))

    # -- dispatch -----------------------------------------------------------------------------

    def handle(self, operation: str, params: dict[str, Any]) -> tuple[dict[str, Any], float]:
        latency = 0.0
        if operation in ("ListServiceJobs", "DescribeQuotaShare"):
            with self.lock:
                if operation == "ListServiceJobs":
                    filters = params.get("filters") or [{}]
                    share = (filters[0].get("values") or [""])[0]
                else:
                    share = "describe:" + str(params.get("quotaShareArn", "")).rsplit("/", 1)[-1]
                pending = self.share_faults.get(share)
                fault = pending.popleft() if pending else None
            if fault is not None and fault.error is not None:
                with self.lock:
                    self.calls.append((operation, params))
                raise fault.error
            latency = fault.latency if fault is not None else 0.0
        response, more = super().handle(operation, params)
        return response, latency + more

    def _ListQuotaShares(self, p: dict[str, Any]) -> dict[str, Any]:
        page = super()._ListQuotaShares(p)
        if self.terse_listing:
            keep = ("quotaShareName", "quotaShareArn", "jobQueueArn")
            page["quotaShares"] = [{k: item[k] for k in keep} for item in page["quotaShares"]]
        return page

    # -- the queue snapshot -------------------------------------------------------------------

    def _GetJobQueueSnapshot(self, p: dict[str, Any]) -> dict[str, Any]:
        """Usage as the base fake reports it, plus the fronts (API reference,
        GetJobQueueSnapshot): each share's first RUNNABLE job and the queue's first 100, with
        the time each reached its position. This fake orders a share's RUNNABLE jobs by
        priority (higher first), then by when they became RUNNABLE, and the queue's the same
        way; a job reaches the front of its share when the one before it leaves, which this
        fake simplifies to "when it became RUNNABLE" unless a job ahead of it left later."""
        response = super()._GetJobQueueSnapshot(p)
        queue = self._queue(p.get("jobQueue", ""))
        waiting = [job for job in self.jobs if isinstance(job, FakeServiceJob)
                   and job.queue_arn == queue.arn and job.status == "RUNNABLE"]
        heads: dict[str, FakeServiceJob] = {}
        for job in waiting:
            best = heads.get(job.share_name)
            if best is None or _order(job) < _order(best):
                heads[job.share_name] = job
        front = sorted(waiting, key=_order)[:100]
        updated = self.snapshot_updated_at_ms
        if updated is None:
            updated = self.clock_ms()
        response["frontOfQuotaShares"] = {
            "quotaShares": {
                share: [{"jobArn": job.arn, "earliestTimeAtPosition": self._at_front(job)}]
                for share, job in heads.items()
            },
            "lastUpdatedAt": updated,
        }
        response["frontOfQueue"] = {
            "jobs": [{"jobArn": job.arn, "earliestTimeAtPosition": self._at_front(job)}
                     for job in front],
            "lastUpdatedAt": updated,
        }
        response.setdefault("queueUtilization", {})["lastUpdatedAt"] = updated
        if self.snapshot_undated:
            for part in ("frontOfQuotaShares", "frontOfQueue", "queueUtilization"):
                response[part].pop("lastUpdatedAt", None)
        return response

    def _at_front(self, job: FakeServiceJob) -> int:
        if self.position_kept_on_requeue:
            return job.created_at
        return job.runnable_since

    # -- service jobs -------------------------------------------------------------------------

    def _DescribeServiceJob(self, p: dict[str, Any]) -> dict[str, Any]:
        job = self._service_job(p.get("jobId"))
        return job.description()

    def _TerminateServiceJob(self, p: dict[str, Any]) -> dict[str, Any]:
        job = self._service_job(p.get("jobId"))
        reason = p.get("reason")
        if not isinstance(reason, str) or not reason:
            raise BatchError("reason is required")
        if job.status not in ("SUCCEEDED", "FAILED"):
            job.status, job.terminated, job.status_reason = "FAILED", True, reason
        self.terminated_jobs.append(job.job_id)
        return {}

    def _service_job(self, job_id: object) -> FakeServiceJob:
        for job in self.jobs:
            if job.job_id == job_id and isinstance(job, FakeServiceJob):
                return job
        raise BatchError(f"Job {job_id} not found")


def _order(job: FakeServiceJob) -> tuple[int, int, str]:
    return (-job.priority, job.runnable_since, job.job_id)


class MonitoringFakeBatchServer(FakeBatchServer):
    def __init__(self) -> None:
        super().__init__()
        self.state = MonitoringFakeBatch()

    def reset(self) -> MonitoringFakeBatch:
        self.state = MonitoringFakeBatch()
        return self.state
