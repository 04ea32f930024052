"""``quota-constructs explain``: why a job (or a share's head job) is not running.

The answer is a reason code and one sentence. ``inferred`` is False when AWS Batch itself
reports the cause (the job's ``statusReason``, a disabled share or queue, a job blocking the
front of the queue) and True when the library reasons it out from what Batch reports (limits,
the snapshot's usage and order, priorities) — Batch never says why a job waits for capacity.

Checks, in order (the first that holds answers):

1. the job runs or ran (``RUNNING`` / ``FINISHED``, with its attempts and preemptions by kind);
2. Batch's own ``statusReason`` for a job it cannot place (``LARGER_THAN_SHARE_CAN_REACH`` for
   ``QUOTA_MANAGEMENT_LIMIT_EXCEEDED`` / ``SERVICE_ENVIRONMENT_MAX_RESOURCE``,
   ``INSUFFICIENT_INSTANCE_CAPACITY``);
3. it can never run: ``NO_CAPACITY_LIMIT_FOR_TYPE``, ``LARGER_THAN_SHARE_CAN_REACH`` (what the
   share can reach comes from the rules model);
4. ``SHARE_DISABLED``, ``QUEUE_BLOCKED`` (queue disabled or invalid, or another job blocks the
   front of the queue with a Batch-reported reason);
5. ``BEHIND_HIGHER_PRIORITY``: not its share's head, behind N jobs of higher priority (or equal
   priority, submitted earlier);
6. capacity, for the share's head: ``LENDER_RECLAIMING`` (it fits in its share's own idle
   limit but the environment's capacity is out on loan: cross-share preemption reclaims it),
   ``IN_SHARE_PREEMPTION_PENDING``, ``OWN_CAPACITY_IN_USE``, ``BORROW_LIMIT_REACHED``,
   ``NOTHING_IDLE_TO_BORROW``, and ``DISPATCH_PENDING`` when nothing visible holds it back.
   Whom a share may borrow from, what it can reach, and the capacity no share owns (which a
   borrower may take, the model's assumption 1) come from the one rules model (:mod:`.rules`).

Reads are bounded: one queue, environment, share listing and snapshot; the job; at most
:data:`JOBS_DESCRIBED` further DescribeServiceJob calls for priorities; and the start
estimate's (``start_estimate``: by when the job starts, :mod:`.estimate`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from quota_constructs.model import BorrowingRules, UnitUse
from quota_constructs.runtime.batch_reads import QueueSnapshot
from quota_constructs.runtime.preemption import preemption_kind
from quota_constructs.runtime.service_job import DISPATCHED_STATUSES
from quota_constructs.runtime.share_metrics import snapshot_too_old
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.monitoring_contract import (
    CROSS_SHARE,
    DEFAULT_MAX_SNAPSHOT_AGE_SECONDS,
    IN_SHARE,
    UNKNOWN_KIND,
)
from quota_constructs.wire.share_arn import QuotaShareArn

from . import command_line
from .estimate import StartEstimate, start_estimate_of_job
from .queue_reader import (
    LiveQueueError,
    NotFoundError,
    QueueFacts,
    QueueReader,
    judged_at_ms,
    payload_of,
)
from .rules import rules_of, spec_of, unit_use

JOBS_DESCRIBED = 50
"""DescribeServiceJob calls at most, to read other jobs' priorities."""
RUNNABLE_PAGES_READ = 2
FINISHED_STATUSES = frozenset({"SUCCEEDED", "FAILED"})
WAITING_STATUSES = frozenset({"SUBMITTED", "PENDING"})
BLOCKING_PREFIXES = ("MISCONFIGURATION:", "CAPACITY:")
TOO_LARGE_REASONS = ("QUOTA_MANAGEMENT_LIMIT_EXCEEDED", "SERVICE_ENVIRONMENT_MAX_RESOURCE")


@dataclass(frozen=True)
class Explanation:
    job_id: str | None
    share: str | None
    status: str | None
    reason_code: str
    reason: str
    inferred: bool
    history: Mapping[str, Any] | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    snapshot_warning: str | None = None
    """Why the snapshot the answer reads (usage, order) may be out of date; None when recent."""
    waiting_seconds: float | None = None
    """How long a job that is not running yet has waited (since it was submitted, or since
    its last preempted attempt ended), on the queue's clock; None for a job that runs or ran."""
    start_estimate: StartEstimate | None = None
    """By when the job starts at the latest (:mod:`.estimate`); None when no job was read."""

    def to_json(self) -> dict[str, Any]:
        answer = command_line.json_of(
            self, when_set={"history", "snapshot_warning", "waiting_seconds", "start_estimate"},
            spread="details")
        if self.start_estimate is not None:
            answer["start_estimate"] = self.start_estimate.to_json()
        return answer


@dataclass(frozen=True)
class _Job:
    job_id: str
    share: str
    status: str
    priority: int
    created_at: int
    instance_type: str | None
    count: int
    status_reason: str
    raw: Mapping[str, Any]

    @classmethod
    def of(cls, detail: Mapping[str, Any]) -> _Job:
        resources = payload_of(detail).get("ResourceConfig") or {}
        instance_type = resources.get("InstanceType") if isinstance(resources, Mapping) else None
        count = resources.get("InstanceCount", 1) if isinstance(resources, Mapping) else 1
        if not isinstance(instance_type, str):
            usage = detail.get("capacityUsage") or []
            instance_type = str(usage[0].get("capacityUnit")) if usage else None
            count = int(usage[0].get("quantity") or 1) if usage else 1
        priority = detail.get("schedulingPriority")
        return cls(
            job_id=str(detail.get("jobId")),
            share=str(detail.get("quotaShareName") or ""),
            status=str(detail.get("status") or ""),
            priority=priority if isinstance(priority, int) else 0,
            created_at=int(detail.get("createdAt") or 0),
            instance_type=instance_type,
            count=count if isinstance(count, int) and count > 0 else 1,
            status_reason=str(detail.get("statusReason") or ""),
            raw=detail,
        )

    def waiting_seconds(self, now_ms: int) -> float | None:
        """Since it was submitted or its last preempted attempt ended, whichever is later;
        None for a job that runs or ran."""
        if self.status in DISPATCHED_STATUSES or self.status in FINISHED_STATUSES:
            return None
        summary = self.raw.get("preemptionSummary") or {}
        stops = [a.get("stoppedAt") for a in summary.get("recentPreemptedAttempts") or []
                 if isinstance(a, Mapping)]
        since = max([self.created_at, *(t for t in stops if isinstance(t, int | float))])
        return round(max(0.0, (now_ms - since) / 1000.0), 3) if since else None

    def ahead_of(self, other: _Job) -> bool:
        """Whether this job starts before ``other`` within their share."""
        return (self.priority, -self.created_at) > (other.priority, -other.created_at)


def explain(
    queue: str,
    *,
    job_id: str | None = None,
    share: str | None = None,
    reader: QueueReader | None = None,
    unowned_capacity_borrowable: bool = True,
    now_ms: int | None = None,
    max_snapshot_age_seconds: int | None = DEFAULT_MAX_SNAPSHOT_AGE_SECONDS,
) -> Explanation:
    """Why ``job_id`` (or ``share``'s head job) is not running (see the module docstring);
    ``unowned_capacity_borrowable``: the rules model's assumption 1 (``--no-unowned-borrowing``).
    The answer carries a ``snapshot_warning`` when the snapshot it reads is older than
    ``max_snapshot_age_seconds``, and a waiting job's ``waiting_seconds``: both judged at
    ``now_ms`` when given, else on the queue endpoint's own clock
    (:func:`~.queue_reader.judged_at_ms`). A share or job the queue does not have raises
    :class:`~.queue_reader.NotFoundError` naming it and what the queue has."""

    if (job_id is None) == (share is None):
        raise LiveQueueError("explain needs exactly one of a job id or a share name")
    reader = reader or QueueReader.connect()
    facts = reader.queue(queue)
    snapshot = reader.snapshot_of(facts.arn)
    now = judged_at_ms(snapshot, now_ms)
    stale = snapshot_too_old(snapshot, now_ms=now, max_age_seconds=max_snapshot_age_seconds)
    shares = {s.name: s for s in reader.shares(facts.arn)}
    if job_id is None:
        assert share is not None
        if share not in shares:
            raise NotFoundError("SHARE_NOT_FOUND", f"quota share {share!r} not found on job "
                                f"queue {facts.name!r}; its shares: {_listed(shares)}",
                                share=share)
        front = snapshot.head_of(share)
        if front is None:
            return Explanation(
                None, share, None, "NO_WAITING_JOB",
                f"quota share {share!r} has no RUNNABLE job at its front "
                "(GetJobQueueSnapshot): nothing of it is waiting", False,
                snapshot_warning=stale,
            )
        job_id = front.job_id
    detail = reader.service_job(job_id)
    if detail is None:
        heads = [f"{head.job_id} ({name})" for name, head in snapshot.heads.items()]
        raise NotFoundError("JOB_NOT_FOUND", f"service job {job_id!r} not found on job queue "
                            f"{facts.name!r} (DescribeServiceJob); the jobs at its shares' "
                            f"fronts: {', '.join(heads[:5]) or 'none'} (check the job id, "
                            "--region and --profile)", job_id=job_id)
    job = _Job.of(detail)
    if detail.get("jobQueue") not in (None, facts.arn, facts.name):
        raise LiveQueueError(f"service job {job_id!r} belongs to job queue "
                             f"{detail.get('jobQueue')!r}, not {facts.name!r}")
    snapshot = reader.complete_usage(snapshot, shares.values())
    explanation = _Explainer(reader, facts, snapshot, shares, job,
                             unowned_capacity_borrowable).explain()
    estimate = start_estimate_of_job(reader, facts, snapshot, shares, detail, now_ms=now_ms,
                                     unowned_capacity_borrowable=unowned_capacity_borrowable)
    return replace(explanation, snapshot_warning=stale, waiting_seconds=job.waiting_seconds(now),
                   start_estimate=estimate)


class _Explainer:
    def __init__(self, reader: QueueReader, facts: QueueFacts, snapshot: QueueSnapshot,
                 shares: Mapping[str, LiveShare], job: _Job,
                 unowned_capacity_borrowable: bool = True) -> None:
        self.reader, self.facts, self.snapshot = reader, facts, snapshot
        self.shares, self.job = shares, job
        self.unowned_capacity_borrowable = unowned_capacity_borrowable

    def answer(self, code: str, reason: str, inferred: bool,
               history: Mapping[str, Any] | None = None) -> Explanation:
        job = self.job
        details = {"priority": job.priority,
                   "needs": {"instance_type": job.instance_type, "count": job.count}}
        return Explanation(job.job_id, job.share or None, job.status, code, reason, inferred,
                           history, details)

    def explain(self) -> Explanation:
        job = self.job
        if job.status in DISPATCHED_STATUSES:
            history = _history(job.raw)
            return self.answer("RUNNING", f"job {job.job_id} is {job.status} "
                               f"({_history_text(history)})", False, history)
        if job.status in FINISHED_STATUSES:
            history = _history(job.raw)
            why = f": {job.status_reason}" if job.status_reason else ""
            return self.answer("FINISHED", f"job {job.job_id} {job.status}{why} "
                               f"({_history_text(history)})", False, history)
        if job.status in WAITING_STATUSES:
            return self.answer("NOT_YET_RUNNABLE", f"job {job.job_id} is {job.status}: AWS "
                               "Batch has not yet evaluated it for scheduling", False)
        return self.runnable()

    def runnable(self) -> Explanation:
        job = self.job
        share = self.shares.get(job.share)
        if share is None:
            return self.answer("SHARE_NOT_FOUND", f"job {job.job_id} names quota share "
                               f"{job.share!r}, which job queue {self.facts.name!r} does not "
                               "have: it waits forever", False)
        reason = job.status_reason
        if any(code in reason for code in TOO_LARGE_REASONS):
            return self.answer("LARGER_THAN_SHARE_CAN_REACH", f"AWS Batch reports {reason!r}: "
                               f"job {job.job_id} needs more than quota share {share.name!r} "
                               "(its limit plus what it may borrow) or the environment can "
                               "ever give it", False)
        if reason.startswith("CAPACITY:"):
            return self.answer("INSUFFICIENT_INSTANCE_CAPACITY", f"AWS Batch reports "
                               f"{reason!r}: SageMaker cannot currently provide the instances",
                               False)
        unit, count = job.instance_type, job.count
        environment = self.facts.environment_limits  # empty: it could not be read
        if unit is not None and (share.config.limit_of(unit) == 0
                                 or (environment and unit not in environment)):
            where = (f"quota share {share.name!r}" if share.config.limit_of(unit) == 0
                     else f"the service environment of job queue {self.facts.name!r}")
            return self.answer("NO_CAPACITY_LIMIT_FOR_TYPE", f"job {job.job_id} needs {unit}, "
                               f"for which {where} has no capacity limit: it waits forever",
                               True)
        reach = self._reach(share)
        if unit is not None and reach is not None and count > reach.get(unit, 0):
            return self.answer("LARGER_THAN_SHARE_CAN_REACH", f"job {job.job_id} needs {count} "
                               f"{unit}, but quota share {share.name!r} can reach at most "
                               f"{reach.get(unit, 0)} (own limit plus what it may borrow from "
                               "lending shares, within the environment): it waits forever",
                               True)
        if not share.enabled:
            return self.answer("SHARE_DISABLED", f"quota share {share.name!r} is DISABLED: its "
                               "jobs are not started until it is enabled again", False)
        blocked = self._queue_blocked()
        if blocked is not None:
            return blocked
        ahead = self._ahead_in_share(share)
        if ahead is not None:
            return ahead
        if unit is None:
            return self.answer("DISPATCH_PENDING", f"job {job.job_id} is at the front of quota "
                               f"share {share.name!r}; its instance type is unknown (no "
                               "readable request payload)", True)
        return self._capacity(share, unit, count)

    def _reach(self, share: LiveShare) -> dict[str, int] | None:
        rules = self.rules
        return None if rules is None or share.name not in rules.by_share else rules.reach(
            share.name)

    @property
    def rules(self) -> BorrowingRules | None:
        """The one rules model over the live queue (None: the environment is unknown)."""
        if not hasattr(self, "_rules"):
            self._rules = rules_of(
                self.facts.environment_limits, self.shares.values(),
                unowned_capacity_borrowable=self.unowned_capacity_borrowable)
        return self._rules

    def _queue_blocked(self) -> Explanation | None:
        facts, job = self.facts, self.job
        if facts.state != "ENABLED" or facts.status == "INVALID":
            return self.answer("QUEUE_BLOCKED", f"job queue {facts.name!r} is {facts.state}/"
                               f"{facts.status} ({facts.status_reason or 'no reason given'}): "
                               "no job of it starts", False)
        front = self.snapshot.front_of_queue[:1]
        if not front or front[0].job_id == job.job_id:
            return None
        head = self.reader.service_job(front[0].job_id)
        reason = str((head or {}).get("statusReason") or "")
        if head is None or not reason.startswith(BLOCKING_PREFIXES):
            return None
        return self.answer("QUEUE_BLOCKED", f"job {front[0].job_id} blocks the front of job "
                           f"queue {facts.name!r} ({reason}); jobs behind it wait until it is "
                           "terminated or can run", False)

    def _ahead_in_share(self, share: LiveShare) -> Explanation | None:
        job = self.job
        front = self.snapshot.head_of(share.name)
        if front is None or front.job_id == job.job_id:
            return None
        waiting = self.reader.runnable(self.facts.arn, share.name,
                                       max_pages=RUNNABLE_PAGES_READ, keep_ids=True)
        others = [i for i in waiting.job_ids if i != job.job_id]
        if front.job_id not in others:
            others.insert(0, front.job_id)
        described = [d for d in (self.reader.service_job(i) for i in others[:JOBS_DESCRIBED])
                     if d is not None]
        ahead = [o for o in map(_Job.of, described) if o.ahead_of(job)]
        if not ahead:
            return None
        floor = waiting.capped or len(others) > JOBS_DESCRIBED
        count = f"{'at least ' if floor else ''}{len(ahead)}"
        return self.answer("BEHIND_HIGHER_PRIORITY", f"job {job.job_id} (priority "
                           f"{job.priority}) waits behind {count} job(s) of quota share "
                           f"{share.name!r} with a higher priority or submitted earlier at the "
                           f"same priority; the share's head is {front.job_id}", True)

    def _capacity(self, share: LiveShare, unit: str, count: int) -> Explanation:
        """The share's head, held back by capacity: what is free, borrowed and reclaimable
        comes from the rules model (:class:`~quota_constructs.model.UnitUse`), as ``status``
        shows it."""
        name = share.name
        use = unit_use(self.rules, unit, self.snapshot, self.shares)
        own = share.config.limit_of(unit)
        used = self.snapshot.usage_of(name).get(unit, 0.0)
        if used + count <= own:
            return self._within_own_limit(share, unit, count, use)
        spec = spec_of(share)
        lower = self._lower_priority_running(share, unit)
        if lower:
            return self.answer("IN_SHARE_PREEMPTION_PENDING", f"quota share {name!r} uses its "
                               f"{own} {unit}; in-share preemption is on and {len(lower)} "
                               f"running job(s) have a lower priority than {self.job.priority}, "
                               "so AWS Batch should preempt them for this job", True)
        preemption = ("in-share preemption is off" if not spec.in_share_preemption else
                      "none of its running jobs has a lower priority")
        held = (f"job {self.job.job_id} needs {count} {unit} and quota share {name!r} already "
                f"uses {_holding(used, own)}; {preemption}")
        if not spec.strategy.borrows:
            return self.answer("OWN_CAPACITY_IN_USE", f"{held}; it is {spec.strategy.value}, "
                               "so it never borrows", True)
        ceiling = spec.ceiling_of(unit)
        if used + count > ceiling:
            return self.answer("BORROW_LIMIT_REACHED", f"{held}; running {count} more would "
                               f"take it to {used + count:g}, above its borrow ceiling of "
                               f"{ceiling:g} (limit plus {spec.borrow_limit}% of it)", True)
        return self._borrowing(share, unit, count, held, use)

    def _within_own_limit(self, share: LiveShare, unit: str, count: int,
                          use: UnitUse | None) -> Explanation:
        """A head that fits within its share's own limit: free capacity starts it; else
        borrowed capacity is reclaimed for it; else (an over-allocated environment) other
        shares hold the capacity within their own limits and it waits (assumption 4 of
        :mod:`quota_constructs.model.borrowing`)."""
        job, name = self.job, share.name
        if use is None:
            return self.answer("DISPATCH_PENDING", f"job {job.job_id} fits within quota share "
                               f"{name!r}'s own limit of {unit}; the environment's capacity is "
                               "unknown, so whether it is free cannot be told", True)
        free, reclaimable = use.free_for(name), use.reclaimable
        if count <= free:
            return self.answer("DISPATCH_PENDING", f"job {job.job_id} fits in quota share "
                               f"{name!r}'s idle {unit}; AWS Batch should start it on its "
                               "next scheduling pass", True)
        unused = f"{use.unused_own(name):g} of its own {use.own(name)} {unit} unused"
        if reclaimable > 0 and free + reclaimable >= count:
            return self.answer("LENDER_RECLAIMING", f"quota share {name!r} has {unused}, but "
                               f"the environment's {use.capacity} are in use, "
                               f"{_names(use.borrowers())} borrowing {reclaimable:g}: AWS "
                               "Batch reclaims the lent capacity by preempting borrowing jobs",
                               True)
        if self._lower_priority_running(share, unit) and free + use.used(name) >= count:
            return self.answer("IN_SHARE_PREEMPTION_PENDING", f"quota share {name!r} has "
                               f"{unused} but the environment has none free; in-share "
                               "preemption is on and lower-priority jobs of the share run, so "
                               "AWS Batch should preempt them for this job", True)
        kept = use.kept_idle(name)
        why = (f"the shares' limits add up to {use.owned}, more than the environment's "
               f"{use.capacity}" if use.over_allocated else
               f"the environment's {use.capacity} are in use")
        return self.answer("ENVIRONMENT_OVER_ALLOCATED", f"quota share {name!r} has {unused}, "
                           f"but {why}: {use.in_use:g} are held, "
                           + (f"{kept:g} kept idle by RESERVE shares, " if kept else "")
                           + f"{free:g} free for it and {reclaimable:g} borrowed to reclaim "
                           f"(it needs {count}); capacity other shares hold within their own "
                           "limits is never reclaimed, so it waits until capacity frees "
                           "(first come, first served)", True)

    def _borrowing(self, share: LiveShare, unit: str, count: int, held: str,
                   use: UnitUse | None) -> Explanation:
        """A borrower whose own capacity is in use: is there idle capacity it may take? Who
        lends to it and the capacity no share owns come from the rules model."""
        name = share.name
        if use is None:
            return self.answer("DISPATCH_PENDING", f"{held}; the environment's capacity is "
                               "unknown, so what it could borrow cannot be told", True)
        rule = use.rule(name)
        beyond = use.used(name) + count - use.own(name)
        free = use.free_for(name)
        sources = [repr(lender) for lender in (rule.lenders if rule is not None else ())]
        if use.unowned_borrowable:
            sources.append(f"the {use.unowned} {unit} no share owns")
        if free < count:
            where = " and ".join(sources) if sources else "no share (none lends it this type)"
            return self.answer("NOTHING_IDLE_TO_BORROW", f"{held}; it needs to borrow "
                               f"{beyond:g} {unit} but only {free:g} is idle that it may borrow, "
                               f"from {where}", True)
        return self.answer("DISPATCH_PENDING", f"quota share {name!r} may borrow the {beyond:g} "
                           f"{unit} it needs and {free:g} is idle (from "
                           f"{' and '.join(sources)}); AWS Batch assigns idle capacity first "
                           "come, first served", True)

    def _lower_priority_running(self, share: LiveShare, unit: str) -> list[str]:
        if share.config.in_share_preemption != "ENABLED":
            return []
        arn = QuotaShareArn.parse(share.arn)
        if arn is None:
            return []
        running, _ = self.reader.share_jobs(arn, DISPATCHED_STATUSES, limit=JOBS_DESCRIBED)
        lower = []
        for summary in running:
            if unit not in summary.capacity_usage:
                continue
            detail = self.reader.service_job(summary.job_id)
            priority = (detail or {}).get("schedulingPriority")
            if isinstance(priority, int) and priority < self.job.priority:
                lower.append(summary.job_id)
        return lower


def _history(detail: Mapping[str, Any]) -> dict[str, Any]:
    """Attempts and preemptions of a job, from DescribeServiceJob."""
    summary = detail.get("preemptionSummary") or {}
    recent = [a for a in summary.get("recentPreemptedAttempts") or [] if isinstance(a, Mapping)]
    count = summary.get("preemptedAttemptCount")
    preempted = count if isinstance(count, int) and not isinstance(count, bool) else len(recent)
    kinds = {CROSS_SHARE: 0, IN_SHARE: 0, UNKNOWN_KIND: 0}
    for attempt in recent:
        kinds[preemption_kind(attempt.get("statusReason"))] += 1
    # Batch keeps only the recent preempted attempts: older ones are of unknown kind.
    kinds[UNKNOWN_KIND] += max(0, preempted - len(recent))
    attempts = detail.get("attempts") or []
    return {
        "attempts": max(len(attempts), preempted + (1 if detail.get("startedAt") else 0)),
        "preemptions": preempted,
        "preemptions_by_kind": kinds,
        "recent_preemptions": [
            {"kind": preemption_kind(a.get("statusReason")), "reason": a.get("statusReason"),
             "started_at": a.get("startedAt"), "stopped_at": a.get("stoppedAt")}
            for a in recent
        ],
    }


def _history_text(history: Mapping[str, Any]) -> str:
    kinds = history["preemptions_by_kind"]
    shown = ", ".join(f"{n} {kind.lower().replace('_', '-')}" for kind, n in kinds.items() if n)
    return (f"{history['attempts']} attempt(s), preempted {history['preemptions']} time(s)"
            + (f": {shown}" if shown else ""))


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names) if names else "other shares"


def _listed(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def _holding(used: float, own: int) -> str:
    """``2 of its own 2`` / ``4: all 2 of its own and 2 borrowed``."""
    if used > own:
        return f"{used:g}: all {own} of its own and {used - own:g} borrowed"
    return f"{used:g} of its own {own}"


def main(argv: Sequence[str] | None = None, prog: str = "quota-constructs explain") -> int:
    parser = command_line.parser(prog, "Why a job, or a share's head job, is not running.")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--job", help="the service job's id")
    target.add_argument("--share", help="a quota share: explain its head job")
    command_line.add_unowned_borrowing(parser)
    command_line.add_max_snapshot_age(parser)
    options = parser.parse_args(argv)

    def command() -> int:
        max_age = command_line.max_snapshot_age(options)
        try:
            result = explain(options.queue, job_id=options.job, share=options.share,
                             reader=command_line.connect(options),
                             unowned_capacity_borrowable=options.unowned_capacity_borrowable,
                             max_snapshot_age_seconds=max_age)
        except NotFoundError as missing:
            if options.json:  # a script reads the code; the error line goes to stderr too
                print(json.dumps(missing.to_json(), indent=2))
            raise
        if options.json:
            print(json.dumps(result.to_json(), indent=2))
        else:
            mark = " (inferred: AWS Batch does not report this)" if result.inferred else ""
            print(f"{result.reason_code}{mark}\n{result.reason}")
            if result.waiting_seconds is not None:
                print(f"waiting {command_line.age_text(result.waiting_seconds)} (on the "
                      "queue's clock)")
            if result.start_estimate is not None:
                print(result.start_estimate.line())
            if result.snapshot_warning is not None:
                print(command_line.stale_snapshot_line(
                    result.snapshot_warning, "the usage and order this answer reads"))
        return command_line.OK

    return command_line.run(prog, command)

