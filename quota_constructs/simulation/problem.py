"""Check a simulation's inputs and compile them into the engine's flat columns.

Every mistake is a QuotaConfigError naming the job (or priority change) and the field, raised
before anything is simulated, so a million-job replay never fails half way.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from itertools import compress, repeat
from operator import attrgetter
from typing import Any

from ..model import QuotaAllocation, QuotaConfigError, QuotaShareSpec
from ..model.share import SharingStrategy
from .inputs import NeverRunnable, PriorityChange, SimJob

MIN_PRIORITY, MAX_PRIORITY = 0, 9999


@dataclass(slots=True)
class JobColumns:
    """Every job's inputs, one flat list per field indexed by job.

    Shared by the compiled :class:`Problem` and the stepping engine, which adds jobs while it
    runs: both grow the columns through :meth:`append_job` alone, and a part of a history is
    taken through :meth:`kept`, so a new per-job input is declared and filled in one place.
    """

    job_ids: Sequence[str]
    """A list, but for a search task's problem, whose ids nobody reads (a stand-in that only
    knows how many there are: ``recommend.tasks.JobNumbers``)."""
    job_share: list[int]
    job_group: list[int]
    job_unit: list[int]
    job_count: list[int]
    duration: list[float]
    submitted: list[float]
    priority: list[int]
    checkpoint: list[float]
    """Seconds between checkpoints; 0.0 for none."""
    retries: list[int]
    """Preemptions allowed before failing; -1 for unlimited."""

    def append_job(
        self, job_id: str, share: int, unit: int, count: int, duration: float,
        submitted: float, priority: int, checkpoint: float, retries: int,
    ) -> int:
        """One job's row (its group is its share); returns the job's index."""
        ids = self.job_ids
        if not isinstance(ids, list):
            raise TypeError("jobs are appended to a problem's own list of ids, not a stand-in")
        index = len(ids)
        ids.append(job_id)
        self.job_share.append(share)
        self.job_group.append(share)
        self.job_unit.append(unit)
        self.job_count.append(count)
        self.duration.append(duration)
        self.submitted.append(submitted)
        self.priority.append(priority)
        self.checkpoint.append(checkpoint)
        self.retries.append(retries)
        return index

    def kept(self, keep: Sequence[int]) -> dict[str, list[Any]]:
        """Every job column of only the jobs at ``keep``, in that order, as keyword arguments
        for :func:`dataclasses.replace`."""
        rows: dict[str, list[Any]] = {}
        for column in fields(JobColumns):
            values = getattr(self, column.name)
            rows[column.name] = [values[j] for j in keep]
        return rows


def _no_jobs() -> dict[str, Any]:
    """Every :class:`JobColumns` column empty, as keyword arguments: a problem's jobs are
    appended after its shares are compiled."""
    return {column.name: [] for column in fields(JobColumns)}


@dataclass(slots=True)
class Problem(JobColumns):
    """A workload compiled for the engine.

    Engine shares are what the scheduler sees (for the shared pool, one share); groups are the
    declared shares that figures are reported by (a job's group is its declared share).
    Per-(share, unit) values are flat lists indexed ``share * n_units + unit``.
    """

    unit_names: list[str]
    environment: list[int]
    capacity: list[int]
    """What jobs can use of each unit: the environment, less capacity no share owns unless
    the rules let borrowers use it (:class:`~quota_constructs.model.BorrowingRules`)."""
    unowned: list[int]
    """Of ``capacity``, what no share owns (what borrowers may use beyond others' idle
    allocation), from the rules model; the figures spread borrowing over it and the
    lenders' idle allocation."""
    share_names: list[str]
    limit: list[int]
    ceiling: list[float]
    reserve: list[bool]
    borrows: list[bool]
    in_share: list[bool]
    group_names: list[str]
    group_limits: list[list[int]]
    group_lends: list[bool]
    change_at: list[float]
    change_job: list[int]
    change_priority: list[int]
    """Priority changes by time: when, which job, its new priority."""
    blocked_ids: list[str] = field(default_factory=list)
    """Jobs that can never run, set aside (``NeverRunnable.BLOCK``); empty otherwise."""
    blocked_group: list[int] = field(default_factory=list)

    @property
    def n_units(self) -> int:
        return len(self.unit_names)


def job_subject(job_id: object) -> str:
    return f"simulated job {job_id!r}"


def compile_problem(
    allocation: QuotaAllocation,
    jobs: Iterable[SimJob],
    priority_changes: Iterable[PriorityChange] = (),
    never_runnable: NeverRunnable = NeverRunnable.REJECT,
) -> Problem:
    """The engine's columns for a declaration the model has checked (``allocation``, whose
    rules say what each share may use) and the jobs checked against it."""
    rules = allocation.rules
    unit_names = [limit.capacity_unit for limit in allocation.environment_limits]
    environment = [limit.max_capacity for limit in allocation.environment_limits]
    unit_index = {name: k for k, name in enumerate(unit_names)}
    specs = allocation.shares
    share_index = {spec.name: i for i, spec in enumerate(specs)}
    n_units = len(unit_names)

    # Everything about borrowing comes from the one rules model, compiled once into flat
    # columns: the engine never asks the model per event.
    limit: list[int] = []
    ceiling: list[float] = []
    reach: list[float] = []
    for spec in specs:
        for unit in unit_names:
            rule = rules.rules(spec.name, unit)
            limit.append(rule.own)
            ceiling.append(rule.own + rule.allowance)
            reach.append(rule.reach)
    reserve = [spec.strategy is SharingStrategy.RESERVE for spec in specs]
    capacity = [rules.usable_capacity(unit) for unit in unit_names]
    unowned = [rules.unowned_usable(unit) for unit in unit_names]

    problem = Problem(
        unit_names=unit_names,
        environment=environment,
        capacity=capacity,
        unowned=unowned,
        share_names=[spec.name for spec in specs],
        limit=limit,
        ceiling=ceiling,
        reserve=reserve,
        borrows=[spec.strategy.borrows for spec in specs],
        in_share=[spec.in_share_preemption for spec in specs],
        group_names=[spec.name for spec in specs],
        group_limits=[limit[i * n_units : (i + 1) * n_units] for i in range(len(specs))],
        group_lends=[spec.strategy.lends for spec in specs],
        change_at=[],
        change_job=[],
        change_priority=[],
        **_no_jobs(),
    )
    compiler = _JobCompiler(problem, specs, share_index, unit_index, reach,
                            block=never_runnable is NeverRunnable.BLOCK)
    jobs = jobs if isinstance(jobs, list) else list(jobs)
    if not compiler.add_plain_jobs(jobs):
        for job in jobs:
            compiler.add_job(job)
    priority_changes = list(priority_changes)
    compiler.index_plain_ids({change.job_id for change in priority_changes
                              if isinstance(change, PriorityChange)
                              and isinstance(change.job_id, str)})
    changes: list[tuple[float, int, int]] = []
    for change in priority_changes:
        checked = compiler.check_change(change)
        if checked is not None:
            changes.append(checked)
    changes.sort(key=lambda c: c[0])
    problem.change_at = [c[0] for c in changes]
    problem.change_job = [c[1] for c in changes]
    problem.change_priority = [c[2] for c in changes]
    return problem


class _NeverRunnable(Exception):
    """A job the declaration can never run: an input error, or set aside as blocked."""

    def __init__(self, config_error: QuotaConfigError) -> None:
        super().__init__(str(config_error))
        self.config_error = config_error


@dataclass(slots=True)
class _JobCompiler:
    """What checking a job against the declaration needs, gathered once per problem, and the
    ids seen so far (a blocked job's index is -1)."""

    problem: Problem
    specs: Sequence[QuotaShareSpec]
    share_index: dict[str, int]
    unit_index: dict[str, int]
    reach: list[float]
    """The most each (share, unit) can ever hold, from the rules model."""
    block: bool
    seen: dict[str, int] = field(default_factory=dict)
    """Each job's index by id (after :meth:`add_plain_jobs`, of the jobs changes name)."""
    plain_ids: list[str] | None = None

    def add_plain_jobs(self, jobs: list[SimJob]) -> bool:
        """Every job of ``jobs`` at once, a column at a time, when each is plainly valid and
        runnable (a SimJob with a str id, a declared enabled share and a type it lists by
        name, plain ints and floats within range): a large history's usual case, several
        times faster than job by job. Adds nothing and returns False otherwise, for
        :meth:`add_job` to find the first mistake and name it, or set never-runnable jobs
        aside, one by one. What it adds is what :meth:`add_job` would."""
        problem = self.problem
        if problem.job_ids or _types(jobs) - {SimJob}:
            return False

        def column(name: str) -> list[Any]:
            return list(map(attrgetter(name), jobs))

        ids = column("job_id")
        unique = set(ids)
        if len(unique) != len(ids) or "" in unique or _types(ids) - {str}:
            return False
        enabled = {spec.name: i for i, spec in enumerate(self.specs) if spec.enabled}
        try:
            shares = list(map(enabled.__getitem__, column("share")))
            units = list(map(self.unit_index.__getitem__, column("instance_type")))
        except (KeyError, TypeError):  # (an unknown or unhashable name)
            return False
        n_units = len(self.unit_index)
        # The most each queue's jobs may hold: 0 where the share does not list the type.
        reach = [most if spec.limit_of(unit) > 0 else 0.0
                 for most, (spec, unit) in zip(
                     self.reach,
                     ((spec, unit) for spec in self.specs for unit in self.unit_index),
                     strict=True)]
        # (maps in C over the columns, which are of one length: the jobs'.)
        queue_reach = list(map(reach.__getitem__,
                               map(operator.add, map(operator.mul, shares, repeat(n_units)),
                                   units)))
        counts = column("instance_count")
        priorities = column("priority")
        if (_types(counts) - {int} or _types(priorities) - {int}
                or any(map(operator.gt, counts, queue_reach))
                or (jobs and (min(counts) < 1 or min(priorities) < MIN_PRIORITY
                              or max(priorities) > MAX_PRIORITY))):
            return False
        submitted = _plain_times(column("submitted_at"))
        duration = _plain_times(column("duration"))
        intervals = column("checkpoint_interval")
        given = _plain_times([i for i in intervals if i is not None])
        retries = column("preemption_retries")
        budgets = [r for r in retries if r is not None]
        if (submitted is None or duration is None or given is None
                or (given and min(given) <= 0)
                or _types(budgets) - {int} or (budgets and min(budgets) < 0)):
            return False
        problem.job_ids = ids
        problem.job_share = shares
        problem.job_group = list(shares)
        problem.job_unit = units
        problem.job_count = counts
        problem.duration = duration
        problem.submitted = submitted
        problem.priority = priorities
        problem.checkpoint = [0.0 if i is None else float(i) for i in intervals]
        problem.retries = [-1 if r is None else r for r in retries]
        self.plain_ids = ids
        return True

    def index_plain_ids(self, named: set[str]) -> None:
        """:attr:`seen` for the jobs :meth:`add_plain_jobs` added whose ids are ``named``
        (those priority changes name; the others are not looked up)."""
        if self.plain_ids is not None:
            ids = self.plain_ids
            # (The named jobs' places found in C: a comprehension over a million ids costs
            # more than the rest of the look.)
            self.seen = {ids[j]: j
                         for j in compress(range(len(ids)), map(named.__contains__, ids))}
            self.plain_ids = None

    def add_job(self, job: SimJob) -> None:
        """Append ``job`` to the problem, or set it aside as blocked when it can never run
        and ``block`` says so."""
        try:
            self.check_job(job)
        except _NeverRunnable as error:
            if not self.block:
                raise error.config_error from None
            self.seen[job.job_id] = -1
            self.problem.blocked_ids.append(job.job_id)
            self.problem.blocked_group.append(self.share_index[job.share])

    def check_job(self, job: SimJob) -> None:
        """Check every field of ``job`` and append it; _NeverRunnable when the declaration
        can never run it."""
        if not isinstance(job, SimJob):
            raise QuotaConfigError("simulation", "jobs", job, "SimJob instances")
        job_id = job.job_id
        subject = job_subject(job_id)
        if not isinstance(job_id, str) or not job_id:
            raise QuotaConfigError(subject, "job_id", job_id, "a non-empty string")
        if job_id in self.seen:
            raise QuotaConfigError(subject, "job_id", job_id, "an id no other job has")
        share = self.share_index.get(job.share) if isinstance(job.share, str) else None
        if share is None:
            raise QuotaConfigError(subject, "share", job.share,
                                   _one_of("one of the declared shares", self.share_index))
        spec = self.specs[share]
        if not spec.enabled:
            raise QuotaConfigError(
                subject, "share", job.share, "an enabled share (a DISABLED share accepts no jobs)"
            )
        unit_index = self.unit_index
        unit = unit_index.get(job.instance_type) if isinstance(job.instance_type, str) else None
        if unit is None:
            error = QuotaConfigError(
                subject,
                "instance_type",
                job.instance_type,
                _one_of("an instance type the service environment lists", unit_index),
            )
            if not isinstance(job.instance_type, str):
                raise error
            raise _NeverRunnable(error)
        if spec.limit_of(job.instance_type) == 0:
            raise _NeverRunnable(QuotaConfigError(
                subject,
                "instance_type",
                job.instance_type,
                _one_of(
                    f"an instance type quota share {spec.name!r} lists",
                    [limit.capacity_unit for limit in spec.capacity_limits],
                ),
            ))
        submitted = _time(job.submitted_at, subject, "submitted_at")
        duration = _time(job.duration, subject, "duration")
        count = _integer(job.instance_count, subject, "instance_count", 1, None)
        n_units = len(unit_index)
        most = self.reach[share * n_units + unit]
        if count > most:
            raise _NeverRunnable(QuotaConfigError(
                subject,
                "instance_count",
                count,
                f"at most {int(most)} x {job.instance_type}: the most quota share "
                f"{spec.name!r} can ever hold (its limit plus what it may borrow, within the "
                "environment less other RESERVE shares); a larger job would wait forever",
            ))
        priority = _integer(job.priority, subject, "priority", MIN_PRIORITY, MAX_PRIORITY)
        checkpoint = 0.0
        if job.checkpoint_interval is not None:
            checkpoint = _time(job.checkpoint_interval, subject, "checkpoint_interval")
            if checkpoint <= 0:
                raise QuotaConfigError(
                    subject, "checkpoint_interval", job.checkpoint_interval,
                    "None (no checkpoints) or a number of seconds > 0",
                )
        retries = -1
        if job.preemption_retries is not None:
            retries = _integer(job.preemption_retries, subject, "preemption_retries", 0, None)
        self.seen[job_id] = self.problem.append_job(
            job_id, share, unit, count, duration, submitted, priority, checkpoint, retries
        )

    def check_change(self, change: PriorityChange) -> tuple[float, int, int] | None:
        """``change`` as (time, job index, priority); None for a blocked job's."""
        if not isinstance(change, PriorityChange):
            raise QuotaConfigError("simulation", "priority_changes", change,
                                   "PriorityChange instances")
        subject = f"priority change for {job_subject(change.job_id)}"
        index = self.seen.get(change.job_id) if isinstance(change.job_id, str) else None
        if index == -1:
            return None  # a blocked job: it never runs, so its priority plays no part
        if index is None:
            raise QuotaConfigError(subject, "job_id", change.job_id, "the id of a simulated job")
        at = _time(change.at, subject, "at")
        submitted = self.problem.submitted[index]
        if at < submitted:
            raise QuotaConfigError(
                subject, "at", change.at,
                f"a time at or after the job's submission ({submitted}): only a submitted "
                "job's priority can be updated",
            )
        priority = _integer(change.priority, subject, "priority", MIN_PRIORITY, MAX_PRIORITY)
        return at, index, priority


def _types(values: list[Any]) -> set[type]:
    return set(map(type, values))


def _plain_times(values: list[Any]) -> list[float] | None:
    """``values`` as :func:`_time` would make them when each is a plain float or int, finite
    and >= 0; None otherwise."""
    kinds = _types(values)
    if kinds - {float, int}:
        return None
    if int in kinds:
        values = [float(v) for v in values]
    if not all(map(math.isfinite, values)) or (values and min(values) < 0):
        return None
    return values


def _time(value: object, subject: str, field: str) -> float:
    # Plain ints and floats first: numbers.Real is an ABC check, slow over a million jobs.
    if type(value) is not float and type(value) is not int and (
        isinstance(value, bool) or not isinstance(value, numbers.Real)
    ):
        raise QuotaConfigError(subject, field, value, "a number of seconds >= 0")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise QuotaConfigError(subject, field, value, "a finite number of seconds >= 0")
    return number


def _integer(value: object, subject: str, field: str, low: int, high: int | None) -> int:
    span = f"between {low} and {high}" if high is not None else f">= {low}"
    if type(value) is not int:
        # Integers from numpy or other libraries are fine; bools are not.
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise QuotaConfigError(subject, field, value, f"an integer {span}")
        value = int(value)
    if value < low or (high is not None and value > high):
        raise QuotaConfigError(subject, field, value, f"an integer {span}")
    return value


def _one_of(what: str, names: Iterable[str]) -> str:
    listed = sorted(names)
    shown = ", ".join(repr(n) for n in listed[:10]) + (", ..." if len(listed) > 10 else "")
    return f"{what} ({shown})"
