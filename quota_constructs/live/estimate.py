"""``quota-constructs estimate``, and ``explain``'s ``start_estimate``: by when a waiting job, or
one not yet submitted (as if submitted now), starts at the latest, read from the live queue.

The answer: ``latest`` (ISO 8601 UTC, or null when no moment can be promised), ``earliest``
(now: every job in its way could end at once), ``assumes`` (one sentence: what the bound
assumes, or why there is none) and ``blocking_jobs`` (the jobs whose end lets it start at
``latest``, and those ahead of it in its share; or, without a bound, those in its way). The
bound and its reasons are :mod:`.start_bounds`: the simulator's engine stepped forward from the
live state, where it can be shown that jobs ending early only bring the start earlier.

Reads, one of the queue per answer and bounded whatever the backlog (as ``status`` is):
DescribeJobQueues, DescribeServiceEnvironments, ListQuotaShares and one GetJobQueueSnapshot
(``explain`` has read them already); one ListServiceJobs listing of the whole queue per active
status, at most :data:`LISTING_PAGES` pages each (the job's own share listed on its own when
that stops short); DescribeServiceJob for the jobs holding or waiting in its share for its
instance type, at most :data:`DESCRIBED_AT_MOST`. Past a cap the answer has no ``latest`` and
says so.

Times are the endpoint's: :func:`endpoint_now_ms` is the one place "now" is decided.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from quota_constructs.model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from quota_constructs.model.capacity import describe_unit_problem
from quota_constructs.model.share import check_share_name
from quota_constructs.model.submission import MAX_JOB_PRIORITY, MIN_JOB_PRIORITY
from quota_constructs.runtime.batch_reads import QueueSnapshot, ServiceJobDetail
from quota_constructs.runtime.service_job import DISPATCHED_STATUSES
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn
from quota_constructs.wire.training_request import (
    DEFAULT_MAX_RUNTIME_SECONDS,
    LONGEST_MAX_RUNTIME_SECONDS,
    max_runtime_seconds,
    training_request,
)
from quota_constructs.wire.utc_time import iso_utc

from . import command_line
from .queue_reader import (
    RUNNABLE_PAGES,
    LiveQueueError,
    QueueFacts,
    QueueReader,
    job_id_of,
    judged_at_ms,
)
from .rules import spec_of
from .start_bounds import HeldCapacity, QueuedJob, Rival, UnitState, bound_start

WAITING_STATUSES: Final = ("RUNNABLE", "PENDING", "SUBMITTED")
"""Waiting, oldest state first: a SUBMITTED job was submitted after the RUNNABLE ones of its
moment (ties of ``createdAt`` are broken this way, then by the listing's newest-first order)."""
LISTING_PAGES: Final = RUNNABLE_PAGES
DESCRIBED_AT_MOST: Final = 100
"""DescribeServiceJob calls per answer at most (jobs holding or waiting for the type)."""
BATCH_BLOCKS: Final = ("MISCONFIGURATION:", "CAPACITY:")
"""A ``statusReason`` with which AWS Batch says it cannot place a job."""
NOT_SUBMITTED: Final = "(not yet submitted)"


@dataclass(frozen=True)
class StartEstimate:
    """When a job starts: ``latest`` None when no moment can be promised (``assumes`` says
    why); ``earliest`` the soonest it could (now, should every job in its way end at once)."""

    latest: datetime | None
    earliest: datetime
    assumes: str
    blocking_jobs: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"latest": None if self.latest is None else iso_utc(self.latest),
                "earliest": iso_utc(self.earliest), "assumes": self.assumes,
                "blocking_jobs": list(self.blocking_jobs)}

    def line(self) -> str:
        """The answer as one line of text."""
        soonest = f"earliest now ({clock(self.earliest)})"
        if self.blocking_jobs:
            soonest += f", if job(s) {', '.join(self.blocking_jobs[:3])} finish early"
        if self.latest is None:
            return f"no latest start: {self.assumes}; {soonest}"
        if self.latest <= self.earliest:
            return f"starts now ({clock(self.latest)}) at the latest: {self.assumes}"
        return (f"starts by {clock(self.latest)} at the latest, if nothing of higher priority "
                f"arrives; {soonest}")


@dataclass(frozen=True)
class Submission:
    """A job not yet submitted: what the estimate needs of it."""

    share: str
    instance_type: str
    count: int = 1
    priority: int = 0
    max_runtime_seconds: float = DEFAULT_MAX_RUNTIME_SECONDS
    """Its ``StoppingCondition.MaxRuntimeInSeconds``; it does not change when the job starts."""

    def __post_init__(self) -> None:
        subject = "estimate"
        check_share_name(self.share, subject=subject, field="share")
        problem = describe_unit_problem(self.instance_type)
        if problem is not None:
            raise QuotaConfigError(subject, "instance_type", self.instance_type, problem)
        _whole(self.count, "count", 1, None)
        _whole(self.priority, "priority", MIN_JOB_PRIORITY, MAX_JOB_PRIORITY)
        _whole(self.max_runtime_seconds, "max_runtime_seconds", 1, LONGEST_MAX_RUNTIME_SECONDS)


def _whole(value: object, name: str, low: int, high: int | None) -> None:
    """``value`` is a whole number from ``low`` to ``high`` (None: no upper end)."""
    allowed = f"a whole number >= {low}" if high is None else f"a whole number from {low} to {high}"
    whole = isinstance(value, int | float) and not isinstance(value, bool) and value == int(value)
    if not whole or value < low or (high is not None and value > high):  # type: ignore[operator]
        raise QuotaConfigError("estimate", name, value, allowed)


def clock(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def moment(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def endpoint_now_ms(snapshot: QueueSnapshot, seen_ms: Iterable[int],
                    now_ms: int | None = None) -> int:
    """The moment an answer is computed at, on the clock of the endpoint read: ``now_ms`` when
    given; else the endpoint's clock as every live command judges it (:func:`judged_at_ms`),
    and never before a time the endpoint reported for the jobs read (``seen_ms``), since its
    clock is at least that."""
    if now_ms is not None:
        return now_ms
    return max([judged_at_ms(snapshot), *seen_ms])


# -- the job in question --------------------------------------------------------------------


@dataclass(frozen=True)
class _Wanted:
    """The job whose start is estimated: an existing waiting job or a submission."""

    job_id: str
    share: str
    unit: str | None
    count: int
    priority: int
    max_runtime_seconds: float | None
    detail: Mapping[str, Any] | None
    """DescribeServiceJob's answer; None for a job not yet submitted (it comes after every
    job of its priority read)."""


def start_estimate_of_job(
    reader: QueueReader, facts: QueueFacts, snapshot: QueueSnapshot,
    shares: Mapping[str, LiveShare], detail: Mapping[str, Any], *,
    now_ms: int | None = None, unowned_capacity_borrowable: bool = True,
) -> StartEstimate:
    """The estimate for the job DescribeServiceJob answered ``detail`` for (``explain``'s
    hook: it passes what it has read). A dispatched job started; a finished one will not."""
    job = ServiceJobDetail.from_api(detail)
    status = job.status
    if status in DISPATCHED_STATUSES or status in ("SUCCEEDED", "FAILED"):
        return _started(job, snapshot, now_ms)
    reason = str(detail.get("statusReason") or "")
    if reason.startswith(BATCH_BLOCKS):
        now = endpoint_now_ms(snapshot, _stamps([detail]), now_ms)
        return StartEstimate(None, moment(now), f"AWS Batch reports {reason!r}: it does not "
                                                "start until that changes")
    unit, count = next(iter(job.capacity.items()), (None, 1.0))
    request = training_request(detail.get("serviceRequestPayload"))
    priority = detail.get("schedulingPriority")
    wanted = _Wanted(job.job_id, job.share, unit, int(count),
                     priority if isinstance(priority, int) else 0,
                     None if request is None else max_runtime_seconds(request), detail)
    return _Estimate(reader, facts, snapshot, shares, wanted, now_ms,
                     unowned_capacity_borrowable).answer()


def estimate_submission(
    queue: str, submission: Submission, *, reader: QueueReader | None = None,
    now_ms: int | None = None, unowned_capacity_borrowable: bool = True,
) -> StartEstimate:
    """The estimate for ``submission`` as if it were submitted into ``queue`` now."""
    reader = reader or QueueReader.connect()
    facts = reader.queue(queue)
    shares = {share.name: share for share in reader.shares(facts.arn)}
    if submission.share not in shares:
        raise LiveQueueError(f"quota share {submission.share!r} is not on job queue "
                             f"{facts.name!r}; its shares: {', '.join(shares) or 'none'}")
    wanted = _Wanted(NOT_SUBMITTED, submission.share, submission.instance_type,
                     submission.count, submission.priority,
                     float(submission.max_runtime_seconds), None)
    return _Estimate(reader, facts, reader.snapshot_of(facts.arn), shares, wanted, now_ms,
                     unowned_capacity_borrowable).answer()


def _started(job: ServiceJobDetail, snapshot: QueueSnapshot, now_ms: int | None) -> StartEstimate:
    started = job.raw.get("startedAt")
    now = endpoint_now_ms(snapshot, _stamps([job.raw]), now_ms)
    if not isinstance(started, int | float) or isinstance(started, bool):
        return StartEstimate(None, moment(now), f"job {job.job_id} is {job.status} and never "
                                                "started")
    at = moment(int(started))
    return StartEstimate(at, at, f"job {job.job_id} is {job.status}; its current or last "
                                 f"attempt started at {clock(at)}")


# -- reading the queue ------------------------------------------------------------------------


class _Unanswerable(Exception):
    """What was read is not enough for a bound (a cap reached, a job of unknown needs)."""

    def __init__(self, reason: str, jobs: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason, self.jobs = reason, tuple(jobs)


@dataclass
class _Listed:
    """The queue's active jobs as listed, with their place in the listing."""

    summaries: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    complete: dict[str, bool] = field(default_factory=dict)


class _Estimate:
    def __init__(self, reader: QueueReader, facts: QueueFacts, snapshot: QueueSnapshot,
                 shares: Mapping[str, LiveShare], wanted: _Wanted, now_ms: int | None,
                 unowned_capacity_borrowable: bool) -> None:
        self.reader, self.facts, self.snapshot = reader, facts, snapshot
        self.shares, self.wanted, self.now_ms = shares, wanted, now_ms
        self.unowned_capacity_borrowable = unowned_capacity_borrowable
        self.described: dict[str, Mapping[str, Any]] = {}
        if wanted.detail is not None:
            self.described[wanted.job_id] = wanted.detail

    def answer(self) -> StartEstimate:
        try:
            state = self.state()
        except _Unanswerable as missing:
            now = endpoint_now_ms(self.snapshot, _stamps(self.described.values()), self.now_ms)
            return StartEstimate(None, moment(now), missing.reason, missing.jobs)
        bound = bound_start(state)
        assumes = bound.assumes
        if self.wanted.detail is None and bound.latest_ms is not None:
            assumes += ("; and, submitted now, it is in its place before any capacity frees "
                        "(what frees before AWS Batch's next scheduling pass may go to a job "
                        "already waiting)")
        return StartEstimate(None if bound.latest_ms is None else moment(bound.latest_ms),
                             moment(state.now_ms), assumes, bound.blocking_jobs)

    def state(self) -> UnitState:
        facts, wanted = self.facts, self.wanted
        if facts.state != "ENABLED" or facts.status == "INVALID":
            raise _Unanswerable(f"job queue {facts.name!r} is {facts.state}/{facts.status}: "
                                "no job of it starts until that changes")
        if not facts.environment_limits:
            raise _Unanswerable("the service environment's capacity could not be read, so no "
                                "bound is computed")
        if wanted.unit is None:
            raise _Unanswerable(f"job {wanted.job_id}'s instance type is unknown (no readable "
                                "request payload)")
        specs = self.specs()
        listed = self.listed()
        holders = [(job_id, self.describe(job_id))
                   for job_id in self.on_unit(listed, DISPATCHED_STATUSES)]
        queued, rivals = self.waiting(listed)
        now = endpoint_now_ms(self.snapshot, _stamps(self.described.values()), self.now_ms)
        running = [self.held(job_id, detail, now) for job_id, detail in holders]
        created = [q.order[0] for q in queued]
        target = QueuedJob(
            wanted.job_id, wanted.share, wanted.count, wanted.priority,
            wanted.max_runtime_seconds,
            self.order(wanted.job_id, listed) if wanted.detail is not None
            else (max([now, *created]), len(WAITING_STATUSES), 0),
        )
        return UnitState(
            unit=wanted.unit, now_ms=now,
            environment=[CapacityLimit(unit, capacity)
                         for unit, capacity in facts.environment_limits.items()],
            shares=specs, running=running, queued=queued, target=target, rivals=rivals,
            rivals_complete=all(listed.complete.get(s, False) for s in WAITING_STATUSES),
            unowned_capacity_borrowable=self.unowned_capacity_borrowable,
        )

    def specs(self) -> list[QuotaShareSpec]:
        """The live shares as the rules model reads them."""
        try:
            return [spec_of(share) for share in self.shares.values()]
        except QuotaConfigError as error:
            reason = f"a live share is not one the rules model reads ({error})"
        raise _Unanswerable(reason)

    # -- listings

    def listed(self) -> _Listed:
        listed = _Listed()
        for status in (*DISPATCHED_STATUSES, *WAITING_STATUSES):
            jobs, complete = self.reader.queue_jobs(self.facts.arn, status,
                                                    max_pages=LISTING_PAGES)
            listed.summaries[status] = list(enumerate(jobs))
            listed.complete[status] = complete
        if not all(listed.complete[s] for s in DISPATCHED_STATUSES):
            raise _Unanswerable(f"more jobs hold capacity than {LISTING_PAGES} pages of "
                                "ListServiceJobs list, so not every holder could be read")
        return listed

    def on_unit(self, listed: _Listed, statuses: Sequence[str],
                share: str | None = None) -> list[str]:
        """Ids of the listed jobs in ``statuses`` (of ``share``) that hold or need the
        wanted type; a job whose summary names no capacity is described to find out."""
        found: list[str] = []
        for status in statuses:
            for _, summary in listed.summaries.get(status, []):
                job_id = str(summary.get("jobId") or job_id_of(summary.get("jobArn")))
                if job_id == self.wanted.job_id or (
                    share is not None and summary.get("quotaShareName") != share
                ):
                    continue
                usage = ServiceJobDetail.from_api(summary).capacity
                if not usage:
                    usage = ServiceJobDetail.from_api(self.describe(job_id)).capacity
                if not usage and status in DISPATCHED_STATUSES:
                    raise _Unanswerable(f"job {job_id} holds capacity of a type that could "
                                        "not be read", [job_id])
                if self.wanted.unit in usage:
                    found.append(job_id)
        return found

    def waiting(self, listed: _Listed) -> tuple[list[QueuedJob], list[Rival]]:
        """The wanted share's waiting jobs for the type (described) and other shares'."""
        share, unit = self.wanted.share, self.wanted.unit
        if not all(listed.complete[s] for s in WAITING_STATUSES):
            listed = self.own_share_listed(listed)
        queued = []
        for job_id in self.on_unit(listed, WAITING_STATUSES, share):
            detail = self.describe(job_id)
            if str(detail.get("statusReason") or "").startswith(BATCH_BLOCKS):
                continue  # AWS Batch says it cannot place it: set aside, as the emulator does
            job = ServiceJobDetail.from_api(detail)
            request = training_request(detail.get("serviceRequestPayload"))
            priority = detail.get("schedulingPriority")
            queued.append(QueuedJob(
                job_id, share, int(job.capacity.get(str(unit), 1)),
                priority if isinstance(priority, int) else 0,
                None if request is None else max_runtime_seconds(request),
                self.order(job_id, listed)))
        rivals = []
        for status in WAITING_STATUSES:
            for _, summary in listed.summaries.get(status, []):
                other = str(summary.get("quotaShareName") or "")
                if other == share or str(summary.get("statusReason") or "").startswith(
                        BATCH_BLOCKS):
                    continue
                usage = ServiceJobDetail.from_api(summary).capacity
                if usage and unit not in usage:
                    continue
                rivals.append(Rival(str(summary.get("jobId")), other,
                                    int(usage[str(unit)]) if usage else None))
        return queued, rivals

    def own_share_listed(self, listed: _Listed) -> _Listed:
        """The wanted share's waiting jobs listed on their own, when the whole queue's listing
        stopped short; past the cap too, no bound can be given."""
        share = self.shares[self.wanted.share]
        arn = QuotaShareArn.parse(share.arn)
        mine = _Listed(dict(listed.summaries), dict(listed.complete))
        if arn is not None:
            for status in WAITING_STATUSES:
                jobs, more = self.reader.share_jobs(arn, (status,), limit=DESCRIBED_AT_MOST)
                if more:
                    raise _Unanswerable(f"more than {DESCRIBED_AT_MOST} jobs of quota share "
                                        f"{share.name!r} are {status}: the estimate reads at "
                                        "most that many")
                others = [(i, s) for i, s in listed.summaries[status]
                          if s.get("quotaShareName") != share.name]
                rows = [{"jobId": j.job_id, "status": j.status, "quotaShareName": share.name,
                         "capacityUsage": [{"capacityUnit": u, "quantity": q}
                                           for u, q in j.capacity_usage.items()]}
                        for j in jobs]
                mine.summaries[status] = others + list(enumerate(rows))
        return mine

    # -- job details

    def describe(self, job_id: str) -> Mapping[str, Any]:
        if job_id not in self.described:
            if len(self.described) >= DESCRIBED_AT_MOST:
                raise _Unanswerable(f"more than {DESCRIBED_AT_MOST} jobs hold or wait for "
                                    f"{self.wanted.unit}: the estimate describes at most that "
                                    "many")
            self.described[job_id] = self.reader.service_job(job_id) or {"jobId": job_id}
        return self.described[job_id]

    def held(self, job_id: str, detail: Mapping[str, Any], now: int) -> HeldCapacity:
        """A running job as the bound reads it; when its attempt's start is unknown it may
        have started as late as ``now``."""
        job = ServiceJobDetail.from_api(detail)
        unit = str(self.wanted.unit)
        request = training_request(detail.get("serviceRequestPayload"))
        most = None if request is None else max_runtime_seconds(request)
        start = _attempt_start(detail)
        started = now if start is None else start
        priority = detail.get("schedulingPriority")
        return HeldCapacity(
            job_id, job.share, int(job.capacity.get(unit, 1)),
            priority if isinstance(priority, int) else 0, started,
            None if most is None else started + round(most * 1000),
            (job.created_at_ms or 0,),
        )

    def order(self, job_id: str, listed: _Listed) -> tuple[int, ...]:
        """A waiting job's place among equal priorities: its submission, then the listing."""
        created = ServiceJobDetail.from_api(self.describe(job_id)).created_at_ms or 0
        for rank, status in enumerate(WAITING_STATUSES):
            for position, summary in listed.summaries.get(status, []):
                if summary.get("jobId") == job_id:
                    return (created, rank, -position)  # listed newest first
        return (created, 0, 0)


def _attempt_start(detail: Mapping[str, Any]) -> int | None:
    """When the job's current attempt started; None when what Batch reports may be an
    earlier attempt's start (it was preempted after it): then only "before now" is known."""
    starts = [detail.get("startedAt")]
    starts += [a.get("startedAt") for a in detail.get("attempts") or []
               if isinstance(a, Mapping) and a.get("stoppedAt") is None]
    known = [int(s) for s in starts if isinstance(s, int | float) and not isinstance(s, bool)]
    if not known:
        return None
    start = max(known)
    stops = [a.get("stoppedAt") for a in (detail.get("preemptionSummary") or {}).get(
        "recentPreemptedAttempts") or [] if isinstance(a, Mapping)]
    if any(isinstance(s, int | float) and s > start for s in stops):
        return None
    return start


def _stamps(details: Iterable[Mapping[str, Any]]) -> list[int]:
    """Every time the endpoint reported in ``details`` (its clock was at least that late)."""
    found = []
    for detail in details:
        for key in ("createdAt", "startedAt", "stoppedAt"):
            value = detail.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                found.append(int(value))
    return found


# -- the command ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None, prog: str = "quota-constructs estimate") -> int:
    parser = command_line.parser(prog, "By when a job not yet submitted would start at the "
                                       "latest, if submitted now, from the live queue.")
    parser.add_argument("--share", required=True, help="the quota share it would be submitted to")
    parser.add_argument("--instance-type", required=True, help="its instance type (ml.*)")
    parser.add_argument("--count", type=int, default=1, help="its instance count (default 1)")
    parser.add_argument("--priority", type=int, default=0,
                        help="its scheduling priority, 0-9999 (default 0)")
    parser.add_argument("--max-runtime", type=int, default=DEFAULT_MAX_RUNTIME_SECONDS,
                        metavar="SECONDS",
                        help="its StoppingCondition.MaxRuntimeInSeconds (default "
                             f"{DEFAULT_MAX_RUNTIME_SECONDS}, SageMaker's); checked, but it does "
                             "not change when the job starts")
    command_line.add_unowned_borrowing(parser)
    options = parser.parse_args(argv)

    def command() -> int:
        submission = Submission(options.share, options.instance_type, options.count,
                                options.priority, options.max_runtime)
        result = estimate_submission(
            options.queue, submission, reader=command_line.connect(options),
            unowned_capacity_borrowable=options.unowned_capacity_borrowable)
        if options.json:
            print(json.dumps({"queue": options.queue, "share": submission.share,
                              "instance_type": submission.instance_type,
                              "count": submission.count, "priority": submission.priority,
                              **result.to_json()}, indent=2))
        else:
            print(f"{submission.count} x {submission.instance_type} in quota share "
                  f"{submission.share!r} at priority {submission.priority}, if submitted now: "
                  f"{result.line()}")
        return command_line.OK

    return command_line.run(prog, command)
