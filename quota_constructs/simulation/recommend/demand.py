"""Steps 1 and 2 of the search: today's replay, each share's demand, and what no allocation
can meet.

For every share with a target and every type it uses, the least *reserved* capacity with
which those jobs, alone, meet the target is bisected (:func:`.tasks.demand`); on a long
history it is bisected on the screening stretch and confirmed (raised where it falls short) on
the whole. A share whose jobs alone, given the whole environment of the types it lists, miss
its target misses it under every allocation: its reason is given here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

from ..inputs import SimulationOptions
from ..problem import Problem
from .explain import impossible
from .ranking import Ranking
from .replays import STRETCH, WHOLE, Call, Replayer
from .space import SearchSpace
from .tasks import Demand, Scores, ShareColumns, alone, demand, evaluate, meets


@dataclass(frozen=True)
class DemandAnalysis:
    """What the rest of the search starts from: today's replay, each share's demand per type,
    the partition those demands make, and the targets no allocation can meet."""

    today_scores: Scores
    """Today's declaration replayed ({} when it cannot be: a job could never start)."""
    today_replayed: bool
    demands: list[Demand]
    impossible: dict[str, str]
    """Per share whose jobs alone miss its target given the whole environment, why."""
    floors: list[list[int]]
    """Per share and type, what it needs when served alone by a reserved partition (see
    :func:`floors`)."""
    needed: list[int]
    """Per type, the floors added up: an environment sufficient for every target."""

    @property
    def unreachable(self) -> set[str]:
        """Shares whose targets no environment meets (:attr:`.tasks.Demand.met` false)."""
        return {d.share for d in self.demands if not d.met}


def analyse_demand(
    space: SearchSpace, ranking: Ranking, replayer: Replayer, screen: Problem | None,
    *, explain: bool = True, known: list[Demand] | None = None,
) -> DemandAnalysis:
    """One batch of replays: today's declaration, every share with a target alone with the
    whole environment of its types (only to ``explain`` a target no allocation meets: a
    search on another environment, whose reasons nobody reads, skips them), and its demand
    per type (bisected on ``screen`` when given, then confirmed on the whole history). Each
    answered before (by a search on another environment sharing the ledger) is read, not
    replayed. ``known`` demands (bisected by the search on today's environment) are taken as
    they are: a share's demand is the least reserved capacity its own jobs need, whatever
    the environment, so a search on another one does not bisect it again."""
    problem, options, goals = replayer.problem, replayer.options, ranking.goals
    today = space.today_allocation
    env = tuple(space.capacity)
    keyed: list[tuple[Hashable, Make]] = []
    today_columns = replayer.columns(today)
    if today_columns is not None:
        columns = today_columns
        keyed.append((("scores", WHOLE, today, env),
                      lambda: (evaluate, (problem, columns, options, replayer.budgets),
                               len(problem.job_ids))))
    part = WHOLE if screen is None else STRETCH
    pairs: list[tuple[int, int]] = []
    explained = list(goals) if explain else []
    for name in goals:
        s = space.index[name]
        listed = {k: space.capacity[k] for k, count in enumerate(today[s].limits) if count > 0}
        if explain:
            keyed.append(alone_call(problem, s, listed, options))
        pairs += [(s, k) for k in listed if (s, k) in space.largest]
    pairs.sort()
    if known is None:
        keyed += [_demand_call(space, ranking, replayer, screen or problem, part, s, k,
                               space.capacity[k], 0) for s, k in pairs]
    results = _counted(replayer, keyed)
    today_scores: Scores = results.pop(0) if today_columns is not None else {}
    alone_scores: list[Scores] = results[:len(explained)]
    demands: list[Demand] = results[len(explained):] if known is None else list(known)
    if screen is not None and known is None:
        demands = _confirmed_on_whole(space, ranking, replayer, pairs, demands)
    reasons: dict[str, str] = {}
    for name, scores in zip(explained, alone_scores, strict=True):
        goal = goals[name]
        if not meets(scores.get(name), goal.wait_p95, goal.max_budget_failures):
            reasons[name] = impossible(space, goal, name, scores,
                                       today[space.index[name]].limits, demands)
    rows = floors(space, demands)
    needed = [sum(row[k] for row in rows) for k in range(len(space.units))]
    return DemandAnalysis(today_scores, today_columns is not None, demands, reasons, rows,
                          needed)


Make = Callable[[], Call[Any]]
"""A call, made only when its answer is not in the ledger."""


def alone_call(
    problem: Problem, s: int, listed: dict[int, int], options: SimulationOptions
) -> tuple[Hashable, Make]:
    """Share ``s``'s jobs alone, given ``listed`` instances of each type it lists: its best
    case on an environment of those sizes (its key in the ledger, and the call)."""
    def make() -> Call[Scores]:
        whole = alone(problem, s, listed)
        return evaluate, (whole, ShareColumns.of(whole), options), len(whole.job_ids)

    return ("alone", s, tuple(sorted(listed.items()))), make


def beyond_reach(
    space: SearchSpace, ranking: Ranking, replayer: Replayer, env: tuple[int, ...],
    names: list[str],
) -> list[str]:
    """Of ``names``, the shares whose jobs alone, given the whole of ``env``'s types they
    list, miss their targets: no allocation on ``env`` meets them (step 2's reasoning, on
    another environment), known from single-share replays instead of a whole search."""
    calls = []
    for name in names:
        s = space.index[name]
        listed = {k: env[k] for k, count in enumerate(space.today_allocation[s].limits)
                  if count > 0}
        calls.append(alone_call(replayer.problem, s, listed, replayer.options))
    goals = ranking.goals
    return [name for name, scores in zip(names, _counted(replayer, calls), strict=True)
            if not meets(scores.get(name), goals[name].wait_p95, goals[name].max_budget_failures)]


def _demand_call(
    space: SearchSpace, ranking: Ranking, replayer: Replayer, jobs: Problem, part: str,
    s: int, k: int, start: int, at_least: int,
) -> tuple[Hashable, Make]:
    """The bisection of share ``s``'s demand of type ``k`` on ``jobs`` (``part`` of the
    history), given every capacity already replayed for those jobs and targets."""
    goal = ranking.goals[space.today[s].name]
    probes_key = ("probes", s, k, part, goal.wait_p95, goal.max_budget_failures)
    probes: dict[int, bool] = replayer.ledger.answers.setdefault(probes_key, {})
    key = ("demand", probes_key, start, at_least)

    def make() -> Call[Demand]:
        sub = alone(jobs, s, {k: space.capacity[k]})
        return demand, (sub, s, k, goal.wait_p95, goal.max_budget_failures, start,
                        replayer.options, at_least, dict(probes)), None

    return key, make


def _counted(replayer: Replayer, keyed: list[tuple[Hashable, Make]]) -> list[Any]:
    """:meth:`.replays.Replayer.each`, with each new bisection's probes counted and recorded
    for the next one (a bisection runs several replays in one task)."""
    answers = replayer.ledger.answers
    fresh = [key for key, _ in keyed if key not in answers]
    results = replayer.each(keyed)
    for key in dict.fromkeys(fresh):
        found = answers[key]
        if isinstance(found, Demand) and isinstance(key, tuple):
            replayer.count(found.probes, found.jobs_simulated)
            # The ledger's record of which capacities met the targets for these jobs (the
            # key's second part names it), read by the next bisection of them.
            answers[key[1]].update(found.probed)
    return results


def _confirmed_on_whole(
    space: SearchSpace, ranking: Ranking, replayer: Replayer, pairs: list[tuple[int, int]],
    screened: list[Demand],
) -> list[Demand]:
    """Each demand bisected on the stretch, confirmed (and raised where it falls short) on the
    whole history, from the stretch's answer upward; its probes and jobs counted with the
    stretch's."""
    confirm = [_demand_call(space, ranking, replayer, replayer.problem, WHOLE, s, k,
                            found.capacity, found.capacity)
               for (s, k), found in zip(pairs, screened, strict=True)]
    confirmed: list[Demand] = _counted(replayer, confirm)
    return [
        replace(full, probes=full.probes + part.probes,
                jobs_simulated=full.jobs_simulated + part.jobs_simulated)
        for full, part in zip(confirmed, screened, strict=True)
    ]


def floors(space: SearchSpace, demands: list[Demand]) -> list[list[int]]:
    """Per share and type, what it needs when served alone by a reserved partition: its
    demand for a share with targets, its largest job otherwise (so that job can start),
    never below 1 for a listed type nor below a pinned minimum; a pinned limit stays."""
    demand_of = {(d.share, d.unit): d.capacity for d in demands}
    rows: list[list[int]] = []
    for s, spec in enumerate(space.today):
        pin = space.pins.get(spec.name)
        row = []
        for k, unit in enumerate(space.units):
            listed = space.today_allocation[s].limits[k]
            if not listed:
                row.append(0)
                continue
            if pin is not None and pin.limits:
                row.append(listed)
                continue
            value = max(1, space.largest.get((s, k), 1), demand_of.get((spec.name, unit), 0))
            if pin is not None:
                value = max(value, pin.minimum.get(unit, 0))
            row.append(value)
        rows.append(row)
    return rows
