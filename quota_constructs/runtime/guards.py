"""The two guards that keep a deployment from terminating or preempting a team's jobs.

Each guard reads live state and raises before anything is changed; the opt-ins on the
QuotaShare construct (``allow_preemption_on_shrink``, ``terminate_active_jobs_on_delete``)
waive them explicitly. The decisions (``assess_shrink``, ``assess_delete``) return what they
found instead of raising, so ``quota-constructs preview`` runs exactly these functions against
the live queue before a deployment.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .errors import QuotaShareLifecycleError
from .service_job import ACTIVE_STATUSES, DISPATCHED_STATUSES, ServiceJob
from .share_arn import QuotaShareArn
from .share_config import ShareConfig
from .structured_log import log

JOBS_SHOWN = 10
JOBS_READ = 1000


@dataclass(frozen=True)
class Shrink:
    """A unit whose limit or borrow ceiling goes down, and the usage it must stay above."""

    unit: str
    old_limit: int
    new_limit: int
    old_ceiling: float
    new_ceiling: float

    @property
    def allowed_usage(self) -> float:
        # Jobs above the new own limit count as borrowing, which lenders reclaim by preemption.
        return self.new_limit if self.new_limit < self.old_limit else self.new_ceiling

    def describe(self, usage: float) -> str:
        if self.new_limit < self.old_limit:
            change = f"limit from {self.old_limit} to {self.new_limit}"
        else:
            change = (
                f"borrow ceiling from {_amount(self.old_ceiling)} to {_amount(self.new_ceiling)}"
            )
        return f"{self.unit} {change} while the share uses {_amount(usage)}"


def shrinks(live: ShareConfig, target: ShareConfig) -> list[Shrink]:
    """Units whose limit or borrow ceiling ``target`` lowers (a removed unit goes to 0)."""
    found = []
    for unit in sorted(set(live.limits) | set(target.limits)):
        shrink = Shrink(
            unit,
            live.limit_of(unit),
            target.limit_of(unit),
            live.ceiling_of(unit),
            target.ceiling_of(unit),
        )
        if shrink.new_limit < shrink.old_limit or shrink.new_ceiling < shrink.old_ceiling:
            found.append(shrink)
    return found


class GuardReader(Protocol):
    """The live reads a guard needs (:class:`BatchGateway` is one; so is ``live``'s reader)."""

    def snapshot_usage(self, arn: QuotaShareArn) -> dict[str, float] | None: ...

    def jobs(self, arn: QuotaShareArn, statuses: Iterable[str],
             limit: int = ...) -> tuple[list[ServiceJob], bool]: ...


@dataclass(frozen=True)
class ShrinkAssessment:
    """What lowering a share's limits would do, and whether the shrink guard refuses it."""

    lowered: Sequence[Shrink] = ()
    exceeded: Sequence[tuple[Shrink, float]] = ()
    at_risk: Sequence[ServiceJob] = ()
    """Dispatched jobs using a unit whose usage exceeds its new allowance."""
    usage_source: str = ""
    waived: bool = False

    @property
    def refused(self) -> bool:
        return bool(self.exceeded) and not self.waived

    def error(self, arn: QuotaShareArn) -> QuotaShareLifecycleError:
        changes = "; ".join(s.describe(used) for s, used in self.exceeded)
        return QuotaShareLifecycleError(
            f"quota share {arn.share_name!r} on job queue {arn.job_queue_name!r}: refusing to "
            f"lower {changes} (usage from {self.usage_source}). Jobs that would become eligible "
            f"for preemption: {list_jobs(self.at_risk, truncated=False)}. Nothing was changed. "
            "Let these jobs finish before lowering the limit, or give this share "
            "ShareLifecycle(allow_preemption_on_shrink=True) (its lifecycle= or "
            "lifecycle_by_share entry) to accept the preemption."
        )


def assess_shrink(
    reader: GuardReader,
    arn: QuotaShareArn,
    live: ShareConfig,
    target: ShareConfig,
    *,
    allow_preemption: bool,
    read_when_waived: bool = False,
) -> ShrinkAssessment:
    """Which of the share's dispatched jobs a change from ``live`` to ``target`` puts at risk.

    The custom resource (through :func:`check_shrink`) and ``quota-constructs preview`` both
    decide with this function. A waived guard reads nothing unless ``read_when_waived`` (preview
    still names the jobs that become preemptible).
    """
    lowered = shrinks(live, target)
    if not lowered or (allow_preemption and not read_when_waived):
        return ShrinkAssessment(lowered, waived=allow_preemption)
    usage = reader.snapshot_usage(arn)
    source = "GetJobQueueSnapshot"
    dispatched: list[ServiceJob] | None = None
    if usage is None:
        # Shares outside the snapshot's top utilization list: add up their dispatched jobs.
        dispatched, _ = reader.jobs(arn, DISPATCHED_STATUSES, limit=JOBS_READ)
        usage = {}
        for job in dispatched:
            for unit, quantity in job.capacity_usage.items():
                usage[unit] = usage.get(unit, 0.0) + quantity
        source = "its SCHEDULED, STARTING and RUNNING jobs"
    exceeded = [(s, usage.get(s.unit, 0.0)) for s in lowered
                if usage.get(s.unit, 0.0) > s.allowed_usage]
    log("shrink_guard", quota_share=arn.arn, usage=usage, usage_source=source,
        lowered=[s.unit for s in lowered], exceeded=[s.unit for s, _ in exceeded])
    if not exceeded:
        return ShrinkAssessment(lowered, usage_source=source, waived=allow_preemption)
    if dispatched is None:
        dispatched, _ = reader.jobs(arn, DISPATCHED_STATUSES, limit=JOBS_READ)
    units = {s.unit for s, _ in exceeded}
    at_risk = [job for job in dispatched if units & set(job.capacity_usage)]
    return ShrinkAssessment(lowered, exceeded, at_risk, source, allow_preemption)


def check_shrink(
    gateway: GuardReader,
    arn: QuotaShareArn,
    live: ShareConfig,
    target: ShareConfig,
    *,
    allow_preemption: bool,
) -> None:
    """Refuse to lower a limit or ceiling below what the share's dispatched jobs hold."""
    assessment = assess_shrink(gateway, arn, live, target, allow_preemption=allow_preemption)
    if assessment.waived and assessment.lowered:
        log("shrink_guard_waived", quota_share=arn.arn,
            units=[s.unit for s in assessment.lowered])
    if assessment.refused:
        raise assessment.error(arn)


@dataclass(frozen=True)
class DeleteAssessment:
    """The active jobs deleting a share would terminate, and whether the delete guard refuses."""

    active: Sequence[ServiceJob] = ()
    truncated: bool = False
    waived: bool = False

    @property
    def refused(self) -> bool:
        return bool(self.active) and not self.waived

    def error(self, arn: QuotaShareArn) -> QuotaShareLifecycleError:
        count = f"at least {len(self.active)}" if self.truncated else str(len(self.active))
        return QuotaShareLifecycleError(
            f"quota share {arn.share_name!r} on job queue {arn.job_queue_name!r} still has "
            f"{count} active job(s) (SUBMITTED through RUNNING) that deleting it would "
            f"terminate: {list_jobs(self.active, truncated=self.truncated)}. Nothing was "
            "changed. Let the jobs finish or stop them, then retry; or give this share "
            "ShareLifecycle(terminate_active_jobs_on_delete=True) to delete it anyway. That "
            "setting takes effect only once it is deployed before the deployment that removes "
            "or renames the share: a delete acts on the properties the share was last deployed "
            "with. (When the share is being replaced by a renamed or moved one, the new share "
            "is in place and this one is left as it is.)"
        )


def assess_delete(
    reader: GuardReader,
    arn: QuotaShareArn,
    *,
    terminate_active_jobs: bool,
    read_when_waived: bool = False,
) -> DeleteAssessment:
    """The share's SUBMITTED..RUNNING jobs, which deleting it would terminate.

    Shared by the custom resource (:func:`check_no_active_jobs`) and ``preview``.
    """
    if terminate_active_jobs and not read_when_waived:
        return DeleteAssessment(waived=True)
    active, truncated = reader.jobs(arn, ACTIVE_STATUSES, limit=JOBS_READ)
    log("delete_guard", quota_share=arn.arn, active_jobs=len(active), truncated=truncated)
    return DeleteAssessment(active, truncated, terminate_active_jobs)


def check_no_active_jobs(
    gateway: GuardReader, arn: QuotaShareArn, *, terminate_active_jobs: bool
) -> None:
    """Refuse to delete a share whose SUBMITTED..RUNNING jobs the deletion would terminate."""
    if terminate_active_jobs:
        log("delete_guard_waived", quota_share=arn.arn)
    assessment = assess_delete(gateway, arn, terminate_active_jobs=terminate_active_jobs)
    if assessment.refused:
        raise assessment.error(arn)


def list_jobs(jobs: Sequence[ServiceJob], *, truncated: bool) -> str:
    shown = ", ".join(job.describe() for job in jobs[:JOBS_SHOWN])
    hidden = len(jobs) - JOBS_SHOWN
    if hidden > 0:
        shown += f" and {'at least ' if truncated else ''}{hidden} more"
    elif truncated:
        shown += " and more"
    return shown or "none listed by ListServiceJobs"


def _amount(value: float) -> str:
    if math.isinf(value):
        return "unlimited"
    return f"{value:g}"
