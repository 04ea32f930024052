"""Every replay of a search goes through one :class:`Replayer`: it sends the tasks to the
executor, reads the answers in submission order (never completion order, so the answer does
not depend on the executor) and counts the replays and the jobs they simulated."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from ..inputs import SimulationOptions
from ..problem import Problem
from .space import Allocation, SearchSpace
from .tasks import Scores, ShareColumns, evaluate, evaluate_with_digest

T = TypeVar("T")

Call = tuple[Callable[..., T], tuple[Any, ...], int]
"""A task, its arguments and the jobs it simulates (counted)."""


class Replayer:
    """Replays allocations of ``space`` on ``problem`` (the searched history); its counters
    are the search's ``simulations`` and ``jobs_simulated``."""

    def __init__(
        self, space: SearchSpace, problem: Problem, options: SimulationOptions, pool: Executor
    ) -> None:
        self.space = space
        self.problem = problem
        self.options = options
        self.pool = pool
        self.simulations = 0
        self.jobs_simulated = 0
        self._columns: dict[tuple[Allocation, tuple[int, ...]], ShareColumns | None] = {}

    def count(self, simulations: int, jobs: int) -> None:
        """Replays run elsewhere (inside a task, or by a search on another environment)."""
        self.simulations += simulations
        self.jobs_simulated += jobs

    def run(self, calls: list[Call[T]]) -> list[T]:
        futures: list[Future[T]] = [self.pool.submit(fn, *args) for fn, args, _ in calls]
        results = [future.result() for future in futures]  # submission order: deterministic
        for _, _, jobs in calls:
            self.count(1, jobs)
        return results

    def columns(
        self, allocation: Allocation, env: tuple[int, ...] | None = None
    ) -> ShareColumns | None:
        """:meth:`.space.SearchSpace.columns` on ``env`` (today's environment by default),
        compiled once per allocation and environment."""
        env = env or tuple(self.space.capacity)
        key = (allocation, env)
        if key not in self._columns:
            self._columns[key] = self.space.columns(allocation, env, self.options)
        return self._columns[key]

    def evaluate_all(
        self, candidates: list[tuple[Allocation, tuple[int, ...] | None]],
        problem: Problem | None = None,
    ) -> list[Scores | None]:
        """Each (allocation, environment) replayed on ``problem`` (the searched history by
        default); None where the allocation cannot be replayed (see :meth:`columns`)."""
        problem = problem or self.problem
        return self._each(evaluate, problem,
                          [self.columns(allocation, env) for allocation, env in candidates])

    def digests(self, allocations: list[Allocation]) -> list[tuple[Scores, str] | None]:
        """Each allocation's scores and the digest of every job's replay
        (:func:`.tasks.evaluate_with_digest`)."""
        return self._each(evaluate_with_digest, self.problem,
                          [self.columns(allocation) for allocation in allocations])

    def _each(
        self, task: Callable[[Problem, ShareColumns, SimulationOptions], T], problem: Problem,
        columns: list[ShareColumns | None],
    ) -> list[T | None]:
        calls: list[Call[T]] = [(task, (problem, c, self.options), len(problem.job_ids))
                                for c in columns if c is not None]
        results = iter(self.run(calls))
        return [None if c is None else next(results) for c in columns]
