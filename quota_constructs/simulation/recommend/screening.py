"""Picking the best of many allocations: screened on a stretch of a long history, the best
few confirmed by a replay of the whole of it.

Long histories (more than twice ``screen_jobs``) rank candidates on a stretch of
``screen_jobs`` jobs from the middle of the history first and replay only the best
:data:`CONFIRMED_PER_ROUND` on the whole of it; every answer is judged on the whole history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..arrangements import subset
from ..problem import Problem
from .ranking import Key, Ranking
from .replays import STRETCH, Replayer
from .space import Allocation, SearchSpace
from .tasks import Scores

CONFIRMED_PER_ROUND = 2
"""Best screened candidates replayed on the whole history per round. Fixed, not the number of
workers, so that the answer does not depend on the executor."""

Scored = tuple[Allocation, Scores]
Accept = Callable[[Allocation, Scores], bool]


def stretch(problem: Problem, screen_jobs: int) -> Problem | None:
    """The stretch candidates are ranked on first: the middle ``screen_jobs`` jobs, long
    enough to hold every share's busy and quiet times, short enough to replay many
    candidates. None (every candidate replayed on the whole history) for a history of at
    most twice that, or when ``screen_jobs`` is 0."""
    n = len(problem.job_ids)
    if not screen_jobs or n <= 2 * screen_jobs:
        return None
    first = (n - screen_jobs) // 2
    return subset(problem, list(range(first, first + screen_jobs)))


@dataclass(frozen=True)
class Picker:
    """Replays and ranks allocations of one search: the tools every step of it shares."""

    space: SearchSpace
    ranking: Ranking
    replayer: Replayer
    screen: Problem | None
    say: Callable[[str], None]

    def pick(
        self, allocations: list[Allocation], current: Scored | None,
        *, better: Accept | None = None,
    ) -> Scored | None:
        """The best of ``allocations`` (and ``current``) by :meth:`.ranking.Ranking.key`,
        replayed in full; ``better`` filters which replayed allocations count. Allocations
        that break a pin are not replayed."""
        if not allocations:
            return current
        accept = better or (lambda allocation, scores: True)
        allocations = [a for a in allocations if self.space.honours_pins(a)]
        if self.screen is not None:
            allocations = self._screened(allocations, self.screen, accept)
        scored = self.replayer.evaluate_all([(a, None) for a in allocations])
        options: list[tuple[Key, int, Allocation, Scores]] = [
            (self.ranking.key(a, sc), order, a, sc)
            for order, (a, sc) in enumerate(zip(allocations, scored, strict=True))
            if sc is not None and accept(a, sc)
        ]
        if current is not None:
            options.append((self.ranking.key(*current), -1, *current))
        if not options:
            return None
        options.sort(key=lambda o: o[:2])
        return options[0][2], options[0][3]

    def _screened(
        self, allocations: list[Allocation], screen: Problem, accept: Accept
    ) -> list[Allocation]:
        """The best :data:`CONFIRMED_PER_ROUND` of ``allocations`` replayed on ``screen``
        (ties broken by their order)."""
        screened = self.replayer.evaluate_all([(a, None) for a in allocations], screen, STRETCH)
        ranked = sorted(
            (self.ranking.key(a, sc), order, a) for order, (a, sc) in
            enumerate(zip(allocations, screened, strict=True))
            if sc is not None and accept(a, sc)
        )
        return [a for _, _, a in ranked[:CONFIRMED_PER_ROUND]]
