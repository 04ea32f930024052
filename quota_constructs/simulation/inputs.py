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


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulationOptions:
    """The simulator's answers where AWS Batch documents no behaviour; see the package docs.

    The defaults are the library's assumptions; each field is the other reasonable choice.
    """

    victim_order: VictimOrder = VictimOrder.LOWEST_PRIORITY_THEN_NEWEST
    minimal_victim_set: bool = True
    """Drop from a chosen victim set every job the preemptor can start without."""
    head_of_line_blocking: bool = True
    """A share's highest-priority waiting job for an instance type holds back the jobs behind
    it for that type; False lets a later job that fits start first (backfill)."""
    borrower_order: BorrowerOrder = BorrowerOrder.FIFO
    reclaim_partly_borrowed_jobs: bool = True
    """When jobs wholly on borrowed capacity free too little, cross-share preemption may also
    take a job only part of which runs on borrowed capacity (its share ends up below its own
    limit until its jobs start again). False: only jobs wholly on borrowed capacity, so a
    lender may wait for a multi-instance borrower to end although AWS would reclaim."""
    keep_checkpoint_progress: bool = True
    """A preempted job resumes from its last checkpoint; False: it always starts over."""
