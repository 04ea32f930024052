"""Scheduled entry point: per-share capacity, waiting jobs and drift, published as EMF.

Every minute (by default) it reads the queue's snapshot (capacity in use per share and unit),
the live shares (for drift) and each declared share's RUNNABLE jobs, and prints one EMF record
per share and unit and one per share. The calls run side by side, each with its own retries,
and the handler stops waiting for them shortly before the function would time out: a slow or
failing call costs only the data points computed from it. It never raises for a failed Batch
call, because a scheduled invocation that fails is retried and would publish twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from .emf import emit
from .monitor_settings import MonitorSettings
from .monitoring_gateway import LiveShares, MonitoringGateway, QueueSnapshot, RunnableJobs
from .share_metrics import drift_of, share_records
from .structured_log import log

T = TypeVar("T")

MAX_WORKERS = 8
DEFAULT_BUDGET_SECONDS = 50.0
"""How long to wait for Batch when there is no Lambda context to ask."""
MARGIN_SECONDS = 1.0
"""Kept back from the Lambda's remaining time to print the records and return."""


def handler(event: Any, context: Any) -> dict[str, Any]:
    settings = MonitorSettings.from_environment()
    gateway = MonitoringGateway.from_context(context)
    queue = settings.queue
    budget = _budget_seconds(context)
    log("share_metrics_start", job_queue=queue.reference, shares=len(settings.shares),
        budget_seconds=round(budget, 1))

    pool = ThreadPoolExecutor(max_workers=MAX_WORKERS, thread_name_prefix="share-metrics")
    try:
        snapshot_call = pool.submit(gateway.snapshot, queue.reference)
        live_call = pool.submit(
            gateway.live_shares, queue.reference, {spec.name for spec in settings.shares}
        )
        runnable_calls = {
            spec.name: pool.submit(gateway.runnable_jobs, queue.reference, spec.name)
            for spec in settings.shares
        }
        calls: list[Future[Any]] = [snapshot_call, live_call, *runnable_calls.values()]
        wait(calls, timeout=budget)
    finally:
        # Calls still running are abandoned, not awaited: their data points are lost, the
        # others are published now.
        pool.shutdown(wait=False, cancel_futures=True)

    missing: list[str] = []
    snapshot: QueueSnapshot | None = _result(snapshot_call, "GetJobQueueSnapshot", missing)
    live: LiveShares | None = _result(live_call, "ListQuotaShares", missing)
    now_ms = int(time.time() * 1000)
    records = []
    drifted = []
    for spec in settings.shares:
        runnable: RunnableJobs | None = _result(
            runnable_calls[spec.name], f"ListServiceJobs({spec.name})", missing
        )
        live_share = live.get(spec.name) if live is not None else None
        live_known = live is not None and live.knows(spec.name)
        if live is not None and not live_known:
            missing.append(f"DescribeQuotaShare({spec.name})")
        if live_known:
            reason = drift_of(spec, live_share)
            if reason is not None:
                drifted.append(spec.name)
                log("share_drift", quota_share=spec.name, reason=reason)
        records += share_records(
            spec,
            namespace=settings.namespace,
            job_queue_name=queue.name,
            usage=snapshot.usage_of(spec.name) if snapshot is not None else None,
            live=live_share,
            live_known=live_known,
            runnable=runnable,
            now_ms=now_ms,
        )
    if live is not None:
        undeclared = sorted(set(live.shares) - {spec.name for spec in settings.shares})
        if undeclared:
            log("undeclared_shares", job_queue=queue.reference, quota_shares=undeclared)
    written = emit(records)
    summary = {"records": written, "missing": missing, "drifted": drifted}
    log("share_metrics_done", **summary)
    return summary


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
