"""An independent computation of every figure of ``usage.json`` from a queue's ground truth.

Written from the issue's definitions, not from the library: usage is evaluated at the middle
of every elementary interval between two change points by scanning every attempt, integrals
are sums over those intervals, the lending rule is written out again here (capacity no share
owns first, then the lenders' idle capacity in proportion, capped at it), decay integrals use
0.5 ** x directly, percentiles are Hyndman and Fan's type 7 written out. Slow and obvious on
purpose: it judges the sweep, it does not share its code.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

HOUR = 3_600_000.0
LENDING_STRATEGIES = {"LEND", "LEND_AND_BORROW"}


@dataclass(frozen=True)
class TrueAttempt:
    start: int
    stop: int | None
    """None: still running when exported."""
    ended: str


@dataclass(frozen=True)
class TrueJob:
    job_id: str
    share: str
    unit: str
    count: int
    created: int
    status: str
    attempts: tuple[TrueAttempt, ...] = ()
    retries: int | None = None
    preempted: int | None = None
    """AWS's count; None: the PREEMPTED attempts."""

    @property
    def preemptions(self) -> int:
        if self.preempted is not None:
            return self.preempted
        return sum(a.ended == "PREEMPTED" for a in self.attempts)


@dataclass(frozen=True)
class TrueShare:
    name: str
    strategy: str
    own: Mapping[str, int]
    can_borrow: Mapping[str, bool] = field(default_factory=dict)
    """Per type, whether the share can borrow it (a LEND_AND_BORROW share whose borrow limit
    and the environment leave room): decides who lends to whom."""
    target_wait_p95: float | None = None


def type7(values: Sequence[float], p: float) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    h = (len(ordered) - 1) * p
    below = math.floor(h)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (h - below) * (ordered[above] - ordered[below])


def expected(jobs: Sequence[TrueJob], environment: Mapping[str, int],
             shares: Sequence[TrueShare], *, start: int, end: int, exported: int,
             half_life_hours: float, prices: Mapping[str, float] | None,
             closed: bool = True) -> dict[str, Any]:
    units = list(environment)
    names = [s.name for s in shares]
    by_name = {s.name: s for s in shares}
    spans = []  # (share, unit, count, clipped start, clipped stop, preempted)
    for job in jobs:
        for attempt in job.attempts:
            stop = exported if attempt.stop is None else attempt.stop
            a, b = max(attempt.start, start), min(stop, end)
            if b > a:
                spans.append((job.share, job.unit, job.count, a, b, attempt.ended == "PREEMPTED"))
    points = sorted({start, end, *(s[3] for s in spans), *(s[4] for s in spans)})
    hours = (end - start) / HOUR
    h_ms = half_life_hours * HOUR

    def weight_integral(a: float, b: float) -> float:
        """∫_a^b 0.5 ** ((end - t) / h) dt, in hours."""
        return h_ms / math.log(2) * (0.5 ** ((end - b) / h_ms) - 0.5 ** ((end - a) / h_ms)) / HOUR

    cell = {(n, u): {"used": 0.0, "own_used": 0.0, "borrowed": 0.0, "idle": 0.0, "lent": 0.0,
                     "preempted": 0.0, "decayed": 0.0} for n in names for u in units}
    for share, unit, count, a, b, preempted in spans:
        if preempted:
            cell[share, unit]["preempted"] += count * (b - a) / HOUR
    for unit in units:
        owned = sum(by_name[n].own.get(unit, 0) for n in names)
        unowned = max(0, environment[unit] - owned)
        borrowers = [n for n in names if by_name[n].can_borrow.get(unit)]
        lenders = [n for n in names if by_name[n].strategy in LENDING_STRATEGIES
                   and by_name[n].own.get(unit, 0) > 0 and any(b != n for b in borrowers)]
        for a, b in itertools.pairwise(points):
            if b <= a:
                continue
            middle = (a + b) / 2
            usage = {n: 0 for n in names}
            for share, u, count, s0, s1, _ in spans:
                if u == unit and s0 <= middle < s1:
                    usage[share] += count
            dt = (b - a) / HOUR
            decay = weight_integral(a, b)
            borrowed_total = 0.0
            for n in names:
                own = by_name[n].own.get(unit, 0)
                c = cell[n, unit]
                c["used"] += usage[n] * dt
                c["own_used"] += min(usage[n], own) * dt
                c["borrowed"] += max(0, usage[n] - own) * dt
                c["idle"] += max(0, own - usage[n]) * dt
                c["decayed"] += usage[n] * decay
                borrowed_total += max(0, usage[n] - own)
            from_lenders = max(0.0, borrowed_total - unowned)
            idle = {n: max(0, by_name[n].own.get(unit, 0) - usage[n]) for n in lenders}
            total = sum(idle.values())
            if from_lenders > 0 and total > 0:
                for n in lenders:
                    cell[n, unit]["lent"] += min(1.0, from_lenders / total) * idle[n] * dt

    in_window = [j for j in jobs
                 if start <= j.created and (j.created <= end if closed else j.created < end)]
    document: dict[str, Any] = {
        "window": {"hours": hours},
        "shares": {},
        "queue": {},
        "fair_share": {"half_life_hours": half_life_hours, "shares": {}},
    }
    weight_total = weight_integral(start, end)
    for n in names:
        mine = [j for j in in_window if j.share == n]
        waits = [(j.attempts[0].start - j.created) / 1000 for j in mine if j.attempts]
        document["shares"][n] = {
            "jobs": len(mine),
            "wait_p50_seconds": type7(waits, 0.5), "wait_p95_seconds": type7(waits, 0.95),
            "target_wait_p95_seconds": by_name[n].target_wait_p95,
            "preemptions": sum(j.preemptions for j in mine),
            "budget_failures": sum(1 for j in mine if j.status == "FAILED"
                                   and j.retries is not None and j.preemptions > j.retries),
            "instance_types": {
                u: {"own_capacity": by_name[n].own.get(u, 0),
                    "used_hours": cell[n, u]["used"], "own_used_hours": cell[n, u]["own_used"],
                    "borrowed_hours": cell[n, u]["borrowed"],
                    "idle_own_hours": cell[n, u]["idle"], "lent_hours": cell[n, u]["lent"],
                    "preempted_hours": cell[n, u]["preempted"],
                    "cost": None if prices is None else cell[n, u]["used"] * prices[u]}
                for u in units},
        }
        decayed_own = sum(by_name[n].own.values()) * weight_total
        decayed_used = sum(cell[n, u]["decayed"] for u in units)
        document["fair_share"]["shares"][n] = {
            "decayed_used_hours": decayed_used, "decayed_own_hours": decayed_own,
            "ratio": decayed_used / decayed_own if decayed_own else None}
    for u in units:
        used = sum(cell[n, u]["used"] for n in names)
        document["queue"][u] = {"capacity": environment[u], "used_hours": used,
                                "idle_hours": environment[u] * hours - used}
    return document


def assert_matches(got: Any, want: Any, where: str = "usage.json") -> None:
    """Every figure of ``want`` in ``got``: within 1 % or 0.01 (hours), counts exactly."""
    if isinstance(want, dict):
        assert isinstance(got, dict), where
        for key, value in want.items():
            assert key in got, f"{where}: no {key}"
            assert_matches(got[key], value, f"{where}.{key}")
    elif want is None or isinstance(want, (str, bool, int)):  # counts exactly
        assert got == want, f"{where}: {got!r} != {want!r}"
    else:
        assert got is not None, f"{where}: null, expected {want}"
        assert abs(got - want) <= max(0.01, 0.01 * abs(want)), f"{where}: {got} != {want}"
        # The sweep is exact: far inside the tolerance the issue allows.
        assert got == pytest_approx(want), f"{where}: {got} != {want} (not exact)"


def pytest_approx(value: float) -> Any:
    import pytest
    return pytest.approx(value, rel=1e-7, abs=1e-6)
