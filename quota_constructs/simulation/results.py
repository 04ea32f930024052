"""What a simulation returns: per-job outcomes, per-share figures, capacity over time.

Outcomes are built on demand from the compact columns the engine fills (``RunData``), so a
million-job result costs no million objects until someone asks for them.
"""

from __future__ import annotations

import math
import struct
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from ..model import CapacityLimit, QuotaShareSpec

JobStatus = Literal["SUCCEEDED", "FAILED"]
EndedBy = Literal["SUCCEEDED", "PREEMPTED"]
PreemptionKind = Literal["CROSS_SHARE", "IN_SHARE"]

# Compact codes the engine stores; the public types spell them out.
# Final: the compiled engine and figures take the values as constants, not module lookups.
ENDED_SUCCEEDED: Final = 0
ENDED_PREEMPTED: Final = 1
NO_PREEMPTION: Final = 0
CROSS_SHARE: Final = 1
IN_SHARE: Final = 2
_ENDED_BY: tuple[EndedBy, EndedBy] = ("SUCCEEDED", "PREEMPTED")
_KIND: tuple[PreemptionKind | None, ...] = (None, "CROSS_SHARE", "IN_SHARE")

RawAttempt = tuple[float, float, int, int, int, bool]
"""(started_at, ended_at, ended_by code, preempting job index or -1, kind code, borrowed)."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One stretch of running, from being started until it succeeded or was preempted."""

    started_at: float
    ended_at: float
    ended_by: EndedBy
    preempted_by: str | None
    """The job whose start preempted this attempt."""
    preemption: PreemptionKind | None
    borrowed: bool
    """True when the attempt started with its share above its own limit for the unit."""


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """How one job fared. ``priority`` is its priority when it ended."""

    job_id: str
    share: str
    instance_type: str
    instance_count: int
    priority: int
    submitted_at: float
    status: JobStatus
    finished_at: float
    attempts: tuple[Attempt, ...]
    lost_seconds: float
    """Run time thrown away by preemptions: the work done since the last checkpoint."""

    @property
    def wait_seconds(self) -> float:
        """Submission to first start (the job's first RUNNABLE stretch)."""
        return (self.attempts[0].started_at if self.attempts else self.finished_at) - (
            self.submitted_at
        )

    @property
    def completion_seconds(self) -> float:
        """Submission to the end (success or failure)."""
        return self.finished_at - self.submitted_at

    @property
    def preemptions(self) -> int:
        return sum(1 for a in self.attempts if a.ended_by == "PREEMPTED")


@dataclass(frozen=True, slots=True)
class ShareFigures:
    """One share's figures over the run (times in seconds, capacity in instance-hours).

    Utilization is the share's use of its *own* allocation (at most its limit per unit)
    divided by that allocation over the result's ``window``: per instance type in
    ``utilization_by_type`` (types are never added together there); ``utilization`` adds the
    instance-hours of every type the share lists, which only means something for a share of
    one type. The environment's utilization per type, borrowed use included, is
    :meth:`SimulationResult.utilization`. Borrowed is
    use above the share's own limit; lent is the part of other shares' borrowing attributed to this
    share's idle allocation (see the package docs). Wait is submission to first start;
    completion is submission to success, over succeeded jobs only.
    """

    share: str
    jobs: int
    succeeded: int
    failed_preemption_budget: int
    """Jobs that FAILED because they were preempted more often than ``preemption_retries``."""
    not_runnable: int
    """Jobs this arrangement can never run (only for the comparison arrangements)."""
    blocked_jobs: int
    """Jobs the declaration can never run, left RUNNABLE (``NeverRunnable.BLOCK``)."""
    own_capacity_hours: float
    """The share's own limits (all units) over the result's window."""
    used_capacity_hours: float
    """Use within its own limits (borrowed use excluded)."""
    utilization: float
    """used_capacity_hours / own_capacity_hours (0 when the span is empty)."""
    borrowed_capacity_hours: float
    lent_capacity_hours: float
    wait_p50: float | None
    wait_p95: float | None
    wait_max: float | None
    completion_median: float | None
    completion_p95: float | None
    cross_share_preemptions: int
    """Preemptions this share's jobs suffered to give borrowed capacity back."""
    in_share_preemptions: int
    """Preemptions this share's jobs suffered for higher-priority jobs of the same share."""
    lost_instance_hours: float
    utilization_by_type: Mapping[str, float] = field(default_factory=dict)
    """Per instance type the share lists: its use within its own limit over that limit, over
    the result's window (0 when the window is empty)."""


@dataclass(frozen=True, slots=True)
class CapacityTimeline:
    """Instances one share holds of one unit, as a step function.

    ``in_use[i]`` (borrowed included) and ``borrowed[i]`` hold from ``times[i]`` until
    ``times[i + 1]``; the last values hold until the run ends (they are 0 then).
    """

    times: Sequence[float]
    in_use: Sequence[int]
    borrowed: Sequence[int]


@dataclass(slots=True)
class RunData:
    """The engine's record of a run (internal; read it through SimulationResult).

    Its columns come in one of two forms, read alike (by index, or in order):

    - a replay's own lists (:func:`~quota_constructs.simulation.engine.replay`): the job
      columns the problem was compiled into and those the engine filled, handed over without
      a copy, for a run that is measured once (a simulation's result, a search's replay);
    - compact arrays (:meth:`compacted`, :func:`~quota_constructs.simulation.engine.run`):
      about a sixth of the memory, for a run that is kept.

    A replay's figures read its lists: converting them to arrays at the end of a run and
    back for the figures made a million floats twice, about a fifth of a replay.

    The usage log lists every change of a share's use of a unit in time order as parallel
    columns: time and the job whose run started or ended (share index, unit index and signed
    instance count derived from it).
    """

    job_ids: Sequence[str]
    share_names: list[str]
    unit_names: list[str]
    job_share: Sequence[int]
    job_unit: Sequence[int]
    job_count: Sequence[int]
    submitted: Sequence[float]
    priority: Sequence[int]
    status_failed: Sequence[int]
    """1 for a job that failed (its preemption budget spent), else 0."""
    finished: Sequence[float]
    lost: Sequence[float]
    attempts: list[RawAttempt | list[RawAttempt] | None]
    """One raw attempt, a list of them (preempted jobs), or None (never started)."""
    own_limits: list[list[int]]
    """own_limits[share][unit]: the allocation figures are measured against."""
    log_time: Sequence[float] = field(default_factory=list)
    log_job: Sequence[int] = field(default_factory=list)
    """Per change of the usage log, the job whose run made it: j when a run of job j started,
    ~j (that is -j - 1) when it ended. The change's share, unit and signed instance count are
    that job's (:attr:`log_share`, :attr:`log_unit`, :attr:`log_delta`): the engine records
    one column, not four, and a replay's figures read the job's columns through it."""

    def compacted(self) -> RunData:
        """This run with its columns as compact arrays (``array("i")``, ``array("d")`` and a
        ``bytearray``), the same values."""
        return RunData(
            job_ids=self.job_ids,
            share_names=self.share_names,
            unit_names=self.unit_names,
            job_share=_ints(self.job_share),
            job_unit=_ints(self.job_unit),
            job_count=_ints(self.job_count),
            submitted=_floats(self.submitted),
            priority=_ints(self.priority),
            status_failed=bytearray(self.status_failed),
            finished=_floats(self.finished),
            lost=_floats(self.lost),
            attempts=self.attempts,
            own_limits=self.own_limits,
            log_time=_floats(self.log_time),
            log_job=_ints(self.log_job),
        )

    @property
    def log_share(self) -> array[int]:
        """Per change of the usage log, the share whose use changed."""
        return array("i", per_logged_change(self.log_job, self.job_share, self.job_share))

    @property
    def log_unit(self) -> array[int]:
        """Per change of the usage log, the unit whose use changed."""
        return array("i", per_logged_change(self.log_job, self.job_unit, self.job_unit))

    @property
    def log_delta(self) -> array[int]:
        """Per change of the usage log, the instances it added (a start) or took away (an
        end, negative)."""
        counts = list(self.job_count)
        return array("i", per_logged_change(self.log_job, counts, [-n for n in counts]))

    def raw_attempts(self, index: int) -> list[RawAttempt]:
        raw = self.attempts[index]
        if raw is None:
            return []
        if isinstance(raw, tuple):
            return [raw]
        return raw


def _ints(values: Sequence[int]) -> array[int]:
    """``array("i", values)``, built through ``struct`` (a third of the cost: the array
    parses each item as an argument)."""
    return array("i", struct.pack(f"{len(values)}i", *values))


def _floats(values: Sequence[float]) -> array[float]:
    """``array("d", values)``, built through ``struct`` (see :func:`_ints`)."""
    return array("d", struct.pack(f"{len(values)}d", *values))


def per_logged_change(
    logged: Sequence[int], on_start: Sequence[int], on_end: Sequence[int]
) -> list[int]:
    """Per entry of a usage log's job column (j for a run's start, ~j for its end), j's value
    in ``on_start`` or in ``on_end``: an index ~j = -j - 1 counts from the back of the two
    columns end to end, the second reversed."""
    both = list(on_start)
    both += reversed(on_end)
    return list(map(both.__getitem__, logged))


JOB_RECORD_FIELDS: tuple[str, ...] = (
    "job_id",
    "share",
    "instance_type",
    "instance_count",
    "priority",
    "submitted_at",
    "first_started_at",
    "finished_at",
    "status",
    "wait_seconds",
    "completion_seconds",
    "attempts",
    "cross_share_preemptions",
    "in_share_preemptions",
    "borrowed_attempts",
    "lost_seconds",
)
"""Columns of :meth:`SimulationResult.job_records`, in order (for a CSV header)."""


class _Outcomes(Mapping[str, JobOutcome]):
    __slots__ = ("_data", "_index")

    def __init__(self, data: RunData) -> None:
        self._data = data
        self._index: dict[str, int] | None = None

    def _lookup(self) -> dict[str, int]:
        if self._index is None:
            self._index = {job_id: i for i, job_id in enumerate(self._data.job_ids)}
        return self._index

    def __getitem__(self, job_id: str) -> JobOutcome:
        return self.outcome(self._lookup()[job_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._data.job_ids)

    def __len__(self) -> int:
        return len(self._data.job_ids)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._lookup()

    def outcome(self, i: int) -> JobOutcome:
        d = self._data
        ids = d.job_ids
        attempts = tuple(
            Attempt(
                started_at=start,
                ended_at=end,
                ended_by=_ENDED_BY[ended],
                preempted_by=ids[by] if by >= 0 else None,
                preemption=_KIND[kind],
                borrowed=borrowed,
            )
            for start, end, ended, by, kind, borrowed in d.raw_attempts(i)
        )
        return JobOutcome(
            job_id=ids[i],
            share=d.share_names[d.job_share[i]],
            instance_type=d.unit_names[d.job_unit[i]],
            instance_count=d.job_count[i],
            priority=d.priority[i],
            submitted_at=d.submitted[i],
            status="FAILED" if d.status_failed[i] else "SUCCEEDED",
            finished_at=d.finished[i],
            attempts=attempts,
            lost_seconds=d.lost[i],
        )


class SimulationResult:
    """The outcome of one simulated arrangement.

    ``jobs[job_id]`` is a :class:`JobOutcome`; ``shares[name]`` a :class:`ShareFigures`.
    ``not_runnable`` names the jobs the arrangement can never run (always empty for the
    declared policy, whose impossible jobs are rejected before simulating).
    """

    __slots__ = ("_data", "_timelines", "arrangement", "blocked", "ended_at", "jobs",
                 "not_runnable", "shares", "started_at", "window")

    def __init__(
        self,
        *,
        arrangement: str,
        data: RunData,
        shares: Mapping[str, ShareFigures],
        started_at: float,
        ended_at: float,
        window: tuple[float, float] | None = None,
        not_runnable: tuple[str, ...] = (),
        blocked: tuple[str, ...] = (),
    ) -> None:
        self.arrangement = arrangement
        """"declared", "hard_partition" or "shared_pool"."""
        self._data = data
        self.jobs: Mapping[str, JobOutcome] = _Outcomes(data)
        self.shares = shares
        self.started_at = started_at
        """First submission."""
        self.ended_at = ended_at
        """Last job's end."""
        self.window = window if window is not None else (started_at, ended_at)
        """(start, end) the figures (utilization, lent capacity) are measured over: this run's
        own span for :func:`simulate`; for :func:`compare_policies` one window for all three
        arrangements, from the first submission to the last end under any of them."""
        self.not_runnable = not_runnable
        self.blocked = blocked
        """Jobs the declaration can never run, left RUNNABLE (``NeverRunnable.BLOCK``); they
        are not in :attr:`jobs`."""
        self._timelines: list[CapacityTimeline] | None = None

    @property
    def instance_types(self) -> tuple[str, ...]:
        return tuple(self._data.unit_names)

    def capacity_timeline(self, share: str, instance_type: str | None = None) -> CapacityTimeline:
        """The share's use of ``instance_type`` over time (every unit summed when None).

        Change points only, several changes at one time folded into one step. Every
        timeline is built in one pass over the run's usage log on the first call.
        """
        d = self._data
        try:
            s = d.share_names.index(share)
        except ValueError:
            raise KeyError(f"no share {share!r}; shares: {d.share_names}") from None
        if instance_type is None:
            unit = len(d.unit_names)  # the per-share total
        elif instance_type in d.unit_names:
            unit = d.unit_names.index(instance_type)
        else:
            raise KeyError(f"no instance type {instance_type!r}; types: {d.unit_names}")
        if self._timelines is None:
            self._timelines = _timelines(d)
        return self._timelines[s * (len(d.unit_names) + 1) + unit]

    def busy_instance_hours(self) -> dict[str, float]:
        """Per instance type, instance-hours any job held (borrowed use included, every
        share together). From the usage log: use returns to 0 by the end of the run, so the
        area under it is minus the sum of each change times its time."""
        d = self._data
        terms: list[list[float]] = [[] for _ in d.unit_names]
        for t, unit, delta in zip(d.log_time, d.log_unit, d.log_delta, strict=True):
            terms[unit].append(-delta * t)
        return {name: math.fsum(terms[k]) / 3600.0 for k, name in enumerate(d.unit_names)}

    def utilization(self, capacity: Mapping[str, int]) -> dict[str, float]:
        """Per instance type of ``capacity`` (the environment's size of each type): busy
        instance-hours, borrowed use included, over capacity-hours (the size times the
        result's ``window``). Types are never added together: an hour of one type is not an
        hour of another. 0 for an empty window."""
        hours = (self.window[1] - self.window[0]) / 3600.0
        busy = self.busy_instance_hours()
        return {
            unit: busy.get(unit, 0.0) / (size * hours) if size > 0 and hours > 0 else 0.0
            for unit, size in capacity.items()
        }

    def job_records(self) -> Iterator[dict[str, object]]:
        """One flat row per job, keys :data:`JOB_RECORD_FIELDS` (for CSV export)."""
        d = self._data
        outcomes = self.jobs
        assert isinstance(outcomes, _Outcomes)
        for i in range(len(d.job_ids)):
            job = outcomes.outcome(i)
            attempts = job.attempts
            yield {
                "job_id": job.job_id,
                "share": job.share,
                "instance_type": job.instance_type,
                "instance_count": job.instance_count,
                "priority": job.priority,
                "submitted_at": job.submitted_at,
                "first_started_at": attempts[0].started_at if attempts else None,
                "finished_at": job.finished_at,
                "status": job.status,
                "wait_seconds": job.wait_seconds,
                "completion_seconds": job.completion_seconds,
                "attempts": len(attempts),
                "cross_share_preemptions": sum(
                    1 for a in attempts if a.preemption == "CROSS_SHARE"
                ),
                "in_share_preemptions": sum(1 for a in attempts if a.preemption == "IN_SHARE"),
                "borrowed_attempts": sum(1 for a in attempts if a.borrowed),
                "lost_seconds": job.lost_seconds,
            }


def _timelines(d: RunData) -> list[CapacityTimeline]:
    """Per share: one timeline per unit, then the share's total, indexed share * (units + 1)."""
    n_units = len(d.unit_names)
    width = n_units + 1
    cells = len(d.share_names) * width
    times: list[array[float]] = [array("d") for _ in range(cells)]
    in_use: list[array[int]] = [array("q") for _ in range(cells)]
    borrowed: list[array[int]] = [array("q") for _ in range(cells)]
    use = [0] * cells
    over = [0] * cells
    limits = [limit for share in d.own_limits for limit in (*share, 0)]
    log_share, log_unit, log_delta = d.log_share, d.log_unit, d.log_delta
    for i, t in enumerate(d.log_time):
        base = log_share[i] * width
        cell = base + log_unit[i]
        total = base + n_units
        lim = limits[cell]
        before = use[cell]
        after = before + log_delta[i]
        use[cell] = after
        over[total] += max(0, after - lim) - max(0, before - lim)
        over[cell] = max(0, after - lim)
        use[total] += log_delta[i]
        for c in (cell, total):
            series = times[c]
            if series and series[-1] == t:
                in_use[c][-1] = use[c]
                borrowed[c][-1] = over[c]
            else:
                series.append(t)
                in_use[c].append(use[c])
                borrowed[c].append(over[c])
    return [CapacityTimeline(times[c], in_use[c], borrowed[c]) for c in range(cells)]


@dataclass(frozen=True, slots=True)
class PolicyComparison:
    """One workload under the declared shares, a hard partition and one shared FIFO pool.

    hard_partition: every share keeps its own limits and nobody borrows or lends.
    shared_pool: no shares, one FIFO queue per instance type over the whole environment;
    figures are still grouped by each job's share and measured against its declared limits.
    """

    declared: SimulationResult
    hard_partition: SimulationResult
    shared_pool: SimulationResult
    alternatives: Mapping[str, SimulationResult] = field(default_factory=dict)
    """Other declarations replayed on the same jobs, by the name the report gives them."""
    alternative_declarations: Mapping[
        str, tuple[Sequence[CapacityLimit], Sequence[QuotaShareSpec]]
    ] = field(default_factory=dict)
    """Each alternative's environment and shares, by the same name (shown in the report)."""
