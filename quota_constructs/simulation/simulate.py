"""The simulator's entry points: one arrangement, or the declared one against two baselines."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..model import CapacityLimit, QuotaAllocation, QuotaConfigError, QuotaShareSpec
from .arrangements import hard_partition, shared_pool
from .engine import collection_paused, replay
from .figures import share_figures, span
from .inputs import PriorityChange, SimJob, SimulationOptions
from .problem import Problem, compile_problem
from .results import PolicyComparison, RunData, SimulationResult

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
    _check_options(options)
    with collection_paused():  # (compiling and measuring too make no cycles)
        problem = _compile(capacity_limits, shares, jobs, priority_changes, options)
        return _result("declared", problem, replay(problem, options, progress))


def _compile(
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    jobs: Iterable[SimJob],
    priority_changes: Iterable[PriorityChange],
    options: SimulationOptions,
) -> Problem:
    """A declaration's problem, checked and compiled as ``options`` say (borrowing unowned
    capacity, what to do with a job that can never run)."""
    allocation = QuotaAllocation.check(
        environment_limits=capacity_limits, shares=shares,
        unowned_capacity_borrowable=options.unowned_capacity_borrowable,
    )
    return compile_problem(allocation, jobs, priority_changes, options.never_runnable)


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

    ``progress`` is called as ``progress(arrangement, jobs_ended, jobs_total)``. Every
    arrangement's figures are measured over one window: the first submission to the last end
    under any of them (alternatives included), so a share running the same jobs is not made
    to look busier under the arrangement that finishes first.
    """
    _check_options(options)
    jobs = list(jobs)
    priority_changes = list(priority_changes)
    for name in alternatives:
        if name in ("declared", "hard_partition", "shared_pool") or not name:
            raise QuotaConfigError("compare", "alternative name", name,
                                   "a name other than declared, hard_partition, shared_pool")
    problem = _compile(capacity_limits, shares, jobs, priority_changes, options)
    partition, dropped = hard_partition(problem)
    pool = shared_pool(problem)
    runs = {
        "declared": (problem, replay(problem, options, _named(progress, "declared"))),
        "hard_partition": (partition, replay(partition, options,
                                              _named(progress, "hard_partition"))),
        "shared_pool": (pool, replay(pool, options, _named(progress, "shared_pool"))),
    }
    for name, (limits, specs) in alternatives.items():
        try:
            other = _compile(limits, specs, jobs, priority_changes, options)
        except QuotaConfigError as error:
            # The same jobs ran under the declaration: say which compared one refuses them.
            raise QuotaConfigError(f"compared declaration {name!r}, {error.subject}",
                                   error.field, error.value, error.allowed) from None
        runs[name] = (other, replay(other, options, _named(progress, name)))
    spans = [span(data) for _, data in runs.values() if data.job_ids]
    window = (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else (0.0, 0.0)
    return PolicyComparison(
        declared=_result("declared", *runs["declared"], window=window),
        hard_partition=_result(
            "hard_partition", *runs["hard_partition"], window=window,
            not_runnable=dropped, declared=problem,
        ),
        shared_pool=_result("shared_pool", *runs["shared_pool"], window=window),
        alternatives={
            name: _result(name, *runs[name], window=window) for name in alternatives
        },
        alternative_declarations={
            name: (tuple(limits), tuple(specs)) for name, (limits, specs) in alternatives.items()
        },
    )


def _check_options(options: object) -> None:
    if not isinstance(options, SimulationOptions):
        raise TypeError(f"options must be a SimulationOptions, not {type(options).__name__}")


def _result(
    arrangement: str,
    problem: Problem,
    data: RunData,
    *,
    window: tuple[float, float] | None = None,
    not_runnable: Sequence[int] = (),
    declared: Problem | None = None,
) -> SimulationResult:
    unrunnable_by_group: dict[int, int] = {}
    names: list[str] = []
    if declared is not None:
        for j in not_runnable:
            group = declared.job_group[j]
            unrunnable_by_group[group] = unrunnable_by_group.get(group, 0) + 1
            names.append(declared.job_ids[j])
    started_at, ended_at = span(data)
    if window is None:
        window = (started_at, ended_at)
    return SimulationResult(
        arrangement=arrangement,
        data=data,
        shares=share_figures(data, problem, window=window, not_runnable=unrunnable_by_group),
        started_at=started_at,
        ended_at=ended_at,
        window=window,
        not_runnable=tuple(names),
        blocked=tuple(problem.blocked_ids),
    )


def _named(
    progress: Callable[[str, int, int], None] | None, arrangement: str
) -> Callable[[int, int], None] | None:
    if progress is None:
        return None

    def report(done: int, total: int) -> None:
        progress(arrangement, done, total)

    return report
