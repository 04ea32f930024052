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

How it is computed: what an attempt adds on its own (used, decayed and preempted
instance-time) is added once per attempt; the rest in one sweep per instance type over the
attempts' starts and stops, sorted (not a time grid): between two change points every share's
use is constant, so each integral is exact. Each change costs O(1): a share's own integrals are
closed when its own use changes, and the lending rule is integrated by
:class:`quota_constructs.model.LentOverTime`.
"""

from __future__ import annotations

import math
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
from ..wire.utc_time import iso_utc_ms
from .jobs import JobTable, UsageInputError, cyclic_gc_paused

HOUR_MS = 3_600_000.0
DEFAULT_HALF_LIFE_HOURS = 7 * 24.0
"""Slurm's default ``PriorityDecayHalfLife`` (7 days)."""

# An event is its time (a float: milliseconds from the window's start, exact below 2^53, and
# floats sort fastest) and a small int, share << 21 | instances << 1 | is_start (below 2^30, so
# every operation on it stays on CPython's one-digit fast path).
_SHARE_BITS, _COUNT_BITS = 8, 20
_SHARE_SHIFT = 1 + _COUNT_BITS
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
            f"the window is empty: it starts {iso_utc_ms(start)} and ends {iso_utc_ms(end)}; "
            "allowed: --since before --until (and before the last attempt's end)")
    return Window(start, end, closed=until_ms is None)


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
    """One share's use of one type, averaged over equal intervals of the window (the area
    under each average is the instance-time exactly): what the report's charts draw."""

    own: int
    within: Sequence[float]
    """Per interval, the average instances held within the share's own limit."""
    above: Sequence[float]
    """Per interval, the average instances held above it (borrowed)."""


@dataclass(frozen=True)
class UsageResult:
    window: Window
    half_life_hours: float
    instance_types: tuple[str, ...]
    shares: Mapping[str, ShareFigures]
    queue: Mapping[str, QueueFigures]
    fair_share: Mapping[str, FairShare]
    timelines: Mapping[tuple[str, str], Timeline]
    """Per (share, type) that ran in the window, over :attr:`buckets` equal intervals."""
    buckets: int
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
    """k · ∫ usage · e^(k(τ - end)) dτ; over k, the decayed use."""
    preempted: float = 0.0
    lent: float = 0.0
    within: list[float] = field(default_factory=list)
    """Per interval of the charts, instance-milliseconds held within the own limit."""
    above: list[float] = field(default_factory=list)


def measure(
    table: JobTable,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    window: Window,
    half_life_hours: float = DEFAULT_HALF_LIFE_HOURS,
    prices: Mapping[str, float] | None = None,
    unowned_capacity_borrowable: bool = True,
    buckets: int = 300,
) -> UsageResult:
    """Every figure of the module docs for ``table``'s jobs over ``window``, and each share's
    use of each type averaged over ``buckets`` equal intervals (for charts)."""
    with cyclic_gc_paused():
        return _measure(table, capacity_limits=capacity_limits, shares=shares, window=window,
                        half_life_hours=half_life_hours, prices=prices,
                        unowned_capacity_borrowable=unowned_capacity_borrowable,
                        buckets=buckets)


def _measure(table: JobTable, *, capacity_limits: Sequence[CapacityLimit],
             shares: Sequence[QuotaShareSpec], window: Window, half_life_hours: float,
             prices: Mapping[str, float] | None, unowned_capacity_borrowable: bool,
             buckets: int) -> UsageResult:
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
    by_type = {unit: [cells[unit, name] for name in names] for unit in types}
    for unit, events in _events(table, window, share_of, by_type, decay).items():
        parties = _parties(LendingParties.of_rules(rules, unit), names)
        _sweep(events, window, by_type[unit], parties, buckets)
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
        timelines={(name, unit): _timeline(cell, window, buckets)
                   for (unit, name), cell in cells.items() if cell.used > 0},
        buckets=buckets,
        priced=prices is not None, unowned_capacity_borrowable=unowned_capacity_borrowable,
        notes=tuple(notes),
    )


def _parties(parties: LendingParties, names: Sequence[str]) -> LendingParties:
    """The rule's parties of a type, with the shares the declaration does not name (a deleted
    share's jobs) as shares owning none of it: all they ran was borrowed."""
    own = {name: parties.own.get(name, 0) for name in names}
    return LendingParties(own, parties.lenders, parties.unowned_borrowable)


Events = tuple[list[float], list[int], list[int]]
"""Times, codes, and the order that sorts them by time."""


def _events(table: JobTable, window: Window, share_of: Mapping[str, int],
            cells: Mapping[str, Sequence[_Cell]], decay: float) -> dict[str, Events]:
    """Per instance type, every start and stop of its attempts within the window, in time
    order. On the way, what each attempt adds on its own: its instance-time (used), its
    decayed instance-time and, when it was preempted, its preempted instance-time."""
    start, end = window.start_ms, window.end_ms
    span = end - start
    exp, expm1 = math.exp, math.expm1
    times: dict[str, list[float]] = {unit: [] for unit in cells}
    codes: dict[str, list[int]] = {unit: [] for unit in cells}
    for job, runs in enumerate(table.runs):
        if not runs:
            continue
        unit = table.types[job]
        at = times.get(unit)
        if at is None:
            continue  # no instance type: counted nowhere (a note says how many)
        coded = codes[unit]
        share = share_of[table.shares[job]]
        count = table.counts[job]
        if count > _COUNT_MASK or share > _SHARE_MASK:
            raise UsageInputError(f"job {table.job_ids[job]!r}: {count} instances of "
                                  f"{len(share_of)} shares; allowed: at most {_COUNT_MASK} "
                                  f"instances and {_SHARE_MASK + 1} shares")
        seen = table.seen_ms[job]
        code = share << _SHARE_SHIFT | count << 1
        cell = cells[unit][share]
        for began, stop, ended in runs:
            first = (began if began > start else start) - start
            last = (seen if stop is None else stop) - start
            if last > span:
                last = span
            if last <= first:
                continue
            at += (float(first), float(last))
            coded += (code | 1, code)
            cell.used += count * (last - first)
            # k ∫ e^(k(τ - end)) over the attempt: e^(k(last - end)) - e^(k(first - end)),
            # through expm1 when the two are close (no digits lost), as written when not
            # (no overflow however short the half-life).
            grown = decay * (last - first)
            if grown < 1.0:
                cell.decayed += count * exp(decay * (first - span)) * expm1(grown)
            else:
                cell.decayed += count * (exp(decay * (last - span)) - exp(decay * (first - span)))
            if ended == PREEMPTED:
                cell.preempted += count * (last - first)
    return {unit: (at, codes[unit], sorted(range(len(at)), key=at.__getitem__))
            for unit, at in times.items()}


def _sweep(events: Events, window: Window, cells: Sequence[_Cell],
           parties: LendingParties, buckets: int) -> None:
    """Integrate every share's use of one type over the window (module docs) from its
    ``events``."""
    span = window.end_ms - window.start_ms
    count = len(cells)
    usage = [0] * count
    last = [0.0] * count
    own = [cell.own for cell in cells]
    own_used = [0.0] * count
    within = [[0.0] * buckets for _ in cells]
    above = [[0.0] * buckets for _ in cells]
    per_bucket = buckets / span if span > 0 else 0.0
    # The changes of every share's use, in order, for the lending rule (when anyone lends).
    lends = bool(parties.lenders)
    times: list[float] = []
    positions: list[int] = []
    levels: list[int] = []
    event_times, event_codes, order = events
    for event in order:
        t = event_times[event]
        key = event_codes[event]
        share = key >> _SHARE_SHIFT
        held = usage[share]
        if held:
            began = last[share]
            dt = t - began
            limit = own[share]
            inside = held if held < limit else limit
            own_used[share] += inside * dt
            first, final = int(began * per_bucket), int(t * per_bucket)
            if final >= buckets:
                final = buckets - 1  # the window's end closes the last interval
            if first == final:
                within[share][first] += inside * dt
                if held > limit:
                    above[share][first] += (held - limit) * dt
            else:
                _spread(within[share], above[share], inside, held - inside, began, t,
                        span / buckets, buckets)
        last[share] = t
        delta = (key >> 1) & _COUNT_MASK
        held = held + delta if key & 1 else held - delta
        usage[share] = held
        if lends:
            times.append(t)
            positions.append(share)
            levels.append(held)
    lent: dict[str, float] = {}
    if lends:
        lending = LentOverTime(parties, 0.0, [cell.share for cell in cells])
        lending.replay(times, positions, levels)
        lent = lending.lent(float(span))
    for number, cell in enumerate(cells):
        cell.own_used = own_used[number]
        cell.lent = lent.get(cell.share, 0.0)
        cell.within, cell.above = within[number], above[number]


def _spread(within: list[float], above: list[float], inside: int, outside: int, began: float,
            ended: float, width: float, buckets: int) -> None:
    """Instance-time held from ``began`` to ``ended`` (ms from the window's start), added to
    the intervals of ``width`` it spans."""
    bucket = min(int(began / width), buckets - 1)
    at: float = began
    while at < ended:
        edge = ended if bucket == buckets - 1 else min(ended, (bucket + 1) * width)
        within[bucket] += inside * (edge - at)
        if outside:
            above[bucket] += outside * (edge - at)
        at, bucket = edge, bucket + 1


def _timeline(cell: _Cell, window: Window, buckets: int) -> Timeline:
    width = (window.end_ms - window.start_ms) / buckets
    return Timeline(cell.own, [area / width for area in cell.within],
                    [area / width for area in cell.above])


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
    jobs = dict.fromkeys(names, 0)
    waits: dict[str, list[float]] = {name: counts[name].waits for name in names}
    holds = window.holds_submission
    columns = zip(table.shares, table.created_ms, table.runs, table.preempted, strict=True)
    for job, (share, created, runs, preempted) in enumerate(columns):
        if not holds(created):
            continue
        jobs[share] += 1
        if runs:
            waits[share].append((runs[0][0] - created) / 1000.0)
        if preempted:
            tally = counts[share]
            tally.preemptions += preempted
            tally.unseen += table.unseen(job)
            tally.failures += is_budget_failure(table.statuses[job], preempted,
                                                table.retries[job])
    for name, number in jobs.items():
        counts[name].jobs = number
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
        used = sum(cells[unit, name].decayed for unit in types) / decay / HOUR_MS
        own = sum(limit.max_capacity for limit in declared[name].capacity_limits
                  ) if name in declared else 0
        decayed_own = own * weight_hours
        result[name] = FairShare(used, decayed_own, used / decayed_own if decayed_own > 0 else None)
    return result
