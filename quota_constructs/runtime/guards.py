"""The three guards that keep a deployment from terminating or preempting a team's jobs.

Each guard reads live state and raises before anything is changed; the opt-ins on the
QuotaShare construct (``allow_preemption_on_shrink``, ``allow_preemption_on_in_share_enable``,
``terminate_active_jobs_on_delete``) waive them explicitly. The decisions (``assess_shrink``,
``assess_in_share_enable``, ``assess_delete``) return what they found instead of raising, so
``quota-constructs preview`` runs exactly these functions against the live queue before a
deployment.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from quota_constructs.model import (
    BorrowingRules,
    QuotaConfigError,
)
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn
from quota_constructs.wire.share_config import ShareConfig

from .batch_reads import QueueSnapshot, ServiceJobDetail
from .errors import QuotaShareLifecycleError
from .service_job import (
    ACTIVE_STATUSES,
    DISPATCHED_STATUSES,
    WAITING_STATUSES,
    ServiceJob,
)
from .share_request import GuardOptIns
from .structured_log import log

JOBS_SHOWN = 10
JOBS_READ = 1000


@dataclass(frozen=True)
class ShareUpdate:
    """One share's change from its live configuration to the declared one: what both update
    guards judge."""

    arn: QuotaShareArn
    live: ShareConfig
    target: ShareConfig


@dataclass(frozen=True)
class GuardAssessment(ABC):
    """One guard's decision, read the same way for every guard by the custom resource (which
    raises the refusal) and ``preview`` (which reports it)."""

    waived: bool = field(default=False, kw_only=True)
    """The share's opt-in waives the guard for a change it judges (a lowered limit, in-share
    preemption turned on, a delete)."""

    @property
    @abstractmethod
    def objections(self) -> Sequence[object]:
        """What the guard refuses the change for; empty when the change is safe."""

    @abstractmethod
    def error(self, arn: QuotaShareArn) -> QuotaShareLifecycleError:
        """The refusal, worded for whoever reads the stack events."""

    @property
    def refused(self) -> bool:
        return bool(self.objections) and not self.waived

    def enforce(self, arn: QuotaShareArn, waived_event: str, **logged: Any) -> None:
        """The custom resource's part: log a waiver, raise a refusal."""
        if self.waived:
            log(waived_event, quota_share=arn.arn, **logged)
        if self.refused:
            raise self.error(arn)


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

    def service_job_detail(self, job_id: str) -> ServiceJobDetail: ...

    def queue_snapshot(self, job_queue: str) -> QueueSnapshot: ...

    def queue_shares(self, job_queue: str) -> list[LiveShare]: ...

    def environment_capacity(self, job_queue: str) -> dict[str, int]: ...


@dataclass(frozen=True)
class ShrinkAssessment(GuardAssessment):
    """What lowering a share's limits would do, and whether the shrink guard refuses it."""

    lowered: Sequence[Shrink] = ()
    exceeded: Sequence[tuple[Shrink, float]] = ()
    at_risk: Sequence[ServiceJob] = ()
    """Dispatched jobs using a unit whose usage exceeds its new allowance."""
    usage_source: str = ""

    @property
    def objections(self) -> Sequence[tuple[Shrink, float]]:
        return self.exceeded

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
    update: ShareUpdate,
    *,
    allow_preemption: bool,
    read_when_waived: bool = False,
) -> ShrinkAssessment:
    """Which of the share's dispatched jobs ``update`` puts at risk by lowering its limits.

    The custom resource (through :func:`check_update`) and ``quota-constructs preview`` both
    decide with this function. A waived guard reads nothing unless ``read_when_waived`` (preview
    still names the jobs that become preemptible).
    """
    arn = update.arn
    lowered = shrinks(update.live, update.target)
    if not lowered:
        return ShrinkAssessment()
    if allow_preemption and not read_when_waived:
        return ShrinkAssessment(lowered, waived=True)
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
    return ShrinkAssessment(lowered, exceeded, at_risk, source, waived=allow_preemption)


def check_update(gateway: GuardReader, update: ShareUpdate, opt_ins: GuardOptIns) -> None:
    """Refuse an update that would make the share's jobs preemptible, guard by guard in the
    order ``preview`` follows too: first lowering a limit or ceiling below what the share's
    dispatched jobs hold, then turning in-share preemption on while it would preempt at once."""
    shrink = assess_shrink(gateway, update,
                           allow_preemption=opt_ins.allow_preemption_on_shrink)
    shrink.enforce(update.arn, "shrink_guard_waived", units=[s.unit for s in shrink.lowered])
    in_share = assess_in_share_enable(
        gateway, update, allow_preemption=opt_ins.allow_preemption_on_in_share_enable)
    in_share.enforce(update.arn, "in_share_guard_waived")


# -- turning in-share preemption on -------------------------------------------------------------
#
# AWS documents that in-share preemption "allows higher priority RUNNABLE jobs to trigger
# preemptions of lower priority jobs within the same quota share that have entered SCHEDULED,
# STARTING, or RUNNING", and that Batch picks victims with an unpublished heuristic. A job that
# is SUBMITTED or PENDING (botocore's ServiceJobStatus) becomes RUNNABLE by itself, so it is a
# preemptor waiting to happen: every waiting status counts, not only RUNNABLE. AWS is silent on
# when a waiting job preempts rather than waits, and on which lower-priority jobs it stops.
# Assumed, once, so that every job possibly affected is named (naming one too many costs a
# retry; missing one costs a team's running job):
#
# 1. A waiting job preempts only when it cannot start within what the share can take without
#    preempting anyone: its own idle limit, plus, for a borrowing share, what its borrow ceiling
#    still allows (the rules model: BorrowingRules' reach and lenders) bounded by what its
#    lenders hold idle right now less what other shares already borrow, and within what the
#    service environment has spare. Capacity no share owns is not counted, nor a lender the
#    snapshot may have left out: less free capacity, more jobs named. Waiting jobs take free
#    capacity in the order they can start: RUNNABLE ones first (Batch dispatches them now),
#    then PENDING, then SUBMITTED ones (they reach RUNNABLE later and find what is left), each
#    by priority, then age.
# 2. Each such job may preempt *every* lower-priority SCHEDULED/STARTING/RUNNING job of the
#    share using an instance type it lacks (Batch's choice among them is unpublished).
# 3. A job that needs more than the share could ever hold counts too (whether Batch tries
#    preemption for it is not documented); a job whose priority or size Batch does not report
#    is taken to outrank and to lack everything; with more waiting or running jobs than are
#    read, every running job is named.

JOBS_DESCRIBED = 100
"""DescribeServiceJob calls at most per side (waiting, dispatched): priorities are not listed."""
ENABLED = "ENABLED"


def turns_in_share_preemption_on(live: ShareConfig, target: ShareConfig) -> bool:
    return live.in_share_preemption != ENABLED and target.in_share_preemption == ENABLED


@dataclass(frozen=True)
class RankedJob:
    """A job of the share with what DescribeServiceJob adds: priority, size, age."""

    job: ServiceJob
    priority: int | None
    """None when not read or not reported: taken to outrank every job and to be outranked by
    every job, so that it is never ruled out on either side (assumption 3)."""
    needs: Mapping[str, float]
    created_at_ms: int | None = None

    def outranks(self, other: RankedJob) -> bool:
        if self.priority is None or other.priority is None:
            return True
        return self.priority > other.priority

    def describe(self) -> str:
        priority = "unknown" if self.priority is None else str(self.priority)
        return f"{self.job.describe()[:-1]}, priority {priority})"


@dataclass(frozen=True)
class InShareAssessment(GuardAssessment):
    """What turning in-share preemption on would preempt now, and whether the guard refuses."""

    turned_on: bool = False
    preemptors: Sequence[RankedJob] = ()
    """Waiting (SUBMITTED, PENDING, RUNNABLE) jobs that cannot start within the share's free
    capacity (assumption 1)."""
    at_risk: Sequence[RankedJob] = ()
    """Lower-priority dispatched jobs they may preempt at once (assumption 2)."""
    incomplete: str = ""
    """Why the reads could not rule out every job (assumption 3), "" when they could."""

    @property
    def objections(self) -> Sequence[RankedJob]:
        return self.at_risk

    def error(self, arn: QuotaShareArn) -> QuotaShareLifecycleError:
        waiting = "; ".join(part for part in (
            ", ".join(job.describe() for job in self.preemptors[:JOBS_SHOWN]), self.incomplete,
        ) if part)
        return QuotaShareLifecycleError(
            f"quota share {arn.share_name!r} on job queue {arn.job_queue_name!r}: refusing to "
            f"turn in-share preemption on while higher-priority waiting jobs (SUBMITTED and "
            f"PENDING ones become RUNNABLE by themselves) cannot start within the share's free "
            f"capacity ({waiting}): AWS Batch would preempt the share's lower-priority jobs as "
            f"soon as they are RUNNABLE: {self.victims()}. Nothing was changed. Let "
            "these jobs finish (or lower the waiting jobs' priority with UpdateServiceJob) "
            "before turning it on, or give this share "
            "ShareLifecycle(allow_preemption_on_in_share_enable=True) (its lifecycle= or "
            "lifecycle_by_share entry) to accept the preemption."
        )

    def victims(self) -> str:
        shown = ", ".join(job.describe() for job in self.at_risk[:JOBS_SHOWN])
        hidden = len(self.at_risk) - JOBS_SHOWN
        return shown + (f" and {hidden} more" if hidden > 0 else "")


def assess_in_share_enable(
    reader: GuardReader,
    update: ShareUpdate,
    *,
    allow_preemption: bool,
    read_when_waived: bool = False,
) -> InShareAssessment:
    """Which dispatched jobs ``update`` would expose to preemption right away by turning
    in-share preemption on (the assumptions above).

    Shared by the custom resource (:func:`check_update`) and ``preview``. Reads only when the
    change turns the switch on: the share's waiting jobs (SUBMITTED, PENDING, RUNNABLE), then
    (if any wait) its dispatched jobs, their priorities, and for a borrowing share the queue's
    shares and snapshot.
    """
    arn, target = update.arn, update.target
    if not turns_in_share_preemption_on(update.live, target):
        return InShareAssessment()
    if allow_preemption and not read_when_waived:
        return InShareAssessment(True, waived=True)
    listed, more_waiting = reader.jobs(arn, WAITING_STATUSES, limit=JOBS_DESCRIBED)
    if not listed:
        return InShareAssessment(True, waived=allow_preemption)
    running_jobs, more_running = reader.jobs(arn, DISPATCHED_STATUSES, limit=JOBS_READ)
    if not running_jobs:
        return InShareAssessment(True, waived=allow_preemption)
    running = _ranked(reader, running_jobs)
    waiting = sorted(_ranked(reader, listed), key=_dispatch_order)
    free = _free_capacity(reader, arn, target, running)
    preemptors = _preemptors(waiting, running, free)  # leaves in ``free`` what fits left
    incomplete = ""
    if more_waiting or more_running:
        incomplete = (f"more than {JOBS_DESCRIBED if more_waiting else JOBS_READ} "
                      f"{'waiting' if more_waiting else 'dispatched'} jobs, not all read")
    at_risk = running if incomplete else [
        job for job in running
        if any(p.outranks(job) and _competes(p, job, free) for p in preemptors)
    ]
    log("in_share_guard", quota_share=arn.arn, waiting=len(waiting), running=len(running),
        free_left=free, preemptors=[p.job.job_id for p in preemptors],
        at_risk=[j.job.job_id for j in at_risk], incomplete=incomplete)
    return InShareAssessment(True, preemptors, at_risk, incomplete, waived=allow_preemption)


def _ranked(reader: GuardReader, jobs: Sequence[ServiceJob]) -> list[RankedJob]:
    ranked = []
    for index, job in enumerate(jobs):
        if index >= JOBS_DESCRIBED:
            ranked.append(RankedJob(job, None, job.capacity_usage))
            continue
        detail = reader.service_job_detail(job.job_id)
        priority = detail.raw.get("schedulingPriority")
        ranked.append(RankedJob(
            job,
            priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
            job.capacity_usage or detail.capacity,
            detail.created_at_ms,
        ))
    return ranked


START_STAGE = {status: stage for stage, status in enumerate(reversed(WAITING_STATUSES))}
"""RUNNABLE 0, PENDING 1, SUBMITTED 2: the order in which waiting jobs can start (assumption 1);
a status not listed (read as it changed) is taken with RUNNABLE."""


def _dispatch_order(job: RankedJob) -> tuple[int, float, float]:
    # RUNNABLE before PENDING before SUBMITTED; within each, unknown priorities first
    # (assumption 3), then highest priority, then oldest.
    priority = math.inf if job.priority is None else job.priority
    created = math.inf if job.created_at_ms is None else job.created_at_ms
    return (START_STAGE.get(job.job.status, 0), -priority, created)


def _preemptors(waiting: Sequence[RankedJob], running: Sequence[RankedJob],
                free: dict[str, float]) -> list[RankedJob]:
    """Waiting jobs that outrank a running one and do not fit in what is still free.

    ``free`` is used up in dispatch order by the jobs that fit (they start without preempting).
    """
    found = []
    for job in waiting:
        if job.needs and all(free.get(u, 0.0) >= n for u, n in job.needs.items()):
            for unit, quantity in job.needs.items():
                free[unit] -= quantity
            continue
        if any(job.outranks(other) for other in running):
            found.append(job)
    return found


def _competes(preemptor: RankedJob, job: RankedJob, free: Mapping[str, float]) -> bool:
    """``job`` holds an instance type ``preemptor`` lacks (any, when its size is unknown)."""
    short = {u for u, n in preemptor.needs.items() if free.get(u, 0.0) < n}
    return not preemptor.needs or bool(short & set(job.needs))


def _free_capacity(reader: GuardReader, arn: QuotaShareArn, target: ShareConfig,
                   running: Sequence[RankedJob]) -> dict[str, float]:
    """Per unit, what the share can start without preempting anyone (assumption 1)."""
    used: dict[str, float] = {}
    for job in running:
        for unit, quantity in job.needs.items():
            used[unit] = used.get(unit, 0.0) + quantity
    free = {unit: max(0.0, limit - used.get(unit, 0.0)) for unit, limit in target.limits.items()}
    if target.borrow_limit is None or target.borrow_limit == 0:
        return free
    for unit, borrowable in _borrowable_now(reader, arn, target, used).items():
        free[unit] = free.get(unit, 0.0) + borrowable
    return free


def _borrowable_now(reader: GuardReader, arn: QuotaShareArn, target: ShareConfig,
                    used: Mapping[str, float]) -> dict[str, float]:
    """Per unit, what the share may still borrow and its lenders hold idle right now."""
    others = [share for share in reader.queue_shares(arn.job_queue_arn)
              if share.name != arn.share_name]
    snapshot = reader.queue_snapshot(arn.job_queue_arn)
    environment = reader.environment_capacity(arn.job_queue_arn)
    configs = {arn.share_name: target, **{share.name: share.config for share in others}}
    try:
        rules = BorrowingRules.of(
            environment={unit: environment.get(unit, 0) for unit in target.limits},
            shares=[config.spec(name) for name, config in configs.items()],
            # Capacity no share owns is left out (assumption 1).
            unowned_capacity_borrowable=False,
        )
    except QuotaConfigError:
        return {}
    # Shares the snapshot's top list leaves out hold capacity it does not attribute: that
    # capacity may sit in any lender's idle limit, so it is taken off what is idle.
    unknown = set(snapshot.left_out(configs)) - {arn.share_name}
    usage = {name: snapshot.usage_of(name) for name in configs if name not in unknown}
    usage[arn.share_name] = used
    borrowable: dict[str, float] = {}
    for unit, own in target.limits.items():
        rule = rules.rules(arn.share_name, unit)
        room = max(0.0, rule.reach - max(own, used.get(unit, 0.0)))
        idle = sum(max(0.0, configs[s].limit_of(unit) - usage[s].get(unit, 0.0))
                   for s in rule.lenders if s not in unknown)
        # Capacity already borrowed, by this share too, is lenders' idle capacity in use.
        borrowed = sum(max(0.0, held.get(unit, 0.0) - configs[s].limit_of(unit))
                       for s, held in usage.items())
        attributed = sum(held.get(unit, 0.0) for held in usage.values())
        unattributed = max(0.0, snapshot.total_usage.get(unit, 0.0) - attributed)
        # An environment smaller than its shares' limits together has less idle than they do.
        in_use = max(snapshot.total_usage.get(unit, 0.0), attributed)
        spare = environment.get(unit, 0) - in_use
        borrowable[unit] = max(0.0, min(room, idle - borrowed - unattributed, spare))
    return borrowable


@dataclass(frozen=True)
class DeleteAssessment(GuardAssessment):
    """The active jobs deleting a share would terminate, and whether the delete guard refuses."""

    active: Sequence[ServiceJob] = ()
    truncated: bool = False

    @property
    def objections(self) -> Sequence[ServiceJob]:
        return self.active

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
    return DeleteAssessment(active, truncated, waived=terminate_active_jobs)


def check_no_active_jobs(
    gateway: GuardReader, arn: QuotaShareArn, *, terminate_active_jobs: bool
) -> None:
    """Refuse to delete a share whose SUBMITTED..RUNNING jobs the deletion would terminate."""
    assess_delete(gateway, arn, terminate_active_jobs=terminate_active_jobs).enforce(
        arn, "delete_guard_waived")


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
