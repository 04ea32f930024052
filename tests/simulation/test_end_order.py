"""Runs end by their planned end, then in the order the runs were planned: the order of the
engine's heap of (end, token, job), whatever holds the planned ends.

Checked through a SteppingEngine whose environment fits every job at once, so each run starts
on arrival and ends at its arrival plus its duration: ends on and beside 64-second boundaries,
ties, runs ended early (their planned end goes stale) and runs with no end (an infinite
duration, as the live start bounds plan one whose runtime has no maximum), which must never
end. (Written for a calendar of 64-second slots that was tried in place of the heap and not
kept: it was faster compiled and slower as pure Python.)
"""

from __future__ import annotations

import math
import random
from itertools import count

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.model import QuotaAllocation
from quota_constructs.simulation.engine import SteppingEngine
from quota_constructs.simulation.inputs import SimulationOptions
from quota_constructs.simulation.problem import compile_problem

UNIT = "ml.g5.xlarge"
ROOM = 400  # instances: more than the jobs any case adds, so none waits

_ALLOCATION = QuotaAllocation.check(
    environment_limits=[CapacityLimit(UNIT, ROOM)],
    shares=[QuotaShareSpec(name="team", capacity_limits=[CapacityLimit(UNIT, ROOM)],
                           strategy=SharingStrategy.RESERVE)],
    unowned_capacity_borrowable=False,
)


class _Ends:
    """The engine's reports, in the order it gave them."""

    def __init__(self) -> None:
        self.ended: list[tuple[float, int]] = []

    def job_started(self, j: int, now: float, borrowed: bool) -> None:
        pass

    def job_preempted(self, j: int, now: float, by: int, cross_share: bool,
                      failed: bool) -> None:
        pass

    def job_ended(self, j: int, now: float) -> None:
        self.ended.append((now, j))


def _duration(rng: random.Random) -> float:
    draw = rng.random()
    if draw < 0.1:
        return math.inf
    if draw < 0.4:  # on or just beside a slot boundary (64 s)
        return 64.0 * rng.randrange(1, 6) + rng.choice((-1e-9, 0.0, 1e-9, 0.5))
    if draw < 0.55:
        return 3.0  # many runs planned to end together
    return rng.uniform(0.001, 1_000.0)


@pytest.mark.parametrize("seed", range(40))
def test_runs_end_by_end_then_by_the_order_they_were_planned(seed: int) -> None:
    rng = random.Random(seed)
    ends = _Ends()
    engine = SteppingEngine(compile_problem(_ALLOCATION, jobs=[]), SimulationOptions(), ends)
    planned: dict[int, float] = {}  # job -> its run's planned end
    early: dict[int, float] = {}  # job -> when it was ended early
    plan_order: dict[int, int] = {}  # job -> when its live end was planned (the token's order)
    sequence = count()
    now = rng.uniform(0.0, 1e6)
    for _ in range(rng.randrange(20, 120)):
        now += rng.choice((0.0, 0.0, 1.0, 37.5, 64.0))
        if planned and rng.random() < 0.1:
            j = rng.choice(list(planned))
            if engine.is_running(j) and j not in early:
                assert engine.end_early(j, now)
                early[j] = now
                plan_order[j] = next(sequence)
                continue
        duration = _duration(rng)
        j = engine.add_job(share=0, unit=0, count=1, duration=duration, submitted=now,
                           priority=0)
        engine.advance(now)
        assert engine.is_running(j)
        planned[j] = now + duration
        plan_order[j] = next(sequence)
    engine.advance(now + 10_000.0)

    # A job ended early ends then (a run that ended before that is not running, so is never
    # ended early); runs with no end still run.
    expected = sorted(
        (early.get(j, end), plan_order[j], j) for j, end in planned.items()
        if early.get(j, end) <= now + 10_000.0
    )
    assert ends.ended == [(end, j) for end, _, j in expected]
    for j, end in planned.items():
        assert engine.is_running(j) == (j not in early and end > now + 10_000.0)
