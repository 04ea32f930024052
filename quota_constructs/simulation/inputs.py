"""What a simulation replays: jobs, priority changes, and the choices AWS leaves open."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


@dataclass(frozen=True, slots=True, kw_only=True)
class SimJob:
    """One SageMaker Training job submitted to a quota share.

    ``duration`` is the run time the job needs when nothing interrupts it.
    ``checkpoint_interval`` is the run time between checkpoints (None: no checkpoints, a
    preempted job starts over). ``preemption_retries`` mirrors the job's
    ``preemptionRetriesBeforeTermination`` (None: requeued after every preemption).
    """

    job_id: str
    share: str
    submitted_at: float
    duration: float
    instance_type: str
    instance_count: int = 1
    priority: int = 0
    checkpoint_interval: float | None = None
    preemption_retries: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PriorityChange:
    """``UpdateServiceJob`` changing a job's scheduling priority at time ``at``.

    Allowed while the job waits or runs; a change that arrives after the job ended does nothing.
    """

    at: float
    job_id: str
    priority: int


class VictimOrder(StrEnum):
    """Which running jobs a preemption takes first (AWS's heuristic is unpublished)."""

    LOWEST_PRIORITY_THEN_NEWEST = "LOWEST_PRIORITY_THEN_NEWEST"
    """Lowest priority first; among equals the most recently started (least work lost)."""
    NEWEST = "NEWEST"
    """Most recently started first, whatever its priority (least work lost overall)."""


class BorrowerOrder(StrEnum):
    """Which waiting job gets idle capacity first when several shares could use it."""

    FIFO = "FIFO"
    """Earliest submitted first: the policy's ``idleResourceAssignmentStrategy`` FIFO."""
    PRIORITY = "PRIORITY"
    """Highest priority first, then earliest submitted."""


class HeadOfLine(StrEnum):
    """Which waiting job of a share holds back the jobs behind it (AWS documents none)."""

    PER_SHARE_AND_TYPE = "PER_SHARE_AND_TYPE"
    """One head per share and instance type: a share's first job for one type does not hold
    back its jobs for another type (a job never waits for capacity it does not use)."""
    PER_SHARE = "PER_SHARE"
    """One head per share, whatever its type: what ``GetJobQueueSnapshot`` exposes
    (``frontOfQuotaShares``: one first RUNNABLE job per share)."""
    NONE = "NONE"
    """No head holds anyone back: a later job that fits starts first (backfill)."""


class NeverRunnable(StrEnum):
    """What becomes of a job the declaration can never run (an instance type the environment
    or its share does not list, or more instances than its share can ever reach)."""

    REJECT = "REJECT"
    """The whole workload is refused with a QuotaConfigError naming the job: a hand-written
    workload with such a job is almost always a mistake."""
    BLOCK = "BLOCK"
    """As AWS Batch does: the job stays RUNNABLE, never starts, and is reported per share as
    blocked (``ShareFigures.blocked_jobs``, ``SimulationResult.blocked``), so a replay of real
    history with such a job still runs. It is set aside: it holds no capacity and holds back
    no job behind it (in AWS a job state time limit may cancel it; its share's other jobs
    are what this replay is about)."""


class RequeuePlace(StrEnum):
    """Where a preempted job waits again (AWS documents only that it returns to RUNNABLE)."""

    ORIGINAL = "ORIGINAL"
    """Its original place: ordered by its submission time, as if it had never left."""
    BACK = "BACK"
    """Behind every job of its priority already waiting: ordered by the time it was
    preempted."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulationOptions:
    """The simulator's answers where AWS Batch documents no behaviour; see the package docs.

    The defaults are the library's assumptions; each field is the other reasonable choice.
    """

    victim_order: VictimOrder = VictimOrder.LOWEST_PRIORITY_THEN_NEWEST
    minimal_victim_set: bool = True
    """Drop from a chosen victim set every job the preemptor can start without."""
    head_of_line_blocking: bool = True
    """False is ``head_of_line=HeadOfLine.NONE`` (kept for earlier callers): a later job that
    fits starts first (backfill)."""
    head_of_line: HeadOfLine = HeadOfLine.PER_SHARE_AND_TYPE
    """Which waiting job holds back the jobs behind it. The default is one head per share and
    instance type: AWS's ``frontOfQuotaShares`` shows one head per share, but says nothing of
    a job of another type waiting behind it while capacity of that type is idle, and holding
    it back would idle capacity no rule reserves; ``PER_SHARE`` replays the stricter reading."""
    requeue_place: RequeuePlace = RequeuePlace.ORIGINAL
    """Where a preempted job waits again: its original place (default; the job keeps the
    seniority its wait earned, so a job preempted again and again is not starved by later
    submissions) or at the back."""
    never_runnable: NeverRunnable = NeverRunnable.REJECT
    """REJECT (default, for hand-written workloads) or BLOCK (AWS-like, for replays)."""
    unowned_capacity_borrowable: bool = True
    """Whether borrowers may use capacity no share owns (default yes); the rules model's
    assumption (see :mod:`quota_constructs.model.borrowing`): give a replay the same value as
    the declaration's agreement so the two agree."""

    @property
    def head_scope(self) -> HeadOfLine:
        return self.head_of_line if self.head_of_line_blocking else HeadOfLine.NONE
    borrower_order: BorrowerOrder = BorrowerOrder.FIFO
    reclaim_partly_borrowed_jobs: bool = True
    """When jobs wholly on borrowed capacity free too little, cross-share preemption may also
    take a job only part of which runs on borrowed capacity (its share ends up below its own
    limit until its jobs start again). False: only jobs wholly on borrowed capacity, so a
    lender may wait for a multi-instance borrower to end although AWS would reclaim."""
    keep_checkpoint_progress: bool = True
    """A preempted job resumes from its last checkpoint; False: it always starts over."""
