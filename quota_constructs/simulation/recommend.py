"""Recommend an allocation that meets every share's service targets, changing least.

    rec = recommend(capacity_limits=[...], shares=[...], jobs=[...], executor=None)
    rec.shares          # the recommended declaration (agreements kept)
    rec.meets_targets   # every target met when the (searched part of the) history is replayed
    rec.unmet           # shares whose targets it misses, with rec.reasons[share] (for a share
                        # that no allocation can satisfy: its demand alone exceeds the environment)

What is searched: each share's capacity limit per instance type it already lists (never a new
type, never below 1: AWS's ``maxCapacity >= 1``), its strategy and borrow limit. In-share
preemption and the environment stay as declared; own limits of the recommendation add up to at
most the environment (every guarantee can be honoured at once) and RESERVE limits never exceed
it (AWS rejects that). ``pins`` keep a share's strategy, its limits, or a minimum guarantee.

How the search stays cheap, and why it finds what an exhaustive search would
---------------------------------------------------------------------------
1. **Demand analysis** (cheap: each replay holds one share's jobs of one type). For every share
   with a target and every type it uses, the least *reserved* capacity with which those jobs,
   alone, meet the target is found by bisection (``search_tasks.demand``). Served alone by a
   reserved partition, a share's waits do not depend on anyone else, so a RESERVE partition
   giving every share at least that capacity meets every target: a *sufficient* allocation,
   certain under the simulator's rules. The sum over shares is an environment that is
   sufficient.
2. **Impossibility** (exact): a share whose jobs alone, given the whole environment of the
   types it lists, miss its target misses it under every allocation, because any allocation
   gives it at most that capacity and other shares only compete for it. It is reported in
   ``unmet`` with the reason.
3. **Candidates** between today's declaration and that partition: today's, today's strategies
   with the shares that miss raised toward their demand (none of it beyond their largest job, a
   quarter, half, three quarters, all of it; capacity taken from the shares furthest above what
   they need), the same with lending opened (RESERVE -> LEND), with borrowing opened for waits
   or closed for jobs lost to budgets, and the partition.
4. **Improving** while targets are missed: capacity moves toward each share that misses (a
   quarter of its limit per type) from capacity no share owns and then from the shares with most
   room before their own targets; its borrowing is opened (waits) or closed or capped (lost
   jobs). A move is kept when it ranks better: fewer targets missed, then a smaller shortfall.
5. **Walking back**: each change of the answer is undone in turn, fully or half way, and kept
   undone where every target is still met; repeated until nothing more can be undone or
   ``max_simulations`` is reached.

6. **Changes that change nothing** are undone: one whose undoing leaves no job's replay
   different, or which made alone on today's declaration changes no job's replay and whose
   undoing ranks no worse; a proposal whose whole replay is today's is not made.
7. **The environment needed, per instance type** (:mod:`.environment_advice`): each type the
   smallest size a replay verifies, the others as found; a type grows only where recommend's
   own search, with that type at today's size, misses a target of a share running it.
   ``environment_needed``, ``environment_reasons`` and a declaration for it
   (``environment_shares``).

Long histories (more than twice ``screen_jobs``) rank the candidates of steps 3-5 on a stretch
of ``screen_jobs`` jobs from the middle of the history first and replay only the best two on
the whole of it; the demand analysis and every answer use the whole history.

Every answer is confirmed by a full replay: ``meets_targets`` is never inferred from a bound.
Bisection and "a share alone with the whole environment is its best case" assume that more
capacity never makes a share's p95 wait longer (a queue that starts a job whenever one fits);
the tests compare the recommendation with an exhaustive search over every allocation of small
environments, where it finds an allocation whenever one exists.

Determinism: results are read in submission order (never completion order), ties are broken
by a fixed candidate order, and nothing is random, so the same inputs give the same
recommendation on any executor (local processes, a Dask cluster's ``get_executor()``).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from ..model import (
    CapacityLimit,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
)
from .arrangements import subset
from .durations import human_duration
from .environment_advice import EnvironmentSearch
from .inputs import PriorityChange, SimJob, SimulationOptions
from .problem import Problem, compile_problem
from .search_tasks import (
    Demand,
    Scores,
    ShareColumns,
    ShareScore,
    alone,
    demand,
    evaluate,
    evaluate_with_digest,
    meets,
    without_ids,
)
from .targets import ServiceTarget, TargetOutcome, targets_of

DEFAULT_OPTIONS = SimulationOptions()
DEFAULT_MAX_SIMULATIONS = 60
DEFAULT_SCREEN_JOBS = 150_000
CONFIRMED_PER_ROUND = 2
"""Best screened candidates replayed on the whole history per round. Fixed, not the number of
workers, so that the answer does not depend on the executor."""
LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Fractions of their demand the shares that miss are raised to, in the first candidates (0:
only as far as their largest job needs)."""

T = TypeVar("T")


@dataclass(frozen=True)
class Pin:
    """What the search must leave alone for one share.

    ``strategy``: keep its strategy and borrow limit; ``limits``: keep its capacity limits;
    ``minimum``: guarantee at least this many of each instance type (e.g. ``{"ml.g5.xlarge":
    2}``)."""

    share: str
    strategy: bool = False
    limits: bool = False
    minimum: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class HoldoutCheck:
    """Today's and the recommended declaration replayed on the held-out last part of history."""

    jobs: int
    today: list[TargetOutcome]
    recommended: list[TargetOutcome]

    @property
    def meets_targets(self) -> bool:
        return all(o.met for o in self.recommended)


@dataclass(frozen=True)
class ShareCost:
    """What one share's jobs suffered in the replays of today's and the recommended
    declaration (the searched history): preemptions and jobs lost to their interruption
    budget. ``change`` says what the recommendation changes for this share ("" when
    nothing); a change to one share's strategy can cost another share's jobs."""

    share: str
    change: str
    today: ShareScore | None
    recommended: ShareScore | None

    @property
    def strategy_changed(self) -> bool:
        return "strategy" in self.change


def describe_change(was: QuotaShareSpec, now: QuotaShareSpec) -> str:
    """``strategy RESERVE -> LEND; ml.g5.xlarge 2 -> 3`` ("" when nothing changes)."""
    parts = []
    if (was.strategy, was.borrow_limit_percent) != (now.strategy, now.borrow_limit_percent):
        def strategy(spec: QuotaShareSpec) -> str:
            if not spec.strategy.borrows:
                return spec.strategy.value
            limit = ("unlimited" if spec.borrow_limit_percent is None
                     else f"{spec.borrow_limit_percent} %")
            return f"{spec.strategy.value} (borrow limit {limit})"
        parts.append(f"strategy {strategy(was)} → {strategy(now)}")
    for limit in was.capacity_limits:
        before, after = limit.max_capacity, now.limit_of(limit.unit)
        if before != after:
            parts.append(f"{limit.unit} {before} → {after}")
    return "; ".join(parts)


@dataclass(frozen=True)
class Recommendation:
    capacity_limits: tuple[CapacityLimit, ...]
    today: tuple[QuotaShareSpec, ...]
    shares: list[QuotaShareSpec]
    meets_targets: bool
    unmet: list[str]
    reasons: dict[str, str]
    """Why each share in ``unmet`` misses (e.g. its demand alone exceeds the environment)."""
    targets: dict[str, ServiceTarget]
    today_outcomes: list[TargetOutcome]
    outcomes: list[TargetOutcome]
    change: int
    """Instances moved plus strategies and borrow limits changed, against today."""
    environment_needed: dict[str, int]
    """Per type, an environment sufficient for every target (a RESERVE partition at each
    share's demand); compare with ``capacity_limits`` to shrink or grow."""
    environment_needed_verified: bool
    """True when a replay on that environment met every target."""
    environment_basis: str
    """How ``environment_needed`` was found (the recommendation scaled, or the partition)."""
    environment_shares: list[QuotaShareSpec]
    """A declaration meeting every target on ``environment_needed`` (empty when none was
    confirmed)."""
    environment_reasons: dict[str, str]
    """Per instance type advised to grow or shrink, why."""
    demand: list[Demand]
    costs: list[ShareCost]
    """Per share, preemptions and budget failures today and under the recommendation."""
    holdout: HoldoutCheck | None
    searched_jobs: int
    simulations: int
    """Replays run (full and single-share ones)."""
    jobs_simulated: int
    seconds: float

    def environment_change(self) -> dict[str, int]:
        """Per type, ``environment_needed`` minus today's (negative: could shrink)."""
        return {
            str(limit.unit): self.environment_needed.get(str(limit.unit), 0) - limit.max_capacity
            for limit in self.capacity_limits
        }


# One allocation: per share, its limit per environment unit (0 = not listed), its strategy
# and its borrow limit percent.
Allocation = tuple[tuple[tuple[int, ...], SharingStrategy, int | None], ...]


def recommend(
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    jobs: Iterable[SimJob],
    priority_changes: Iterable[PriorityChange] = (),
    targets: Iterable[ServiceTarget] = (),
    pins: Iterable[Pin] = (),
    holdout: float = 0.0,
    executor: Executor | None = None,
    workers: int | None = None,
    options: SimulationOptions = DEFAULT_OPTIONS,
    max_simulations: int = DEFAULT_MAX_SIMULATIONS,
    screen_jobs: int = DEFAULT_SCREEN_JOBS,
    progress: Callable[[str], None] | None = None,
) -> Recommendation:
    """Search allocations of ``capacity_limits`` for one meeting every share's targets.

    Targets come from each share's agreement, replaced by ``targets`` where given. ``holdout``
    (0 <= h < 1) keeps the last fraction of jobs (by submission) out of the search and replays
    today's and the recommended declaration on them. ``executor`` runs the replays (any
    ``concurrent.futures.Executor``); None uses local processes, ``workers`` of them (default:
    every core). ``max_simulations`` bounds the replays spent improving a candidate and
    walking its changes back. Histories of more than twice ``screen_jobs`` jobs rank
    candidates on a stretch of ``screen_jobs`` jobs first and replay only the best two in full
    (0: always in full).
    """
    began = time.perf_counter()
    say = progress or (lambda message: None)
    environment = tuple(capacity_limits)
    today = tuple(shares)
    goals = targets_of(today, targets)
    pinned = _pins(today, pins)
    if not 0 <= holdout < 1 or isinstance(holdout, bool):
        raise QuotaConfigError("recommend", "holdout", holdout, "a fraction >= 0 and < 1")
    for argument, value, least in (("workers", workers, 1),
                                   ("max_simulations", max_simulations, 0),
                                   ("screen_jobs", screen_jobs, 0)):
        if value is None and argument == "workers":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise QuotaConfigError("recommend", argument, value, f"a whole number >= {least}"
                                   + (" (None: every core)" if argument == "workers" else ""))
    all_jobs = sorted(jobs, key=lambda job: job.submitted_at)
    if not all_jobs:
        raise QuotaConfigError("recommend", "jobs", 0,
                               "at least one job: targets are met or missed by replaying a "
                               "history, and an empty one (a header alone) has nothing to "
                               "replay")
    changes = list(priority_changes)
    cut = len(all_jobs) - math.ceil(holdout * len(all_jobs)) if holdout else len(all_jobs)
    searched, held = all_jobs[:cut], all_jobs[cut:]
    held_ids = {job.job_id for job in held}
    searched_changes = [c for c in changes if c.job_id not in held_ids]
    held_changes = [c for c in changes if c.job_id in held_ids]

    own_pool = executor is None
    pool: Executor = executor or ProcessPoolExecutor(max_workers=workers or os.cpu_count())
    try:
        search = _Search(environment, today, goals, pinned, options, pool, say)
        search.compile(searched, searched_changes, screen_jobs)
        search.check_pins()
        result = search.run(max_simulations)
        holdout_check = None
        if held:
            say(f"replaying {len(held):,} held-out jobs")
            holdout_check = search.holdout(result.allocation, held, held_changes)
    finally:
        if own_pool:
            pool.shutdown()
    return Recommendation(
        capacity_limits=environment,
        today=today,
        shares=search.specs(result.allocation),
        meets_targets=result.missed == 0,
        unmet=result.unmet,
        reasons=result.reasons,
        targets=goals,
        today_outcomes=search.outcomes(search.today_scores),
        outcomes=search.outcomes(result.scores),
        change=search.change(result.allocation),
        environment_needed=result.environment_needed,
        environment_needed_verified=result.environment_verified,
        environment_basis=result.environment_basis,
        environment_shares=(search.specs(result.environment_allocation)
                            if result.environment_allocation is not None else []),
        environment_reasons=result.environment_reasons,
        demand=search.demands,
        costs=[
            ShareCost(was.name, describe_change(was, now), search.today_scores.get(was.name),
                      result.scores.get(was.name))
            for was, now in zip(today, search.specs(result.allocation), strict=True)
        ],
        holdout=holdout_check,
        searched_jobs=len(searched),
        simulations=search.simulations,
        jobs_simulated=search.jobs_simulated,
        seconds=time.perf_counter() - began,
    )


@dataclass
class _Outcome:
    allocation: Allocation
    scores: Scores
    missed: int
    unmet: list[str]
    reasons: dict[str, str]
    environment_needed: dict[str, int]
    environment_verified: bool
    environment_basis: str
    environment_allocation: Allocation | None
    environment_reasons: dict[str, str] = field(default_factory=dict)


def _pins(shares: Sequence[QuotaShareSpec], pins: Iterable[Pin]) -> dict[str, Pin]:
    names = {spec.name: spec for spec in shares}
    found: dict[str, Pin] = {}
    for pin in pins:
        if pin.share not in names:
            raise QuotaConfigError(f"pin for {pin.share!r}", "share", pin.share,
                                   "one of the declared shares: " + ", ".join(sorted(names)))
        for unit, count in pin.minimum.items():
            listed = [str(limit.unit) for limit in names[pin.share].capacity_limits]
            if unit not in listed:
                raise QuotaConfigError(f"pin for {pin.share!r}", "minimum", unit,
                                       "an instance type the share lists: " + ", ".join(listed))
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise QuotaConfigError(f"pin for {pin.share!r}", f"minimum[{unit}]", count,
                                       "an integer >= 1")
        found[pin.share] = pin
    return found


class _Search:
    """State of one search; every replay goes through :meth:`_map`."""

    def __init__(
        self,
        environment: tuple[CapacityLimit, ...],
        today: tuple[QuotaShareSpec, ...],
        goals: dict[str, ServiceTarget],
        pins: dict[str, Pin],
        options: SimulationOptions,
        pool: Executor,
        say: Callable[[str], None],
    ) -> None:
        self.environment = environment
        self.units = [str(limit.unit) for limit in environment]
        self.capacity = [limit.max_capacity for limit in environment]
        self.today = today
        self.goals = goals
        self.pins = pins
        self.options = options
        self.pool = pool
        self.say = say
        self.simulations = 0
        self.jobs_simulated = 0
        self.demands: list[Demand] = []
        self.today_scores: Scores = {}
        self.problem: Problem | None = None
        self.largest: dict[tuple[int, int], int] = {}
        self.columns_cache: dict[tuple[Allocation, tuple[int, ...]], ShareColumns | None] = {}
        self.screen: Problem | None = None
        """A contiguous stretch of the history candidates are ranked on first (long histories
        only); None: every candidate is replayed on the whole history."""
        self.width = CONFIRMED_PER_ROUND
        self.jobs: list[SimJob] = []
        self.changes: list[PriorityChange] = []
        self.screen_jobs = 0
        self.floors: list[list[int]] = []
        self.needed: list[int] = []

    # --- inputs -------------------------------------------------------------------------
    def compile(
        self, jobs: list[SimJob], changes: list[PriorityChange], screen_jobs: int
    ) -> None:
        """Check the jobs once against the most any allocation could give each share (every
        listed type up to the whole environment), so that any candidate can be replayed."""
        self.jobs, self.changes, self.screen_jobs = jobs, changes, screen_jobs
        self.problem = without_ids(self._compile(jobs, changes))
        n = len(jobs)
        if screen_jobs and n > 2 * screen_jobs:
            # The middle of the history: a stretch long enough to hold every share's busy
            # and quiet times, short enough to replay many candidates.
            first = (n - screen_jobs) // 2
            self.screen = subset(self.problem, list(range(first, first + screen_jobs)))
        for s, k, count in zip(self.problem.job_share, self.problem.job_unit,
                               self.problem.job_count, strict=True):
            if count > self.largest.get((s, k), 0):
                self.largest[(s, k)] = count

    def _compile(self, jobs: list[SimJob], changes: list[PriorityChange]) -> Problem:
        relaxed = [
            replace(
                spec,
                capacity_limits=[
                    CapacityLimit(limit.unit, self.capacity[self.units.index(str(limit.unit))])
                    if str(limit.unit) in self.units else limit
                    for limit in spec.capacity_limits
                ],
                strategy=SharingStrategy.LEND,
                borrow_limit_percent=None,
            )
            for spec in self.today
        ]
        return compile_problem(capacity_limits=self.environment, shares=relaxed, jobs=jobs,
                               priority_changes=changes,
                               unowned_capacity_borrowable=self.options.unowned_capacity_borrowable)

    def check_pins(self) -> None:
        """Refuse a pin no allocation can honour (QuotaConfigError): a minimum above the
        environment less what every other share listing the type needs at least (1, its
        largest job, its own pin), or above the share's own limit when its limits are
        pinned too. Silently ignoring it would recommend what the user ruled out."""
        today = self.allocation_of(self.today)
        lowest = self.lowest(today)
        for s, spec in enumerate(self.today):
            pin = self.pins.get(spec.name)
            if pin is None:
                continue
            for unit, count in pin.minimum.items():
                k = self.units.index(unit)
                field_name = f"minimum[{unit}]"
                if pin.limits and count > today[s][0][k]:
                    raise QuotaConfigError(
                        f"pin for {spec.name!r}", field_name, count,
                        f"at most {today[s][0][k]}: its limits are pinned too, at "
                        f"{today[s][0][k]} x {unit}")
                others = [(self.today[t].name, row[k]) for t, row in enumerate(lowest)
                          if t != s and row[k]]
                most = self.capacity[k] - sum(n for _, n in others)
                if count > most:
                    needs = ", ".join(f"{name} {n}" for name, n in others)
                    raise QuotaConfigError(
                        f"pin for {spec.name!r}", field_name, count,
                        f"at most {max(most, 0)}: the environment has {self.capacity[k]} x "
                        f"{unit}" + (f" and the other shares listing it need at least "
                                     f"{sum(n for _, n in others)} ({needs})" if others
                                     else ""))

    def honours_pins(self, allocation: Allocation) -> bool:
        today = self.allocation_of(self.today)
        for s, spec in enumerate(self.today):
            pin = self.pins.get(spec.name)
            if pin is None:
                continue
            limits, strategy, borrow = allocation[s]
            if pin.strategy and (strategy, borrow) != today[s][1:]:
                return False
            if pin.limits and limits != today[s][0]:
                return False
            if any(limits[self.units.index(unit)] < count for unit, count in pin.minimum.items()):
                return False
        return True

    def _honour_pins(self, allocation: Allocation) -> Allocation:
        """``allocation`` with every pinned minimum given, taken from the shares furthest
        above their least limits (:meth:`check_pins` made sure it fits)."""
        rows = [
            [max(count, self.pins[spec.name].minimum.get(self.units[k], 0))
             if count and spec.name in self.pins else count
             for k, count in enumerate(limits)]
            for spec, (limits, _, _) in zip(self.today, allocation, strict=True)
        ]
        fitted = self._fit(rows, self.lowest(allocation), self.capacity)
        if fitted is None:
            return allocation
        return self._allocation(fitted, [(st, b) for _, st, b in allocation])

    # --- allocations ----------------------------------------------------------------------
    def allocation_of(self, specs: Sequence[QuotaShareSpec]) -> Allocation:
        return tuple(
            (tuple(spec.limit_of(unit) for unit in self.units), spec.strategy,
             spec.borrow_limit_percent)
            for spec in specs
        )

    def specs(self, allocation: Allocation) -> list[QuotaShareSpec]:
        out = []
        for spec, (limits, strategy, borrow) in zip(self.today, allocation, strict=True):
            out.append(replace(
                spec,
                capacity_limits=[
                    CapacityLimit(limit.unit, limits[self.units.index(str(limit.unit))])
                    for limit in spec.capacity_limits
                ],
                strategy=strategy,
                borrow_limit_percent=borrow if strategy.borrows else None,
            ))
        return out

    def change(self, allocation: Allocation) -> int:
        base = self.allocation_of(self.today)
        total = 0
        for (limits, strategy, borrow), (was, was_strategy, was_borrow) in zip(
            allocation, base, strict=True
        ):
            total += sum(abs(a - b) for a, b in zip(limits, was, strict=True))
            total += int(strategy != was_strategy)
            total += int(strategy.borrows and was_strategy.borrows and borrow != was_borrow)
        return total

    def columns(
        self, allocation: Allocation, environment: tuple[int, ...] | None = None
    ) -> ShareColumns | None:
        """The engine's columns for ``allocation`` (None when AWS would reject it or a job
        could never start), through the one compile path every simulation uses."""
        env = environment or tuple(self.capacity)
        key = (allocation, env)
        if key not in self.columns_cache:
            self.columns_cache[key] = self._columns(allocation, env)
        return self.columns_cache[key]

    def _columns(self, allocation: Allocation, env: tuple[int, ...]) -> ShareColumns | None:
        assert self.problem is not None
        try:
            specs = self.specs(allocation)
            limits = [CapacityLimit(unit, count) for unit, count in zip(self.units, env,
                                                                        strict=True)]
            # One job per (share, type) as large as its largest: the compile check rejects
            # an allocation in which it could never start.
            probes = [
                SimJob(job_id=f"largest-{s}-{k}", share=self.today[s].name, submitted_at=0.0,
                       duration=0.0, instance_type=self.units[k], instance_count=count)
                for (s, k), count in sorted(self.largest.items())
            ]
            borrowable = self.options.unowned_capacity_borrowable
            small = compile_problem(capacity_limits=limits, shares=specs, jobs=probes,
                                    unowned_capacity_borrowable=borrowable)
            # And by the model's rules of what a share can reach (the one place those live):
            # a job beyond it would wait forever in AWS, whatever the simulator makes of it.
            rules = QuotaAllocation.check(environment_limits=limits, shares=specs,
                                          unowned_capacity_borrowable=borrowable)
            reach = {spec.name: rules.reach(spec.name) for spec in specs}
        except QuotaConfigError:
            return None
        for (s, k), count in self.largest.items():
            if count > reach[self.today[s].name].get(self.units[k], 0):
                return None
        return ShareColumns.of(small)

    # --- replays --------------------------------------------------------------------------
    def _map(self, calls: list[tuple[Callable[..., T], tuple[Any, ...], int]]) -> list[T]:
        futures: list[Future[T]] = [self.pool.submit(fn, *args) for fn, args, _ in calls]
        results = [future.result() for future in futures]  # submission order: deterministic
        for _, _, jobs in calls:
            self.simulations += 1
            self.jobs_simulated += jobs
        return results

    def evaluate_all(
        self, candidates: list[tuple[Allocation, tuple[int, ...] | None]],
        problem: Problem | None = None,
    ) -> list[Scores | None]:
        problem = problem or self.problem
        assert problem is not None
        calls: list[tuple[Callable[..., Scores], tuple[Any, ...], int]] = []
        slots: list[int | None] = []
        for allocation, env in candidates:
            columns = self.columns(allocation, env)
            if columns is None:
                slots.append(None)
                continue
            slots.append(len(calls))
            calls.append((evaluate, (problem, columns, self.options), len(problem.job_ids)))
        results = self._map(calls)
        return [None if slot is None else results[slot] for slot in slots]

    def missed(self, scores: Scores) -> list[str]:
        return [
            name for name, goal in self.goals.items()
            if not meets(scores.get(name), goal.wait_p95, goal.max_budget_failures)
        ]

    def outcomes(self, scores: Scores) -> list[TargetOutcome]:
        return [
            TargetOutcome(name, goal, *_score_fields(scores, name))
            for name, goal in self.goals.items()
        ]

    # --- the search -----------------------------------------------------------------------
    def run(self, max_simulations: int, *, advise: bool = True) -> _Outcome:
        problem = self.problem
        assert problem is not None
        index = {spec.name: i for i, spec in enumerate(self.today)}
        today = self.allocation_of(self.today)
        self.say(f"replaying today's declaration and analysing each share's demand "
                 f"({len(problem.job_ids):,} jobs)")
        # Batch 1: today, every target share alone with the whole environment, demands.
        calls: list[tuple[Callable[..., Any], tuple[Any, ...], int]] = []
        today_columns = self.columns(today)
        if today_columns is not None:
            calls.append((evaluate, (problem, today_columns, self.options),
                          len(problem.job_ids)))
        alone_jobs: dict[tuple[int, int], Problem] = {}
        for name in self.goals:
            s = index[name]
            listed = {k: self.capacity[k] for k, count in enumerate(today[s][0]) if count > 0}
            whole = alone(problem, s, listed)
            calls.append((evaluate, (whole, ShareColumns.of(whole), self.options),
                          len(whole.job_ids)))
            for k in listed:
                if (s, k) in self.largest:
                    alone_jobs[(s, k)] = alone(self.screen or problem, s, {k: self.capacity[k]})
        for (s, k), sub in sorted(alone_jobs.items()):
            goal = self.goals[self.today[s].name]
            calls.append((demand, (sub, s, k, goal.wait_p95, goal.max_budget_failures,
                                   self.capacity[k], self.options), 0))
        results = self._map(calls)
        if self.screen is not None:
            # Bisected on the stretch; confirmed (and raised where it falls short) on the
            # whole history, from the stretch's answer upward.
            first = len(results) - len(alone_jobs)
            confirm = []
            for ((s, k), _), found in zip(sorted(alone_jobs.items()), results[first:],
                                          strict=True):
                goal = self.goals[self.today[s].name]
                whole_jobs = alone(problem, s, {k: self.capacity[k]})
                confirm.append((demand, (whole_jobs, s, k, goal.wait_p95,
                                         goal.max_budget_failures, found.capacity,
                                         self.options, found.capacity), 0))
            confirmed = self._map(confirm)
            results = results[:first] + [
                replace(full, probes=full.probes + screened.probes,
                        jobs_simulated=full.jobs_simulated + screened.jobs_simulated)
                for full, screened in zip(confirmed, results[first:], strict=True)
            ]
            self.simulations -= len(confirm)
        cursor = 0
        if today_columns is not None:
            self.today_scores = results[0]
            cursor = 1
        reasons: dict[str, str] = {}
        self.demands = results[cursor + len(self.goals):]
        for name in self.goals:
            scores = results[cursor]
            cursor += 1
            goal = self.goals[name]
            if not meets(scores.get(name), goal.wait_p95, goal.max_budget_failures):
                reasons[name] = self._impossible(name, scores, today[index[name]][0])
        for found in self.demands:
            self.jobs_simulated += found.jobs_simulated
            self.simulations += found.probes - 1

        floors = self._floors(today)
        needed = [sum(floors[s][k] for s in range(len(today))) for k in range(len(self.units))]
        today_missed = set(self.missed(self.today_scores)) if today_columns else set(self.goals)
        self.say("today's declaration " + (
            "meets every target" if not today_missed else
            "misses the targets of " + ", ".join(sorted(today_missed))))

        self.floors, self.needed = floors, needed
        # Today's declaration is an answer only where it honours the pins (a minimum above
        # today's limit must be given, even when today meets every target).
        today_valid = today_columns is not None and self.honours_pins(today)
        if today_valid and not today_missed:
            best, best_scores = today, self.today_scores
        else:
            candidates = [self._honour_pins(today),
                          *self._candidates(today, floors, today_missed, index)]
            candidates = [c for c in dict.fromkeys(candidates) if c != today]
            self.say(f"replaying {len(candidates)} candidate allocations")
            best, best_scores = today, self.today_scores if today_columns else {}
            picked = self._pick(candidates, (best, best_scores) if today_valid else None)
            if picked is not None:
                best, best_scores = picked
            best, best_scores = self._repair(best, best_scores, max_simulations)
        if not self.missed(best_scores) and best != today:
            best, best_scores = self._walk_back(best, best_scores, today, max_simulations)
        if best != today:
            best, best_scores = self._drop_no_ops(best, best_scores, today)
        unmet = self.missed(best_scores)
        for name in unmet:
            reasons.setdefault(name, self._why_missed(name, best_scores, floors, needed,
                                                      index))
        outcome = _Outcome(
            allocation=best,
            scores=best_scores,
            missed=len(unmet),
            unmet=unmet,
            reasons={name: reasons[name] for name in unmet},
            environment_needed=dict(zip(self.units, self.capacity, strict=True)),
            environment_verified=not unmet,
            environment_basis="today's environment",
            environment_allocation=best if not unmet else None,
        )
        if not advise:
            return outcome
        advice = EnvironmentSearch(self, max_simulations).advise(best, best_scores)
        if advice.verified and advice.sizes != tuple(self.capacity):
            sized = ", ".join(f"{n} x {unit}" for unit, n in zip(self.units, advice.sizes,
                                                                 strict=True))
            unreachable = self.unreachable()
            outcome.reasons.update({
                name: f"{why}; on an environment of {sized} its target is met (replayed)"
                for name, why in outcome.reasons.items() if name not in unreachable
            })
        return replace(
            outcome,
            environment_needed=dict(zip(self.units, advice.sizes, strict=True)),
            environment_verified=advice.verified,
            environment_basis=advice.basis,
            environment_allocation=advice.allocation,
            environment_reasons=advice.reasons,
        )

    def lowest(self, allocation: Allocation) -> list[list[int]]:
        """Per share and type, the least limit any allocation may give it: its pinned limit,
        else at least 1, its largest job and its pinned minimum (0 where it lists none)."""
        rows: list[list[int]] = []
        for s, (limits, _, _) in enumerate(allocation):
            pin = self.pins.get(self.today[s].name)
            if pin is not None and pin.limits:
                rows.append(list(limits))
                continue
            rows.append([
                0 if not count else max(1, self.largest.get((s, k), 1),
                                        pin.minimum.get(self.units[k], 0) if pin else 0)
                for k, count in enumerate(limits)
            ])
        return rows

    def resized(
        self, allocation: Allocation, env: Sequence[int], origin: Sequence[int] | None = None,
    ) -> Allocation | None:
        """``allocation`` (for the environment ``origin``, today's by default) on the
        environment ``env``: the limits of each type whose size changes scaled with it (never
        below :meth:`lowest`), then lowered to fit; a type whose size stays keeps its limits
        exactly. None when the least limits do not fit."""
        origin = self.capacity if origin is None else origin
        lowest = self.lowest(allocation)
        pinned = {s for s, spec in enumerate(self.today)
                  if spec.name in self.pins and self.pins[spec.name].limits}
        rows = [
            [count if s in pinned or not count or env[k] == origin[k]
             else max(lowest[s][k], round(count * env[k] / origin[k]))
             for k, count in enumerate(limits)]
            for s, (limits, _, _) in enumerate(allocation)
        ]
        fitted = self._fit(rows, lowest, env)
        if fitted is None:
            return None
        return self._allocation(fitted, [(st, b) for _, st, b in allocation])

    def unreachable(self) -> set[str]:
        """Shares whose targets no environment meets (:attr:`Demand.met` false)."""
        return {d.share for d in self.demands if not d.met}

    def reachable_missed(self, scores: Scores) -> list[str]:
        """Targets missed, leaving out those no environment meets."""
        unreachable = self.unreachable()
        return [name for name in self.missed(scores) if name not in unreachable]

    def search_at(self, env: tuple[int, ...], max_simulations: int
                  ) -> tuple[tuple[Allocation, Scores] | None, list[str]]:
        """What ``recommend`` on the environment ``env`` (today's shares, the same jobs,
        pins and options) finds, when it meets every reachable target: the same search, so
        that advice about one environment holds when recommend is run on it."""
        limits = tuple(CapacityLimit(unit, count) for unit, count in zip(self.units, env,
                                                                         strict=True))
        sub = _Search(limits, self.today, self.goals, self.pins, self.options, self.pool,
                      lambda message: None)
        try:
            sub.compile(self.jobs, self.changes, self.screen_jobs)
            found = sub.run(max_simulations, advise=False)
        except QuotaConfigError:
            # A job larger than this environment's type can never run: every target of its
            # share is missed.
            return None, [str(name) for name in self.goals]
        finally:
            self.simulations += sub.simulations
            self.jobs_simulated += sub.jobs_simulated
        missed = sub.reachable_missed(found.scores)
        return (None if missed else (found.allocation, found.scores)), missed

    def _floors(self, today: Allocation) -> list[list[int]]:
        """Per share and type, what it needs when served alone by a reserved partition: its
        demand for a share with targets, its largest job otherwise (so that job can start),
        never below 1 for a listed type nor below a pinned minimum; a pinned limit stays."""
        demand_of = {(d.share, d.unit): d.capacity for d in self.demands}
        floors: list[list[int]] = []
        for s, spec in enumerate(self.today):
            pin = self.pins.get(spec.name)
            row = []
            for k, unit in enumerate(self.units):
                listed = today[s][0][k]
                if not listed:
                    row.append(0)
                    continue
                if pin is not None and pin.limits:
                    row.append(listed)
                    continue
                value = max(1, self.largest.get((s, k), 1), demand_of.get((spec.name, unit), 0))
                if pin is not None:
                    value = max(value, pin.minimum.get(unit, 0))
                row.append(value)
            floors.append(row)
        return floors

    def _fit(
        self, wanted: list[list[int]], floors: list[list[int]], env: Sequence[int]
    ) -> list[list[int]] | None:
        """``wanted`` lowered until own limits add up to at most the environment, taking one
        instance at a time from the share furthest above its floor (None when floors alone
        do not fit)."""
        limits = [list(row) for row in wanted]
        for k, available in enumerate(env):
            excess = sum(row[k] for row in limits) - available
            while excess > 0:
                surplus = [row[k] - floor[k] for row, floor in zip(limits, floors, strict=True)]
                most = max(surplus)
                if most <= 0:
                    return None
                limits[surplus.index(most)][k] -= 1
                excess -= 1
        return limits

    def _allocation(
        self, limits: list[list[int]], strategies: Sequence[tuple[SharingStrategy, int | None]]
    ) -> Allocation:
        return tuple(
            (tuple(row), strategy, borrow if strategy.borrows else None)
            for row, (strategy, borrow) in zip(limits, strategies, strict=True)
        )

    def _candidates(
        self,
        today: Allocation,
        floors: list[list[int]],
        missing: set[str],
        index: Mapping[str, int],
    ) -> list[Allocation]:
        n = len(today)
        base = [list(limits) for limits, _, _ in today]
        strategies = [(strategy, borrow) for _, strategy, borrow in today]
        helped = list(strategies)
        losing: set[int] = set()
        for name in sorted(missing):
            s = index[name]
            if name in self.pins and self.pins[name].strategy:
                continue
            score = self.today_scores.get(name)
            goal = self.goals[name]
            lost_jobs = (score is not None and goal.max_budget_failures is not None
                         and score.budget_failures > goal.max_budget_failures)
            if lost_jobs:
                losing.add(s)
                helped[s] = (SharingStrategy.LEND, None)  # its jobs stop borrowing
            elif not strategies[s][0].borrows:
                helped[s] = (SharingStrategy.LEND_AND_BORROW, None)
        # Opening lending (RESERVE -> LEND) lets shares whose busy times differ share
        # capacity; letting everyone borrow goes further. A share that loses jobs to its
        # budget stays out of borrowing in both.
        free = [not (spec.name in self.pins and self.pins[spec.name].strategy)
                for spec in self.today]
        lending = [
            (SharingStrategy.LEND, None)
            if free[s] and helped[s][0] is SharingStrategy.RESERVE else helped[s]
            for s in range(n)
        ]
        borrowing = [
            (SharingStrategy.LEND_AND_BORROW, None) if free[s] and s not in losing else helped[s]
            for s in range(n)
        ]
        variants = list(dict.fromkeys(
            tuple(v) for v in (strategies, helped, lending, borrowing)
        ))
        pinned_limits = {index[name] for name, pin in self.pins.items() if pin.limits}
        out: list[Allocation] = [self._allocation(base, list(v)) for v in variants[1:]]
        for level in LEVELS:
            wanted = [list(row) for row in base]
            level_floors = [list(row) for row in floors]
            for s in range(n):
                name = self.today[s].name
                if s in pinned_limits or name not in self.goals:
                    continue
                pin = self.pins.get(name)
                level_floors[s] = [
                    0 if not f else max(
                        1, self.largest.get((s, k), 0), math.ceil(level * f),
                        pin.minimum.get(self.units[k], 0) if pin else 0,
                    )
                    for k, f in enumerate(floors[s])
                ]
                if name in missing:
                    wanted[s] = [max(a, b) for a, b in zip(base[s], level_floors[s],
                                                           strict=True)]
            limits = self._fit(wanted, level_floors, self.capacity)
            if limits is None:
                continue
            out += [self._allocation(limits, list(v)) for v in variants
                    if level in (0.0, 0.5, 1.0) or v == tuple(strategies)]
        partition = self._partition(today, floors, [list(r) for r in base], tuple(self.capacity))
        if partition is not None:
            out.append(partition)
        return out

    def _partition(
        self,
        today: Allocation,
        floors: list[list[int]],
        wanted: list[list[int]],
        env: tuple[int, ...],
    ) -> Allocation | None:
        """Every share at least its floor, RESERVE unless its strategy is pinned; capacity
        left over goes back toward today's limits."""
        limits = self._fit([[max(a, b) for a, b in zip(w, f, strict=True)]
                            for w, f in zip(wanted, floors, strict=True)], floors, env)
        if limits is None:
            return None
        strategies = [
            (strategy, borrow)
            if spec.name in self.pins and self.pins[spec.name].strategy
            else (SharingStrategy.RESERVE, None)
            for spec, (_, strategy, borrow) in zip(self.today, today, strict=True)
        ]
        return self._allocation(limits, strategies)

    def key(self, allocation: Allocation, scores: Scores) -> tuple[int, float, int]:
        """Ranking: fewest missed targets, then the smallest shortfall, then least change."""
        return (len(self.missed(scores)), self.shortfall(scores), self.change(allocation))

    def shortfall(self, scores: Scores) -> float:
        """How far the targets are missed, summed: the excess wait as a fraction of its target
        and the excess jobs lost as a fraction of the limit plus one."""
        total = 0.0
        for name, goal in self.goals.items():
            score = scores.get(name)
            if score is None:
                total += 1e6
                continue
            if goal.wait_p95 is not None and score.wait_p95 is not None:
                total += max(0.0, score.wait_p95 / goal.wait_p95 - 1.0)
            if goal.max_budget_failures is not None:
                excess = score.budget_failures - goal.max_budget_failures
                total += max(0, excess) / (goal.max_budget_failures + 1)
        return total

    def _pick(
        self, allocations: list[Allocation], current: tuple[Allocation, Scores] | None,
        *, better: Callable[[Allocation, Scores], bool] | None = None,
    ) -> tuple[Allocation, Scores] | None:
        """The best of ``allocations`` (and ``current``) by :meth:`key`, replayed in full.

        With a screening sample (large histories), every allocation is replayed on the sample
        first and only the best two on the whole history; the answer is always
        judged on the whole history. ``better`` filters which replayed allocations count.
        """
        if not allocations:
            return current
        accept = better or (lambda allocation, scores: True)
        allocations = [a for a in allocations if self.honours_pins(a)]
        if self.screen is not None:
            screened = self.evaluate_all([(a, None) for a in allocations], self.screen)
            ranked = sorted(
                (self.key(a, sc), order, a) for order, (a, sc) in
                enumerate(zip(allocations, screened, strict=True))
                if sc is not None and accept(a, sc)
            )
            allocations = [a for _, _, a in ranked[: self.width]]
        scored = self.evaluate_all([(a, None) for a in allocations])
        options = [
            (self.key(a, sc), order, a, sc)
            for order, (a, sc) in enumerate(zip(allocations, scored, strict=True))
            if sc is not None and accept(a, sc)
        ]
        if current is not None:
            options.append((self.key(*current), -1, *current))
        if not options:
            return None
        options.sort(key=lambda o: o[:2])
        return options[0][2], options[0][3]

    def _repair(
        self, best: Allocation, scores: Scores, budget: int
    ) -> tuple[Allocation, Scores]:
        """While targets are missed: move capacity toward the shares that miss (from those
        with room to spare) and open borrowing for their waits, or close it for their lost
        jobs; keep a move when it ranks better on the whole history."""
        start = self.simulations
        while self.missed(scores) and self.simulations - start < budget:
            moves = self._repairs(best, scores)
            if not moves:
                break
            self.say(f"improving: {len(moves)} allocations toward the targets missed "
                     f"({', '.join(self.missed(scores))})")
            found = self._pick(moves, (best, scores))
            if found is None or found[0] == best:
                break
            best, scores = found
        return best, scores

    def _repairs(self, current: Allocation, scores: Scores) -> list[Allocation]:
        moves: list[Allocation] = []
        index = {spec.name: s for s, spec in enumerate(self.today)}
        missed = self.missed(scores)
        slack = self._slack(scores)
        for name in missed:
            s = index[name]
            limits, strategy, borrow = current[s]
            pin = self.pins.get(name)
            goal = self.goals[name]
            score = scores.get(name)
            losing = (score is not None and goal.max_budget_failures is not None
                      and score.budget_failures > goal.max_budget_failures)
            if not (pin and pin.strategy):
                options: list[tuple[SharingStrategy, int | None]] = []
                if losing and strategy.borrows:
                    options += [(SharingStrategy.LEND, None)]
                    if borrow is None or borrow > 50:
                        options.append((SharingStrategy.LEND_AND_BORROW, 50))
                if not losing and (not strategy.borrows or borrow is not None):
                    options.append((SharingStrategy.LEND_AND_BORROW, None))
                for option in options:
                    row = list(current)
                    row[s] = (limits, *option)
                    moves.append(tuple(row))
            if pin and pin.limits:
                continue
            for k, count in enumerate(limits):
                if not count:
                    continue
                step = max(1, math.ceil(count / 4))
                grown = self._give(current, s, k, step, slack)
                if grown is not None:
                    moves.append(grown)
        return list(dict.fromkeys(m for m in moves if m != current))

    def _slack(self, scores: Scores) -> dict[int, float]:
        """How much room each share has before it misses (no target: unlimited)."""
        room: dict[int, float] = {}
        for s, spec in enumerate(self.today):
            goal = self.goals.get(spec.name)
            score = scores.get(spec.name)
            if goal is None:
                room[s] = math.inf
            elif score is None or not meets(score, goal.wait_p95, goal.max_budget_failures):
                room[s] = -1.0
            elif goal.wait_p95 is not None and score.wait_p95 is not None:
                room[s] = 1.0 - score.wait_p95 / goal.wait_p95
            else:
                room[s] = 1.0
        return room

    def _give(
        self, current: Allocation, s: int, k: int, step: int, slack: Mapping[int, float]
    ) -> Allocation | None:
        """``step`` more of unit ``k`` for share ``s``: from capacity no share owns first, then
        from the shares with most room, never below their largest job, 1 or a pinned limit."""
        rows = [list(limits) for limits, _, _ in current]
        rows[s][k] += step
        excess = sum(row[k] for row in rows) - self.capacity[k]
        donors = sorted(
            (t for t in range(len(rows)) if t != s and rows[t][k] and slack.get(t, 0) >= 0
             and not (self.today[t].name in self.pins and self.pins[self.today[t].name].limits)),
            key=lambda t: (-slack[t], t),
        )
        for t in donors:
            if excess <= 0:
                break
            pin = self.pins.get(self.today[t].name)
            lowest = max(1, self.largest.get((t, k), 1),
                         pin.minimum.get(self.units[k], 0) if pin else 0)
            take = min(excess, rows[t][k] - lowest)
            if take > 0:
                rows[t][k] -= take
                excess -= take
        if excess > 0:
            return None
        return tuple((tuple(row), strategy, borrow)
                     for row, (_, strategy, borrow) in zip(rows, current, strict=True))

    # --- changes that change nothing -------------------------------------------------------
    @staticmethod
    def _differences(allocation: Allocation, today: Allocation) -> list[tuple[int, int]]:
        """Each separate change of ``allocation`` against ``today``: (share, -1) for its
        strategy and borrow limit, (share, type) for one limit."""
        out = []
        for s, ((limits, strategy, borrow), (was, was_strategy, was_borrow)) in enumerate(
            zip(allocation, today, strict=True)
        ):
            if (strategy, borrow) != (was_strategy, was_borrow):
                out.append((s, -1))
            out += [(s, k) for k, (a, b) in enumerate(zip(limits, was, strict=True)) if a != b]
        return out

    @staticmethod
    def _with(target: Allocation, source: Allocation, change: tuple[int, int]) -> Allocation:
        """``target`` with one change taken from ``source``."""
        s, k = change
        limits, strategy, borrow = target[s]
        if k < 0:
            _, strategy, borrow = source[s]
        else:
            limits = (*limits[:k], source[s][0][k], *limits[k + 1:])
        row = list(target)
        row[s] = (limits, strategy, borrow)
        return tuple(row)

    def _digests(self, allocations: list[Allocation]) -> list[tuple[Scores, str] | None]:
        problem = self.problem
        assert problem is not None
        calls: list[tuple[Callable[..., tuple[Scores, str]], tuple[Any, ...], int]] = []
        slots: list[int | None] = []
        for allocation in allocations:
            columns = self.columns(allocation)
            slots.append(None if columns is None else len(calls))
            if columns is not None:
                calls.append((evaluate_with_digest, (problem, columns, self.options),
                              len(problem.job_ids)))
        results = self._map(calls)
        return [None if slot is None else results[slot] for slot in slots]

    def _drop_no_ops(
        self, best: Allocation, scores: Scores, today: Allocation
    ) -> tuple[Allocation, Scores]:
        """Undo every change of ``best`` that changes nothing: undone, no job's replay differs
        from ``best``'s; or, made alone on today's declaration, no job's replay differs from
        today's and undoing it ranks no worse. A change that does nothing is never proposed
        or counted (e.g. a RESERVE share alone on its type made LEND_AND_BORROW)."""
        for _ in range(len(self._differences(best, today))):
            changes = self._differences(best, today)
            if not changes:
                break
            changes = [c for c in changes if self.honours_pins(self._with(best, today, c))]
            if not changes:
                break
            undone = [self._with(best, today, c) for c in changes]
            alone = [self._with(today, best, c) for c in changes]
            replays = self._digests([best, today, *undone, *alone])
            here, base = replays[0], replays[1]
            assert here is not None
            if base is not None and base[1] == here[1] and self.honours_pins(today):
                return today, base[0]  # the whole proposal replays as today does
            n = len(changes)
            dropped = [
                i for i in range(n)
                if (undo := replays[2 + i]) is not None and (
                    undo[1] == here[1]
                    or (base is not None and (only := replays[2 + n + i]) is not None
                        and only[1] == base[1]
                        and self.key(undone[i], undo[0]) <= self.key(best, scores)))
            ]
            if not dropped:
                break
            first = dropped[0]
            if len(dropped) > 1:
                # All of them at once, kept when that ranks no worse (one replay instead of a
                # round per change on a long history).
                together = best
                for i in dropped:
                    together = self._with(together, today, changes[i])
                (replayed,) = self._digests([together]) if self.honours_pins(together) \
                    else (None,)
                if replayed is not None and \
                        self.key(together, replayed[0]) <= self.key(best, scores):
                    best, scores = together, replayed[0]
                    continue
            best, scores = undone[first], replays[2 + first][0]  # type: ignore[index]
        return best, scores

    def _walk_back(
        self, best: Allocation, scores: Scores, today: Allocation, budget: int
    ) -> tuple[Allocation, Scores]:
        """Undo changes of ``best`` while every target stays met (see the module docs)."""
        start = self.simulations
        while self.simulations - start < budget:
            moves = self._moves(best, today)
            if not moves:
                break
            self.say(f"walking back toward today's declaration: {len(moves)} allocations")
            found = self._pick(moves, None, better=self._closer_than(self.change(best)))
            if found is None:
                break
            best, scores = found
        return best, scores

    def _closer_than(self, change: int) -> Callable[[Allocation, Scores], bool]:
        def closer(allocation: Allocation, scores: Scores) -> bool:
            return not self.missed(scores) and self.change(allocation) < change

        return closer

    def _moves(self, current: Allocation, today: Allocation) -> list[Allocation]:
        moves: list[Allocation] = []
        present = self.change(current)
        for s, ((limits, strategy, borrow), (was, was_strategy, was_borrow)) in enumerate(
            zip(current, today, strict=True)
        ):
            if (strategy, borrow) != (was_strategy, was_borrow):
                row = list(current)
                row[s] = (limits, was_strategy, was_borrow)
                moves.append(tuple(row))
            for k, (a, b) in enumerate(zip(limits, was, strict=True)):
                for value in dict.fromkeys((b, (a + b) // 2)):
                    if value == a:
                        continue
                    new_limits = list(limits)
                    new_limits[k] = value
                    row = list(current)
                    row[s] = (tuple(new_limits), strategy, borrow)
                    moves.append(tuple(row))
        fitting = []
        for move in dict.fromkeys(moves):
            totals = [sum(limits[k] for limits, _, _ in move) for k in range(len(self.units))]
            if any(t > c for t, c in zip(totals, self.capacity, strict=True)):
                continue
            if self.change(move) < present:
                fitting.append(move)
        fitting = [move for move in fitting if self.honours_pins(move)]
        fitting.sort(key=self.change)
        return fitting

    # --- explanations -----------------------------------------------------------------------
    def _impossible(self, name: str, scores: Scores, listed: tuple[int, ...]) -> str:
        goal = self.goals[name]
        score = scores.get(name)
        whole = ", ".join(f"{self.capacity[k]} x {self.units[k]}"
                          for k, count in enumerate(listed) if count > 0)
        parts = []
        if score is not None and goal.wait_p95 is not None and score.wait_p95 is not None \
                and score.wait_p95 > goal.wait_p95:
            parts.append(f"wait p95 {human_duration(score.wait_p95)} against a target of "
                         f"{human_duration(goal.wait_p95)}")
        if score is not None and goal.max_budget_failures is not None \
                and score.budget_failures > goal.max_budget_failures:
            parts.append(f"{score.budget_failures} jobs lost to their preemption budget "
                         f"against at most {goal.max_budget_failures}")
        needs = [
            f"{d.capacity} x {d.unit}" for d in self.demands
            if d.share == name and d.capacity > self.capacity[self.units.index(d.unit)]
        ]
        tail = f"; it would need {', '.join(needs)}" if needs else ""
        return (f"{name}'s demand alone exceeds the environment: its jobs alone, given the "
                f"whole environment ({whole}), reach {'; '.join(parts)}{tail}")

    def _why_missed(
        self, name: str, scores: Scores, floors: list[list[int]], needed: list[int],
        index: Mapping[str, int],
    ) -> str:
        short = [
            f"{needed[k]} x {unit} (environment {self.capacity[k]})"
            for k, unit in enumerate(self.units) if needed[k] > self.capacity[k]
        ]
        own = ", ".join(f"{floors[index[name]][k]} x {unit}"
                        for k, unit in enumerate(self.units) if floors[index[name]][k])
        score = scores.get(name)
        shown = "no replay" if score is None else (
            f"wait p95 {human_duration(score.wait_p95 or 0.0)}, {score.budget_failures} jobs "
            "lost")
        # Which target is missed, beside what the best allocation gives.
        shown += f" against its target of {self.goals[name].describe()}"
        if short:
            # A partition's sum is enough, not a minimum: shared capacity may need less (the
            # environment advice says how much).
            return (f"{name} needs {own} on its own; reserved for every share with a target, "
                    f"that adds up to {', '.join(short)}, more than the environment has, and "
                    f"no allocation tried shares capacity well enough to make up for it; the "
                    f"best allocation found gives {name} {shown}")
        return (f"no allocation tried meets it (best: {shown}); it needs {own} when served "
                "alone")

    def holdout(
        self, allocation: Allocation, jobs: list[SimJob], changes: list[PriorityChange]
    ) -> HoldoutCheck:
        problem = without_ids(self._compile(jobs, changes))
        searched_largest = self.largest
        # Held-out jobs may be larger than any searched one: an allocation in which one of them
        # could never start is reported as missing (its wait never ends), never replayed.
        self.largest = dict(searched_largest)
        for s, k, count in zip(problem.job_share, problem.job_unit, problem.job_count,
                               strict=True):
            if count > self.largest.get((s, k), 0):
                self.largest[(s, k)] = count
        try:
            calls = [self._columns(candidate, tuple(self.capacity))
                     for candidate in (self.allocation_of(self.today), allocation)]
        finally:
            self.largest = searched_largest
        results = self._map([
            (evaluate, (problem, columns, self.options), len(problem.job_ids))
            for columns in calls if columns is not None
        ])
        it = iter(results)
        scored = [next(it) if columns is not None else {} for columns in calls]
        return HoldoutCheck(len(jobs), self.outcomes(scored[0]), self.outcomes(scored[1]))


def _score_fields(scores: Scores, name: str) -> tuple[float | None, int, int]:
    score = scores.get(name)
    if score is None:
        return math.inf, 0, 0
    return score.wait_p95, score.budget_failures, score.jobs
