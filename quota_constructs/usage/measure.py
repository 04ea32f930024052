"""What each share used, borrowed, lent and lost over a window: the figures of ``usage.json``.

Definitions (instance-hours; ``usage(τ)`` is the instances of a share's attempts of one type
running at τ, each attempt clipped to the window; ``own`` the share's own limit of the type)::

    used         = ∫ usage                    own_used = ∫ min(usage, own)
    borrowed     = ∫ max(0, usage - own)      idle_own = ∫ max(0, own - usage)
    lent         = ∫ what the one lending rule (model/lending.py) attributes to the share
    preempted    = instance-hours of its attempts that ended by preemption, within the window
    queue idle   = capacity × hours - the shares' used
    cost         = used × the type's price per instance-hour (None without a price)
    decayed used = ∫ usage(τ) · 0.5^((end - τ) / half-life), over every type
    decayed own  = (the share's own limits over every type, added) · ∫ 0.5^((end - τ) / half-life)
    ratio        = decayed used / decayed own (None when the share owns nothing)

Per job, over the jobs submitted in the window (cancelled and never started included):
``jobs``; ``preemptions`` (AWS's count of preempted attempts); ``budget_failures``
(:func:`quota_constructs.model.budget_failure.is_budget_failure`); waits, submission to
first start over those that started, their 50th and 95th percentiles by linear interpolation
between the closest ranks (the simulator's method, Hyndman and Fan's type 7, numpy's default).

How it is computed: one sweep per instance type over the attempts' starts and stops, sorted
(not a time grid): between two change points every share's use is constant, so each integral
is exact. Each change costs O(1): a share's own integrals are closed when its own use changes,
and the lending rule is integrated by :class:`quota_constructs.model.LentOverTime`.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..model import (
    BorrowingRules,
    CapacityLimit,
    LendingParties,
    LentOverTime,
    QuotaShareSpec,
)
from ..model.budget_failure import is_budget_failure
from ..simulation.figures import percentile
from ..wire.job_record import PREEMPTED
from .jobs import JobTable, UsageInputError

HOUR_MS = 3_600_000.0
DEFAULT_HALF_LIFE_HOURS = 7 * 24.0
"""Slurm's default ``PriorityDecayHalfLife`` (7 days)."""

# One event is one int, so a million attempts sort as plain integers:
# (milliseconds from the window's start) << 33 | share << 21 | instances << 1 | is_start.
_SHARE_BITS, _COUNT_BITS = 12, 20
_SHARE_SHIFT, _TIME_SHIFT = 1 + _COUNT_BITS, 1 + _COUNT_BITS + _SHARE_BITS
_COUNT_MASK, _SHARE_MASK = (1 << _COUNT_BITS) - 1, (1 << _SHARE_BITS) - 1


@dataclass(frozen=True)
class Window:
    """The measured span, epoch milliseconds; ``closed``: a job submitted at ``end_ms`` is in
    it (the default end, the last attempt's end, belongs to the window; an ``--until`` does
    not, so consecutive windows never count a job twice)."""

    start_ms: int
    end_ms: int
    closed: bool = True

    @property
    def hours(self) -> float:
        return (self.end_ms - self.start_ms) / HOUR_MS

    def holds_submission(self, created_ms: int) -> bool:
        if self.closed:
            return self.start_ms <= created_ms <= self.end_ms
        return self.start_ms <= created_ms < self.end_ms


def default_window(table: JobTable, *, since_ms: int | None = None,
                   until_ms: int | None = None) -> Window:
    """From the first submission to the last attempt's end (an attempt still running: the
    moment its job was read), unless ``since_ms``/``until_ms`` narrow it. Without any
    attempt, the end is the moment the jobs were read."""
    start = since_ms if since_ms is not None else min(table.created_ms, default=None)
    end = until_ms
    if end is None:
        stops = [seen if stop is None else stop
                 for runs, seen in zip(table.runs, table.seen_ms, strict=True)
                 for _, stop, _ in runs]
        end = max(stops) if stops else table.moment_ms
    if start is None or end is None:
        raise UsageInputError("nothing to measure: the history holds no job; give --since "
                              "and --until to report an empty window")
    if end < start:
        raise UsageInputError(
            f"the window is empty: it starts {_iso(start)} and ends {_iso(end)}; allowed: "
            "--since before --until (and before the last attempt's end)")
    return Window(start, end, closed=until_ms is None)


def _iso(ms: int) -> str:
    from datetime import UTC, datetime
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class TypeFigures:
    """One share's figures for one instance type (instance-hours; cost in the price's unit)."""

    own_capacity: int
    used_hours: float
    own_used_hours: float
    borrowed_hours: float
    idle_own_hours: float
    lent_hours: float
    preempted_hours: float
    cost: float | None


@dataclass(frozen=True)
class ShareFigures:
    share: str
    declared: bool
    strategy: str | None
    jobs: int
    wait_p50_seconds: float | None
    wait_p95_seconds: float | None
    target_wait_p95_seconds: float | None
    max_budget_failures: int | None
    preemptions: int
    unseen_preemptions: int
    """Preemptions AWS counted whose attempt's times it no longer showed: not in any hours."""
    budget_failures: int
    started_jobs: int
    instance_types: Mapping[str, TypeFigures]


@dataclass(frozen=True)
class QueueFigures:
    capacity: int
    used_hours: float
    idle_hours: float


@dataclass(frozen=True)
class FairShare:
    decayed_used_hours: float
    decayed_own_hours: float
    ratio: float | None


@dataclass(frozen=True)
class Timeline:
    """One share's use of one type as a step function: ``usage[i]`` instances from
    ``times[i]`` (milliseconds from the window's start) to the next change."""

    own: int
    times: Sequence[int]
    usage: Sequence[int]


@dataclass(frozen=True)
class UsageResult:
    window: Window
    half_life_hours: float
    instance_types: tuple[str, ...]
    shares: Mapping[str, ShareFigures]
    queue: Mapping[str, QueueFigures]
    fair_share: Mapping[str, FairShare]
    timelines: Mapping[tuple[str, str], Timeline]
    """Per (share, type) that ran in the window."""
    priced: bool
    unowned_capacity_borrowable: bool = True
    notes: tuple[str, ...] = ()


@dataclass
class _Cell:
    """One share's running integrals for one type, in instance-milliseconds."""

    share: str
    own: int
    used: float = 0.0
    own_used: float = 0.0
    decayed: float = 0.0
    """∫ usage · e^(k(τ - end)) dτ; times 1/k it is the decayed use."""
    preempted: float = 0.0
    lent: float = 0.0
    times: array[int] = field(default_factory=lambda: array("q"))
    usage: array[int] = field(default_factory=lambda: array("q"))


def measure(
    table: JobTable,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    window: Window,
    half_life_hours: float = DEFAULT_HALF_LIFE_HOURS,
    prices: Mapping[str, float] | None = None,
    unowned_capacity_borrowable: bool = True,
) -> UsageResult:
    """Every figure of the module docs for ``table``'s jobs over ``window``."""
    if not half_life_hours > 0 or not math.isfinite(half_life_hours):
        raise UsageInputError(f"--half-life got {half_life_hours} hours; allowed: a duration "
                              "> 0 such as 24h or 7d")
    environment = {limit.capacity_unit: limit.max_capacity for limit in capacity_limits}
    declared = {spec.name: spec for spec in shares}
    names = [spec.name for spec in shares]
    names += sorted({share for share in table.shares if share not in declared})
    types = list(environment)
    types += sorted({unit for unit, runs in zip(table.types, table.runs, strict=True)
                     if runs and unit and unit not in environment})
    rules = BorrowingRules.of(environment=environment, shares=shares,
                              unowned_capacity_borrowable=unowned_capacity_borrowable)
    cells = {(unit, name): _Cell(name, declared[name].limit_of(unit) if name in declared else 0)
             for unit in types for name in names}
    share_of = {name: number for number, name in enumerate(names)}
    decay = math.log(2) / (half_life_hours * HOUR_MS)
    span = window.end_ms - window.start_ms
    for unit in types:
        parties = _parties(LendingParties.of_rules(rules, unit), names)
        _sweep(unit, table, window, [cells[unit, name] for name in names], share_of, parties,
               decay, span)
    tallies = _job_counts(table, window, names)
    notes = []
    skipped = sum(1 for unit, runs in zip(table.types, table.runs, strict=True)
                  if runs and not unit)
    if skipped:
        notes.append(f"{skipped} jobs name no instance type (neither capacityUsage nor the "
                     "SageMaker request): their attempts are counted nowhere")
    return UsageResult(
        window=window, half_life_hours=half_life_hours, instance_types=tuple(types),
        shares={name: _share_figures(name, declared.get(name), tallies[name], window, types,
                                     cells, prices) for name in names},
        queue=_queue_figures(types, names, environment, cells, window),
        fair_share=_fair_share(names, declared, types, cells, decay, span),
        timelines={(name, unit): Timeline(cell.own, cell.times, cell.usage)
                   for (unit, name), cell in cells.items() if cell.times},
        priced=prices is not None, unowned_capacity_borrowable=unowned_capacity_borrowable,
        notes=tuple(notes),
    )


def _parties(parties: LendingParties, names: Sequence[str]) -> LendingParties:
    """The rule's parties of a type, with the shares the declaration does not name (a deleted
    share's jobs) as shares owning none of it: all they ran was borrowed."""
    own = {name: parties.own.get(name, 0) for name in names}
    return LendingParties(own, parties.lenders, parties.unowned_borrowable)


def _events(unit: str, table: JobTable, window: Window, share_of: Mapping[str, int],
            cells: Sequence[_Cell]) -> list[int]:
    """Every start and stop of the type's attempts within the window, as packed ints (and the
    preempted instance-time of each share on the way)."""
    start, end = window.start_ms, window.end_ms
    events: list[int] = []
    add = events.append
    for job, runs in enumerate(table.runs):
        if not runs or table.types[job] != unit:
            continue
        share = share_of[table.shares[job]]
        count = table.counts[job]
        if count > _COUNT_MASK or share > _SHARE_MASK:
            raise UsageInputError(f"job {table.job_ids[job]!r}: {count} instances of "
                                  f"{len(share_of)} shares; allowed: at most {_COUNT_MASK} "
                                  f"instances and {_SHARE_MASK + 1} shares")
        seen = table.seen_ms[job]
        tag = share << _SHARE_SHIFT | count << 1
        for began, stop, ended in runs:
            first = began if began > start else start
            last = seen if stop is None else stop
            if last > end:
                last = end
            if last <= first:
                continue
            add((first - start) << _TIME_SHIFT | tag | 1)
            add((last - start) << _TIME_SHIFT | tag)
            if ended == PREEMPTED:
                cells[share].preempted += count * (last - first)
    events.sort()
    return events


def _sweep(unit: str, table: JobTable, window: Window, cells: Sequence[_Cell],
           share_of: Mapping[str, int], parties: LendingParties, decay: float,
           span: int) -> None:
    """Integrate every share's use of ``unit`` over the window (module docs)."""
    events = _events(unit, table, window, share_of, cells)
    count = len(cells)
    usage = [0] * count
    last = [0] * count
    own = [cell.own for cell in cells]
    used = [0.0] * count
    own_used = [0.0] * count
    decayed = [0.0] * count
    names = [cell.share for cell in cells]
    lending = LentOverTime(parties, 0.0) if parties.lenders else None
    times = [cell.times.append for cell in cells]
    values = [cell.usage.append for cell in cells]
    exp, expm1 = math.exp, math.expm1
    for key in events:
        t = key >> _TIME_SHIFT
        share = (key >> _SHARE_SHIFT) & _SHARE_MASK
        held = usage[share]
        if held:
            dt = t - last[share]
            used[share] += held * dt
            limit = own[share]
            own_used[share] += (held if held < limit else limit) * dt
            # ∫ e^(k(τ - end)) over [t - dt, t], times k: exact for any half-life.
            decayed[share] -= held * exp(decay * (t - span)) * expm1(-decay * dt)
        last[share] = t
        delta = (key >> 1) & _COUNT_MASK
        held = held + delta if key & 1 else held - delta
        usage[share] = held
        if lending is not None:
            lending.change(names[share], held, t)
        times[share](t)
        values[share](held)
    lent = lending.lent(float(span)) if lending is not None else {}
    for number, cell in enumerate(cells):
        cell.used, cell.own_used = used[number], own_used[number]
        cell.decayed = decayed[number] / decay
        cell.lent = lent.get(cell.share, 0.0)


@dataclass
class _JobCounts:
    """One share's per-job figures over the jobs submitted in the window."""

    jobs: int = 0
    preemptions: int = 0
    unseen: int = 0
    failures: int = 0
    waits: list[float] = field(default_factory=list)


def _job_counts(table: JobTable, window: Window, names: Sequence[str]
                ) -> dict[str, _JobCounts]:
    counts = {name: _JobCounts() for name in names}
    for job, share in enumerate(table.shares):
        created = table.created_ms[job]
        if not window.holds_submission(created):
            continue
        tally = counts[share]
        tally.jobs += 1
        preempted = table.preempted[job]
        tally.preemptions += preempted
        tally.unseen += table.unseen(job)
        tally.failures += is_budget_failure(table.statuses[job], preempted, table.retries[job])
        runs = table.runs[job]
        if runs:
            tally.waits.append((runs[0][0] - created) / 1000.0)
    return counts


def _share_figures(name: str, spec: QuotaShareSpec | None, tally: _JobCounts, window: Window,
                   types: Sequence[str], cells: Mapping[tuple[str, str], _Cell],
                   prices: Mapping[str, float] | None) -> ShareFigures:
    waits = sorted(tally.waits)
    agreement = spec.agreement if spec is not None else None
    hours = window.hours
    figures = {}
    for unit in types:
        cell = cells[unit, name]
        used = cell.used / HOUR_MS
        own_used = cell.own_used / HOUR_MS
        price = None if prices is None else prices.get(unit)
        figures[unit] = TypeFigures(
            own_capacity=cell.own, used_hours=used, own_used_hours=own_used,
            borrowed_hours=max(0.0, used - own_used),
            idle_own_hours=max(0.0, cell.own * hours - own_used),
            lent_hours=cell.lent / HOUR_MS, preempted_hours=cell.preempted / HOUR_MS,
            cost=None if price is None else used * price,
        )
    return ShareFigures(
        share=name, declared=spec is not None,
        strategy=spec.strategy.value if spec is not None else None, jobs=tally.jobs,
        wait_p50_seconds=percentile(waits, 0.5), wait_p95_seconds=percentile(waits, 0.95),
        target_wait_p95_seconds=agreement.target_wait_p95_seconds if agreement else None,
        max_budget_failures=agreement.max_budget_failures if agreement else None,
        preemptions=tally.preemptions, unseen_preemptions=tally.unseen,
        budget_failures=tally.failures, started_jobs=len(waits), instance_types=figures,
    )


def _queue_figures(types: Sequence[str], names: Sequence[str], environment: Mapping[str, int],
                   cells: Mapping[tuple[str, str], _Cell], window: Window
                   ) -> dict[str, QueueFigures]:
    result = {}
    for unit in types:
        used = sum(cells[unit, name].used for name in names) / HOUR_MS
        capacity = environment.get(unit, 0)
        result[unit] = QueueFigures(capacity, used, capacity * window.hours - used)
    return result


def _fair_share(names: Sequence[str], declared: Mapping[str, QuotaShareSpec],
                types: Sequence[str], cells: Mapping[tuple[str, str], _Cell], decay: float,
                span: int) -> dict[str, FairShare]:
    # ∫ over the window of 0.5^((end - τ)/half-life) dτ, in hours.
    weight_hours = -math.expm1(-decay * span) / decay / HOUR_MS
    result = {}
    for name in names:
        used = sum(cells[unit, name].decayed for unit in types) / HOUR_MS
        own = sum(limit.max_capacity for limit in declared[name].capacity_limits
                  ) if name in declared else 0
        decayed_own = own * weight_hours
        result[name] = FairShare(used, decayed_own, used / decayed_own if decayed_own > 0 else None)
    return result
