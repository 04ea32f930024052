"""Seeded synthetic workloads: Poisson arrivals per share, random sizes, durations, priorities.

Each share is described by a :class:`ShareTraffic`: an arrival rate (jobs per hour, a Poisson
process), a duration distribution, weighted job sizes (instance type and count), weighted
priorities, which fraction of its jobs checkpoint and how often, the preemption budget its jobs
carry, and which fraction of its jobs get one priority change while they wait or run.

The shares' Poisson processes are generated as one process of the summed rate whose arrivals
are assigned to a share in proportion to its rate (the same distribution as independent
processes), so jobs come out in submission order, one at a time, in constant time per job:
:func:`iter_synthetic` is lazy and a million jobs take seconds. The same traffic, seed and
limits always give the same workload (``random.Random`` with the seed; no global state).
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ...model import QuotaConfigError
from ..inputs import PriorityChange, SimJob
from .files import MAX_PRIORITY, Workload


@dataclass(frozen=True)
class LogNormalDuration:
    """Run times whose logarithm is normal: many short jobs, a long tail of long ones."""

    median: float
    """Seconds; half the jobs run shorter."""
    sigma: float = 1.0
    """Spread of the logarithm; 0 makes every job exactly ``median`` long."""

    @property
    def mean(self) -> float:
        return self.median * math.exp(self.sigma**2 / 2)

    def sample(self, rng: random.Random) -> float:
        return rng.lognormvariate(math.log(self.median), self.sigma)


@dataclass(frozen=True)
class ExponentialDuration:
    """Memoryless run times with the given mean (seconds)."""

    mean: float

    def sample(self, rng: random.Random) -> float:
        return rng.expovariate(1.0 / self.mean)


@dataclass(frozen=True)
class FixedDuration:
    """Every job runs exactly ``seconds``."""

    seconds: float

    @property
    def mean(self) -> float:
        return self.seconds

    def sample(self, rng: random.Random) -> float:
        return self.seconds


Duration = LogNormalDuration | ExponentialDuration | FixedDuration


@dataclass(frozen=True)
class JobSize:
    """``instance_count`` instances of ``instance_type``, drawn with relative ``weight``."""

    instance_type: str
    instance_count: int = 1
    weight: float = 1.0


@dataclass(frozen=True, kw_only=True)
class ShareTraffic:
    """The work one share submits. Rates are per hour, times in seconds."""

    share: str
    arrivals_per_hour: float
    duration: Duration
    sizes: Sequence[JobSize]
    priorities: Mapping[int, float] = field(default_factory=lambda: {0: 1.0})
    """Priority -> relative weight."""
    checkpointed_fraction: float = 0.0
    """Fraction of jobs that checkpoint every ``checkpoint_interval`` seconds."""
    checkpoint_interval: float | None = None
    preemption_retries: int | None = None
    """Budget every job of the share carries; None = requeued without limit."""
    priority_change_fraction: float = 0.0
    """Fraction of jobs whose priority changes once, to another of ``priorities``."""

    def __post_init__(self) -> None:
        subject = f"synthetic traffic of share {self.share!r}"
        _check(subject, "arrivals_per_hour", self.arrivals_per_hour, minimum=0.0)
        mean = getattr(self.duration, "mean", None)
        if not isinstance(mean, (int, float)) or not math.isfinite(mean) or mean <= 0:
            raise QuotaConfigError(subject, "duration", self.duration, "a duration with mean > 0")
        if not self.sizes:
            raise QuotaConfigError(subject, "sizes", self.sizes, "at least one JobSize")
        for index, size in enumerate(self.sizes):
            if not _is_count(size.instance_count, minimum=1):
                raise QuotaConfigError(
                    subject, f"sizes[{index}].instance_count", size.instance_count,
                    "an integer >= 1",
                )
            _check(subject, f"sizes[{index}].weight", size.weight, minimum=0.0, positive=True)
        if not self.priorities:
            raise QuotaConfigError(subject, "priorities", self.priorities, "at least one priority")
        for priority, weight in self.priorities.items():
            if not _is_count(priority, minimum=0) or priority > MAX_PRIORITY:
                raise QuotaConfigError(
                    subject, "priorities", priority, f"integers between 0 and {MAX_PRIORITY}"
                )
            _check(subject, f"priorities[{priority}]", weight, minimum=0.0, positive=True)
        for name in ("checkpointed_fraction", "priority_change_fraction"):
            _check(subject, name, getattr(self, name), minimum=0.0, maximum=1.0)
        if self.checkpointed_fraction > 0 and self.checkpoint_interval is None:
            raise QuotaConfigError(
                subject, "checkpoint_interval", None, "seconds > 0 when checkpointed_fraction > 0"
            )
        if self.checkpoint_interval is not None:
            _check(subject, "checkpoint_interval", self.checkpoint_interval, minimum=0.0,
                   positive=True)
        retries = self.preemption_retries
        if retries is not None and not _is_count(retries, minimum=0):
            raise QuotaConfigError(
                subject, "preemption_retries", retries, "None or an integer >= 0"
            )


def iter_synthetic(
    traffic: Sequence[ShareTraffic],
    *,
    seed: int,
    jobs: int | None = None,
    hours: float | None = None,
) -> Iterator[tuple[SimJob, PriorityChange | None]]:
    """Jobs in submission order, each with its priority change (or None), lazily.

    Stops after ``jobs`` jobs or at ``hours``, whichever comes first (at least one is needed).
    """
    if jobs is None and hours is None:
        raise QuotaConfigError("synthetic workload", "jobs", None, "a job count, hours, or both")
    if jobs is not None:
        _check("synthetic workload", "jobs", jobs, minimum=0.0)
    if hours is not None:
        _check("synthetic workload", "hours", hours, minimum=0.0)
    names = [t.share for t in traffic]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise QuotaConfigError("synthetic workload", "traffic", duplicate, "each share once")
    active = [t for t in traffic if t.arrivals_per_hour > 0]
    total_rate = sum(t.arrivals_per_hour for t in active) / 3600.0
    if total_rate <= 0:
        return
    rng = random.Random(seed)
    share_weights = list(itertools.accumulate(t.arrivals_per_hour for t in active))
    samplers = [_ShareSampler(t) for t in active]
    horizon = math.inf if hours is None else hours * 3600.0
    limit = math.inf if jobs is None else jobs
    now = 0.0
    count = 0
    while count < limit:
        now += rng.expovariate(total_rate)
        if now > horizon:
            return
        pick = bisect.bisect_right(share_weights, rng.random() * share_weights[-1])
        sampler = samplers[min(pick, len(samplers) - 1)]
        yield sampler.job(rng, f"{sampler.traffic.share}-{count}", now)
        count += 1


def synthesize(
    traffic: Sequence[ShareTraffic],
    *,
    seed: int,
    jobs: int | None = None,
    hours: float | None = None,
) -> Workload:
    """The whole workload of :func:`iter_synthetic`, priority changes in time order."""
    job_list: list[SimJob] = []
    changes: list[PriorityChange] = []
    for job, change in iter_synthetic(traffic, seed=seed, jobs=jobs, hours=hours):
        job_list.append(job)
        if change is not None:
            changes.append(change)
    changes.sort(key=lambda c: c.at)
    return Workload(jobs=job_list, priority_changes=changes)


class _ShareSampler:
    """One share's traffic with its weights accumulated once, for constant-time draws."""

    def __init__(self, traffic: ShareTraffic) -> None:
        self.traffic = traffic
        self.sizes = list(traffic.sizes)
        self.size_weights = list(itertools.accumulate(s.weight for s in self.sizes))
        self.priority_values = list(traffic.priorities)
        self.priority_weights = list(itertools.accumulate(traffic.priorities.values()))

    def job(
        self, rng: random.Random, job_id: str, submitted_at: float
    ) -> tuple[SimJob, PriorityChange | None]:
        t = self.traffic
        size = self.sizes[_draw(rng, self.size_weights)]
        priority = self.priority_values[_draw(rng, self.priority_weights)]
        duration = max(t.duration.sample(rng), 1.0)
        checkpointed = t.checkpointed_fraction > 0 and rng.random() < t.checkpointed_fraction
        job = SimJob(
            job_id=job_id,
            share=t.share,
            submitted_at=submitted_at,
            duration=duration,
            instance_type=size.instance_type,
            instance_count=size.instance_count,
            priority=priority,
            checkpoint_interval=t.checkpoint_interval if checkpointed else None,
            preemption_retries=t.preemption_retries,
        )
        change = None
        if (
            t.priority_change_fraction > 0
            and len(self.priority_values) > 1
            and rng.random() < t.priority_change_fraction
        ):
            others = [p for p in self.priority_values if p != priority]
            change = PriorityChange(
                # Within the job's own run time after submission: it is then still waiting or
                # running, never finished.
                at=submitted_at + rng.random() * duration,
                job_id=job_id,
                priority=others[int(rng.random() * len(others)) % len(others)],
            )
        return job, change


def _draw(rng: random.Random, cumulative: Sequence[float]) -> int:
    if len(cumulative) == 1:
        return 0
    return min(bisect.bisect_right(cumulative, rng.random() * cumulative[-1]), len(cumulative) - 1)


def _is_count(value: object, *, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _check(
    subject: str,
    field_name: str,
    value: object,
    *,
    minimum: float,
    maximum: float | None = None,
    positive: bool = False,
) -> None:
    ok = (
        not isinstance(value, bool)
        and isinstance(value, (int, float))
        and math.isfinite(value)
        and value >= minimum
        and (maximum is None or value <= maximum)
        and (not positive or value > 0)
    )
    if not ok:
        bound = f"between {minimum:g} and {maximum:g}" if maximum is not None else (
            "> 0" if positive else f">= {minimum:g}"
        )
        raise QuotaConfigError(subject, field_name, value, f"a finite number {bound}")
