"""The one way the runtime reads AWS Batch: queue snapshots, bounded job listings, job details.

Used by the custom resource (its guards), the monitoring Lambdas and the operator commands.
Every function takes a :data:`BatchCall` (``BatchGateway``'s ``_call``: retries with backoff,
readable :class:`~.batch_gateway.BatchRequestError`), so what is retried and how is decided in
one place, and reads are plain functions a test or a command can call with any caller.

Costs, stated once:

- :func:`read_queue_snapshot` is one ``GetJobQueueSnapshot`` call whatever the backlog. It gives
  each share's capacity in use, each share's first RUNNABLE job with the time it reached that
  position (``frontOfQuotaShares``), and the first 100 RUNNABLE jobs of the queue
  (``frontOfQueue``). It is the cheap source of per-share state.
- :func:`paginate` reads at most ``max_pages`` pages and says whether it saw everything
  (:class:`Listing.complete`); it never raises at the cap and never hides that it stopped.
  Callers decide: the custom resource refuses to act on an incomplete listing of shares, a
  count reports itself capped.
- :func:`count_runnable` lists one share's RUNNABLE jobs up to ``max_jobs`` (pages of 100, so
  ``ceil(max_jobs / 100)`` calls at most): a count that reached the cap means *at least* that
  many.
- :func:`describe_service_job` is one call per job.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from quota_constructs.wire.listing import MAX_LISTING_PAGES, MAX_PAGE_SIZE
from quota_constructs.wire.share_arn import share_name_of

RUNNABLE: Final = "RUNNABLE"
QUOTA_SHARE_FILTER: Final = "QUOTA_SHARE_NAME"


class BatchCall(Protocol):
    """Sends one AWS Batch request (with the caller's retries) and returns its answer."""

    def __call__(self, operation: str, **params: Any) -> dict[str, Any]: ...


# -- pagination ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    items: tuple[dict[str, Any], ...]
    complete: bool
    """False when the listing stopped at its page cap with more pages left."""
    pages: int


def paginate(
    call: BatchCall, operation: str, key: str, *, max_pages: int = MAX_LISTING_PAGES,
    max_items: int | None = None, page_size: int | None = None, **params: Any,
) -> Listing:
    """``operation``'s ``key`` items, reading at most ``max_pages`` pages and stopping once
    ``max_items`` were read (``complete`` is False when a next page was left unread)."""
    items: list[dict[str, Any]] = []
    token: str | None = None
    for page_number in range(1, max_pages + 1):
        page = call(
            operation, **params,
            **({"maxResults": page_size} if page_size else {}),
            **({"nextToken": token} if token else {}),
        )
        items.extend(item for item in page.get(key) or [] if isinstance(item, dict))
        token = page.get("nextToken")
        if not token:
            return Listing(tuple(items), complete=True, pages=page_number)
        if max_items is not None and len(items) >= max_items:
            return Listing(tuple(items), complete=False, pages=page_number)
    return Listing(tuple(items), complete=False, pages=max_pages)


# -- the queue snapshot --------------------------------------------------------------------------


@dataclass(frozen=True)
class PositionedJob:
    """A RUNNABLE job at a position of the queue or of its share."""

    job_arn: str
    at_position_since_ms: int | None
    """``earliestTimeAtPosition``: when the job reached its current position."""

    @property
    def job_id(self) -> str:
        return self.job_arn.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class QueueSnapshot:
    """``GetJobQueueSnapshot`` of one queue, per share."""

    usage: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    """Capacity each share holds, per capacity unit (a share not listed holds nothing)."""
    heads: Mapping[str, PositionedJob] = field(default_factory=dict)
    """Each share's first RUNNABLE job (a share not listed has none waiting)."""
    front_of_queue: tuple[PositionedJob, ...] = ()
    """The queue's first RUNNABLE jobs (at most 100), in dispatch order."""
    total_usage: Mapping[str, float] = field(default_factory=dict)
    usage_updated_at_ms: int | None = None
    """``queueUtilization.lastUpdatedAt``: when the usage was last updated (None: not sent)."""
    heads_updated_at_ms: int | None = None
    """``frontOfQuotaShares.lastUpdatedAt``: when the shares' first jobs were last updated."""
    front_updated_at_ms: int | None = None
    """``frontOfQueue.lastUpdatedAt``."""
    answered_at_ms: int | None = None
    """The endpoint's clock when it answered (the HTTP ``Date`` header); None when unknown."""

    def endpoint_now_ms(self) -> int | None:
        """"Now" on the clock of the endpoint that answered, or None when it cannot be told.

        The one rule for judging the snapshot's age and a job's wait: the times compared
        (``lastUpdatedAt``, ``earliestTimeAtPosition``, ``createdAt``) are the endpoint's, so
        "now" is the endpoint's too: the later of its answer's HTTP ``Date`` header (whole
        seconds) and the latest ``lastUpdatedAt`` the answer carries (never after the moment
        it answered). A local clock that is off, or an emulator whose time is not the wall
        clock's (``quota-constructs emulate --clock manual``), then never makes a snapshot
        look older or a wait longer than the endpoint's own clock says. Without a ``Date``
        header the caller falls back to its own clock (None here): the ``lastUpdatedAt``
        alone would make every snapshot look fresh.
        """
        if self.answered_at_ms is None:
            return None
        updated = [t for t in (self.usage_updated_at_ms, self.heads_updated_at_ms,
                               self.front_updated_at_ms) if t is not None]
        return max([self.answered_at_ms, *updated])

    def usage_of(self, share: str) -> Mapping[str, float]:
        return self.usage.get(share, {})

    def left_out(self, shares: Iterable[str]) -> list[str]:
        """The ``shares`` whose usage the snapshot may have left out (:func:`shares_left_out`)."""
        return shares_left_out(self.usage, self.total_usage, shares)

    def head_of(self, share: str) -> PositionedJob | None:
        return self.heads.get(share)


def shares_left_out(
    usage: Mapping[str, Mapping[str, float]], total: Mapping[str, float], shares: Iterable[str],
) -> list[str]:
    """The ``shares`` a snapshot's per-share ``usage`` may have left out: AWS documents
    ``topCapacityUtilization`` as the *top* shares, so when what it lists adds up to less than
    ``totalCapacityUsage``, a share it does not list may still hold capacity."""
    listed: dict[str, float] = {}
    for units in usage.values():
        for unit, quantity in units.items():
            listed[unit] = listed.get(unit, 0.0) + quantity
    if all(quantity <= listed.get(unit, 0.0) + 1e-9 for unit, quantity in total.items()):
        return []
    return [share for share in shares if share not in usage]


def parse_queue_snapshot(response: Mapping[str, Any],
                         answered_at_ms: int | None = None) -> QueueSnapshot:
    """A ``GetJobQueueSnapshot`` answer, tolerant of missing parts (each is then empty);
    ``answered_at_ms``: the endpoint's clock when it answered (its HTTP ``Date`` header)."""
    utilization = response.get("queueUtilization") or {}
    usage: dict[str, dict[str, float]] = {}
    for entry in (utilization.get("quotaShareUtilization") or {}).get(
        "topCapacityUtilization"
    ) or []:
        units = usage.setdefault(share_name_of(entry.get("quotaShareName")), {})
        _add_usage(units, entry.get("capacityUsage"))
    total: dict[str, float] = {}
    _add_usage(total, utilization.get("totalCapacityUsage"))
    heads: dict[str, PositionedJob] = {}
    shares = (response.get("frontOfQuotaShares") or {}).get("quotaShares") or {}
    for share, jobs in shares.items() if isinstance(shares, Mapping) else ():
        # One entry per share is documented ("the first RUNNABLE job"); should a list ever hold
        # more, the first is the head.
        positioned = [_positioned(job) for job in jobs or []]
        first = next((job for job in positioned if job is not None), None)
        if first is not None:
            heads[share_name_of(share)] = first
    front = tuple(
        job for job in (
            _positioned(item) for item in (response.get("frontOfQueue") or {}).get("jobs") or []
        ) if job is not None
    )
    return QueueSnapshot(
        usage=usage, heads=heads, front_of_queue=front, total_usage=total,
        usage_updated_at_ms=_millis(utilization.get("lastUpdatedAt")),
        heads_updated_at_ms=_millis((response.get("frontOfQuotaShares") or {}).get(
            "lastUpdatedAt")),
        front_updated_at_ms=_millis((response.get("frontOfQueue") or {}).get("lastUpdatedAt")),
        answered_at_ms=answered_at_ms,
    )


def _millis(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_queue_snapshot(call: BatchCall, job_queue: str) -> QueueSnapshot:
    """One ``GetJobQueueSnapshot`` of ``job_queue`` (name or ARN)."""
    return parse_queue_snapshot(call("GetJobQueueSnapshot", jobQueue=job_queue))


def _add_usage(units: dict[str, float], items: object) -> None:
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping):
            unit = str(item.get("capacityUnit", ""))
            units[unit] = units.get(unit, 0.0) + float(item.get("quantity") or 0.0)


def _positioned(item: object) -> PositionedJob | None:
    if not isinstance(item, Mapping) or not isinstance(item.get("jobArn"), str):
        return None
    since = item.get("earliestTimeAtPosition")
    return PositionedJob(
        job_arn=item["jobArn"],
        at_position_since_ms=int(since) if isinstance(since, (int, float)) and not isinstance(
            since, bool) else None,
    )


# -- service jobs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunnableCount:
    count: int
    capped: bool
    """True when listing stopped at the cap: there are at least ``count`` RUNNABLE jobs."""


def count_runnable(call: BatchCall, job_queue: str, share: str, *, max_jobs: int) -> RunnableCount:
    """How many RUNNABLE jobs ``share`` has, counting at most ``max_jobs``."""
    jobs, complete = runnable_jobs(call, job_queue, share, max_items=max_jobs,
                                   page_size=min(MAX_PAGE_SIZE, max_jobs))
    capped = not complete or len(jobs) > max_jobs
    return RunnableCount(min(len(jobs), max_jobs), capped)


def runnable_jobs(
    call: BatchCall, job_queue: str, share: str, *, max_pages: int = MAX_LISTING_PAGES,
    max_items: int | None = None, page_size: int = MAX_PAGE_SIZE,
) -> tuple[list[Mapping[str, Any]], bool]:
    """``share``'s RUNNABLE job summaries (newest first, one per job id), reading at most
    ``max_pages`` pages or until ``max_items`` were read, and whether that was all of them."""
    listing = paginate(
        call, "ListServiceJobs", "jobSummaryList", max_pages=max_pages, max_items=max_items,
        page_size=page_size, jobQueue=job_queue, jobStatus=RUNNABLE,
        # One filter per call: only QUOTA_SHARE_NAME combines with a job status.
        filters=[{"name": QUOTA_SHARE_FILTER, "values": [share]}],
    )
    unique: dict[str, Mapping[str, Any]] = {}
    for job in _of_share(listing.items, share, RUNNABLE):
        unique.setdefault(str(job.get("jobId")), job)
    return list(unique.values()), listing.complete


def list_service_jobs(
    call: BatchCall, job_queue: str, share: str, statuses: Iterable[str], *, limit: int,
) -> tuple[list[Mapping[str, Any]], bool]:
    """Summaries of ``share``'s jobs in ``statuses`` (at most ``limit``), and whether there
    were more (or more than the page cap could read)."""
    found: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    for status in statuses:
        listing = paginate(
            call, "ListServiceJobs", "jobSummaryList", max_items=limit - len(found) + 1,
            jobQueue=job_queue, jobStatus=status,
            filters=[{"name": QUOTA_SHARE_FILTER, "values": [share]}],
        )
        for job in _of_share(listing.items, share, status):
            job_id = str(job.get("jobId", ""))
            if job_id in seen:
                continue
            if len(found) >= limit:
                return found, True
            seen.add(job_id)
            found.append(job)
        if not listing.complete:
            return found, True
    return found, False


def _of_share(items: Iterable[Mapping[str, Any]], share: str,
              status: str) -> list[Mapping[str, Any]]:
    # Checked again: a filter or status an endpoint ignored must not make other shares' jobs, or
    # jobs in another status, count.
    return [job for job in items
            if job.get("quotaShareName", share) == share and job.get("status", status) == status]


@dataclass(frozen=True)
class ServiceJobDetail:
    """What ``DescribeServiceJob`` says about a job that the readers use."""

    job_arn: str
    job_id: str
    job_queue: str
    share: str
    status: str
    capacity: Mapping[str, float]
    """What the job needs (or holds) per instance type: ``capacityUsage``, else the
    instance type and count of its SageMaker request."""
    created_at_ms: int | None
    last_preempted_at_ms: int | None
    """When its most recent preempted attempt stopped (it went back to RUNNABLE then)."""
    raw: Mapping[str, Any]

    @classmethod
    def from_api(cls, job: Mapping[str, Any]) -> ServiceJobDetail:
        capacity: dict[str, float] = {}
        _add_usage(capacity, job.get("capacityUsage"))
        if not capacity:
            capacity = _payload_capacity(job.get("serviceRequestPayload"))
        stops = [
            int(attempt["stoppedAt"])
            for attempt in (job.get("preemptionSummary") or {}).get("recentPreemptedAttempts")
            or []
            if isinstance(attempt, Mapping) and _is_number(attempt.get("stoppedAt"))
        ]
        created = job.get("createdAt")
        return cls(
            job_arn=str(job.get("jobArn", "")),
            job_id=str(job.get("jobId", "")),
            job_queue=str(job.get("jobQueue", "")),
            share=str(job.get("quotaShareName") or ""),
            status=str(job.get("status", "")),
            capacity=capacity,
            created_at_ms=int(created) if isinstance(created, (int, float)) and not isinstance(
                created, bool) else None,
            last_preempted_at_ms=max(stops, default=None),
            raw=job,
        )


def describe_service_job(call: BatchCall, job_id: str) -> ServiceJobDetail:
    return ServiceJobDetail.from_api(call("DescribeServiceJob", jobId=job_id))


def _payload_capacity(payload: object) -> dict[str, float]:
    try:
        request = json.loads(payload) if isinstance(payload, str) else {}
    except ValueError:
        return {}
    config = request.get("ResourceConfig") if isinstance(request, dict) else None
    if not isinstance(config, dict) or not isinstance(config.get("InstanceType"), str):
        return {}
    count = config.get("InstanceCount", 1)
    return {config["InstanceType"]: float(count) if _is_number(count) else 1.0}


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)

