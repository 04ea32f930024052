"""``SteppingEngine.front``: a queue's waiting jobs in scheduling order, lazily.

The emulator's GetJobQueueSnapshot reads a queue through it. Its walk goes over three layouts
at once (the levels' heap, each level's FIFO, the heap of out-of-order entries), so it is
checked against the plain definition: every waiting job's live entry, sorted.
"""

from __future__ import annotations

import random
from itertools import islice

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.model import QuotaAllocation
from quota_constructs.simulation.engine import SteppingEngine
from quota_constructs.simulation.inputs import SimulationOptions
from quota_constructs.simulation.problem import compile_problem

UNIT = "ml.g5.xlarge"

# One instance, held by the first job for longer than the test runs: everything after it waits.
_ALLOCATION = QuotaAllocation.check(
    environment_limits=[CapacityLimit(UNIT, 1)],
    shares=[QuotaShareSpec(name="team", capacity_limits=[CapacityLimit(UNIT, 1)],
                           strategy=SharingStrategy.RESERVE)],
    unowned_capacity_borrowable=False,
)

def _expected(engine: SteppingEngine, q: int) -> list[tuple[int, float, int, int]]:
    return sorted(
        (-engine.priority[j], engine.order_time[j], j, engine.queue_token[j])
        for j in range(engine.n_jobs)
        if engine.is_waiting(j) and engine.job_queue[j] == q
    )


@pytest.mark.parametrize("seed", range(150))
def test_front_is_every_waiting_job_in_scheduling_order(seed: int) -> None:
    """Arrivals at seven priorities, re-prioritised and withdrawn waiting jobs (which file
    entries out of order and leave levels empty), then the front read whole and in part."""
    rng = random.Random(seed)
    engine = SteppingEngine(compile_problem(_ALLOCATION, jobs=[]), SimulationOptions())
    now = 0.0
    engine.add_job(share=0, unit=0, count=1, duration=1e9, submitted=now, priority=0)
    engine.advance(now)
    for _ in range(rng.randrange(1, 120)):
        now += rng.choice((0.0, 1.0))  # (some arrive together)
        draw = rng.random()
        if draw < 0.5:
            engine.add_job(share=0, unit=0, count=1, duration=60.0, submitted=now,
                           priority=rng.randrange(7))
            engine.advance(now)
        elif draw < 0.85:
            j = rng.randrange(engine.n_jobs)
            if engine.is_waiting(j):
                engine.update_priority(j, rng.randrange(7), now)
        else:
            engine.withdraw(rng.randrange(engine.n_jobs), now)
    expected = _expected(engine, 0)
    assert list(engine.front(0)) == expected
    # Read lazily, its first entries are the same (a snapshot reads the first 100).
    take = rng.randrange(len(expected) + 1)
    assert list(islice(engine.front(0), take)) == expected[:take]
