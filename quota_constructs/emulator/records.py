"""What the emulator keeps of each service job and quota share, and its indexes.

Jobs are found by id, by ARN and by engine index, and listed from per-share, per-status
buckets (insertion-ordered dicts keyed by the job's submission number), so no request or
scheduling event looks at every job.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..model import QuotaShareSpec

ACTIVE = ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING")
DISPATCHED = ("SCHEDULED", "STARTING", "RUNNING")
FINISHED = ("SUCCEEDED", "FAILED")
RECENT_PREEMPTIONS = 5
"""DescribeServiceJob's ``recentPreemptedAttempts`` keeps the latest few (an assumption: AWS
documents the list, not its length)."""


@dataclass
class Share:
    spec: QuotaShareSpec
    arn: str
    index: int
    """The share's index in the engine (stable: a deleted share keeps it, holding nothing)."""
    status: str = "VALID"


@dataclass(eq=False)
class Job:
    seq: int
    job_id: str
    arn: str
    name: str
    share: str
    payload: str
    instance_type: str
    instance_count: int
    duration: float
    priority: int
    retries: int | None
    created_at: int
    submitted_s: float
    """Emulated seconds at submission: when the job joins its queue in the engine."""
    tags: dict[str, str]
    timeout_config: dict[str, Any] | None = None
    retry_strategy: dict[str, Any] | None = None
    engine: int = -1
    """The job's index in the engine; -1 until it is RUNNABLE (or when it can never run)."""
    status: str = "SUBMITTED"
    status_reason: str | None = None
    runnable_since: int = 0
    scheduled_at: int | None = None
    started_at: int | None = None
    stopped_at: int | None = None
    attempt_started: int | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    preempted: list[dict[str, Any]] = field(default_factory=list)
    """Every preempted attempt, oldest first (DescribeServiceJob shows the last few)."""
    preempted_count: int = 0
    is_terminated: bool = False
    end_as: str = "SUCCEEDED"
    """What the job's next end is: SUCCEEDED, or FAILED when it was finished or terminated
    as failed through the API."""
    blocked_reason: str | None = None

    training_prefix: str = ""
    """``arn:aws:sagemaker:<region>:<account>:training-job/``: where its attempts run."""

    @property
    def training_job_arn(self) -> str:
        """The (emulated) SageMaker training job of its current attempt."""
        return f"{self.training_prefix}{self.name}-{self.job_id[:8]}-{self.preempted_count + 1}"


class JobIndex:
    """Jobs by id and ARN, and per share and status in submission order."""

    def __init__(self) -> None:
        self.by_id: dict[str, Job] = {}
        self.by_arn: dict[str, Job] = {}
        self.by_engine: dict[int, Job] = {}
        self.buckets: dict[str, dict[str, dict[int, Job]]] = {}
        self.created: list[Job] = []

    def add(self, job: Job) -> None:
        self.by_id[job.job_id] = job
        self.by_arn[job.arn] = job
        self.created.append(job)
        self.bucket(job.share, job.status)[job.seq] = job

    def bucket(self, share: str, status: str) -> dict[int, Job]:
        per_share = self.buckets.get(share)
        if per_share is None:
            per_share = self.buckets[share] = {}
        found = per_share.get(status)
        if found is None:
            found = per_share[status] = {}
        return found

    def move(self, job: Job, status: str) -> None:
        del self.buckets[job.share][job.status][job.seq]
        job.status = status
        self.bucket(job.share, status)[job.seq] = job

    def find(self, reference: str) -> Job | None:
        """A job by its id or its ARN (the SageMaker SDK sends ARNs)."""
        return self.by_id.get(reference) or self.by_arn.get(reference)

    def of(self, share: str, statuses: tuple[str, ...]) -> Iterator[Job]:
        per_share = self.buckets.get(share, {})
        for status in statuses:
            yield from per_share.get(status, {}).values()

    def count(self, share: str, statuses: tuple[str, ...]) -> int:
        per_share = self.buckets.get(share, {})
        return sum(len(per_share.get(status, ())) for status in statuses)


@dataclass(frozen=True, slots=True)
class JobState:
    """A job's changing members at one state change: enough to render the event later, when
    it is read, rather than a whole description at every change (the hot path). The names
    are :class:`Job`'s, so either can be described."""

    job: Job
    at: int
    detail_type: str
    status: str
    status_reason: str | None
    scheduled_at: int | None
    started_at: int | None
    stopped_at: int | None
    is_terminated: bool
    priority: int
    preempted_count: int
    n_attempts: int

    @classmethod
    def of(cls, job: Job, at: int, detail_type: str, status: str | None = None) -> JobState:
        return cls(job, at, detail_type, status or job.status, job.status_reason,
                   job.scheduled_at, job.started_at, job.stopped_at, job.is_terminated,
                   job.priority, job.preempted_count, len(job.attempts))

    @property
    def training_job_arn(self) -> str:
        job = self.job
        return f"{job.training_prefix}{job.name}-{job.job_id[:8]}-{self.preempted_count + 1}"
