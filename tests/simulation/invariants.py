"""Rules every simulation must obey, checked from the public result only (no engine state).

Usage at a moment ``t`` is counted over attempts with ``started_at <= t < ended_at``: a job
that ends at ``t`` has given its capacity back to one that starts at ``t``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import PriorityChange, SimJob, SimulationResult


def usage_by_moment(
    result: SimulationResult, shares: Sequence[QuotaShareSpec]
) -> dict[str, list[tuple[float, dict[str, int]]]]:
    """Per unit: after each change time, the instances each share holds."""
    events: dict[str, list[tuple[float, int, str]]] = defaultdict(list)
    for job in result.jobs.values():
        for attempt in job.attempts:
            if attempt.ended_at > attempt.started_at:
                events[job.instance_type].append(
                    (attempt.started_at, job.instance_count, job.share)
                )
                events[job.instance_type].append(
                    (attempt.ended_at, -job.instance_count, job.share)
                )
    moments: dict[str, list[tuple[float, dict[str, int]]]] = {}
    for unit, changes in events.items():
        changes.sort(key=lambda e: (e[0], e[1]))
        held = {spec.name: 0 for spec in shares}
        series: list[tuple[float, dict[str, int]]] = []
        for index, (t, delta, share) in enumerate(changes):
            held[share] += delta
            if index + 1 == len(changes) or changes[index + 1][0] != t:
                series.append((t, dict(held)))
        moments[unit] = series
    return moments


def usable_capacity(
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    unowned_capacity_borrowable: bool,
) -> dict[str, int]:
    """What jobs can use of each type, restated here from the rule's text: capacity no share
    owns is used only by borrowers, and only when the assumption allows it; otherwise what
    the shares' limits add up to (where less than the environment)."""
    usable = {}
    for limit in capacity_limits:
        unit = str(limit.unit)
        owned = sum(spec.limit_of(unit) for spec in shares)
        usable[unit] = (
            limit.max_capacity if unowned_capacity_borrowable or owned >= limit.max_capacity
            else owned
        )
    return usable


def check_invariants(
    result: SimulationResult,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    jobs: Sequence[SimJob],
    priority_changes: Sequence[PriorityChange] = (),
    unowned_capacity_borrowable: bool = True,
) -> None:
    environment = usable_capacity(capacity_limits, shares, unowned_capacity_borrowable)
    spec_of = {spec.name: spec for spec in shares}
    submitted = {job.job_id: job for job in jobs}
    changed = {change.job_id for change in priority_changes}

    # Every job ends, once, after it was submitted, with attempts in order.
    assert set(result.jobs) == set(submitted)
    for job_id, job in result.jobs.items():
        given = submitted[job_id]
        assert job.status in ("SUCCEEDED", "FAILED")
        assert job.attempts, f"{job_id} never ran"
        previous_end = given.submitted_at
        for attempt in job.attempts:
            assert attempt.started_at >= previous_end
            assert attempt.ended_at >= attempt.started_at
            previous_end = attempt.ended_at
        for attempt in job.attempts[:-1]:
            assert attempt.ended_by == "PREEMPTED"
        last = job.attempts[-1]
        assert job.finished_at == last.ended_at
        preemptions = sum(a.ended_by == "PREEMPTED" for a in job.attempts)
        if job.status == "SUCCEEDED":
            assert last.ended_by == "SUCCEEDED"
            assert given.preemption_retries is None or preemptions <= given.preemption_retries
        else:
            assert last.ended_by == "PREEMPTED"
            assert given.preemption_retries is not None
            assert preemptions == given.preemption_retries + 1
        # Run time adds up: what was lost plus the last run is the job's duration
        # (checkpointed work is kept, the rest is counted as lost).
        ran = sum(a.ended_at - a.started_at for a in job.attempts)
        assert job.lost_seconds >= -1e-6
        if job.status == "SUCCEEDED":
            assert math.isclose(ran - job.lost_seconds, given.duration, abs_tol=1e-6)
        if given.checkpoint_interval is None and job.status == "SUCCEEDED":
            assert math.isclose(last.ended_at - last.started_at, given.duration, abs_tol=1e-6)

        for attempt in job.attempts:
            if attempt.preemption is None:
                assert attempt.preempted_by is None
                continue
            assert attempt.ended_by == "PREEMPTED"
            assert attempt.preempted_by is not None
            preemptor = result.jobs[attempt.preempted_by]
            assert any(a.started_at == attempt.ended_at for a in preemptor.attempts), (
                f"{attempt.preempted_by} preempted {job_id} but did not start then"
            )
            if attempt.preemption == "IN_SHARE":
                assert preemptor.share == job.share
                assert spec_of[job.share].in_share_preemption
                if job_id not in changed and attempt.preempted_by not in changed:
                    assert submitted[attempt.preempted_by].priority > given.priority
            else:
                assert preemptor.share != job.share
                # Only borrowed capacity is reclaimed.
                assert attempt.borrowed, f"{job_id} was reclaimed but ran within its limit"

    # Capacity, reservations and borrow limits at every moment.
    reserved = {
        unit: sum(
            spec.limit_of(unit) for spec in shares if spec.strategy is SharingStrategy.RESERVE
        )
        for unit in environment
    }
    for unit, series in usage_by_moment(result, shares).items():
        for t, held in series:
            total = sum(held.values())
            assert total <= environment[unit], f"{unit} over capacity at {t}: {held}"
            others = sum(
                count
                for name, count in held.items()
                if spec_of[name].strategy is not SharingStrategy.RESERVE
            )
            assert others <= environment[unit] - reserved[unit], (
                f"a RESERVE share's allocation of {unit} was used by another share at {t}"
            )
            for name, count in held.items():
                spec = spec_of[name]
                assert count <= spec.ceiling_of(unit) + 1e-9, (
                    f"{name} holds {count} {unit} at {t}, over its borrow limit"
                )
                if not spec.strategy.borrows:
                    assert count <= spec.limit_of(unit), f"{name} borrowed {unit} at {t}"

    # Cross-share preemption only takes from a share above its own limit, and each victim while
    # its share is still above it: what the share held at t (jobs that succeeded at t had
    # already ended; jobs started at t are counted, as they may have started first), less every
    # job of it reclaimed at t but the largest, is still above its limit. (A job only part of
    # which is borrowed may take its share below the limit; none is taken from a share that is
    # no longer borrowing.)
    reclaimed: dict[tuple[str, str, float], list[int]] = defaultdict(list)
    for job in result.jobs.values():
        for attempt in job.attempts:
            if attempt.preemption == "CROSS_SHARE":
                reclaimed[(job.share, job.instance_type, attempt.ended_at)].append(
                    job.instance_count
                )
    for (name, unit, t), counts in reclaimed.items():
        before = sum(
            other.instance_count
            for other in result.jobs.values()
            if other.share == name and other.instance_type == unit
            for a in other.attempts
            if (a.started_at <= t < a.ended_at)
            or (a.started_at <= t == a.ended_at and a.preemption is not None)
        )
        assert before - sum(counts) + max(counts) > spec_of[name].limit_of(unit), (
            f"{name} was reclaimed from at {t} although it was not borrowing {unit}"
        )


def check_no_needless_waiting(
    result: SimulationResult,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    jobs: Sequence[SimJob],
    priority_changes: Sequence[PriorityChange] = (),
    reclaim: bool = False,
    in_share: bool = False,
    unowned_capacity_borrowable: bool = True,
) -> None:
    """With head-of-line blocking: after each moment, no share's first waiting job for a unit
    could have started without preempting anyone (within its limit on free capacity, or by
    borrowing idle lendable capacity within its borrow limit).

    With ``reclaim`` a first waiting job within its share's limit also never waits while
    enough borrowed capacity could be reclaimed for it (every instance a share holds above its
    limit is held by jobs that started borrowed, so reclaiming them, whole, frees at least
    that much).

    With ``in_share``, a first waiting job of a share with in-share preemption never waits
    while preempting all of its share's strictly lower-priority running jobs of that type
    would make room for it (a job reclaimed from at that very moment excepted).
    """
    environment = usable_capacity(capacity_limits, shares, unowned_capacity_borrowable)
    spec_of = {spec.name: spec for spec in shares}
    order = {job.job_id: index for index, job in enumerate(jobs)}
    moments = sorted(
        {job.submitted_at for job in jobs}
        | {a.ended_at for o in result.jobs.values() for a in o.attempts}
        | {c.at for c in priority_changes}
    )
    for t in moments:
        priority = {job.job_id: job.priority for job in jobs}
        for change in sorted(priority_changes, key=lambda c: c.at):
            if change.at <= t and result.jobs[change.job_id].finished_at >= change.at:
                priority[change.job_id] = change.priority
        held: dict[tuple[str, str], int] = defaultdict(int)
        borrowed_running: dict[tuple[str, str], int] = defaultdict(int)
        lower: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        heads: dict[tuple[str, str], SimJob] = {}
        for job in jobs:
            outcome = result.jobs[job.job_id]
            key = (job.share, job.instance_type)
            running = [a for a in outcome.attempts if a.started_at <= t < a.ended_at]
            if running:
                held[key] += job.instance_count
                if running[0].borrowed:
                    borrowed_running[key] += job.instance_count
                lower[key].append((priority[job.job_id], job.instance_count))
                continue
            waiting = job.submitted_at <= t and any(
                a.started_at > t for a in outcome.attempts
            )
            if not waiting:
                continue
            rank = (-priority[job.job_id], job.submitted_at, order[job.job_id])
            best = heads.get(key)
            if best is None or rank < (-priority[best.job_id], best.submitted_at,
                                       order[best.job_id]):
                heads[key] = job
        for (share_name, unit), job in heads.items():
            spec = spec_of[share_name]
            in_use = sum(v for (s, u), v in held.items() if u == unit)
            reserved_idle = sum(
                max(0, s.limit_of(unit) - held[(s.name, unit)])
                for s in shares
                if s.strategy is SharingStrategy.RESERVE
            )
            own = held[(share_name, unit)]
            free = environment[unit] - in_use - reserved_idle
            if spec.strategy is SharingStrategy.RESERVE:
                free += spec.limit_of(unit) - own
            n = job.instance_count
            within = own + n <= spec.limit_of(unit)
            can_borrow = spec.strategy.borrows and own + n <= spec.ceiling_of(unit)
            assert not (n <= free and (within or can_borrow)), (
                f"{job.job_id} waits at {t} although {free} {unit} are free for it"
            )
            reclaimed_now = any(
                a.ended_at == t and a.preemption == "CROSS_SHARE"
                for a in result.jobs[job.job_id].attempts
            )
            if in_share and spec.in_share_preemption and not reclaimed_now:
                freed = sum(
                    count for p, count in lower[(share_name, unit)]
                    if p < priority[job.job_id]
                )
                top = spec.ceiling_of(unit) if spec.strategy.borrows else spec.limit_of(unit)
                assert not (freed and own - freed + n <= top and free + freed >= n), (
                    f"{job.job_id} waits at {t} although preempting lower-priority jobs of "
                    "its share would make room"
                )
            if reclaim and within:
                reclaimable = sum(
                    max(0, min(count - other.limit_of(unit), borrowed_running[(other.name, unit)]))
                    for other in shares
                    if other.name != share_name
                    for count in [held[(other.name, unit)]]
                )
                assert free + reclaimable < n, (
                    f"{job.job_id} waits at {t} within its limit although {reclaimable} "
                    f"borrowed {unit} could be reclaimed"
                )
