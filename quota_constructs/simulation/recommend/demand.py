"""Steps 1 and 2 of the search: today's replay, each share's demand, and what no allocation
can meet.

For every share with a target and every type it uses, the least *reserved* capacity with
which those jobs, alone, meet the target is bisected (:func:`.tasks.demand`); on a long
history it is bisected on the screening stretch and confirmed (raised where it falls short) on
the whole. A share whose jobs alone, given the whole environment of the types it lists, miss
its target misses it under every allocation: its reason is given here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..problem import Problem
from .explain import impossible
from .ranking import Ranking
from .replays import Call, Replayer
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
    space: SearchSpace, ranking: Ranking, replayer: Replayer, screen: Problem | None
) -> DemandAnalysis:
    """One batch of replays: today's declaration, every share with a target alone with the
    whole environment of its types, and its demand per type (bisected on ``screen`` when
    given, then confirmed on the whole history)."""
    problem, options, goals = replayer.problem, replayer.options, ranking.goals
    today = space.today_allocation
    calls: list[Call[Any]] = []
    today_columns = replayer.columns(today)
    if today_columns is not None:
        calls.append((evaluate, (problem, today_columns, options), len(problem.job_ids)))
    per_type: dict[tuple[int, int], Problem] = {}
    for name in goals:
        s = space.index[name]
        listed = {k: space.capacity[k] for k, count in enumerate(today[s].limits) if count > 0}
        whole = alone(problem, s, listed)
        calls.append((evaluate, (whole, ShareColumns.of(whole), options), len(whole.job_ids)))
        for k in listed:
            if (s, k) in space.largest:
                per_type[(s, k)] = alone(screen or problem, s, {k: space.capacity[k]})
    pairs = sorted(per_type)
    for s, k in pairs:
        goal = goals[space.today[s].name]
        calls.append((demand, (per_type[(s, k)], s, k, goal.wait_p95, goal.max_budget_failures,
                               space.capacity[k], options), 0))
    results = replayer.run(calls)
    today_scores: Scores = results.pop(0) if today_columns is not None else {}
    alone_scores: list[Scores] = results[:len(goals)]
    demands: list[Demand] = results[len(goals):]
    if screen is not None:
        demands = _confirmed_on_whole(space, ranking, replayer, pairs, demands)
    reasons: dict[str, str] = {}
    for name, scores in zip(goals, alone_scores, strict=True):
        goal = goals[name]
        if not meets(scores.get(name), goal.wait_p95, goal.max_budget_failures):
            reasons[name] = impossible(space, goal, name, scores,
                                       today[space.index[name]].limits, demands)
    for found in demands:
        replayer.count(found.probes - 1, found.jobs_simulated)
    rows = floors(space, demands)
    needed = [sum(row[k] for row in rows) for k in range(len(space.units))]
    return DemandAnalysis(today_scores, today_columns is not None, demands, reasons, rows,
                          needed)


def _confirmed_on_whole(
    space: SearchSpace, ranking: Ranking, replayer: Replayer, pairs: list[tuple[int, int]],
    screened: list[Demand],
) -> list[Demand]:
    """Each demand bisected on the stretch, confirmed (and raised where it falls short) on the
    whole history, from the stretch's answer upward; its probes and jobs counted with the
    stretch's (the confirmation's own replay is not counted twice)."""
    confirm: list[Call[Demand]] = []
    for (s, k), found in zip(pairs, screened, strict=True):
        goal = ranking.goals[space.today[s].name]
        whole_jobs = alone(replayer.problem, s, {k: space.capacity[k]})
        confirm.append((demand, (whole_jobs, s, k, goal.wait_p95, goal.max_budget_failures,
                                 found.capacity, replayer.options, found.capacity), 0))
    confirmed = replayer.run(confirm)
    replayer.count(-len(confirm), 0)
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
