"""By when a waiting job has started at the latest: the pure part of the start estimate
(:mod:`.estimate` reads the live queue and answers; nothing here does I/O).

The question. Job T of quota share S needs n instances of type k and waits (or is about to be
submitted). From now on, under these assumptions:

- every attempt holds its instances at most until its ``MaxRuntimeInSeconds``, counted from the
  attempt's start, is over, and may end at any moment before (a job finishes, fails or is
  stopped early);
- nothing else is submitted, and no priority, share or environment changes;
- where AWS Batch documents nothing, it schedules as the simulator's engine does
  (:class:`~quota_constructs.simulation.SimulationOptions`' defaults): one waiting head per share
  and instance type, idle capacity to borrowers first come first served, a lender's reclaim
  takes effect at once and frees what it needs (partly borrowed jobs included), a preempted job
  waits again at its original place;

by when has T certainly started (its next attempt)?

**Why the engine's run with every job at its maximum is not a bound by itself.** Scheduling is
not monotone (Graham's anomalies): a job that ends early can let another job start first and
hold, for its whole run time, the capacity T would have had. Say T borrows 2 instances and was
submitted first; the 2 instances it would borrow are busy until 10:00; job C of another
borrowing share needs 1 instance for up to 8 hours. With every job at its maximum, both
instances free at 10:00 and T, first come, takes them. Should one end at 9:00, C takes it (T
needs two; a later job that fits starts) and T waits until C ends: 17:00, not 10:00. So a bound
needs a reason why ends coming earlier can only bring T's start earlier. Two such reasons are
checked (both need the defaults above); ``latest`` is the earlier of the bounds whose reason
holds, and None when neither holds, with why:

1. **Nothing else starts first** (:data:`SHARED`): no job of another share waits for k (so
   none can take capacity before T), and the jobs ahead of T in its own queue (its share and
   type, higher priority or equal and earlier) can preempt no one: no other share runs
   borrowed k they could reclaim, and none of them outranks a running job of S under in-share
   preemption. Then, until T starts, the only starts are those jobs', in queue order, and no
   job is preempted. Proof: by induction on that order, with ends no later than at their
   maxima, each of them starts no later and ends no later, so at the moment it (or T) started
   in the run at maxima, the jobs running now are a subset of those running then; every way
   the engine starts a head (within its limit on free capacity or by reclaiming, borrowing
   free capacity within its ceiling, preempting lower-priority jobs of its share) needs no
   more than it needed then. The engine's run at maxima is then a bound, and exact.
2. **Its share's own capacity** (:data:`OWN`): the shares' limits fit in the environment (so a
   job within its share's limit always starts, by reclaiming lent capacity), S runs nothing
   borrowed of k, no job ahead of T outranks a running job of S under in-share preemption,
   and either S cannot borrow k or nothing is ahead of T. Then S's jobs of k are never
   preempted before T starts and start within S's limit in queue order: first come, first
   served on a fixed number of instances, which is monotone (a job starting earlier ends
   earlier, and a job running at a moment in the faster world also runs at it in the slower
   one). The bound is the engine's run with S held to its own limit: no borrowing and no
   in-share preemption for S (T may do better by either; the bound does not count on it).

Neither reason depends on which borrowing jobs a reclaim takes (AWS's victim heuristic is
unpublished): only on a reclaim freeing what the lender's job needs. A job AWS Batch reports
it cannot place, or one the rules model says can never run, starts never and is set aside, as
the emulator does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from quota_constructs.model import (
    BorrowingRules,
    CapacityLimit,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
)
from quota_constructs.simulation.inputs import HeadOfLine, SimulationOptions

SHARED: Final = "SHARED"
"""The bound of reason 1: the engine's run of the live state with every job at its maximum."""
OWN: Final = "OWN"
"""The bound of reason 2: that run with the job's share held to its own limit."""


@dataclass(frozen=True)
class HeldCapacity:
    """A dispatched job holding instances of the type in question."""

    job_id: str
    share: str
    count: int
    priority: int
    started_ms: int
    """When its current attempt started (at the latest)."""
    ends_ms: int | None
    """When its current attempt's maximum run time is over; None when no maximum is known."""
    order: tuple[int, ...] = ()
    """Ties of ``started_ms`` in the order the jobs were submitted."""


@dataclass(frozen=True)
class QueuedJob:
    """A waiting job of the target's share (or the target) and its place in the queue."""

    job_id: str
    share: str
    count: int
    priority: int
    max_runtime_seconds: float | None
    """None when no maximum run time is known."""
    order: tuple[int, ...]
    """Among equal priorities, first submitted first (its ``createdAt``, then ties)."""

    @property
    def queue_key(self) -> tuple[int, ...]:
        """The engine's order of a share's waiting jobs: higher priority first, then earlier."""
        return (-self.priority, *self.order)


@dataclass(frozen=True)
class Rival:
    """A waiting job of another share that may need the same type."""

    job_id: str
    share: str
    count: int | None
    """Instances it needs; None when its request could not be read (it may need the type)."""


@dataclass(frozen=True)
class UnitState:
    """What the bound reads of the live queue: one instance type's holders and waiters."""

    unit: str
    now_ms: int
    environment: Sequence[CapacityLimit]
    shares: Sequence[QuotaShareSpec]
    """Every share of the queue as the model reads it (DISABLED ones too)."""
    running: Sequence[HeldCapacity]
    """Every dispatched job holding ``unit``."""
    queued: Sequence[QueuedJob]
    """The waiting jobs of the target's share for ``unit`` that can ever run (not the target)."""
    target: QueuedJob
    rivals: Sequence[Rival] = ()
    """Waiting jobs of other shares for ``unit`` (those that can never run are set aside)."""
    rivals_complete: bool = True
    """Whether every waiting job of the other shares was read (else there may be more)."""
    unowned_capacity_borrowable: bool = True


@dataclass(frozen=True)
class StartBound:
    latest_ms: int | None
    assumes: str
    """One sentence: what the bound assumes, or why there is none."""
    blocking_jobs: tuple[str, ...] = ()


ASSUMED: Final = ("every running job holds its {unit} until its maximum run time "
                  "(StoppingCondition.MaxRuntimeInSeconds from its attempt's start) is over at "
                  "the latest, nothing else is submitted and no priority or share changes")


def bound_start(state: UnitState) -> StartBound:
    """The latest moment ``state.target`` starts under the module's assumptions, or None with
    the reason there is no such moment."""
    try:
        rules = QuotaAllocation.check(
            environment_limits=state.environment, shares=state.shares,
            unowned_capacity_borrowable=state.unowned_capacity_borrowable,
        ).rules
    except QuotaConfigError as error:
        return StartBound(None, f"the live shares are not a layout the rules model reads "
                                f"({error}), so no bound is computed")
    never = never_starts(state, rules)
    if never is not None:
        return StartBound(None, never)
    return _Bounds(state, rules).answer()


def never_starts(state: UnitState, rules: BorrowingRules) -> str | None:
    """Why the target can never start under the rules model, or None."""
    target, unit = state.target, state.unit
    spec = next((s for s in state.shares if s.name == target.share), None)
    if spec is None:
        return f"quota share {target.share!r} is not on the job queue: the job never starts"
    if not spec.enabled:
        return (f"quota share {target.share!r} is DISABLED: its jobs do not start until it is "
                "enabled again")
    if unit not in rules.environment:
        return f"the service environment lists no {unit}: the job never starts"
    rule = rules.rules(target.share, unit)
    if rule.own == 0:
        return (f"quota share {target.share!r} has no capacity limit for {unit}: the job never "
                "starts")
    if target.count > rule.reach:
        return (f"it needs {target.count} {unit} but quota share {target.share!r} can reach at "
                f"most {rule.reach} (its own limit plus what it may borrow): it never starts")
    return None


@dataclass(frozen=True)
class _Outcome:
    """One engine run: when the target first started (ms), and who ended at that moment."""

    started_ms: int | None
    ended_then: tuple[str, ...] = ()
    endless: tuple[str, ...] = ()
    """Jobs in its way with no known maximum run time."""
    unplaced: tuple[str, ...] = ()
    """Running jobs the rules model would not let run: the live state is not one it reads."""


class _Bounds:
    """The two reasons of the module docstring for one state, and the runs they allow."""

    def __init__(self, state: UnitState, rules: BorrowingRules) -> None:
        self.state, self.rules = state, rules
        unit, share = state.unit, state.target.share
        self.ahead = sorted((j for j in state.queued if j.queue_key < state.target.queue_key
                             and self.can_run(j.share, j.count)), key=lambda j: j.queue_key)
        self.rivals = [r.job_id for r in state.rivals if r.share != share
                       and self.can_run(r.share, r.count)]
        self.use: dict[str, int] = {}
        for held in state.running:
            self.use[held.share] = self.use.get(held.share, 0) + held.count
        self.rule = rules.rules(share, unit)
        self.spec = next(s for s in state.shares if s.name == share)

    def can_run(self, share: str, count: int | None) -> bool:
        """Whether a job of ``share`` needing ``count`` (None: unknown) instances of the type
        can ever start (else it is set aside, as the emulator does)."""
        spec = next((s for s in self.state.shares if s.name == share), None)
        if spec is None or not spec.enabled:
            return False
        rule = self.rules.rules(share, self.state.unit)
        return rule.own > 0 and (count is None or count <= rule.reach)

    # ------------------------------------------------------------------ the two reasons

    def over_limit(self, share: str) -> bool:
        return self.use.get(share, 0) > self.rules.rules(share, self.state.unit).own

    @property
    def in_share_inert(self) -> bool:
        """No job ahead outranks a running job of the share under in-share preemption."""
        if not self.spec.in_share_preemption or not self.ahead:
            return True
        running = [h.priority for h in self.state.running if h.share == self.spec.name]
        return max(j.priority for j in self.ahead) <= min(running, default=math.inf)

    def shared_fails(self) -> str | None:
        """Why reason 1 does not hold, or None when it does."""
        state, unit = self.state, self.state.unit
        if self.rivals:
            return (f"job(s) {_listed(self.rivals)} of other shares also wait for {unit} and, "
                    "should capacity free early, could start first and hold it for up to "
                    "their own maximum run time")
        if not state.rivals_complete:
            return (f"not every waiting job of the other shares could be read, so one may take "
                    f"{unit} freed early first")
        if self.ahead:
            borrowers = sorted(s.name for s in state.shares
                               if s.name != self.spec.name and self.over_limit(s.name))
            if borrowers:
                return (f"the jobs ahead of it could reclaim the {unit} that {_listed(borrowers)} "
                        "borrow, and the preempted jobs would then wait for capacity too")
            if not self.in_share_inert:
                return ("jobs ahead of it outrank running jobs of its share, so in-share "
                        "preemption could requeue work ahead of it")
        return None

    def own_fails(self) -> str | None:
        """Why reason 2 does not hold, or None when it does."""
        rules, unit, name = self.rules, self.state.unit, self.spec.name
        options = _options(self.state)
        if not options.reclaim_partly_borrowed_jobs:
            return "lenders may not reclaim partly borrowed jobs"
        if rules.owned(unit) > rules.usable_capacity(unit):
            return (f"the shares' limits of {unit} add up to more than the environment has, so "
                    "its share's own limit is not guaranteed")
        if self.state.target.count > self.rule.own:
            return (f"it needs more {unit} than its share's own limit of {self.rule.own}, so "
                    "it can start only by borrowing")
        if self.over_limit(name):
            return (f"quota share {name!r} runs on borrowed {unit}, which lenders may reclaim "
                    "and requeue ahead of it")
        if self.rule.borrows and self.ahead:
            return ("the jobs ahead of it may borrow and be reclaimed, then wait again ahead of "
                    "it")
        if not self.in_share_inert:
            return ("jobs ahead of it outrank running jobs of its share, so in-share "
                    "preemption could requeue work ahead of it")
        return None

    # --------------------------------------------------------------------------- answering

    def answer(self) -> StartBound:
        state = self.state
        if _options(state).head_scope is not HeadOfLine.PER_SHARE_AND_TYPE:
            return StartBound(None, "the estimate's reasons hold for one waiting head per share "
                                    "and instance type only")
        shared, own = self.shared_fails(), self.own_fails()
        runs: list[tuple[str, Sequence[QuotaShareSpec]]] = []
        if shared is None:
            runs.append((SHARED, state.shares))
        if own is None:
            runs.append((OWN, [_held_to_own_limit(s) if s.name == self.spec.name else s
                               for s in state.shares]))
        if not runs:
            ahead = tuple(j.job_id for j in self.ahead)
            return StartBound(None, f"no latest start can be promised: {shared}; and {own}",
                              tuple(dict.fromkeys((*self.rivals, *ahead))))
        outcomes = [(kind, _run(state, self.ahead, specs)) for kind, specs in runs]
        unplaced = next((o.unplaced for _, o in outcomes if o.unplaced), ())
        if unplaced:
            return StartBound(None, f"the jobs running now do not fit the rules model as read "
                                    f"(job(s) {_listed(unplaced)} would not run), so no bound "
                                    "is computed", unplaced)
        started = [(o.started_ms, kind, o) for kind, o in outcomes if o.started_ms is not None]
        if not started:
            endless = tuple(dict.fromkeys(j for _, o in outcomes for j in o.endless))
            if endless:
                return StartBound(None, f"it waits on job(s) {_listed(endless)} with no known "
                                        "maximum run time (no readable StoppingCondition."
                                        "MaxRuntimeInSeconds)", endless)
            return StartBound(None, "from the state read it never starts under the rules model")
        latest, kind, outcome = min(started, key=lambda item: (item[0], item[1]))
        blocking = tuple(dict.fromkeys((*outcome.ended_then,
                                        *(j.job_id for j in self.ahead))))
        return StartBound(max(latest, state.now_ms), self.assumes(kind, latest), blocking)

    def assumes(self, kind: str, latest_ms: int) -> str:
        unit = self.state.unit
        if latest_ms <= self.state.now_ms:
            return (f"it can start now ({unit} it may use is free or can be reclaimed): AWS "
                    "Batch should dispatch it on its next scheduling pass")
        assumed = ASSUMED.format(unit=unit)
        if kind == SHARED:
            return (f"{assumed}, and lent capacity is reclaimed at once; no other share waits "
                    f"for {unit}, so only the jobs ahead of it in its share can start first")
        return (f"{assumed}, and quota share {self.spec.name!r} gets its own {unit} back as its "
                "own jobs end (lent capacity is reclaimed at once, whichever borrowing jobs "
                "AWS Batch preempts)")


def _held_to_own_limit(spec: QuotaShareSpec) -> QuotaShareSpec:
    """The share as reason 2 counts on it: no borrowing and no in-share preemption."""
    if spec.strategy is SharingStrategy.LEND_AND_BORROW:
        spec = replace(spec, borrow_limit_percent=0)
    return replace(spec, in_share_preemption=False)


def _options(state: UnitState) -> SimulationOptions:
    """The engine's defaults (what the emulator runs with) and the rules model's reading."""
    return SimulationOptions(unowned_capacity_borrowable=state.unowned_capacity_borrowable)


def _run(state: UnitState, ahead: Sequence[QueuedJob],
         specs: Sequence[QuotaShareSpec]) -> _Outcome:
    """Step the engine from the live state with every job at its maximum until nothing moves;
    when the target first started and which jobs ended at that moment."""
    # The emulator's own stepping API: the engine under a clock, told each job's start and end.
    from quota_constructs.emulator.scheduler import compile_shares
    from quota_constructs.simulation.engine import SteppingEngine

    options = _options(state)
    problem = compile_shares(state.environment, specs, options)
    shares = {name: i for i, name in enumerate(problem.share_names)}
    unit = problem.unit_names.index(state.unit)
    moments = _Moments()
    engine = SteppingEngine(problem, options, moments)
    origin = min([state.now_ms, *(held.started_ms for held in state.running)])
    now = (state.now_ms - origin) / 1000

    def add(share: str, count: int, priority: int, at: float, seconds: float | None) -> int:
        return engine.add_job(share=shares[share], unit=unit, count=count, submitted=at,
                              duration=math.inf if seconds is None else max(0.0, seconds),
                              priority=priority)

    # The running jobs join at the moment they started, in that order, so each takes the place
    # (within its share's limit, or borrowed) it took then among those still running.
    names: dict[int, str] = {}
    seeds: dict[int, HeldCapacity] = {}
    for held in sorted(state.running, key=lambda h: (h.started_ms, h.order)):
        start = min(held.started_ms, state.now_ms)
        seconds = None if held.ends_ms is None else (held.ends_ms - start) / 1000
        j = add(held.share, held.count, held.priority, (start - origin) / 1000, seconds)
        names[j], seeds[j] = held.job_id, held
    engine.advance(now)
    unplaced = tuple(held.job_id for j, held in seeds.items()
                     if (held.ends_ms is None or held.ends_ms > state.now_ms)
                     and not engine.is_running(j))
    if unplaced:
        return _Outcome(None, unplaced=unplaced)
    for job in ahead:
        names[add(job.share, job.count, job.priority, now, job.max_runtime_seconds)] = job.job_id
    wanted = state.target
    target = add(wanted.share, wanted.count, wanted.priority, now, wanted.max_runtime_seconds)
    names[target] = wanted.job_id
    engine.advance(math.inf)
    started = moments.first_start.get(target)
    if started is None:
        endless = [held.job_id for held in state.running if held.ends_ms is None]
        endless += [job.job_id for job in ahead if job.max_runtime_seconds is None]
        return _Outcome(None, endless=tuple(endless))
    return _Outcome(origin + round(started * 1000),
                    tuple(names[j] for j in moments.ended.get(started, ())))


class _Moments:
    """What the engine reports (its :class:`~quota_constructs.simulation.engine.JobReports`):
    each job's first start and who ended at each moment."""

    def __init__(self) -> None:
        self.first_start: dict[int, float] = {}
        self.ended: dict[float, list[int]] = {}

    def job_started(self, j: int, now: float, borrowed: bool) -> None:
        self.first_start.setdefault(j, now)

    def job_preempted(self, j: int, now: float, by: int, cross_share: bool,
                      failed: bool) -> None:
        return

    def job_ended(self, j: int, now: float) -> None:
        self.ended.setdefault(now, []).append(j)


def _listed(ids: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")

