"""Every replay of a search goes through one :class:`Replayer`: it sends the tasks to the
executor, reads the answers in submission order (never completion order, so the answer does
not depend on the executor), counts the replays and the jobs they simulated under the reason
the search ran them for, and answers a replay it has already run from its :class:`Ledger`
instead of running it again.

A replay is keyed by what decides its outcome and nothing else: the allocation, the
environment's size per type and the part of the history replayed (the whole searched history
or the screening stretch). The searches ``recommend`` runs on other environments for its
environment advice replay the same jobs with the same options, so they share the ledger of
the search that started them: an allocation one of them replays, another never replays again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..inputs import SimulationOptions
from ..problem import Problem
from .space import Allocation, SearchSpace
from .tasks import Scores, ShareColumns, evaluate, evaluate_with_digest

T = TypeVar("T")

Call = tuple[Callable[..., T], tuple[Any, ...], int | None]
"""A task, its arguments and the jobs its one replay simulates (counted); None for a task
that runs several replays and says so in its answer (the caller counts them)."""

WHOLE, STRETCH = "whole", "stretch"
"""The parts of the history a replay may cover: the searched history, the screening
stretch."""


@dataclass
class Ledger:
    """Replays run per reason (and the jobs they simulated), replays answered from an earlier
    one, and those earlier answers; one per ``recommend`` call, shared by every search it
    runs."""

    simulations: Counter[str] = field(default_factory=Counter)
    jobs: Counter[str] = field(default_factory=Counter)
    reused: Counter[str] = field(default_factory=Counter)
    answers: dict[Hashable, Any] = field(default_factory=dict)

    def count(self, reason: str, simulations: int, jobs: int) -> None:
        self.simulations[reason] += simulations
        self.jobs[reason] += jobs

    @property
    def total(self) -> int:
        return sum(self.simulations.values())

    @property
    def total_jobs(self) -> int:
        return sum(self.jobs.values())


class Replayer:
    """Replays allocations of ``space`` on ``problem`` (the searched history); its counters
    are the search's ``simulations`` and ``jobs_simulated``, and ``ledger``'s are those of
    every search sharing it."""

    def __init__(
        self, space: SearchSpace, problem: Problem, options: SimulationOptions, pool: Executor,
        ledger: Ledger | None = None, budgets: Sequence[int | None] = (), prefix: str = "",
    ) -> None:
        self.space = space
        self.problem = problem
        self.options = options
        self.pool = pool
        self.ledger = ledger if ledger is not None else Ledger()
        self.budgets = tuple(budgets)
        """Per share (index), its declared interruption budget, counted in every replay's
        scores (:attr:`.tasks.ShareScore.over_budget`)."""
        self.asked = 0
        """Replays this search asked for, answered from the ledger or run: what its steps'
        budgets (``max_simulations``) are spent in, so that reusing an answer never changes
        how far a step searches."""
        self.reason = "search"
        self.prefix = prefix
        """Put before every reason this replayer counts under (a search on another
        environment: its steps are counted as part of the environment advice)."""
        self._columns: dict[tuple[Allocation, tuple[int, ...]], ShareColumns | None] = {}

    @contextmanager
    def doing(self, reason: str) -> Iterator[None]:
        """Replays run inside are counted under ``reason`` (what the search needs them for)."""
        before, self.reason = self.reason, reason
        try:
            yield
        finally:
            self.reason = before

    def count(self, simulations: int, jobs: int) -> None:
        """Replays run inside a task that runs several: counted under the current reason."""
        self.ledger.count(self.prefix + self.reason, simulations, jobs)

    def reuse(self, answers: int = 1) -> None:
        """Replays answered from the ledger, not run."""
        self.ledger.reused[self.prefix + self.reason] += answers

    def run(self, calls: list[Call[T]]) -> list[T]:
        futures: list[Future[T]] = [self.pool.submit(fn, *args) for fn, args, _ in calls]
        results = [future.result() for future in futures]  # submission order: deterministic
        for _, _, jobs in calls:
            if jobs is not None:
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
        problem: Problem | None = None, part: str = WHOLE,
    ) -> list[Scores | None]:
        """Each (allocation, environment) replayed on ``problem`` (the searched history by
        default; ``part`` names it: :data:`WHOLE` or :data:`STRETCH`); None where the
        allocation cannot be replayed (see :meth:`columns`)."""
        problem = problem or self.problem
        keys = [("scores", part, allocation, env or tuple(self.space.capacity))
                for allocation, env in candidates]
        return self._answered(keys, evaluate, problem,
                              [self.columns(allocation, env) for allocation, env in candidates])

    def digests(
        self, allocations: list[Allocation], problem: Problem | None = None, part: str = WHOLE,
    ) -> list[tuple[Scores, str] | None]:
        """Each allocation's scores and the digest of every job's replay
        (:func:`.tasks.evaluate_with_digest`), on today's environment and ``problem`` (the
        whole history by default; ``part`` names it)."""
        env = tuple(self.space.capacity)
        keys = [("digest", part, allocation, env) for allocation in allocations]
        found = self._answered(keys, evaluate_with_digest, problem or self.problem,
                               [self.columns(allocation) for allocation in allocations])
        for key, answer in zip(keys, found, strict=True):
            if answer is not None:  # a digest's scores answer a later plain replay too
                self.ledger.answers.setdefault(("scores", *key[1:]), answer[0])
        return found

    def each(self, keyed: Sequence[tuple[Hashable, Callable[[], Call[T]]]]) -> list[T]:
        """Each call's answer (a call is made only when needed: building one may cost a pass
        over the jobs), those whose key was answered before from the ledger; the rest run
        together, in their order."""
        answers = self.ledger.answers
        self.asked += len(keyed)
        todo = list(dict.fromkeys(key for key, _ in keyed if key not in answers))
        makers = {key: make for key, make in keyed}
        for key, result in zip(todo, self.run([makers[key]() for key in todo]), strict=True):
            answers[key] = result
        self.reuse(len(keyed) - len(todo))
        return [answers[key] for key, _ in keyed]

    def _answered(
        self, keys: Sequence[Hashable],
        task: Callable[[Problem, ShareColumns, SimulationOptions, tuple[int | None, ...]], T],
        problem: Problem, columns: list[ShareColumns | None],
    ) -> list[T | None]:
        def call(c: ShareColumns) -> Callable[[], Call[T]]:
            return lambda: (task, (problem, c, self.options, self.budgets), len(problem.job_ids))

        keyed = [(key, call(c)) for key, c in zip(keys, columns, strict=True) if c is not None]
        results = iter(self.each(keyed))
        return [None if c is None else next(results) for c in columns]
