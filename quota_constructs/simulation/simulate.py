"""The simulator's entry points: one arrangement, or the declared one against two baselines."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from .arrangements import hard_partition, shared_pool
from .engine import run
from .figures import share_figures, span
from .inputs import PriorityChange, SimJob, SimulationOptions
from .problem import Problem, compile_problem
from .results import PolicyComparison, SimulationResult

DEFAULT_OPTIONS = SimulationOptions()


def simulate(
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    jobs: Iterable[SimJob],
    priority_changes: Iterable[PriorityChange] = (),
    options: SimulationOptions = DEFAULT_OPTIONS,
    progress: Callable[[int, int], None] | None = None,
) -> SimulationResult:
    """Replay ``jobs`` against the declared environment and shares.

    Every input is checked first (QuotaConfigError naming the job and field). ``progress``,
    when given, is called as ``progress(jobs_ended, jobs_total)`` about a hundred times.
    """
    problem = compile_problem(
        capacity_limits=capacity_limits,
        shares=shares,
        jobs=jobs,
        priority_changes=priority_changes,
    )
    return _run("declared", problem, options, progress)


def compare_policies(
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    jobs: Iterable[SimJob],
    priority_changes: Iterable[PriorityChange] = (),
    options: SimulationOptions = DEFAULT_OPTIONS,
    progress: Callable[[str, int, int], None] | None = None,
    alternatives: Mapping[str, tuple[Sequence[CapacityLimit], Sequence[QuotaShareSpec]]] = {},
) -> PolicyComparison:
    """The workload under the declared shares, a hard partition and one shared FIFO pool, and
    under each of ``alternatives`` (name -> (capacity_limits, shares)), which must declare the
    shares the jobs name.

    ``progress`` is called as ``progress(arrangement, jobs_ended, jobs_total)``.
    """
    jobs = list(jobs)
    priority_changes = list(priority_changes)
    for name in alternatives:
        if name in ("declared", "hard_partition", "shared_pool") or not name:
            raise QuotaConfigError("compare", "alternative name", name,
                                   "a name other than declared, hard_partition, shared_pool")
    problem = compile_problem(
        capacity_limits=capacity_limits,
        shares=shares,
        jobs=jobs,
        priority_changes=priority_changes,
    )
    partition, dropped = hard_partition(problem)
    return PolicyComparison(
        declared=_run("declared", problem, options, _named(progress, "declared")),
        hard_partition=_run(
            "hard_partition", partition, options, _named(progress, "hard_partition"),
            not_runnable=dropped, declared=problem,
        ),
        shared_pool=_run(
            "shared_pool", shared_pool(problem), options, _named(progress, "shared_pool")
        ),
        alternatives={
            name: _run(name, compile_problem(
                capacity_limits=limits, shares=specs, jobs=jobs,
                priority_changes=priority_changes,
            ), options, _named(progress, name))
            for name, (limits, specs) in alternatives.items()
        },
    )


def _run(
    arrangement: str,
    problem: Problem,
    options: SimulationOptions,
    progress: Callable[[int, int], None] | None,
    *,
    not_runnable: Sequence[int] = (),
    declared: Problem | None = None,
) -> SimulationResult:
    if not isinstance(options, SimulationOptions):
        raise TypeError(f"options must be a SimulationOptions, not {type(options).__name__}")
    data = run(problem, options, progress)
    unrunnable_by_group: dict[int, int] = {}
    names: list[str] = []
    if declared is not None:
        for j in not_runnable:
            group = declared.job_group[j]
            unrunnable_by_group[group] = unrunnable_by_group.get(group, 0) + 1
            names.append(declared.job_ids[j])
    started_at, ended_at = span(data)
    return SimulationResult(
        arrangement=arrangement,
        data=data,
        shares=share_figures(data, problem, not_runnable=unrunnable_by_group),
        started_at=started_at,
        ended_at=ended_at,
        not_runnable=tuple(names),
    )


def _named(
    progress: Callable[[str, int, int], None] | None, arrangement: str
) -> Callable[[int, int], None] | None:
    if progress is None:
        return None

    def report(done: int, total: int) -> None:
        progress(arrangement, done, total)

    return report
