"""Scheduled entry point: per-share capacity, head-of-share waits, drift and monitor health, as EMF.

One run, whatever the backlog (every figure from :mod:`.batch_reads`):

1. ``GetJobQueueSnapshot`` (one call): capacity in use per share and instance type, and each
   share's first RUNNABLE job with the time it reached the front; beside it the live shares
   (``ListQuotaShares``, one page for up to 100 shares) for drift and live limits.
2. For each share with a waiting job: ``DescribeServiceJob`` of that one job (its instance type
   and count, its latest preemption) and, unless switched off, one bounded ``ListServiceJobs``
   count of RUNNABLE jobs (``runnable_count_cap``). A share with nothing waiting costs no call.

A snapshot older than ``max_snapshot_age_seconds`` (or of unknown age) is used as if the call
had failed (:func:`~.share_metrics.snapshot_too_old`): its figures are withheld, so the alarms'
missing-data treatment applies, and ``MonitorHealthy`` says 0.

So a run costs at most 2 + 2 x shares calls (42 for 20 shares), never more for a longer queue.
Only when the snapshot's per-share list (AWS documents its *top* shares) adds up to less than
its total does a share it leaves out cost one more listing of its SCHEDULED/STARTING/RUNNING
jobs (bounded by the capacity it holds, not by the backlog).
The calls run side by side, each with its own retries, and the handler stops waiting shortly
before the function would time out: a slow or failing call costs only the data points computed
from it, and the run's :data:`MONITOR_HEALTHY` record (always printed) says 0. It never raises
for a failed Batch call, because the scheduled invocation would publish twice.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from quota_constructs.wire.deployed_config import deployed_as_is
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.monitoring_contract import (
    DEFAULT_METRIC_NAMESPACE,
    JOB_QUEUE_ARN_ENV,
    JOB_QUEUE_NAME_ENV,
    METRIC_NAMESPACE_ENV,
)
from quota_constructs.wire.share_arn import QuotaShareArn, job_queue_name_of

from .batch_gateway import BatchConnection, BatchRequestError
from .batch_reads import QueueSnapshot, RunnableCount, ServiceJobDetail
from .clock import WALL_CLOCK, Clock
from .emf import emit
from .monitor_settings import MonitorSettings
from .monitoring_gateway import LiveShares, MonitoringGateway
from .share_metrics import (
    HeadJob,
    drift_of,
    health_record,
    share_records,
    snapshot_too_old,
)
from .structured_log import log

T = TypeVar("T")

MAX_WORKERS = 8
DEFAULT_BUDGET_SECONDS = 50.0
"""How long to wait for Batch when there is no Lambda context to ask."""
HELD_JOBS_READ = 1000
"""Dispatched jobs read at most for a share the snapshot leaves out (each holds at least one
instance, so more than any environment's capacity of one queue)."""
MARGIN_SECONDS = 1.0
"""Kept back from the Lambda's remaining time to print the records and return."""


def handler(event: Any, context: Any, connection: BatchConnection | None = None,
            clock: Clock = WALL_CLOCK) -> dict[str, Any]:
    """Lambda's entry point (``connection``: how to reach AWS Batch; ``clock``: what the
    snapshot's age and the jobs' waits are measured against; the defaults in Lambda)."""
    try:
        settings = MonitorSettings.from_environment()
        gateway = MonitoringGateway.from_context(context, connection)
    except Exception:
        # A monitor that cannot even start is unhealthy, and says so before failing.
        _emit_unhealthy_from_environment()
        raise
    return _measure(settings, gateway, _budget_seconds(context), clock)


def _measure(settings: MonitorSettings, gateway: MonitoringGateway,
             budget: float, clock: Clock) -> dict[str, Any]:
    queue = settings.queue
    deadline = time.monotonic() + budget
    log("share_metrics_start", job_queue=queue.reference, shares=len(settings.shares),
        budget_seconds=round(budget, 1))
    names = {spec.name for spec in settings.shares}
    missing: list[str] = []
    pool = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="share-metrics")
    try:
        snapshot_call = pool.submit(gateway.snapshot, queue.reference)
        live_call = pool.submit(gateway.live_shares, queue.reference, names)
        wait([snapshot_call], timeout=_left(deadline))
        snapshot: QueueSnapshot | None = _result(snapshot_call, "GetJobQueueSnapshot", missing)
        if snapshot is not None:
            stale = snapshot_too_old(snapshot, now_ms=_now_ms(clock),
                                     max_age_seconds=settings.max_snapshot_age_seconds)
            if stale is not None:
                log("share_metrics_snapshot_too_old", job_queue=queue.reference, reason=stale)
                missing.append(f"GetJobQueueSnapshot ({stale})")
                snapshot = None
        detail_calls: dict[str, Future[ServiceJobDetail]] = {}
        count_calls: dict[str, Future[RunnableCount]] = {}
        held_calls: dict[str, Future[dict[str, float]]] = {}
        if snapshot is not None:
            # A share the snapshot's top list leaves out would read as holding nothing: its
            # head job would look as if it fitted its idle own capacity (a false Starved page).
            for name in snapshot.left_out(spec.name for spec in settings.shares):
                held_calls[name] = pool.submit(gateway.held_capacity, queue.reference, name,
                                               HELD_JOBS_READ)
            for spec in settings.shares:
                first = snapshot.head_of(spec.name)
                if first is None:
                    continue
                detail_calls[spec.name] = pool.submit(gateway.job_detail, first.job_id)
                if settings.runnable_count_cap > 0:
                    count_calls[spec.name] = pool.submit(
                        gateway.runnable_count, queue.reference, spec.name,
                        settings.runnable_count_cap,
                    )
        pending: list[Future[Any]] = [live_call, *detail_calls.values(), *count_calls.values(),
                                      *held_calls.values()]
        wait(pending, timeout=_left(deadline))
    finally:
        # Calls still running are abandoned, not awaited: their data points are lost, the
        # others are published now.
        pool.shutdown(wait=False, cancel_futures=True)

    live: LiveShares | None = _result(live_call, "ListQuotaShares", missing)
    now_ms = _now_ms(clock)
    records = []
    drifted = []
    for spec in settings.shares:
        live_share = live.get(spec.name) if live is not None else None
        live_known = live is not None and live.knows(spec.name)
        if live is not None and not live_known:
            missing.append(f"DescribeQuotaShare({spec.name})")
        if live_known:
            reason = drift_of(spec, live_share)
            if reason is not None and live_share is not None and reason.startswith("live "):
                # Differs from this monitor's declaration: was it deployed that way (a team's
                # stack deployed on its own)? The share's own tag says.
                deployed = _deployed_as_is(gateway, live_share, deadline)
                if deployed is None:
                    missing.append(f"DescribeQuotaShare({spec.name})")
                    live_known = False
                elif deployed:
                    log("share_differs_as_deployed", quota_share=spec.name, reason=reason)
                    reason = None
            if reason is not None and live_known:
                drifted.append(spec.name)
                log("share_drift", quota_share=spec.name, reason=reason)
        drift = (spec.name in drifted) if live_known else None
        position = snapshot.head_of(spec.name) if snapshot is not None else None
        head: HeadJob | None = None
        runnable: RunnableCount | None = None
        if position is not None:
            detail = _result(detail_calls[spec.name],
                             f"DescribeServiceJob({spec.name} head)", missing)
            head = HeadJob(position, detail)
            if spec.name in count_calls:
                runnable = _result(count_calls[spec.name], f"ListServiceJobs({spec.name})",
                                   missing)
                if runnable is not None and runnable.capped:
                    log("runnable_count_capped", quota_share=spec.name, counted=runnable.count)
        elif snapshot is not None and settings.runnable_count_cap > 0:
            # The snapshot names no first RUNNABLE job for the share: nothing waits.
            runnable = RunnableCount(0, capped=False)
        usage = snapshot.usage_of(spec.name) if snapshot is not None else None
        if spec.name in held_calls:
            usage = _result(held_calls[spec.name], f"ListServiceJobs({spec.name} held)", missing)
        records += share_records(
            spec,
            namespace=settings.namespace,
            job_queue_name=queue.name,
            usage=usage,
            head=head,
            head_known=usage is not None,
            live=live_share,
            live_known=live is not None and live.knows(spec.name),
            drift=drift,
            runnable=runnable,
            now_ms=now_ms,
        )
    if live is not None:
        undeclared = sorted(set(live.shares) - names)
        if undeclared:
            log("undeclared_shares", job_queue=queue.reference, quota_shares=undeclared)
    records.append(health_record(settings.namespace, queue.name, healthy=not missing))
    written = emit(records)
    summary = {"records": written, "missing": missing, "drifted": drifted,
               "healthy": not missing}
    log("share_metrics_done", **summary)
    return summary


def _deployed_as_is(gateway: MonitoringGateway, live: LiveShare, deadline: float) -> bool | None:
    """Whether the share's tags record its live configuration as deployed; None if unknown."""
    arn = QuotaShareArn.parse(live.arn)
    if arn is None or _left(deadline) < MARGIN_SECONDS:
        return None
    try:
        described = gateway.describe(arn)
    except BatchRequestError as error:
        log("share_metrics_call_failed", call="DescribeQuotaShare", error=error.code,
            detail=error.detail[:500])
        return None
    return described is not None and deployed_as_is(described)


def _emit_unhealthy_from_environment() -> None:
    name = os.environ.get(JOB_QUEUE_NAME_ENV, "").strip() or job_queue_name_of(
        os.environ.get(JOB_QUEUE_ARN_ENV, "").strip()
    )
    if name:
        namespace = os.environ.get(METRIC_NAMESPACE_ENV, "").strip() or DEFAULT_METRIC_NAMESPACE
        emit([health_record(namespace, name, healthy=False)])


def _now_ms(clock: Clock) -> int:
    return int(clock() * 1000)


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _result(call: Future[T], what: str, missing: list[str]) -> T | None:
    # Not done, or never started (cancelled when the pool was shut down at the deadline).
    if not call.done() or call.cancelled():
        log("share_metrics_call_timed_out", call=what)
        missing.append(what)
        return None
    error = call.exception()
    if error is not None:
        log("share_metrics_call_failed", call=what, error=type(error).__name__,
            detail=str(error)[:500])
        missing.append(what)
        return None
    return call.result()


def _budget_seconds(context: Any) -> float:
    remaining: Callable[[], int] | None = getattr(context, "get_remaining_time_in_millis", None)
    if not callable(remaining):
        return DEFAULT_BUDGET_SECONDS
    return max(0.0, remaining() / 1000.0 - MARGIN_SECONDS)
