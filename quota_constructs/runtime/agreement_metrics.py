"""The agreement watched live: each started job's wait and each job lost to its preemption
budget, read from one job event and its job's description (no I/O here).

**Wait** (:data:`WAIT_TIME`): seconds from the job's ``createdAt`` to its *first* start. It is
published from the ``Batch Service Job State Change`` event of the job becoming RUNNING, the
moment its first start is known, so it costs one ``DescribeServiceJob`` per start whatever the
backlog, and needs no record of what was published before: only the event of the first start
publishes. A job preempted and started again sends RUNNING again; that start is recognised as a
later one (:func:`read_start`) and publishes nothing. A job that finished (or was preempted)
before its event is handled is judged the same way, from what the event and the job report.

Which RUNNING event is the first start: a job's attempts end in order, so an attempt is its
first exactly when no attempt of the job had stopped before it started. In this order:

1. the event's own detail (AWS documents it as DescribeServiceJob-like: a snapshot taken at the
   transition) counts a preemption: a later start;
2. the moment of the event's start: when the attempt started (``detail.startedAt``, else the
   latest of the event's ``attempts[].startedAt``), else the event's ``time`` (unless it is
   before the job's ``createdAt``, which no event of the job can be);
3. the first start when that moment is before every ``stoppedAt`` the job reports now
   (``attempts``, ``preemptionSummary.recentPreemptedAttempts``) or the event does. AWS lists
   only "the most recent" preempted attempts: a job that reports more preemptions than it
   lists attempts is not judged (a point left out rather than one counted twice). With no
   moment at all, the first start only while the job was never stopped.

Comparing starts with stops, not starts with starts, keeps the judgement sound when two fields
AWS writes for one moment differ by a little. The wait ends at the start the event reports,
else at the earliest start the job reports, else at the event's ``time``.

**Budget failure** (:data:`BUDGET_FAILURES`): a FAILED job whose preempted attempts
(``preemptionSummary.preemptedAttemptCount``) outnumber its
``preemptionConfiguration.preemptionRetriesBeforeTermination``. AWS documents no status reason
for it, so only the counts decide; a job preempted within its retries, or submitted without
any, is not one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from quota_constructs.model.budget_failure import FAILED
from quota_constructs.model.budget_failure import is_budget_failure as budget_failure
from quota_constructs.wire.monitoring_contract import (
    BUDGET_FAILURES,
    JOB_QUEUE_DIMENSION,
    QUOTA_SHARE_DIMENSION,
    WAIT_TIME,
)

from .emf import COUNT, SECONDS, MetricRecord
from .preemption import Preemption


@dataclass(frozen=True)
class StartReading:
    """What a RUNNING event says about its job's first start."""

    first: bool
    """Whether the event reports the job's first start (see the module docstring)."""
    wait_seconds: float | None
    """Seconds from ``createdAt`` to the first start; None when the job's creation time is not
    known."""


def read_start(detail: Mapping[str, Any], job: Mapping[str, Any],
               event_time_ms: int | None) -> StartReading:
    """Judge a RUNNING event (its ``detail`` and ``time``) against its job as
    DescribeServiceJob describes it now."""
    created = _ms(job.get("createdAt"))
    if created is None:
        created = _ms(detail.get("createdAt"))
    if event_time_ms is not None and created is not None and event_time_ms < created:
        event_time_ms = None  # not this job's event time: no event precedes the job's creation
    this_start = _this_attempt_start(detail)
    first = _is_first_start(detail, job, this_start if this_start is not None else event_time_ms)
    started = this_start
    if started is None:
        starts = _starts(job)
        started = min(starts) if starts else event_time_ms
    wait = None
    if created is not None and started is not None:
        wait = round(max(0.0, (started - created) / 1000.0), 3)
    return StartReading(first=first, wait_seconds=wait)


def _is_first_start(detail: Mapping[str, Any], job: Mapping[str, Any],
                    moment: int | None) -> bool:
    if _preempted_count(detail) > 0:
        return False
    stops = _stops(job) + _stops(detail)
    if moment is None:
        # Nothing to place the event by: the first start only while the job was never stopped.
        return not stops and _preempted_count(job) == 0
    if not _lists_every_preemption(job):
        return False
    return all(moment < stop for stop in stops)


def is_budget_failure(detail: Mapping[str, Any], job: Mapping[str, Any]) -> bool:
    """Whether a FAILED job failed by exhausting its preemption retries, by the model's one
    definition (:func:`quota_constructs.model.budget_failure.is_budget_failure`), read from the
    job as described (else the event) for its retries and the larger preemption count of the
    two."""
    retries = _retries(job)
    if retries is None:
        retries = _retries(detail)
    return budget_failure(FAILED, max(_preempted_count(job), _preempted_count(detail)), retries)


def wait_time_record(namespace: str, job_queue_name: str, share: str,
                     seconds: float) -> MetricRecord:
    record = MetricRecord(namespace, _dimensions(job_queue_name, share))
    record.put(WAIT_TIME, seconds, SECONDS)
    return record


def budget_failure_record(namespace: str, job_queue_name: str, share: str) -> MetricRecord:
    record = MetricRecord(namespace, _dimensions(job_queue_name, share))
    record.put(BUDGET_FAILURES, 1, COUNT)
    return record


def event_time_ms(event: Mapping[str, Any]) -> int | None:
    """The event's ``time`` (ISO 8601, as EventBridge writes it) in milliseconds."""
    raw = event.get("time")
    if not isinstance(raw, str) or not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return int(moment.timestamp() * 1000)


# -- parts ----------------------------------------------------------------------------------

def _dimensions(job_queue_name: str, share: str) -> dict[str, str]:
    return {JOB_QUEUE_DIMENSION: job_queue_name, QUOTA_SHARE_DIMENSION: share}


def _starts(report: Mapping[str, Any]) -> list[int]:
    """Every start time a report gives: its ``startedAt``, its attempts' and its preempted
    attempts'."""
    candidates: Iterable[Any] = [
        report.get("startedAt"),
        *(a.get("startedAt") for a in _attempts(report)),
        *(a.get("startedAt") for a in _preempted_attempts(report)),
    ]
    return [ms for ms in map(_ms, candidates) if ms is not None]


def _stops(report: Mapping[str, Any]) -> list[int]:
    """When each attempt a report lists stopped (preempted, or ended otherwise)."""
    candidates = [a.get("stoppedAt") for a in (*_attempts(report), *_preempted_attempts(report))]
    return [ms for ms in map(_ms, candidates) if ms is not None]


def _lists_every_preemption(job: Mapping[str, Any]) -> bool:
    """Whether the job's lists hold an attempt for each preemption it counts."""
    preempted = _preempted_count(job)
    return preempted <= len(_preempted_attempts(job)) or preempted < len(_attempts(job))


def _this_attempt_start(detail: Mapping[str, Any]) -> int | None:
    """When the attempt a RUNNING event reports started: ``startedAt``, else the latest of its
    attempts (the running one is the last to have started)."""
    started = _ms(detail.get("startedAt"))
    if started is not None:
        return started
    attempts = [ms for ms in (_ms(a.get("startedAt")) for a in _attempts(detail))
                if ms is not None]
    return max(attempts) if attempts else None


def _preempted_count(report: Mapping[str, Any]) -> int:
    summary = report.get("preemptionSummary")
    if not isinstance(summary, Mapping):
        return 0
    preemption = Preemption.from_summary(summary)
    return preemption.attempt_count if preemption is not None else 0


def _preempted_attempts(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    summary = report.get("preemptionSummary")
    if not isinstance(summary, Mapping):
        return []
    return [a for a in summary.get("recentPreemptedAttempts") or [] if isinstance(a, Mapping)]


def _attempts(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    attempts = report.get("attempts")
    if not isinstance(attempts, list):
        return []
    return [a for a in attempts if isinstance(a, Mapping)]


def _retries(report: Mapping[str, Any]) -> int | None:
    configuration = report.get("preemptionConfiguration")
    if not isinstance(configuration, Mapping):
        return None
    retries = configuration.get("preemptionRetriesBeforeTermination")
    if isinstance(retries, bool) or not isinstance(retries, int):
        return None
    return retries


def _ms(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)
