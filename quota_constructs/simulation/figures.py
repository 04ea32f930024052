"""Per-share figures from a run's usage log and job outcomes, in one pass over each.

Lent capacity is attributed without scanning every lender at every change: at each moment a
unit's borrowing is spread over its idle lendable capacity at the rate
``ratio = borrowed / (unowned + sum of lenders' idle allocation)``; a lender's lent
capacity-hours are then its idle amount times the integral of that rate while its idle amount
stays constant, and the integral is kept as a running total per unit.

Like the engine, the figures are compiled when they can be (see ``_native.py``) and written
for it: they read the run's columns as lists, and update a list item as ``x[i] = x[i] + y``
(an augmented assignment to an item compiles to a generic, boxed addition).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypeVar

from .problem import Problem
from .results import (
    CROSS_SHARE,
    ENDED_PREEMPTED,
    IN_SHARE,
    RunData,
    ShareFigures,
)

HOUR: Final = 3600.0
_Number = TypeVar("_Number", int, float)


def span(data: RunData) -> tuple[float, float]:
    """First submission to last end (0, 0 for no jobs)."""
    if not data.job_ids:
        return 0.0, 0.0
    return min(data.submitted), max(data.finished)


def share_figures(
    data: RunData,
    problem: Problem,
    *,
    window: tuple[float, float] | None = None,
    not_runnable: dict[int, int] | None = None,
) -> dict[str, ShareFigures]:
    """Figures over ``window`` (default: the run's own span), which must contain the run."""
    start, end = window if window is not None else span(data)
    n_units = len(data.unit_names)
    groups = data.share_names
    n_groups = len(groups)
    limits = [limit for g in range(n_groups) for limit in data.own_limits[g]]
    lends = problem.group_lends
    # Only unowned capacity jobs can use (the rules model's assumption, compiled into the
    # problem) is lendable.
    unowned = problem.unowned
    blocked = [0] * n_groups
    for g in problem.blocked_group:
        blocked[g] = blocked[g] + 1

    own, over, lent = _capacity_seconds(data, limits, lends, unowned, start, end)

    waits: list[list[float]] = [[] for _ in range(n_groups)]
    completions: list[list[float]] = [[] for _ in range(n_groups)]
    jobs, failed, cross, in_share, lost_hours = _job_outcomes(data, waits, completions)

    seconds = end - start
    figures: dict[str, ShareFigures] = {}
    for g, name in enumerate(groups):
        cells = range(g * n_units, (g + 1) * n_units)
        own_hours = sum(limits[c] for c in cells) * seconds / HOUR
        used_hours = sum(own[c] for c in cells) / HOUR
        wait = sorted(waits[g])
        completion = sorted(completions[g])
        figures[name] = ShareFigures(
            share=name,
            jobs=jobs[g] + (not_runnable or {}).get(g, 0) + blocked[g],
            succeeded=len(completion),
            failed_preemption_budget=failed[g],
            not_runnable=(not_runnable or {}).get(g, 0),
            blocked_jobs=blocked[g],
            own_capacity_hours=own_hours,
            used_capacity_hours=used_hours,
            utilization=used_hours / own_hours if own_hours > 0 else 0.0,
            borrowed_capacity_hours=sum(over[c] for c in cells) / HOUR,
            lent_capacity_hours=sum(lent[c] for c in cells) / HOUR,
            wait_p50=percentile(wait, 0.5),
            wait_p95=percentile(wait, 0.95),
            wait_max=wait[-1] if wait else None,
            completion_median=percentile(completion, 0.5),
            completion_p95=percentile(completion, 0.95),
            cross_share_preemptions=cross[g],
            in_share_preemptions=in_share[g],
            lost_instance_hours=lost_hours[g],
            utilization_by_type={
                data.unit_names[c - g * n_units]: own[c] / (limits[c] * seconds)
                if seconds > 0 else 0.0
                for c in cells if limits[c] > 0
            },
        )
    return figures


def _job_outcomes(
    data: RunData, waits: list[list[float]], completions: list[list[float]]
) -> tuple[list[int], list[int], list[int], list[int], list[float]]:
    """Per share: its jobs, those that failed for their preemption budget, its cross-share
    and in-share preemptions and its lost instance-hours; each started job's wait and each
    completed job's completion time are appended to ``waits`` and ``completions``.

    One loop over the run's parallel job columns, checked once to be of one length: a zip
    with ``strict=True`` would make the compiled figures build a tuple per job."""
    n_groups = len(data.share_names)
    job_share = _listed(data.job_share)
    attempts = data.attempts
    submitted_at = _listed(data.submitted)
    finished_at = _listed(data.finished)
    status_failed = _listed(data.status_failed)
    lost_seconds = _listed(data.lost)
    job_count = _listed(data.job_count)
    n_jobs = len(job_share)
    if not (len(attempts) == len(submitted_at) == len(finished_at) == len(status_failed)
            == len(lost_seconds) == len(job_count) == n_jobs):
        raise ValueError("a run's job columns differ in length")
    jobs = [0] * n_groups
    failed = [0] * n_groups
    cross = [0] * n_groups
    in_share = [0] * n_groups
    lost_hours = [0.0] * n_groups
    # (Five columns at most: typeshed types the items of a zip of more as Any, which the
    # compiled figures would then handle as any object.)
    for g, raw, submitted, finished, j in zip(  # noqa: B905 (checked above)
        job_share, attempts, submitted_at, finished_at, range(n_jobs)
    ):
        jobs[g] = jobs[g] + 1
        if raw is None:
            continue
        if isinstance(raw, tuple):
            waits[g].append(raw[0] - submitted)
            if raw[2] == ENDED_PREEMPTED:  # (preempted on its only attempt: it failed)
                if raw[4] == CROSS_SHARE:
                    cross[g] = cross[g] + 1
                elif raw[4] == IN_SHARE:
                    in_share[g] = in_share[g] + 1
        else:
            waits[g].append(raw[0][0] - submitted)
            for attempt in raw:
                if attempt[2] == ENDED_PREEMPTED:
                    if attempt[4] == CROSS_SHARE:
                        cross[g] = cross[g] + 1
                    elif attempt[4] == IN_SHARE:
                        in_share[g] = in_share[g] + 1
        if status_failed[j]:
            failed[g] = failed[g] + 1
        else:
            completions[g].append(finished - submitted)
        lost = lost_seconds[j]
        if lost:
            lost_hours[g] = lost_hours[g] + (lost * job_count[j] / HOUR)
    return jobs, failed, cross, in_share, lost_hours


def _capacity_seconds(
    data: RunData, limits: list[int], lends: list[bool], unowned: list[int], start: float,
    end: float,
) -> tuple[list[float], list[float], list[float]]:
    """Per (share, unit) cell, flat: instance-seconds used within the share's own limit,
    above it (borrowed) and lent, from the usage log over ``start``..``end``.

    Lent capacity is attributed without scanning every lender at every change: at each moment
    a unit's borrowing is spread over its idle lendable capacity at the rate
    ``borrowed / (unowned + sum of lenders' idle allocation)``; a lender's lent seconds are its
    idle amount times the integral of that rate while its idle amount stays constant, and the
    integral is kept as a running total per unit. Units share nothing, so each unit's changes
    are taken in one pass of their own (:func:`_unit_seconds`)."""
    n_units = len(data.unit_names)
    n_groups = len(data.share_names)
    if len(data.log_time) != len(data.log_job):
        raise ValueError("a run's usage log columns differ in length")
    own = [0.0] * (n_groups * n_units)
    over = [0.0] * (n_groups * n_units)
    lent = [0.0] * (n_groups * n_units)
    for k in range(n_units):
        cells = range(k, n_groups * n_units, n_units)
        own_k, over_k, lent_k = _unit_seconds(
            data, k if n_units > 1 else -1, [limits[c] for c in cells], lends, unowned[k],
            start, end,
        )
        for g, cell in enumerate(cells):
            own[cell] = own_k[g]
            over[cell] = over_k[g]
            lent[cell] = lent_k[g]
    return own, over, lent


def _unit_seconds(
    data: RunData, unit: int, unit_limits: list[int], lends: list[bool], spare: int,
    start: float, end: float,
) -> tuple[list[float], list[float], list[float]]:
    """Per share, instance-seconds of ``unit`` (-1: the run's only unit) used within the
    share's own limit, above it and lent, over ``start``..``end``; ``spare`` is the unowned
    capacity borrowers may use.

    One pass over the whole usage log, passing over other units' changes: each change's
    share, unit and signed count are read through its job (j for a start, ~j for an end: see
    RunData.log_job), from the run's columns as they are. The unit's running totals are
    locals (compiled, machine floats), so nothing is copied or split per unit first."""
    job_unit = _listed(data.job_unit)
    job_share = _listed(data.job_share)
    job_count = _listed(data.job_count)
    n_groups = len(unit_limits)
    use = [0] * n_groups
    last = [start] * n_groups
    own_k = [0.0] * n_groups
    over_k = [0.0] * n_groups
    lent_k = [0.0] * n_groups
    mark = [0.0] * n_groups
    idle = sum(unit_limits[g] for g in range(n_groups) if lends[g])
    borrowed = 0
    rate_total = 0.0
    rate_time = start
    rate = 0.0
    for t, logged in zip(_listed(data.log_time), _listed(data.log_job)):  # noqa: B905 (caller)
        j = logged if logged >= 0 else ~logged
        if unit >= 0 and job_unit[j] != unit:
            continue
        g = job_share[j]
        delta = job_count[j] if logged >= 0 else -job_count[j]
        total = rate_total + (t - rate_time) * rate
        rate_total = total
        rate_time = t
        lim = unit_limits[g]
        before = use[g]
        if before:
            dt = t - last[g]
            if before > lim:
                own_k[g] = own_k[g] + (dt * lim)
                over_k[g] = over_k[g] + (dt * (before - lim))
            else:
                own_k[g] = own_k[g] + (dt * before)
        last[g] = t
        after = before + delta
        use[g] = after
        # (Conditional expressions, not max() and min(): a call each would cost a third
        # of the loop.)
        if after > lim:
            borrowed += after - lim - (before - lim if before > lim else 0)
        elif before > lim:
            borrowed -= before - lim
        if lends[g]:
            if before < lim:
                lent_k[g] = lent_k[g] + ((lim - before) * (total - mark[g]))
                idle += (lim - after if after < lim else 0) - (lim - before)
            elif after < lim:
                idle += lim - after
            mark[g] = total
        pool = spare + idle
        if pool > 0:
            rate = borrowed / pool
            if rate > 1.0:
                rate = 1.0
        else:
            rate = 0.0
    rate_total += (end - rate_time) * rate
    for g in range(n_groups):
        # What each share held from its last change to the end.
        u = use[g]
        lim = unit_limits[g]
        dt = end - last[g]
        if u:
            own_k[g] = own_k[g] + (dt * (u if u < lim else lim))
            if u > lim:
                over_k[g] = over_k[g] + (dt * (u - lim))
        if lends[g] and u < lim:
            lent_k[g] = lent_k[g] + ((lim - u) * (rate_total - mark[g]))
    return own_k, over_k, lent_k


def _listed(values: Sequence[_Number]) -> list[_Number]:
    """A run's column as a list: a replay's own, or a compacted run's array copied (the
    compiled figures index a list with a machine integer and read its items without boxing;
    anything else is indexed through a boxed integer, an allocation per read)."""
    return values if isinstance(values, list) else list(values)


def beyond_budget(data: RunData, budgets: Sequence[int | None]) -> list[int]:
    """Per share (index), its jobs preempted more often than ``budgets[share]`` (a declared
    interruption budget; None: no limit, nothing counted), whether they failed for it or
    were requeued (a job without ``preemption_retries`` is requeued after every
    preemption)."""
    counts = [0] * len(data.share_names)
    if all(budget is None for budget in budgets):
        return counts
    job_share = data.job_share
    for j, raw in enumerate(data.attempts):
        # One attempt that was not preempted (most jobs) preempts nothing: skipped at once.
        if raw is None or (isinstance(raw, tuple) and raw[2] != ENDED_PREEMPTED):
            continue
        g = job_share[j]
        budget = budgets[g] if g < len(budgets) else None
        if budget is None:
            continue
        preempted = sum(1 for attempt in ((raw,) if isinstance(raw, tuple) else raw)
                        if attempt[2] == ENDED_PREEMPTED)
        if preempted > budget:
            counts[g] = counts[g] + 1
    return counts


def percentile(ordered: list[float], fraction: float) -> float | None:
    """Linear interpolation between the closest ranks of an ascending list."""
    if not ordered:
        return None
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
