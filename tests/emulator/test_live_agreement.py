"""``status`` and ``explain`` against the emulator agree with each other and with the scheduler,
over-allocated environments included: both read what is idle, borrowed and reclaimable from the
one rules model (``model.UnitUse``), and the emulator schedules by the same rules, so a job the
explanation says could start now would already have been started."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.emulator import Emulator
from quota_constructs.live.explain import explain
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.live.status import read_status

from .support import G5, point_boto3_at, training_payload

QUEUE = "staging"
WITHIN_OWN_LIMIT = ("DISPATCH_PENDING", "LENDER_RECLAIMING", "ENVIRONMENT_OVER_ALLOCATED")


def spec(name: str, strategy: SharingStrategy, limit: int = 1,
         borrow: int | None = None) -> QuotaShareSpec:
    return QuotaShareSpec(name=name, capacity_limits=[CapacityLimit(G5, limit)],
                          strategy=strategy,
                          borrow_limit_percent=borrow if strategy.borrows else None)


@pytest.fixture
def emulate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    started: list[Emulator] = []

    def start(environment: int, shares: list[QuotaShareSpec]) -> Emulator:
        emu = Emulator(capacity_limits=[CapacityLimit(G5, environment)], shares=shares,
                       queue_name=QUEUE).start()
        started.append(emu)
        point_boto3_at(monkeypatch, emu.endpoint_url)
        return emu

    yield start
    for emu in started:
        emu.stop()


def submit(share: str, name: str, priority: int = 1) -> str:
    return str(boto3.client("batch").submit_service_job(
        jobName=name, jobQueue=QUEUE, serviceJobType="SAGEMAKER_TRAINING",
        serviceRequestPayload=training_payload(runtime=3600), quotaShareName=share,
        schedulingPriority=priority)["jobId"])


def by_share(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["name"]: next(u for u in s["units"] if u["instance_type"] == G5)
            for s in status["shares"]}


def test_the_over_allocated_staging_of_the_issue(emulate: Any) -> None:
    """2 x ml.g5.xlarge for four shares of one each, one job per share: two run within their
    own limits, two wait. Nobody borrows, so explain names no borrower and nothing to reclaim,
    and status shows no idle own capacity where the queue has none."""
    emu = emulate(2, [spec("A", SharingStrategy.LEND_AND_BORROW),
                      spec("B", SharingStrategy.LEND), spec("C", SharingStrategy.LEND),
                      spec("D", SharingStrategy.LEND)])
    for share in "ABCD":
        submit(share, f"job-{share}")
    emu.advance(1)

    status = read_status(QUEUE, reader=QueueReader.connect()).to_json()
    units = by_share(status)
    waiting = [s["name"] for s in status["shares"] if s["head_job"] is not None]
    assert len(waiting) == 2
    assert all(u["borrowed"] == 0 and u["lent"] == 0 for u in units.values())
    assert [units[name]["idle_own"] for name in waiting] == [0, 0]
    (total,) = status["totals"]
    assert total["capacity"] - total["in_use"] == 0
    for name in waiting:
        answer = explain(QUEUE, share=name, reader=QueueReader.connect())
        assert answer.reason_code == "ENVIRONMENT_OVER_ALLOCATED", answer.reason
        assert "borrowing:" not in answer.reason and "reclaims the lent" not in answer.reason
        assert "add up to 4, more than the environment's 2" in answer.reason


@pytest.mark.slow  # twelve random queues; the quick subset keeps the worked cases
@pytest.mark.parametrize("seed", range(12))
def test_status_explain_and_the_scheduler_agree_on_random_queues(
    emulate: Any, seed: int
) -> None:
    rng = random.Random(seed)
    shares = [spec(f"s{i}", rng.choice(list(SharingStrategy)), rng.randint(1, 2),
                   rng.choice([None, 0, 100]))
              for i in range(rng.randint(2, 5))]
    reserved = sum(s.limit_of(G5) for s in shares if s.strategy is SharingStrategy.RESERVE)
    environment = rng.randint(max(1, reserved), sum(s.limit_of(G5) for s in shares) + 1)
    emu = emulate(environment, shares)
    for share in shares:
        for index in range(rng.randint(0, 3)):
            submit(share.name, f"{share.name}-{index}", rng.randint(0, 5))
    emu.advance(1)

    status = read_status(QUEUE, reader=QueueReader.connect()).to_json()
    units = by_share(status)
    (total,) = status["totals"]
    queue_idle = max(0, total["capacity"] - total["in_use"])
    borrowed = sum(u["borrowed"] for u in units.values())
    for share in status["shares"]:
        unit = units[share["name"]]
        # What a share could take now is idle capacity or what borrowers hold, nothing else.
        assert unit["idle_own"] <= queue_idle + borrowed
        assert unit["lent"] <= unit["idle_own"] + 1e-9
        if share["head_job"] is None:
            continue
        answer = explain(QUEUE, share=share["name"], reader=QueueReader.connect())
        code = answer.reason_code
        # The emulator's pass already started what could start and reclaimed what could be
        # reclaimed: an explanation saying otherwise would disagree with the scheduler.
        assert code not in ("DISPATCH_PENDING", "LENDER_RECLAIMING"), (code, answer.reason)
        if code in WITHIN_OWN_LIMIT:
            assert unit["idle_own"] == 0, (code, unit)
        if "borrowing" in answer.reason and code != "NOTHING_IDLE_TO_BORROW":
            assert borrowed > 0, answer.reason
