"""Per-share figures from a run's usage log and job outcomes, in one pass over each.

Lent capacity is attributed without scanning every lender at every change: at each moment a
unit's borrowing is spread over its idle lendable capacity at the rate
``ratio = borrowed / (unowned + sum of lenders' idle allocation)``; a lender's lent
capacity-hours are then its idle amount times the integral of that rate while its idle amount
stays constant, and the integral is kept as a running total per unit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import compress
from typing import Final

from .problem import Problem
from .results import (
    CROSS_SHARE,
    ENDED_PREEMPTED,
    IN_SHARE,
    RunData,
    ShareFigures,
    per_logged_change,
)

HOUR: Final = 3600.0


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
        blocked[g] += 1

    own, over, lent = _capacity_seconds(data, limits, lends, unowned, start, end)

    waits: list[list[float]] = [[] for _ in range(n_groups)]
    completions: list[list[float]] = [[] for _ in range(n_groups)]
    add_wait = [w.append for w in waits]
    add_completion = [c.append for c in completions]
    counted = Counter(data.job_share)
    jobs = [counted[g] for g in range(n_groups)]
    failed = [0] * n_groups
    cross = [0] * n_groups
    in_share = [0] * n_groups
    lost_hours = [0.0] * n_groups
    for g, raw, submitted, finished, status_failed, lost, count in zip(
        data.job_share, data.attempts, data.submitted, data.finished, data.status_failed,
        data.lost, data.job_count, strict=True,
    ):
        if raw is None:
            continue
        if type(raw) is tuple:
            add_wait[g](raw[0] - submitted)
            if raw[2] == ENDED_PREEMPTED:  # (preempted on its only attempt: it failed)
                if raw[4] == CROSS_SHARE:
                    cross[g] += 1
                elif raw[4] == IN_SHARE:
                    in_share[g] += 1
        else:
            add_wait[g](raw[0][0] - submitted)
            for attempt in raw:
                if attempt[2] == ENDED_PREEMPTED:
                    if attempt[4] == CROSS_SHARE:
                        cross[g] += 1
                    elif attempt[4] == IN_SHARE:
                        in_share[g] += 1
        if status_failed:
            failed[g] += 1
        else:
            add_completion[g](finished - submitted)
        if lost:
            lost_hours[g] += lost * count / HOUR

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
    are taken in one pass of their own, its state in locals (the same arithmetic, in the same
    order, as one pass over all of them)."""
    n_units = len(data.unit_names)
    n_groups = len(data.share_names)
    own = [0.0] * (n_groups * n_units)
    over = [0.0] * (n_groups * n_units)
    lent = [0.0] * (n_groups * n_units)
    # Each change's share and signed count are its job's, read through the log's job column
    # (j for a start, ~j for an end: see RunData.log_job) from the columns end to end.
    counts = list(data.job_count)
    share_of = list(data.job_share)
    share_of += share_of[::-1]
    delta_of = counts + [-n for n in reversed(counts)]
    units = (per_logged_change(data.log_job, data.job_unit, data.job_unit) if n_units > 1
             else [])
    for k in range(n_units):
        times: Sequence[float]
        logged: Sequence[int]
        if n_units == 1:
            times, logged = data.log_time, data.log_job
        else:
            mine = list(map(k.__eq__, units))
            times = list(compress(data.log_time, mine))
            logged = list(compress(data.log_job, mine))
        cells = range(k, n_groups * n_units, n_units)
        unit_limits = [limits[c] for c in cells]
        use = [0] * n_groups
        last = [start] * n_groups
        own_k = [0.0] * n_groups
        over_k = [0.0] * n_groups
        lent_k = [0.0] * n_groups
        mark = [0.0] * n_groups
        spare = unowned[k]
        idle = sum(unit_limits[g] for g in range(n_groups) if lends[g])
        borrowed = 0
        rate_total = 0.0
        rate_time = start
        rate = 0.0
        groups = list(map(share_of.__getitem__, logged))
        deltas = list(map(delta_of.__getitem__, logged))
        for t, g, delta in zip(times, groups, deltas, strict=True):
            total = rate_total + (t - rate_time) * rate
            rate_total = total
            rate_time = t
            lim = unit_limits[g]
            before = use[g]
            if before:
                dt = t - last[g]
                if before > lim:
                    own_k[g] += dt * lim
                    over_k[g] += dt * (before - lim)
                else:
                    own_k[g] += dt * before
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
                    lent_k[g] += (lim - before) * (total - mark[g])
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
        for g, cell in enumerate(cells):
            # What each cell held from its last change to the end.
            u = use[g]
            lim = unit_limits[g]
            dt = end - last[g]
            if u:
                own_k[g] += dt * (u if u < lim else lim)
                if u > lim:
                    over_k[g] += dt * (u - lim)
            if lends[g] and u < lim:
                lent_k[g] += (lim - u) * (rate_total - mark[g])
            own[cell] = own_k[g]
            over[cell] = over_k[g]
            lent[cell] = lent_k[g]
    return own, over, lent


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
            counts[g] += 1
    return counts


def percentile(ordered: list[float], fraction: float) -> float | None:
    """Linear interpolation between the closest ranks of an ascending list."""
    if not ordered:
        return None
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
