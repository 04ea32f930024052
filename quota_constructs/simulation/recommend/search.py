"""The search, step by step (see the package docs for why each step is there), and
:func:`recommend`, which runs it and answers a :class:`~.result.Recommendation`."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field, replace

from ...model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from ..inputs import PriorityChange, SimJob, SimulationOptions
from ..targets import ServiceTarget, targets_of
from .candidates import candidates
from .demand import DemandAnalysis, analyse_demand
from .environment import EnvironmentSearch, Found
from .explain import why_missed
from .holdout import HoldoutCheck, check_holdout
from .improve import improve
from .no_ops import drop_no_ops
from .pins import Pin, pins_by_share
from .ranking import Ranking
from .replays import Replayer
from .result import Recommendation, ShareCost, describe_change
from .screening import Picker, Scored, stretch
from .space import Allocation, SearchSpace
from .tasks import Scores, without_ids
from .walk_back import walk_back

DEFAULT_OPTIONS = SimulationOptions()
DEFAULT_MAX_SIMULATIONS = 60
DEFAULT_SCREEN_JOBS = 150_000


@dataclass(frozen=True)
class History:
    """What every search replays, on whichever environment: the searched jobs (by
    submission), their priority changes, and the stretch length for screening."""

    jobs: list[SimJob]
    changes: list[PriorityChange]
    screen_jobs: int


@dataclass(frozen=True)
class SearchOutcome:
    """The best allocation one search found, its replay, and the environment advice."""

    allocation: Allocation
    scores: Scores
    analysis: DemandAnalysis
    unmet: list[str]
    reasons: dict[str, str]
    """Why each share in ``unmet`` misses."""
    environment_needed: tuple[int, ...]
    environment_verified: bool
    environment_basis: str
    environment_allocation: Allocation | None
    environment_reasons: dict[str, str] = field(default_factory=dict)


def prepare(
    space: SearchSpace, goals: Mapping[str, ServiceTarget], history: History,
    options: SimulationOptions, pool: Executor, say: Callable[[str], None],
) -> Picker:
    """The tools of one search on ``space``: the history compiled once for every candidate
    (QuotaConfigError when a job could never run there), its screening stretch, the replayer
    and the ranking."""
    problem = without_ids(space.compile(history.jobs, history.changes, options))
    space = space.with_largest(problem)
    return Picker(space, Ranking(space, goals), Replayer(space, problem, options, pool),
                  stretch(problem, history.screen_jobs), say)


def search(
    picker: Picker, history: History, max_simulations: int, *, advise: bool = True
) -> SearchOutcome:
    """Steps 1-6 (and 7 when ``advise``): demand, candidates, improving, walking back,
    no-op changes undone, what each missed target lacks; then the environment needed."""
    space, ranking = picker.space, picker.ranking
    picker.say(f"replaying today's declaration and analysing each share's demand "
               f"({len(picker.replayer.problem.job_ids):,} jobs)")
    analysis = analyse_demand(space, ranking, picker.replayer, picker.screen)
    best, scores = _best(picker, analysis, max_simulations)
    unmet = ranking.missed(scores)
    reasons = dict(analysis.impossible)
    for name in unmet:
        reasons.setdefault(name, why_missed(space, ranking.goals[name], name, scores,
                                            analysis.floors, analysis.needed))
    outcome = SearchOutcome(
        allocation=best, scores=scores, analysis=analysis, unmet=unmet,
        reasons={name: reasons[name] for name in unmet},
        environment_needed=tuple(space.capacity), environment_verified=not unmet,
        environment_basis="today's environment",
        environment_allocation=best if not unmet else None,
    )
    return _advised(picker, history, outcome, max_simulations) if advise else outcome


def _best(picker: Picker, analysis: DemandAnalysis, max_simulations: int) -> Scored:
    """Steps 3-6: today's declaration when it meets every target and honours the pins; else
    the best candidate, improved; then walked back toward today and rid of no-op changes."""
    space, ranking = picker.space, picker.ranking
    today = space.today_allocation
    today_missed = (set(ranking.missed(analysis.today_scores)) if analysis.today_replayed
                    else set(ranking.goals))
    picker.say("today's declaration " + (
        "meets every target" if not today_missed else
        "misses the targets of " + ", ".join(sorted(today_missed))))
    # Today's declaration is an answer only where it honours the pins (a minimum above
    # today's limit must be given, even when today meets every target).
    today_valid = analysis.today_replayed and space.honours_pins(today)
    best, scores = today, analysis.today_scores
    if not today_valid or today_missed:
        tried = [space.honour_pins(today),
                 *candidates(space, ranking, analysis.today_scores, analysis.floors,
                             today_missed)]
        tried = [c for c in dict.fromkeys(tried) if c != today]
        picker.say(f"replaying {len(tried)} candidate allocations")
        picked = picker.pick(tried, (best, scores) if today_valid else None)
        if picked is not None:
            best, scores = picked
        best, scores = improve(picker, best, scores, max_simulations)
    if not ranking.missed(scores) and best != today:
        best, scores = walk_back(picker, best, scores, max_simulations)
    if best != today:
        best, scores = drop_no_ops(picker, best, scores)
    return best, scores


def _advised(
    picker: Picker, history: History, outcome: SearchOutcome, max_simulations: int
) -> SearchOutcome:
    """Step 7: the environment each type needs (:mod:`.environment`); a missed target's
    reason says when a replay on that environment meets it."""
    space = picker.space

    def search_at(env: tuple[int, ...]) -> tuple[Found | None, list[str]]:
        return search_elsewhere(picker, history, env, max_simulations)

    advice = EnvironmentSearch(space, picker.ranking, picker.replayer, outcome.analysis,
                               search_at).advise(outcome.allocation, outcome.scores)
    reasons = outcome.reasons
    if advice.verified and advice.sizes != tuple(space.capacity):
        sized = ", ".join(f"{n} x {unit}" for unit, n in zip(space.units, advice.sizes,
                                                             strict=True))
        unreachable = outcome.analysis.unreachable
        reasons = {
            name: why if name in unreachable
            else f"{why}; on an environment of {sized} its target is met (replayed)"
            for name, why in reasons.items()
        }
    return replace(
        outcome,
        reasons=reasons,
        environment_needed=advice.sizes,
        environment_verified=advice.verified,
        environment_basis=advice.basis,
        environment_allocation=advice.allocation,
        environment_reasons=advice.reasons,
    )


def search_elsewhere(
    picker: Picker, history: History, env: tuple[int, ...], max_simulations: int
) -> tuple[Found | None, list[str]]:
    """What ``recommend`` on the environment ``env`` (today's shares, the same jobs, pins and
    options) finds, when it meets every reachable target, and the targets it misses: the same
    search, so that advice about one environment holds when recommend is run on it. Its
    replays count as ``picker``'s."""
    sub: Picker | None = None
    try:
        sub = prepare(picker.space.on(env), picker.ranking.goals, history,
                      picker.replayer.options, picker.replayer.pool, lambda message: None)
        found = search(sub, history, max_simulations, advise=False)
    except QuotaConfigError:
        # A job larger than this environment's type can never run: every target of its
        # share is missed.
        return None, [str(name) for name in picker.ranking.goals]
    finally:
        if sub is not None:
            picker.replayer.count(sub.replayer.simulations, sub.replayer.jobs_simulated)
    unreachable = found.analysis.unreachable
    missed = [name for name in sub.ranking.missed(found.scores) if name not in unreachable]
    return (None if missed else (found.allocation, found.scores)), missed


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
    today = tuple(shares)
    goals = targets_of(today, targets)
    space = SearchSpace(tuple(capacity_limits), today, pins_by_share(today, pins))
    _check_numbers(holdout, workers, max_simulations, screen_jobs)
    history, held = _split(jobs, priority_changes, holdout, screen_jobs)

    own_pool = executor is None
    pool: Executor = executor or ProcessPoolExecutor(max_workers=workers or os.cpu_count())
    try:
        picker = prepare(space, goals, history, options, pool, say)
        picker.space.check_pins()
        result = search(picker, history, max_simulations)
        holdout_check: HoldoutCheck | None = None
        if held.jobs:
            say(f"replaying {len(held.jobs):,} held-out jobs")
            holdout_check = check_holdout(picker.ranking, picker.replayer, result.allocation,
                                          held.jobs, held.changes)
    finally:
        if own_pool:
            pool.shutdown()
    return _recommendation(picker, goals, result, holdout_check, len(history.jobs), began)


def _check_numbers(
    holdout: float, workers: int | None, max_simulations: int, screen_jobs: int
) -> None:
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


def _split(
    jobs: Iterable[SimJob], priority_changes: Iterable[PriorityChange], holdout: float,
    screen_jobs: int,
) -> tuple[History, History]:
    """The searched history and the held-out last ``holdout`` of it (by submission)."""
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
    return (History(searched, [c for c in changes if c.job_id not in held_ids], screen_jobs),
            History(held, [c for c in changes if c.job_id in held_ids], screen_jobs))


def _recommendation(
    picker: Picker, goals: dict[str, ServiceTarget], result: SearchOutcome,
    holdout: HoldoutCheck | None, searched_jobs: int, began: float,
) -> Recommendation:
    space, ranking, replayer = picker.space, picker.ranking, picker.replayer
    today_scores = result.analysis.today_scores
    recommended = space.specs(result.allocation)
    return Recommendation(
        capacity_limits=space.environment,
        today=space.today,
        shares=recommended,
        meets_targets=not result.unmet,
        unmet=result.unmet,
        reasons=result.reasons,
        targets=goals,
        today_outcomes=ranking.outcomes(today_scores),
        outcomes=ranking.outcomes(result.scores),
        change=space.change(result.allocation),
        environment_needed=dict(zip(space.units, result.environment_needed, strict=True)),
        environment_needed_verified=result.environment_verified,
        environment_basis=result.environment_basis,
        environment_shares=(space.specs(result.environment_allocation)
                            if result.environment_allocation is not None else []),
        environment_reasons=result.environment_reasons,
        demand=result.analysis.demands,
        costs=[
            ShareCost(was.name, describe_change(was, now), today_scores.get(was.name),
                      result.scores.get(was.name))
            for was, now in zip(space.today, recommended, strict=True)
        ],
        holdout=holdout,
        searched_jobs=searched_jobs,
        simulations=replayer.simulations,
        jobs_simulated=replayer.jobs_simulated,
        seconds=time.perf_counter() - began,
    )
