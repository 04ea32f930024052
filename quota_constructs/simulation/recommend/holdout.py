"""The hold-out check: today's and the recommended declaration replayed on the last part of
the history, which the search never saw."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..inputs import PriorityChange, SimJob
from ..targets import TargetOutcome
from .ranking import Ranking
from .replays import Call, Replayer
from .space import Allocation
from .tasks import evaluate, without_ids


@dataclass(frozen=True)
class HoldoutCheck:
    """Today's and the recommended declaration replayed on the held-out last part of history."""

    jobs: int
    today: list[TargetOutcome]
    recommended: list[TargetOutcome]

    @property
    def meets_targets(self) -> bool:
        return all(o.met for o in self.recommended)


def check_holdout(
    ranking: Ranking, replayer: Replayer, allocation: Allocation, jobs: list[SimJob],
    changes: list[PriorityChange],
) -> HoldoutCheck:
    """Today's declaration and ``allocation`` replayed on the held-out ``jobs``."""
    space = ranking.space
    problem = without_ids(space.compile(jobs, changes, replayer.options))
    # Held-out jobs may be larger than any searched one: an allocation in which one of them
    # could never start is reported as missing (its wait never ends), never replayed.
    held_space = space.with_largest(problem)
    env = tuple(space.capacity)
    columns = [held_space.columns(candidate, env, replayer.options)
               for candidate in (space.today_allocation, allocation)]
    calls: list[Call[Any]] = [(evaluate, (problem, c, replayer.options), len(problem.job_ids))
                              for c in columns if c is not None]
    results = iter(replayer.run(calls))
    today, recommended = [next(results) if c is not None else {} for c in columns]
    return HoldoutCheck(len(jobs), ranking.outcomes(today), ranking.outcomes(recommended))
