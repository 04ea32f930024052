"""The two guards that keep a deployment from terminating or preempting a team's jobs.

Each guard reads live state and raises before anything is changed; the opt-ins on the
QuotaShare construct (``allow_preemption_on_shrink``, ``terminate_active_jobs_on_delete``)
waive them explicitly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .batch_gateway import BatchGateway
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


def check_shrink(
    gateway: BatchGateway,
    arn: QuotaShareArn,
    live: ShareConfig,
    target: ShareConfig,
    *,
    allow_preemption: bool,
) -> None:
    """Refuse to lower a limit or ceiling below what the share's dispatched jobs hold."""
    lowered = shrinks(live, target)
    if not lowered:
        return
    if allow_preemption:
        log("shrink_guard_waived", quota_share=arn.arn, units=[s.unit for s in lowered])
        return
    usage = gateway.snapshot_usage(arn)
    source = "GetJobQueueSnapshot"
    dispatched: list[ServiceJob] | None = None
    if usage is None:
        # Shares outside the snapshot's top utilization list: add up their dispatched jobs.
        dispatched, _ = gateway.jobs(arn, DISPATCHED_STATUSES, limit=JOBS_READ)
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
        return
    if dispatched is None:
        dispatched, _ = gateway.jobs(arn, DISPATCHED_STATUSES, limit=JOBS_READ)
    units = {s.unit for s, _ in exceeded}
    at_risk = [job for job in dispatched if units & set(job.capacity_usage)]
    changes = "; ".join(s.describe(used) for s, used in exceeded)
    raise QuotaShareLifecycleError(
        f"quota share {arn.share_name!r} on job queue {arn.job_queue_name!r}: refusing to lower "
        f"{changes} (usage from {source}). Jobs that would become eligible for preemption: "
        f"{list_jobs(at_risk, truncated=False)}. Nothing was changed. Let these jobs finish "
        "before lowering the limit, or give this share "
        "ShareLifecycle(allow_preemption_on_shrink=True) (its lifecycle= or lifecycle_by_share "
        "entry) to accept the preemption."
    )


def check_no_active_jobs(
    gateway: BatchGateway, arn: QuotaShareArn, *, terminate_active_jobs: bool
) -> None:
    """Refuse to delete a share whose SUBMITTED..RUNNING jobs the deletion would terminate."""
    if terminate_active_jobs:
        log("delete_guard_waived", quota_share=arn.arn)
        return
    active, truncated = gateway.jobs(arn, ACTIVE_STATUSES, limit=JOBS_READ)
    log("delete_guard", quota_share=arn.arn, active_jobs=len(active), truncated=truncated)
    if not active:
        return
    count = f"at least {len(active)}" if truncated else str(len(active))
    raise QuotaShareLifecycleError(
        f"quota share {arn.share_name!r} on job queue {arn.job_queue_name!r} still has {count} "
        f"active job(s) (SUBMITTED through RUNNING) that deleting it would terminate: "
        f"{list_jobs(active, truncated=truncated)}. Nothing was changed. Let the jobs finish "
        "or stop them, then retry; or give this share "
        "ShareLifecycle(terminate_active_jobs_on_delete=True) to delete it anyway. That "
        "setting takes effect only once it is deployed before the deployment that removes or "
        "renames the share: a delete acts on the properties the share was last deployed "
        "with. (When the share is being replaced by a renamed or moved one, the new share is "
        "in place and this one is left as it is.)"
    )


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
