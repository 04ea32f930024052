"""How replays are judged: which targets a replay misses, by how much, and the order in which
allocations rank (fewest targets missed, then the smallest shortfall, then least change)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..targets import ServiceTarget, TargetOutcome
from .contract import WAIT, Bound, Contract
from .space import Allocation, SearchSpace
from .tasks import Scores, meets

Key = tuple[int, int, float, int]
"""Lines of the contract broken, targets missed, shortfall, change: smaller ranks better."""


@dataclass(frozen=True)
class Ranking:
    """Ranks replays against every share's targets (``goals``, by name) within the
    ``contract`` (:mod:`.contract`: what today's declaration keeps, once today is replayed);
    change is counted against ``space``'s today."""

    space: SearchSpace
    goals: Mapping[str, ServiceTarget]
    contract: Contract | None = None

    def broken(self, scores: Scores) -> list[Bound]:
        """The contract's lines ``scores`` breaks (none before the contract is known)."""
        return [] if self.contract is None else self.contract.broken(scores)

    def acceptable(self, scores: Scores) -> bool:
        """Every target met and no line of the contract broken: an answer."""
        return not self.missed(scores) and not self.broken(scores)

    def missed(self, scores: Scores) -> list[str]:
        return [
            name for name, goal in self.goals.items()
            if not meets(scores.get(name), goal.wait_p95, goal.max_budget_failures)
        ]

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

    def key(self, allocation: Allocation, scores: Scores) -> Key:
        """Ranking: fewest lines of the contract broken (an allocation that breaks one never
        ranks above one that keeps them all), fewest missed targets, then the smallest
        shortfall, then least change."""
        return (len(self.broken(scores)), len(self.missed(scores)), self.shortfall(scores),
                self.space.change(allocation))

    def loses_jobs(self, name: str, scores: Scores) -> bool:
        """More of ``name``'s jobs lost to their preemption budget than its target allows, or
        preempted beyond its declared budget more than today."""
        score = scores.get(name)
        goal = self.goals.get(name)
        if any(b.share == name and b.measure != WAIT for b in self.broken(scores)):
            return True
        return (score is not None and goal is not None and goal.max_budget_failures is not None
                and score.budget_failures > goal.max_budget_failures)

    def slack(self, scores: Scores) -> dict[int, float]:
        """How much room each share (by index) has before it misses (no target: unlimited)."""
        room: dict[int, float] = {}
        for s, spec in enumerate(self.space.today):
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

    def outcomes(self, scores: Scores) -> list[TargetOutcome]:
        return [TargetOutcome(name, goal, *_score_fields(scores, name))
                for name, goal in self.goals.items()]


def _score_fields(scores: Scores, name: str) -> tuple[float | None, int, int]:
    score = scores.get(name)
    if score is None:
        return math.inf, 0, 0
    return score.wait_p95, score.budget_failures, score.jobs
