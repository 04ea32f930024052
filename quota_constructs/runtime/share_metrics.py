"""Per-share figures from what AWS Batch reports, as EMF records (no I/O here).

Every input may be missing (its call failed or ran out of time): a missing input removes only
the metrics computed from it, never the others.
"""

from __future__ import annotations

from collections.abc import Mapping

from quota_constructs.model import QuotaShareSpec

from .emf import COUNT, NONE, SECONDS, MetricRecord
from .live_share import LiveShare
from .monitoring_contract import (
    BORROWED_CAPACITY,
    CAPACITY_IN_USE,
    CAPACITY_LIMIT,
    CAPACITY_UNIT_DIMENSION,
    IDLE_OWN_CAPACITY,
    JOB_QUEUE_DIMENSION,
    OLDEST_RUNNABLE_JOB_AGE,
    QUOTA_SHARE_DIMENSION,
    RUNNABLE_JOBS,
    SHARE_DRIFT,
)
from .monitoring_gateway import RunnableJobs
from .share_config import ShareConfig

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


def share_records(
    spec: QuotaShareSpec,
    *,
    namespace: str,
    job_queue_name: str,
    usage: Mapping[str, float] | None,
    live: LiveShare | None,
    live_known: bool,
    runnable: RunnableJobs | None,
    now_ms: int,
) -> list[MetricRecord]:
    """The records of one share: one per capacity unit, and one for the share.

    ``usage`` is None when the snapshot is unknown; ``live_known`` is False when the live
    shares are unknown (then there is no drift figure rather than a false one); ``runnable`` is
    None when the share's RUNNABLE jobs are unknown.
    """
    share_dims = {JOB_QUEUE_DIMENSION: job_queue_name, QUOTA_SHARE_DIMENSION: spec.name}
    records: list[MetricRecord] = []
    units = [limit.capacity_unit for limit in spec.capacity_limits]
    units += sorted(unit for unit in (usage or {}) if unit not in units)
    for unit in units:
        record = MetricRecord(namespace, {**share_dims, CAPACITY_UNIT_DIMENSION: unit})
        own = spec.limit_of(unit)
        record.put(CAPACITY_LIMIT, own, COUNT)
        if usage is not None:
            in_use = usage.get(unit, 0.0)
            record.put(CAPACITY_IN_USE, in_use, COUNT)
            record.put(BORROWED_CAPACITY, max(0.0, in_use - own), COUNT)
            record.put(IDLE_OWN_CAPACITY, max(0.0, own - in_use), COUNT)
        records.append(record)
    share = MetricRecord(namespace, share_dims)
    if runnable is not None:
        share.put(RUNNABLE_JOBS, runnable.count, COUNT)
        oldest = runnable.oldest_created_at_ms
        age = 0.0 if oldest is None else max(0.0, (now_ms - oldest) / 1000.0)
        share.put(OLDEST_RUNNABLE_JOB_AGE, round(age, 3), SECONDS)
    if live_known:
        share.put(SHARE_DRIFT, 0 if drift_of(spec, live) is None else 1, NONE)
    records.append(share)
    return records
