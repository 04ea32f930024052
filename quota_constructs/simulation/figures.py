"""Per-share figures from a run's usage log and job outcomes, in one pass over each.

Lent capacity is attributed without scanning every lender at every change: at each moment a
unit's borrowing is spread over its idle lendable capacity at the rate
``ratio = borrowed / (unowned + sum of lenders' idle allocation)``; a lender's lent
capacity-hours are then its idle amount times the integral of that rate while its idle amount
stays constant, and the integral is kept as a running total per unit.
"""

from __future__ import annotations

from collections.abc import Sequence

from .problem import Problem
from .results import CROSS_SHARE, ENDED_PREEMPTED, IN_SHARE, RunData, ShareFigures

HOUR = 3600.0


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

    n_cells = n_groups * n_units
    use = [0] * n_cells
    last = [start] * n_cells
    own = [0.0] * n_cells
    over = [0.0] * n_cells
    lent = [0.0] * n_cells
    rate_mark = [0.0] * n_cells
    rate_total = [0.0] * n_units
    rate_time = [start] * n_units
    rate = [0.0] * n_units
    borrowed = [0] * n_units
    idle = [
        sum(limits[g * n_units + k] for g in range(n_groups) if lends[g]) for k in range(n_units)
    ]

    def advance(cell: int, g: int, k: int, t: float) -> None:
        u = use[cell]
        lim = limits[cell]
        dt = t - last[cell]
        if u:
            own[cell] += dt * (u if u < lim else lim)
            if u > lim:
                over[cell] += dt * (u - lim)
        if lends[g]:
            if u < lim:
                lent[cell] += (lim - u) * (rate_total[k] - rate_mark[cell])
            rate_mark[cell] = rate_total[k]
        last[cell] = t

    log_share, log_unit, log_delta = data.log_share, data.log_unit, data.log_delta
    for i, t in enumerate(data.log_time):
        # advance() inlined: this loop runs twice per attempt.
        g = log_share[i]
        k = log_unit[i]
        total = rate_total[k] + (t - rate_time[k]) * rate[k]
        rate_total[k] = total
        rate_time[k] = t
        cell = g * n_units + k
        lim = limits[cell]
        before = use[cell]
        if before:
            dt = t - last[cell]
            if before > lim:
                own[cell] += dt * lim
                over[cell] += dt * (before - lim)
            else:
                own[cell] += dt * before
        last[cell] = t
        after = before + log_delta[i]
        use[cell] = after
        if after > lim or before > lim:
            borrowed[k] += max(0, after - lim) - max(0, before - lim)
        if lends[g]:
            if before < lim:
                lent[cell] += (lim - before) * (total - rate_mark[cell])
            rate_mark[cell] = total
            if after < lim or before < lim:
                idle[k] += max(0, lim - after) - max(0, lim - before)
        pool = unowned[k] + idle[k]
        rate[k] = min(1.0, borrowed[k] / pool) if pool > 0 else 0.0
    for k in range(n_units):
        rate_total[k] += (end - rate_time[k]) * rate[k]
        rate_time[k] = end
    for g in range(n_groups):
        for k in range(n_units):
            advance(g * n_units + k, g, k, end)

    waits: list[list[float]] = [[] for _ in range(n_groups)]
    completions: list[list[float]] = [[] for _ in range(n_groups)]
    jobs = [0] * n_groups
    failed = [0] * n_groups
    cross = [0] * n_groups
    in_share = [0] * n_groups
    lost_hours = [0.0] * n_groups
    job_share = data.job_share
    submitted = data.submitted
    finished = data.finished
    status_failed = data.status_failed
    lost = data.lost
    counts = data.job_count
    for j, raw in enumerate(data.attempts):
        g = job_share[j]
        jobs[g] += 1
        if raw is None:
            continue
        first = raw if isinstance(raw, tuple) else raw[0]
        waits[g].append(first[0] - submitted[j])
        if status_failed[j]:
            failed[g] += 1
        else:
            completions[g].append(finished[j] - submitted[j])
        if lost[j]:
            lost_hours[g] += lost[j] * counts[j] / HOUR
        for attempt in (raw,) if isinstance(raw, tuple) else raw:
            if attempt[2] == ENDED_PREEMPTED:
                if attempt[4] == CROSS_SHARE:
                    cross[g] += 1
                elif attempt[4] == IN_SHARE:
                    in_share[g] += 1

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
