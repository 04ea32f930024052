"""The report's "what this means": the declared policy against the alternatives, in sentences."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...model import CapacityLimit, QuotaShareSpec
from ..durations import human_duration
from ..results import PolicyComparison, ShareFigures, SimulationResult

SAME_WITHIN = 0.10
"""Relative differences below this read as "about the same"."""
NEGLIGIBLE_SECONDS = 60.0
"""Waits both under a minute read as "about the same"."""
MOST_SHARES = 6
"""Shares described one by one; with more, those whose p95 wait changes most."""
HEADLINE_NAMES = 3


@dataclass(frozen=True)
class Finding:
    """One sentence; ``subject`` (a share name, or a topic) is shown in bold before it."""

    subject: str
    text: str
    tone: str = "neutral"
    """"better", "worse" or "neutral": the colour of the sentence's marker."""


def human_seconds(seconds: float | None) -> str:
    """The one way durations read in the report and in recommend (``25 h 35 min``)."""
    return human_duration(seconds)


def compare(value: float | None, other: float | None) -> tuple[str, str]:
    """How ``value`` relates to ``other`` in words, and whether that is better (shorter)."""
    if value is None or other is None:
        return "not comparable", "neutral"
    if max(value, other) < NEGLIGIBLE_SECONDS:
        return "about the same (both under a minute)", "neutral"
    if other < NEGLIGIBLE_SECONDS:
        return "longer", "worse"
    ratio = value / other
    if abs(ratio - 1) < SAME_WITHIN:
        return "about the same", "neutral"
    if ratio < 0.01:
        return "over 99 % shorter", "better"
    if ratio < 1:
        return f"{(1 - ratio) * 100:.0f} % shorter", "better"
    if ratio >= 2:
        return f"{ratio:.1f}× longer", "worse"
    return f"{(ratio - 1) * 100:.0f} % longer", "worse"


def environment_utilization(
    result: SimulationResult, capacity_limits: Sequence[CapacityLimit]
) -> dict[str, float]:
    """Per instance type: busy instance-hours (borrowed use included) over capacity-hours, over
    the result's window (the same for every compared arrangement). Types are never added:
    an hour of an ml.p4d.24xlarge is not an hour of an ml.g5.xlarge."""
    return result.utilization({str(limit.unit): limit.max_capacity for limit in capacity_limits})


def percent(fraction: float) -> str:
    """Every percentage of the report the same way: one decimal."""
    return f"{fraction * 100:.1f} %"


NO_JOBS = ("The workload has no jobs: nothing was simulated, so there are no waits, "
           "preemptions or utilization to compare.")


def has_jobs(comparison: PolicyComparison) -> bool:
    """False for an empty workload (e.g. a history export's header alone)."""
    declared = comparison.declared
    return len(declared.jobs) > 0 or len(declared.blocked) > 0


def findings(
    comparison: PolicyComparison,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
) -> tuple[str, list[Finding]]:
    """A one-line headline, a finding for each share whose p95 wait changes most (at most
    :data:`MOST_SHARES`; the rest in one line), then the pool and the environment."""
    if not has_jobs(comparison):
        return NO_JOBS, []
    declared = comparison.declared.shares
    hard = comparison.hard_partition.shares
    pool = comparison.shared_pool.shares
    ranked: list[tuple[float, Finding]] = []
    better: list[str] = []
    worse: list[str] = []
    same: list[str] = []
    for spec in shares:
        mine = declared.get(spec.name)
        if mine is None or mine.jobs == 0:
            continue
        other = hard.get(spec.name)
        theirs = other.wait_p95 if other else None
        words, tone = compare(mine.wait_p95, theirs)
        text = (
            f"({spec.strategy.value}) waits {words} at the 95th percentile than under a hard "
            f"partition: {human_seconds(mine.wait_p95)} instead of {human_seconds(theirs)}."
        )
        text += _activity(mine)
        if tone == "better":
            better.append(f"{spec.name} ({words})")
        elif tone == "worse":
            worse.append(f"{spec.name} ({words})")
        else:
            same.append(spec.name)
        ranked.append((_change(mine.wait_p95, theirs), Finding(spec.name, text, tone)))
    out: list[Finding]
    if len(ranked) <= MOST_SHARES:
        out = [finding for _, finding in ranked]
    else:
        order = sorted(range(len(ranked)), key=lambda i: -ranked[i][0])
        shown = sorted(order[:MOST_SHARES])
        out = [ranked[i][1] for i in shown]
        rest = [ranked[i][1].subject for i in sorted(order[MOST_SHARES:])]
        out.append(Finding(
            f"{len(rest)} other shares",
            f"({', '.join(rest)}) change less; their figures are in the charts and tables below.",
        ))
    out.extend(_pool_findings(shares, declared, pool))
    busy = {
        name: environment_utilization(result, capacity_limits)
        for name, result in (
            ("declared", comparison.declared),
            ("hard partition", comparison.hard_partition),
            ("shared pool", comparison.shared_pool),
        )
    }
    out.append(Finding(
        "Utilization",
        "per instance type, busy instance-hours (borrowed use included) over capacity-hours, "
        "each arrangement over the same window: "
        + "; ".join(
            f"{limit.unit}: " + ", ".join(f"{name} {percent(values[str(limit.unit)])}"
                                         for name, values in busy.items())
            for limit in capacity_limits
        ) + ".",
    ))
    blocked = comparison.declared.blocked
    if blocked:
        by_share = {name: f.blocked_jobs for name, f in comparison.declared.shares.items()
                    if f.blocked_jobs}
        out.append(Finding(
            "Blocked",
            f"{len(blocked)} job(s) can never run under the declaration and stayed RUNNABLE, "
            "as in AWS (" + ", ".join(f"{name}: {n}" for name, n in by_share.items())
            + "); the figures leave them out.",
            "worse",
        ))
    for name, result in comparison.alternatives.items():
        out.append(_alternative_finding(name, shares, declared, result))
    stranded = len(comparison.hard_partition.not_runnable)
    if stranded:
        out.append(Finding(
            "Hard partition",
            f"could never run {stranded} job(s): larger than their share's own limit, they "
            "only run by borrowing.",
            "neutral",
        ))
    return _headline(better, worse), out


def _pool_findings(
    shares: Sequence[QuotaShareSpec],
    declared: Mapping[str, ShareFigures],
    pool: Mapping[str, ShareFigures],
) -> list[Finding]:
    parts: list[tuple[float, str]] = []
    shorter = longer = 0
    for spec in shares:
        mine, alt = declared.get(spec.name), pool.get(spec.name)
        if mine is None or alt is None or mine.jobs == 0:
            continue
        words, tone = compare(alt.wait_p95, mine.wait_p95)
        shorter += tone == "better"
        longer += tone == "worse"
        parts.append((_change(alt.wait_p95, mine.wait_p95),
                      f"{spec.name} {human_seconds(alt.wait_p95)} ({words})"))
    if not parts:
        return []
    if len(parts) <= MOST_SHARES:
        listed = "; ".join(text for _, text in parts)
        text = f"instead of the shares would give these p95 waits (against the declared " \
            f"policy): {listed}."
    else:
        largest = "; ".join(text for _, text in sorted(parts, key=lambda p: -p[0])[:3])
        text = (
            f"instead of the shares would shorten the p95 wait of {shorter} shares and lengthen "
            f"it for {longer} (against the declared policy); largest changes: {largest}."
        )
    return [Finding("One shared FIFO pool", text)]


def _alternative_finding(
    name: str,
    shares: Sequence[QuotaShareSpec],
    declared: Mapping[str, ShareFigures],
    result: SimulationResult,
) -> Finding:
    """A compared declaration's p95 waits against the declared policy, and the jobs it can
    never run: its charts leave those out, so a share whose jobs it blocks must not look
    well served."""
    parts = []
    for spec in shares:
        mine, alt = declared.get(spec.name), result.shares.get(spec.name)
        if mine is None or alt is None or mine.jobs == 0:
            continue
        words, _ = compare(alt.wait_p95, mine.wait_p95)
        parts.append(f"{spec.name} {human_seconds(alt.wait_p95)} ({words})")
    text = ("(compared declaration) would give these p95 waits (against the declared policy): "
            + "; ".join(parts) + ".")
    blocked = {share: f.blocked_jobs for share, f in result.shares.items() if f.blocked_jobs}
    if blocked:
        text += (f" It can never run {sum(blocked.values())} job(s) ("
                 + ", ".join(f"{share}: {n}" for share, n in blocked.items())
                 + "), which its figures leave out.")
    return Finding(name, text, "worse" if blocked else "neutral")


def _change(value: float | None, other: float | None) -> float:
    """Size of the change from ``other`` to ``value`` (0 when negligible or not comparable)."""
    if value is None or other is None or max(value, other) < NEGLIGIBLE_SECONDS:
        return 0.0
    return abs(math.log(max(value, 1.0) / max(other, 1.0)))


def _activity(figures: ShareFigures) -> str:
    parts = []
    if figures.borrowed_capacity_hours > 0:
        parts.append(f"It borrowed {figures.borrowed_capacity_hours:,.1f} instance-hours")
    if figures.lent_capacity_hours > 0:
        verb = "and lent" if parts else "It lent"
        parts.append(f"{verb} {figures.lent_capacity_hours:,.1f} of its idle instance-hours")
    text = (" " + " ".join(parts) + ".") if parts else ""
    preemptions = figures.cross_share_preemptions + figures.in_share_preemptions
    if preemptions:
        text += (
            f" Its jobs were preempted {preemptions:,} times ({figures.cross_share_preemptions:,} "
            f"cross-share, {figures.in_share_preemptions:,} in-share), losing "
            f"{figures.lost_instance_hours:,.1f} instance-hours of work."
        )
    if figures.failed_preemption_budget:
        text += (
            f" {figures.failed_preemption_budget:,} job(s) failed after exhausting their "
            "preemption budget."
        )
    return text


def _headline(better: list[str], worse: list[str]) -> str:
    if not better and not worse:
        return "Against a hard partition, the declared policy changes no share's p95 wait much."
    parts = []
    if better:
        parts.append("shorter p95 waits than a hard partition for " + _some(better))
    if worse:
        parts.append("longer for " + _some(worse))
    text = "; ".join(parts)
    return "The declared policy gives " + text + "."



def _some(names: list[str]) -> str:
    if len(names) <= HEADLINE_NAMES:
        return ", ".join(names)
    return ", ".join(names[:HEADLINE_NAMES]) + f" and {len(names) - HEADLINE_NAMES} more shares"
