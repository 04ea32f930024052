"""A reviewer's independent reference replay, written from AWS Batch's documented quota-share
rules (not from the library's code), for the narrow workloads the held-out recommend checks
use: one instance type, one instance per job, one priority, no checkpoints or budgets.

Rules: a share runs up to its own limit; a waiting job within its share's limit takes free
capacity, else reclaims a job running on borrowed capacity (the most recently started one);
LEND_AND_BORROW shares then borrow idle capacity (never RESERVE shares' idle allocation) up to
floor(percent x own / 100) on top of their limit; within a share jobs start in submission
order, and a reclaimed job waits again in its original place.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from quota_constructs import QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import SimJob


@dataclass
class _Running:
    job: SimJob
    started: float
    borrowed: bool
    ends: float


@dataclass
class _Share:
    spec: QuotaShareSpec
    own: int
    ceiling: float
    waiting: list[tuple[float, str]] = field(default_factory=list)
    running: dict[str, _Running] = field(default_factory=dict)


def first_start_waits(environment: int, unit: str, shares: Sequence[QuotaShareSpec],
                      jobs: Sequence[SimJob]) -> dict[str, list[float]]:
    state: dict[str, _Share] = {}
    for spec in shares:
        own = spec.limit_of(unit)
        if spec.strategy is SharingStrategy.LEND_AND_BORROW:
            percent = spec.borrow_limit_percent
            extra = math.inf if percent is None or percent == -1 else (percent * own) // 100
        else:
            extra = 0
        state[spec.name] = _Share(spec, own, own + extra)
    by_id = {job.job_id: job for job in jobs}
    first_start: dict[str, float] = {}
    events = sorted({job.submitted_at for job in jobs})
    ends: list[tuple[float, str]] = []
    pending = sorted(jobs, key=lambda job: job.submitted_at)
    cursor = 0
    times = list(events)
    heapq.heapify(times)
    while times or ends:
        clock = min(times[0] if times else math.inf, ends[0][0] if ends else math.inf)
        while times and times[0] == clock:
            heapq.heappop(times)
        while ends and ends[0][0] == clock:
            _, job_id = heapq.heappop(ends)
            share = state[by_id[job_id].share]
            run = share.running.get(job_id)
            if run is not None and run.ends == clock:
                del share.running[job_id]
        while cursor < len(pending) and pending[cursor].submitted_at == clock:
            job = pending[cursor]
            heapq.heappush(state[job.share].waiting, (job.submitted_at, job.job_id))
            cursor += 1

        def used() -> int:
            return sum(len(s.running) for s in state.values())

        def start(share: _Share, borrowed: bool, clock: float = clock) -> None:
            _, job_id = heapq.heappop(share.waiting)
            job = by_id[job_id]
            first_start.setdefault(job_id, clock)
            run = _Running(job, clock, borrowed, clock + job.duration)
            share.running[job_id] = run
            if job.duration > 0:
                heapq.heappush(ends, (run.ends, job_id))
            else:
                del share.running[job_id]

        progress = True
        while progress:
            progress = False
            # Within own limits, earliest-submitted head first.
            heads = sorted((s.waiting[0], s) for s in state.values()
                           if s.waiting and len(s.running) < s.own and s.spec.enabled)
            for _, share in heads:
                if used() < environment:
                    start(share, borrowed=False)
                    progress = True
                    break
                victims = [(run.started, run.job.job_id, other)
                           for other in state.values() if len(other.running) > other.own
                           for run in other.running.values() if run.borrowed]
                if victims:
                    _, victim_id, other = max(victims, key=lambda v: (v[0], v[1]))
                    run = other.running.pop(victim_id)
                    heapq.heappush(other.waiting, (run.job.submitted_at, victim_id))
                    start(share, borrowed=False)
                    progress = True
                    break
            if progress:
                continue
            # Borrowing: idle capacity not held back for a RESERVE share's own use.
            held = sum(max(0, s.own - len(s.running)) for s in state.values()
                       if s.spec.strategy is SharingStrategy.RESERVE)
            heads = sorted((s.waiting[0], s) for s in state.values()
                           if s.waiting and s.own <= len(s.running) < s.ceiling
                           and s.spec.strategy is SharingStrategy.LEND_AND_BORROW)
            for _, share in heads:
                if used() + held < environment:
                    start(share, borrowed=True)
                    progress = True
                    break
        if cursor < len(pending) and (not times or times[0] != pending[cursor].submitted_at):
            heapq.heappush(times, pending[cursor].submitted_at)
    waits: dict[str, list[float]] = {spec.name: [] for spec in shares}
    for job in jobs:
        waits[job.share].append(first_start[job.job_id] - job.submitted_at)
    return waits


def p95(values: Sequence[float]) -> float:
    """The 95th percentile, linear between the closest ranks."""
    ordered = sorted(values)
    rank = 0.95 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
