"""The units of work a recommendation search sends to an executor (module-level, picklable).

Each task receives everything it needs (the compiled workload travels with it) and returns a
small answer, so any ``concurrent.futures.Executor`` can run it: local processes, or a Dask
cluster's ``Client.get_executor()``. Nothing here depends on which worker runs it or when.
"""

from __future__ import annotations

import hashlib
import marshal
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import overload

from ..arrangements import subset
from ..engine import replay
from ..figures import beyond_budget, share_figures
from ..inputs import SimulationOptions
from ..problem import Problem
from ..results import RunData, ShareFigures


class JobNumbers(Sequence[str]):
    """Stands in for a compiled problem's job ids, which no search task reads: a million ids
    would cost most of the time spent sending a problem to a worker."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [str(i) for i in range(self.size)[index]]
        if not -self.size <= index < self.size:
            raise IndexError(index)
        return str(index % self.size)


def without_ids(problem: Problem) -> Problem:
    """``problem`` with :class:`JobNumbers` for its job ids (cheap to send)."""
    return replace(problem, job_ids=JobNumbers(len(problem.job_ids)))


@dataclass(frozen=True, slots=True)
class ShareColumns:
    """The per-share columns of a compiled problem that an allocation decides (see Problem)."""

    environment: list[int]
    capacity: list[int]
    unowned: list[int]
    limit: list[int]
    ceiling: list[float]
    reserve: list[bool]
    borrows: list[bool]
    in_share: list[bool]
    group_limits: list[list[int]]
    group_lends: list[bool]

    @classmethod
    def of(cls, problem: Problem) -> ShareColumns:
        return cls(
            environment=list(problem.environment), capacity=list(problem.capacity),
            unowned=list(problem.unowned), limit=list(problem.limit),
            ceiling=list(problem.ceiling), reserve=list(problem.reserve),
            borrows=list(problem.borrows), in_share=list(problem.in_share),
            group_limits=[list(g) for g in problem.group_limits],
            group_lends=list(problem.group_lends),
        )

    def apply(self, problem: Problem) -> Problem:
        return replace(
            problem, environment=self.environment, capacity=self.capacity,
            unowned=self.unowned, limit=self.limit,
            ceiling=self.ceiling,
            reserve=self.reserve, borrows=self.borrows, in_share=self.in_share,
            group_limits=self.group_limits, group_lends=self.group_lends,
        )


@dataclass(frozen=True, slots=True)
class ShareScore:
    """What the targets read from one share's replay."""

    wait_p95: float | None
    budget_failures: int
    jobs: int
    cross_share_preemptions: int = 0
    in_share_preemptions: int = 0
    lost_instance_hours: float = 0.0
    over_budget: int = 0
    """Jobs preempted more often than the share's declared interruption budget (failed for
    it or requeued); 0 for a share that declares none."""

    @classmethod
    def of(cls, figures: ShareFigures, over_budget: int = 0) -> ShareScore:
        return cls(figures.wait_p95, figures.failed_preemption_budget, figures.jobs,
                   figures.cross_share_preemptions, figures.in_share_preemptions,
                   figures.lost_instance_hours, over_budget)


Scores = dict[str, ShareScore]


Budgets = tuple[int | None, ...]
"""Per share (index), its declared interruption budget (None: none declared)."""


def evaluate(
    problem: Problem, columns: ShareColumns, options: SimulationOptions, budgets: Budgets = ()
) -> Scores:
    """Replay ``problem`` under the allocation ``columns``; every share's score, its jobs
    preempted beyond ``budgets`` counted."""
    return _replay(problem, columns, options, budgets)[0]


def evaluate_with_digest(
    problem: Problem, columns: ShareColumns, options: SimulationOptions, budgets: Budgets = ()
) -> tuple[Scores, str]:
    """:func:`evaluate`, and a digest of every job's outcome (each attempt's start, end and
    how it ended; each job's end and status): two allocations with the same digest make no
    difference to any job."""
    scores, data = _replay(problem, columns, options, budgets)
    return scores, outcome_digest(data)


def outcome_digest(data: RunData) -> str:
    """The digest of every job's outcome in ``data``: equal for equal outcomes, whichever
    process ran them. Attempts are encoded by value with ``marshal``'s version 2, which
    writes no back-references (later versions mark objects referenced twice, which depends
    on the run's object sharing, not on the outcome) and costs about a fortieth of a replay
    (``repr`` cost a tenth)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(marshal.dumps(data.attempts, 2))
    digest.update(array("d", data.finished).tobytes())  # (the machine's doubles)
    digest.update(bytes(data.status_failed))
    return digest.hexdigest()


def _replay(
    problem: Problem, columns: ShareColumns, options: SimulationOptions, budgets: Budgets = ()
) -> tuple[Scores, RunData]:
    candidate = columns.apply(problem)
    data = replay(candidate, options)
    figures = share_figures(data, candidate)
    over = beyond_budget(data, budgets)
    return {name: ShareScore.of(f, over[g])
            for g, (name, f) in enumerate(figures.items())}, data


JobsOf = dict[tuple[int, int], list[int]]
"""Per (share, unit), the indexes of its jobs, ascending."""


def jobs_of(problem: Problem) -> JobsOf:
    """Every share's jobs per unit, in one pass over the jobs (:func:`alone` picks from it
    instead of passing over every job of a long history once per share and unit)."""
    found: JobsOf = {}
    for j, key in enumerate(zip(problem.job_share, problem.job_unit, strict=True)):
        found.setdefault(key, []).append(j)
    return found


def alone(
    problem: Problem, share: int, capacity: dict[int, int], index: JobsOf | None = None
) -> Problem:
    """Only ``share``'s jobs of the units in ``capacity``, on a reserved partition of that many
    instances per unit: what the share gets when nothing else competes for its capacity.
    ``index``: :func:`jobs_of` ``problem``, when it is at hand."""
    if index is None:
        keep = [
            j for j, (s, k) in enumerate(zip(problem.job_share, problem.job_unit, strict=True))
            if s == share and k in capacity
        ]
    else:
        keep = sorted(j for k in capacity for j in index.get((share, k), ()))
    sub = subset(problem, keep)
    n_shares, n_units = len(problem.share_names), problem.n_units
    limit = [0] * (n_shares * n_units)
    for unit, count in capacity.items():
        limit[share * n_units + unit] = count
    return ShareColumns(
        environment=[capacity.get(k, 0) for k in range(n_units)],
        # The share owns the whole partition: nothing is left unowned for anyone.
        capacity=[capacity.get(k, 0) for k in range(n_units)],
        unowned=[0] * n_units,
        limit=limit,
        ceiling=[float(v) for v in limit],
        reserve=[True] * n_shares,
        borrows=[False] * n_shares,
        in_share=list(problem.in_share),
        group_limits=[limit[i * n_units : (i + 1) * n_units] for i in range(n_shares)],
        group_lends=[False] * n_shares,
    ).apply(sub)


def meets(score: ShareScore | None, wait_p95: float | None, max_failures: int | None) -> bool:
    """``score`` within the targets; None (no replay: the allocation strands jobs) never is."""
    if score is None:
        return False
    if wait_p95 is not None and score.wait_p95 is not None and score.wait_p95 > wait_p95:
        return False
    return max_failures is None or score.budget_failures <= max_failures


@dataclass(frozen=True, slots=True)
class Demand:
    """The least reserved capacity of one unit with which a share's jobs of that unit, alone,
    meet its targets (``capacity``), found with ``probes`` replays of those jobs."""

    share: str
    unit: str
    capacity: int
    probes: int
    jobs_simulated: int
    met: bool = True
    """False when even every job starting on submission (``capacity``: their instances
    added up) misses the targets: no environment meets them."""
    probed: tuple[tuple[int, bool], ...] = field(default=(), compare=False, repr=False)
    """Each capacity replayed for this answer and whether it met the targets, so that a
    later bisection of the same jobs and targets reads it instead of replaying it."""


def demand(
    problem: Problem,
    share: int,
    unit: int,
    wait_p95: float | None,
    max_failures: int | None,
    start: int,
    options: SimulationOptions,
    at_least: int = 0,
    known: Mapping[int, bool] | None = None,
) -> Demand:
    """Bisect the least capacity of ``unit`` meeting the targets for ``share``'s jobs of it.

    ``problem`` holds only those jobs (see :func:`alone`). The search starts at ``start``
    (the environment's size) and doubles while that misses, up to the sum of the jobs'
    instance counts, where no job waits at all; then it bisects down to the largest job's
    size, or down to ``at_least`` (a sample's answer, confirmed or raised on the whole: from
    it, one instance more, then two, four... while that misses).
    ``known`` holds capacities already replayed for these jobs and targets: read, not
    replayed (the answer is the same, since each probe's outcome depends only on them).
    Bisection assumes more reserved capacity never makes the share's p95 wait longer or its
    budget failures more: true of any queue that starts a job whenever one fits, and checked
    against exhaustive search in the tests.
    """
    name = problem.share_names[share]
    counts = problem.job_count
    low = max(counts, default=1)
    cap = max(low, sum(counts))
    probes = 0
    simulated = 0
    probed: dict[int, bool] = {}

    def ok(capacity: int) -> bool:
        nonlocal probes, simulated
        if known is not None and capacity in known:
            return known[capacity]
        if capacity not in probed:
            probes += 1
            simulated += len(problem.job_ids)
            sub = alone(problem, share, {unit: capacity})
            probed[capacity] = meets(evaluate(sub, ShareColumns.of(sub), options).get(name),
                                     wait_p95, max_failures)
        return probed[capacity]

    high = max(low, start)
    met = ok(high)
    step = 1
    while not met and high < cap:
        # Confirming a sample's answer (``at_least``), the whole most often needs a little
        # more: one instance more, then two, four... (the bisection below reads these
        # probes). Otherwise from the environment's size: doubling.
        high = min(cap, high + step if at_least else high * 2)
        step *= 2
        met = ok(high)
    if not met:
        return Demand(name, problem.unit_names[unit], high, probes, simulated, met=False,
                      probed=tuple(probed.items()))
    low = max(1, low, min(at_least, high))
    if low < high and low != at_least and ok(low):
        high = low
    while high - low > 1:
        middle = (low + high) // 2
        if ok(middle):
            high = middle
        else:
            low = middle
    return Demand(name, problem.unit_names[unit], high, probes, simulated,
                  probed=tuple(probed.items()))
