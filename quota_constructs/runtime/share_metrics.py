"""Per-share figures from what AWS Batch reports, as EMF records (no I/O here).

Every input may be missing (its call failed or ran out of time): a missing input removes only
the metrics computed from it, never the others; :data:`MONITOR_HEALTHY` says that one was.

Starvation is judged on the share's *head* job (its first RUNNABLE job, the one AWS Batch
considers next): it is starved when it has waited at the front longer than the threshold while
the share's own idle capacity of that job's instance type could hold it. Two figures feed the
alarm: the head's wait (:data:`OLDEST_RUNNABLE_JOB_AGE`) and whether it fits
(:data:`HEAD_JOB_FITS_IDLE_OWN`).

Assumption (AWS documents ``earliestTimeAtPosition`` as "when the job transitioned to its
current position", not what a preemption does to it): a job requeued after a preemption waits
from the end of its preempted attempt, whichever of the two is later, so a job put back a
moment ago never counts as having waited since its submission.

A snapshot is judged only while it is recent: each part the figures come from
(``queueUtilization`` for capacity in use, ``frontOfQuotaShares`` for the head jobs and their
waits) carries a ``lastUpdatedAt``, and a part older than the bound — or without one, its age
unknown (AWS marks the field optional) — withholds the whole snapshot (:func:`snapshot_too_old`):
no capacity, no wait, no fit, no inferred "nothing waits". A stale reading would otherwise page
an owner for a starvation that ended, or clear one that goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from quota_constructs.model import QuotaShareSpec
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.monitoring_contract import (
    CAPACITY_IN_USE,
    CAPACITY_UNIT_DIMENSION,
    HEAD_JOB_FITS_IDLE_OWN,
    JOB_QUEUE_DIMENSION,
    MONITOR_HEALTHY,
    OLDEST_RUNNABLE_JOB_AGE,
    QUOTA_SHARE_DIMENSION,
    RUNNABLE_JOBS,
    SHARE_DRIFT,
)
from quota_constructs.wire.share_config import ShareConfig

from .batch_reads import PositionedJob, QueueSnapshot, RunnableCount, ServiceJobDetail
from .emf import COUNT, NONE, SECONDS, MetricRecord

DRIFTED_STATUSES = frozenset({"INVALID", "DELETING"})


def drift_of(spec: QuotaShareSpec, live: LiveShare | None) -> str | None:
    """Why the live share is not what was declared, or None when it is.

    Compared through the model's own rendering of the declaration (``ShareConfig.declared``),
    so an unlimited borrow limit, a default switch or the order of limits is not a difference.
    """
    if live is None:
        return "missing: AWS Batch does not list the share on the queue"
    if live.status in DRIFTED_STATUSES:
        return f"status {live.status}"
    declared = ShareConfig.declared(spec)
    if live.config != declared:
        return f"live {live.config.describe()}; declared {declared.describe()}"
    return None


@dataclass(frozen=True)
class HeadJob:
    """The share's first RUNNABLE job as the snapshot placed it and DescribeServiceJob told."""

    position: PositionedJob
    detail: ServiceJobDetail | None
    """None when DescribeServiceJob failed: the wait is known, whether it fits is not."""

    def waiting_since_ms(self) -> int | None:
        times = [self.position.at_position_since_ms]
        if self.detail is not None:
            times.append(self.detail.last_preempted_at_ms)
        known = [t for t in times if t is not None]
        return max(known) if known else None

    def fits(self, own_limits: Mapping[str, float], in_use: Mapping[str, float]) -> bool | None:
        """Whether the share's own idle capacity of the job's type(s) could hold it."""
        if self.detail is None or not self.detail.capacity:
            return None
        return all(
            needed <= max(0.0, own_limits.get(unit, 0.0) - in_use.get(unit, 0.0))
            for unit, needed in self.detail.capacity.items()
        )


def snapshot_too_old(snapshot: QueueSnapshot, *, now_ms: int,
                     max_age_seconds: int | None) -> str | None:
    """Why ``snapshot`` is too old to judge the shares by, or None when it is recent enough
    (or ``max_age_seconds`` is None: any age is judged)."""
    if max_age_seconds is None:
        return None
    for part, updated in (("queueUtilization", snapshot.usage_updated_at_ms),
                          ("frontOfQuotaShares", snapshot.heads_updated_at_ms)):
        if updated is None:
            return f"{part} carries no lastUpdatedAt: its age is unknown"
        # A clock ahead of AWS's makes a reading look younger, never older: no false alarm.
        age = (now_ms - updated) / 1000.0
        if age > max_age_seconds:
            return (f"{part} was last updated {round(age)} s ago, more than the "
                    f"{max_age_seconds} s allowed")
    return None


def own_limits(spec: QuotaShareSpec, live: LiveShare | None) -> dict[str, float]:
    """The share's own limit per instance type: the live one when known (it is what AWS Batch
    schedules by), else the declared one."""
    if live is not None and live.config.limits:
        return {unit: float(count) for unit, count in live.config.limits.items()}
    return {limit.capacity_unit: float(limit.max_capacity) for limit in spec.capacity_limits}


def share_records(
    spec: QuotaShareSpec,
    *,
    namespace: str,
    job_queue_name: str,
    usage: Mapping[str, float] | None,
    head: HeadJob | None,
    head_known: bool,
    live: LiveShare | None,
    live_known: bool,
    drift: bool | None,
    runnable: RunnableCount | None,
    now_ms: int,
) -> list[MetricRecord]:
    """The records of one share: one per capacity unit, and one for the share.

    ``usage`` is None when the snapshot is unknown (then ``head_known`` is False too: no wait
    and no fit is published rather than a false "nothing waits"); ``live_known`` is False when
    the live shares are unknown (the declared limits are used); ``drift`` is None when it is
    unknown (no figure rather than a false one); ``runnable`` is None when the count is unknown
    or not taken.
    """
    share_dims = {JOB_QUEUE_DIMENSION: job_queue_name, QUOTA_SHARE_DIMENSION: spec.name}
    records: list[MetricRecord] = []
    if usage is not None:
        units = [limit.capacity_unit for limit in spec.capacity_limits]
        units += sorted(unit for unit in usage if unit not in units)
        for unit in units:
            record = MetricRecord(namespace, {**share_dims, CAPACITY_UNIT_DIMENSION: unit})
            record.put(CAPACITY_IN_USE, usage.get(unit, 0.0), COUNT)
            records.append(record)
    share = MetricRecord(namespace, share_dims)
    if runnable is not None:
        share.put(RUNNABLE_JOBS, runnable.count, COUNT)
    if head_known and usage is not None:
        if head is None:
            share.put(OLDEST_RUNNABLE_JOB_AGE, 0.0, SECONDS)
            share.put(HEAD_JOB_FITS_IDLE_OWN, 0, NONE)
        else:
            since = head.waiting_since_ms()
            if since is not None:
                share.put(OLDEST_RUNNABLE_JOB_AGE, round(max(0.0, (now_ms - since) / 1000.0), 3),
                          SECONDS)
            fits = head.fits(own_limits(spec, live if live_known else None), usage)
            if fits is not None:
                share.put(HEAD_JOB_FITS_IDLE_OWN, 1 if fits else 0, NONE)
    if drift is not None:
        share.put(SHARE_DRIFT, 1 if drift else 0, NONE)
    records.append(share)
    return records


def health_record(namespace: str, job_queue_name: str, healthy: bool) -> MetricRecord:
    record = MetricRecord(namespace, {JOB_QUEUE_DIMENSION: job_queue_name})
    record.put(MONITOR_HEALTHY, 1 if healthy else 0, NONE)
    return record
