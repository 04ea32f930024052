"""The engine's exact output on seeded workloads, pinned: a restructuring must not move a job.

Each case replays a bursty seeded workload (simultaneous arrivals, ties in priority and time,
zero-length and checkpointed jobs, retry budgets, priority changes while waiting and running,
jobs as large as their share) on a multi-type declaration with in-share preemption, or on a
single-type one with borrow limits, under one of the simulator's option variants, and hashes
everything the engine returns: every attempt of every job (start, end, how it ended, by whom,
borrowed or not), failures, finish times, lost work, final priorities and the usage log. The
workloads are generated here, not by the library's synthetic generator, so that only the
engine (and the problem compiler feeding it) can change a digest.

The digests were taken from the closure engine that the phase-by-phase ``_Engine`` replaced
(and which agreed on 377 wider cases, every arrangement of ``compare_policies`` included). A
change of behaviour that is meant must update them: the failure message prints the new ones.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.model import QuotaAllocation
from quota_constructs.simulation import (
    BorrowerOrder,
    HeadOfLine,
    NeverRunnable,
    PriorityChange,
    RequeuePlace,
    SimJob,
    SimulationOptions,
    VictimOrder,
    engine,
)
from quota_constructs.simulation.engine import run
from quota_constructs.simulation.problem import compile_problem

G5 = "ml.g5.xlarge"
P4 = "ml.p4d.24xlarge"
C5 = "ml.c5.xlarge"

MULTI_TYPE = (
    [CapacityLimit(G5, 12), CapacityLimit(P4, 6)],
    [
        QuotaShareSpec(name="a", capacity_limits=[CapacityLimit(G5, 4), CapacityLimit(P4, 2)],
                       strategy=SharingStrategy.LEND_AND_BORROW, in_share_preemption=True),
        QuotaShareSpec(name="b", capacity_limits=[CapacityLimit(G5, 3), CapacityLimit(P4, 2)],
                       strategy=SharingStrategy.LEND, in_share_preemption=True),
        QuotaShareSpec(name="c", capacity_limits=[CapacityLimit(G5, 2)],
                       strategy=SharingStrategy.RESERVE),
        QuotaShareSpec(name="d", capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(P4, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100),
    ],
)
ONE_TYPE = (
    [CapacityLimit(G5, 6)],
    [
        QuotaShareSpec(name="x", capacity_limits=[CapacityLimit(G5, 2)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=50,
                       in_share_preemption=True),
        QuotaShareSpec(name="y", capacity_limits=[CapacityLimit(G5, 2)],
                       strategy=SharingStrategy.LEND, in_share_preemption=True),
        QuotaShareSpec(name="z", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW),
    ],
)

OPTIONS = {
    "default": SimulationOptions(),
    "per-share-head": SimulationOptions(head_of_line=HeadOfLine.PER_SHARE),
    "backfill-requeue-back": SimulationOptions(head_of_line=HeadOfLine.NONE,
                                               requeue_place=RequeuePlace.BACK),
    "newest-victims-per-share-head": SimulationOptions(victim_order=VictimOrder.NEWEST,
                                                       head_of_line=HeadOfLine.PER_SHARE),
    "all-victims-priority-borrowers": SimulationOptions(minimal_victim_set=False,
                                                        borrower_order=BorrowerOrder.PRIORITY),
    "whole-jobs-only-no-checkpoints": SimulationOptions(reclaim_partly_borrowed_jobs=False,
                                                        keep_checkpoint_progress=False),
    "unowned-not-borrowable-block": SimulationOptions(unowned_capacity_borrowable=False,
                                                      never_runnable=NeverRunnable.BLOCK),
}

EXPECTED = {
    "multi-type/default/1": "6433570d5ba2db15d73140a31b049b53",
    "multi-type/default/2": "32c35848f691db23321dbf632356f404",
    "multi-type/per-share-head/1": "53757a682f01198f61df77c9731d2278",
    "multi-type/per-share-head/2": "a2c21de3352294a7150061d1e3578041",
    "multi-type/backfill-requeue-back/1": "8409973ef70c9e0dc5eefe7d4f7e3628",
    "multi-type/backfill-requeue-back/2": "3d4ea2960f1b894807271d3bc50c40a6",
    "multi-type/newest-victims-per-share-head/1": "3a0850756f41ef2ac6c085a63a82f786",
    "multi-type/newest-victims-per-share-head/2": "00482884e5721a456e5ba0e9505f66eb",
    "multi-type/all-victims-priority-borrowers/1": "b110c8e2049d1a8cdc0556e27a830107",
    "multi-type/all-victims-priority-borrowers/2": "cb9d4235d7225dfadda845fde1ba13a6",
    "multi-type/whole-jobs-only-no-checkpoints/1": "49cc91608479f39d16105eee3a3832b5",
    "multi-type/whole-jobs-only-no-checkpoints/2": "a1e3336c5c63288b29f6ac1fb8149b03",
    "multi-type/unowned-not-borrowable-block/1": "8ed95bc3e500b2c16d3523f22e848b32",
    "multi-type/unowned-not-borrowable-block/2": "dbe098a99bb4b7140721754cdd94a8da",
    "one-type/default/1": "c85f4e52a3b0e00e302f9848bcb99b6a",
    "one-type/default/2": "a573e69c58b03c18c681553c90ba31f1",
    "one-type/per-share-head/1": "c85f4e52a3b0e00e302f9848bcb99b6a",
    "one-type/per-share-head/2": "a573e69c58b03c18c681553c90ba31f1",
    "one-type/backfill-requeue-back/1": "b3e1c0bfdb3bdcac6935c78ffed1b88a",
    "one-type/backfill-requeue-back/2": "db276397ea43d1078f274da22c670665",
    "one-type/newest-victims-per-share-head/1": "2cc23e542fc66c7c304d990f3bf055f2",
    "one-type/newest-victims-per-share-head/2": "27ae198b649b9e98325b914bfaec0dd7",
    "one-type/all-victims-priority-borrowers/1": "8a33e092ac951db8a5855969df67f2bc",
    "one-type/all-victims-priority-borrowers/2": "a2b0c69a379111026fe88b3dd267649e",
    "one-type/whole-jobs-only-no-checkpoints/1": "682adb5fe20f26cd6b01b11e7d13f367",
    "one-type/whole-jobs-only-no-checkpoints/2": "2bd526af92aab6e09123da312d590963",
    "one-type/unowned-not-borrowable-block/1": "58a2609091375cab670a30311974dde9",
    "one-type/unowned-not-borrowable-block/2": "1cc962fcae83829b9ccd85997634e935",
}


def workload(
    shares: list[QuotaShareSpec], n_jobs: int, seed: int, *, never_runnable: bool
) -> tuple[list[SimJob], list[PriorityChange]]:
    rng = random.Random(seed)
    jobs: list[SimJob] = []
    changes: list[PriorityChange] = []
    t = 0.0
    for i in range(n_jobs):
        if rng.random() < 0.6:  # otherwise at the same moment as the job before
            t += rng.choice([0.0, 1.0, 5.0, 30.0, 200.0])
        spec = rng.choice(shares)
        limit = rng.choice(spec.capacity_limits)
        most = limit.max_capacity
        jobs.append(SimJob(
            job_id=f"j{i}", share=spec.name, submitted_at=t,
            duration=rng.choice([0.0, 10.0, 100.0, 300.0, rng.uniform(1.0, 1000.0)]),
            instance_type=str(limit.unit), instance_count=min(most, rng.choice([1, 1, 2, most])),
            priority=rng.choice([0, 1, 5, 9, 100]),
            checkpoint_interval=rng.choice([None, 25.0, 60.0]),
            preemption_retries=rng.choice([None, None, 0, 1, 2]),
        ))
        if rng.random() < 0.1:
            changes.append(PriorityChange(at=t + rng.choice([0.0, 3.0, 50.0, 150.0]),
                                          job_id=f"j{i}", priority=rng.choice([0, 5, 9, 200])))
    if never_runnable:
        jobs.append(SimJob(job_id="too-big", share=shares[0].name, submitted_at=3.0,
                           duration=50.0, instance_type=G5, instance_count=1000, priority=9))
        jobs.append(SimJob(job_id="unlisted-type", share=shares[0].name, submitted_at=3.0,
                           duration=50.0, instance_type=C5, instance_count=1, priority=9))
    return jobs, changes


def engine_digest(declaration: str, option: str, seed: int) -> str:
    environment, shares = MULTI_TYPE if declaration == "multi-type" else ONE_TYPE
    options = OPTIONS[option]
    jobs, changes = workload(shares, 500, seed,
                             never_runnable=options.never_runnable is NeverRunnable.BLOCK)
    allocation = QuotaAllocation.check(
        environment_limits=environment, shares=shares,
        unowned_capacity_borrowable=options.unowned_capacity_borrowable,
    )
    problem = compile_problem(allocation, jobs, changes, options.never_runnable)
    data = run(problem, options)
    digest = hashlib.sha256()
    for column in (data.attempts, data.status_failed, data.finished, data.lost, data.priority,
                   data.log_time, data.log_share, data.log_unit, data.log_delta):
        digest.update(repr(column).encode())
    return digest.hexdigest()[:32]


CASES = [(d, o, s) for d in ("multi-type", "one-type") for o in OPTIONS for s in (1, 2)]


@pytest.mark.parametrize(("declaration", "option", "seed"), CASES)
def test_the_engine_replays_a_seeded_workload_exactly_as_before(
    declaration: str, option: str, seed: int
) -> None:
    key = f"{declaration}/{option}/{seed}"
    got = engine_digest(declaration, option, seed)
    assert got == EXPECTED[key], f"{key!r}: {got!r},  # the engine's output changed"


@pytest.mark.parametrize(("declaration", "option", "seed"), CASES)
def test_the_phases_run_through_their_methods_replay_the_same(
    declaration: str, option: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # advance runs the commonest phases inline, copies of its methods' commonest cases: with
    # the copies switched off, every phase runs through its method and the run is the same.
    monkeypatch.setattr(engine, "INLINE_PHASES", False)
    key = f"{declaration}/{option}/{seed}"
    assert engine_digest(declaration, option, seed) == EXPECTED[key], key


def test_the_cases_differ_so_each_pins_something_of_its_own() -> None:
    # Options that left a workload untouched would pin nothing about themselves.
    defaults = {s: EXPECTED[f"multi-type/default/{s}"] for s in (1, 2)}
    for option in OPTIONS:
        if option != "default":
            assert any(EXPECTED[f"multi-type/{option}/{s}"] != defaults[s] for s in (1, 2)), option
