"""The search, step by step (see the package docs for why each step is there), and
:func:`recommend`, which runs it and answers a :class:`~.result.Recommendation`."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field, replace

from ...model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from ..inputs import PriorityChange, SimJob, SimulationOptions
from ..problem import Problem
from ..targets import ServiceTarget, targets_of
from .candidates import candidates
from .contract import Contract, budgets_of, check_trades
from .demand import DemandAnalysis, analyse_demand, beyond_reach
from .environment import EnvironmentSearch, Found
from .explain import why_missed
from .holdout import HoldoutCheck, check_holdout
from .improve import improve
from .no_ops import drop_no_ops
from .pins import Pin, pins_by_share
from .ranking import Ranking
from .replays import Ledger, Replayer
from .result import Recommendation, ShareCost, describe_change
from .screening import Picker, Scored, stretch
from .space import Allocation, SearchSpace
from .tasks import Demand, Scores, without_ids
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
class Compiled:
    """The searched history compiled once (its screening stretch beside it), shared by the
    searches on other environments: a replay's outcome depends on the jobs and the
    allocation's columns, never on which environment the jobs were first checked against."""

    problem: Problem
    screen: Problem | None
    largest: Mapping[tuple[int, int], int]

    def fits(self, env: Sequence[int]) -> bool:
        """Every job could run on ``env`` (no type smaller than a job of it): the check the
        compiler makes, without compiling again."""
        return all(count <= env[k] for (_, k), count in self.largest.items())


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
    contract: Contract | None = None
    environment_scores: Scores = field(default_factory=dict)
    """The replay of ``environment_allocation`` on ``environment_needed``."""


def prepare(
    space: SearchSpace, goals: Mapping[str, ServiceTarget], history: History,
    options: SimulationOptions, pool: Executor, say: Callable[[str], None],
    ledger: Ledger | None = None,
) -> tuple[Picker, Compiled]:
    """The tools of one search on ``space``: the history compiled once for every candidate
    (QuotaConfigError when a job could never run there), its screening stretch, the replayer
    and the ranking."""
    problem = without_ids(space.compile(history.jobs, history.changes, options))
    space = space.with_largest(problem)
    compiled = Compiled(problem, stretch(problem, history.screen_jobs), space.largest)
    return _picker(space, goals, compiled, options, pool, say, ledger or Ledger()), compiled


def _picker(
    space: SearchSpace, goals: Mapping[str, ServiceTarget], compiled: Compiled,
    options: SimulationOptions, pool: Executor, say: Callable[[str], None], ledger: Ledger,
    contract: Contract | None = None, prefix: str = "",
) -> Picker:
    space = replace(space, largest=compiled.largest)
    replayer = Replayer(space, compiled.problem, options, pool, ledger, budgets_of(space.today),
                        prefix=prefix)
    return Picker(space, Ranking(space, goals, contract), replayer, compiled.screen, say)


def search(
    picker: Picker, history: History, max_simulations: int, *, compiled: Compiled,
    traded: Collection[str] = (), advise: bool = True, demands: list[Demand] | None = None,
) -> SearchOutcome:
    """Steps 1-6 (and 7 when ``advise``): demand, candidates, improving, walking back,
    no-op changes undone, what each missed target lacks; then the environment needed. The
    contract (:mod:`.contract`) is what today's declaration keeps, unless ``picker``'s
    ranking already holds one (a search on another environment keeps today's)."""
    space = picker.space
    picker.say(f"replaying today's declaration and analysing each share's demand "
               f"({len(picker.replayer.problem.job_ids):,} jobs)")
    with picker.replayer.doing("demand analysis"):
        analysis = analyse_demand(space, picker.ranking, picker.replayer, picker.screen,
                                  explain=advise, known=demands)
    if picker.ranking.contract is None:
        contract = Contract.of(space.today, picker.ranking.goals, analysis.today_scores,
                               analysis.today_replayed, traded)
        picker = replace(picker, ranking=replace(picker.ranking, contract=contract))
    ranking = picker.ranking
    best, scores = _best(picker, analysis, max_simulations, shown=advise)
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
        environment_allocation=best if ranking.acceptable(scores) else None,
        contract=ranking.contract, environment_scores=scores,
    )
    return _advised(picker, history, outcome, max_simulations, compiled) if advise \
        else outcome


def _best(
    picker: Picker, analysis: DemandAnalysis, max_simulations: int, *, shown: bool = True
) -> Scored:
    """Steps 3-6: today's declaration when it meets every target and honours the pins; else
    the best candidate, improved; then walked back toward today and rid of no-op changes.
    An answer nobody is ``shown`` (the search on another environment that the environment
    advice runs) is only asked whether it meets every target: when it does not, its no-op
    changes are left in (their replays would decide nothing)."""
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
        with picker.replayer.doing("candidates"):
            picked = picker.pick(tried, (best, scores) if today_valid else None)
        if picked is not None:
            best, scores = picked
        with picker.replayer.doing("improving"):
            best, scores = improve(picker, best, scores, max_simulations)
    if ranking.acceptable(scores) and best != today:
        with picker.replayer.doing("walking back"):
            best, scores = walk_back(picker, best, scores, max_simulations)
    if best != today and (shown or ranking.acceptable(scores)):
        with picker.replayer.doing("changes that change nothing"):
            best, scores = drop_no_ops(picker, best, scores)
    return best, scores


def _advised(
    picker: Picker, history: History, outcome: SearchOutcome, max_simulations: int,
    compiled: Compiled,
) -> SearchOutcome:
    """Step 7: the environment each type needs (:mod:`.environment`); a missed target's
    reason says when a replay on that environment meets it."""
    space = picker.space
    picker = replace(picker, ranking=replace(picker.ranking, contract=outcome.contract))

    def search_at(env: tuple[int, ...]) -> tuple[Found | None, list[str]]:
        return search_elsewhere(picker, history, env, max_simulations, compiled,
                                outcome.analysis.demands)

    reachable = [name for name in picker.ranking.goals
                 if name not in outcome.analysis.unreachable]

    def ruled_out(env: tuple[int, ...]) -> bool:
        return not compiled.fits(env) or bool(
            beyond_reach(space, picker.ranking, picker.replayer, env, reachable))

    with picker.replayer.doing("environment advice"):
        advice = EnvironmentSearch(space, picker.ranking, picker.replayer, outcome.analysis,
                                   search_at, ruled_out, picker.say, picker.screen).advise(
            outcome.allocation, outcome.scores)
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
        environment_scores=advice.scores,
    )


ELSEWHERE = "environment advice, recommend's search on another environment: "
"""What the replays of a search on another environment are counted under (then its step)."""


def search_elsewhere(
    picker: Picker, history: History, env: tuple[int, ...], max_simulations: int,
    compiled: Compiled, demands: list[Demand] | None = None,
) -> tuple[Found | None, list[str]]:
    """What ``recommend`` on the environment ``env`` (today's shares, the same jobs, pins and
    options, today's contract) finds, when it meets every reachable target and keeps the
    contract, and the shares it fails: the same search, so that advice about one environment
    holds when recommend is run on it. It shares ``picker``'s ledger: what either replayed,
    the other reads."""
    if not compiled.fits(env):
        # A job larger than this environment's type can never run: every target of its
        # share is missed.
        return None, [str(name) for name in picker.ranking.goals]
    replayer = picker.replayer
    sub = _picker(picker.space.on(env), picker.ranking.goals, compiled, replayer.options,
                  replayer.pool, lambda message: None, replayer.ledger,
                  picker.ranking.contract, ELSEWHERE)
    found = search(sub, history, max_simulations, compiled=compiled, advise=False,
                   demands=demands)
    unreachable = found.analysis.unreachable
    failed = [name for name in dict.fromkeys([
        *sub.ranking.missed(found.scores), *(b.share for b in sub.ranking.broken(found.scores))
    ]) if name not in unreachable]
    return (None if failed else (found.allocation, found.scores)), failed


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
    allow_trades: Iterable[str] = (),
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

    Every share's agreement is kept (:mod:`.contract`): no recommendation, and no
    environment advice, fails more of a share's jobs by its declared interruption budget than
    today's declaration does, or misses a target today's declaration meets. ``allow_trades``
    names the shares whose agreements the search may trade for other shares' targets (``"*"``:
    every share); the answer's ``trades`` names each line given up, today's figure and the
    recommended one.
    """
    began = time.perf_counter()
    say = progress or (lambda message: None)
    today = tuple(shares)
    goals = targets_of(today, targets)
    space = SearchSpace(tuple(capacity_limits), today, pins_by_share(today, pins))
    _check_numbers(holdout, workers, max_simulations, screen_jobs)
    traded = _trades(today, allow_trades)
    history, held = _split(jobs, priority_changes, holdout, screen_jobs)

    own_pool = executor is None
    pool: Executor = executor or ProcessPoolExecutor(max_workers=workers or os.cpu_count())
    try:
        picker, compiled = prepare(space, goals, history, options, pool, say)
        picker.space.check_pins()
        result = search(picker, history, max_simulations, compiled=compiled, traded=traded)
        holdout_check: HoldoutCheck | None = None
        if held.jobs:
            say(f"replaying {len(held.jobs):,} held-out jobs")
            with picker.replayer.doing("hold-out check"):
                holdout_check = check_holdout(picker.ranking, picker.replayer,
                                              result.allocation, held.jobs, held.changes)
    finally:
        if own_pool:
            pool.shutdown()
    return _recommendation(picker, goals, result, holdout_check, len(history.jobs), began)


def _trades(today: Sequence[QuotaShareSpec], allow_trades: Iterable[str]) -> frozenset[str]:
    if isinstance(allow_trades, str):
        # One name given bare would otherwise be read letter by letter.
        allow_trades = (allow_trades,)
    traded = frozenset(allow_trades)
    check_trades(today, traded)
    return traded


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
    space, ranking, ledger = picker.space, picker.ranking, picker.replayer.ledger
    today_scores = result.analysis.today_scores
    recommended = space.specs(result.allocation)
    contract = result.contract
    trades = [] if contract is None else contract.trades(today_scores, result.scores)
    environment_trades = [] if contract is None or result.environment_allocation is None \
        else contract.trades(today_scores, result.environment_scores)
    return Recommendation(
        capacity_limits=space.environment,
        today=space.today,
        shares=recommended,
        meets_targets=not result.unmet and all(trade.allowed for trade in trades),
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
        simulations=ledger.total,
        jobs_simulated=ledger.total_jobs,
        seconds=time.perf_counter() - began,
        trades=trades,
        environment_trades=environment_trades,
        replays=dict(ledger.simulations),
        replayed_jobs=dict(ledger.jobs),
        reused_replays=sum(ledger.reused.values()),
    )
