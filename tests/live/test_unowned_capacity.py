"""``explain`` and ``status`` on a queue whose environment holds capacity no share owns: both
read reach, lenders, idle and the unowned capacity from the one rules model."""

from __future__ import annotations

import json

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live.explain import explain
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.live.status import read_status
from quota_constructs.model import BorrowingRules, CapacityLimit, QuotaShareSpec, SharingStrategy

from ..runtime.conftest import G5, Batch


def running(batch: Batch, share: str, count: int) -> None:
    for _ in range(count):
        batch.state.add_job(share, "RUNNING", {G5: 1})


def test_a_borrower_may_take_idle_capacity_no_share_owns(batch: Batch) -> None:
    # 4 g5: vision owns 1 (borrows up to 1 more), research RESERVEs 1, 2 belong to no share.
    q = batch.state.add_queue("unowned", {G5: 4})
    vision = batch.state.add_share(q, "vision", {G5: 1}, "LEND_AND_BORROW", 100)
    batch.state.add_share(q, "research", {G5: 1}, "RESERVE")
    running(batch, vision, 1)
    job = batch.state.add_job(vision, "RUNNABLE", {G5: 1})

    answer = explain("unowned", job_id=job, reader=QueueReader.connect())

    # No share lends to vision (research only reserves): only the unowned capacity can.
    assert answer.reason_code == "DISPATCH_PENDING", answer.reason
    assert "no share owns" in answer.reason


def test_unowned_capacity_already_borrowed_leaves_nothing_idle_to_borrow(batch: Batch) -> None:
    q = batch.state.add_queue("unowned", {G5: 4})
    vision = batch.state.add_share(q, "vision", {G5: 1}, "LEND_AND_BORROW", 100)
    nlp = batch.state.add_share(q, "nlp", {G5: 1}, "LEND_AND_BORROW", 100)
    batch.state.add_share(q, "research", {G5: 1}, "RESERVE")  # idle, but never lent
    running(batch, vision, 1)
    running(batch, nlp, 2)  # holds the one g5 no share owns
    job = batch.state.add_job(vision, "RUNNABLE", {G5: 1})

    answer = explain("unowned", job_id=job, reader=QueueReader.connect())

    assert answer.reason_code == "NOTHING_IDLE_TO_BORROW", answer.reason
    assert "only 0 is idle that it may borrow" in answer.reason
    assert "'nlp'" in answer.reason and "the 1 ml.g5.xlarge no share owns" in answer.reason


def test_reach_comes_from_the_rules_model_not_the_borrow_ceiling(batch: Batch) -> None:
    # vision's ceiling is 4 (unlimited borrowing) but research RESERVEs 2 of the 4: it can
    # reach 2 at most, so a job of 3 waits forever.
    q = batch.state.add_queue("reserved", {G5: 4})
    vision = batch.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW", -1)
    batch.state.add_share(q, "research", {G5: 2}, "RESERVE")
    job = batch.state.add_job(vision, "RUNNABLE", {G5: 3})

    answer = explain("reserved", job_id=job, reader=QueueReader.connect())

    assert answer.reason_code == "LARGER_THAN_SHARE_CAN_REACH", answer.reason
    assert "can reach at most 2" in answer.reason


def test_status_counts_unowned_capacity_before_lenders(batch: Batch) -> None:
    # 6 g5: vision owns 1, research LENDs 2, 3 belong to no share; vision holds 5.
    q = batch.state.add_queue("unowned", {G5: 6})
    vision = batch.state.add_share(q, "vision", {G5: 1}, "LEND_AND_BORROW", -1)
    research = batch.state.add_share(q, "research", {G5: 2}, "LEND")
    running(batch, vision, 5)
    del research

    status = read_status("unowned", reader=QueueReader.connect())

    rows = {share.name: share.units[0] for share in status.shares}
    assert rows["vision"].borrowed == 4
    assert rows["research"].lent == 1  # 3 of the 4 borrowed are capacity no share owns
    (total,) = status.totals
    assert total.unowned == 3
    expected = BorrowingRules.of(environment={G5: 6}, shares=[
        QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=None),
        QuotaShareSpec(name="research", capacity_limits=[CapacityLimit(G5, 2)],
                       strategy=SharingStrategy.LEND),
    ])
    assert rows["vision"].reach == expected.reach("vision")[G5] == 6
    assert rows["research"].reach == expected.reach("research")[G5] == 2


def test_the_other_reading_of_unowned_capacity_is_an_option(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    q = batch.state.add_queue("unowned", {G5: 6})
    vision = batch.state.add_share(q, "vision", {G5: 1}, "LEND_AND_BORROW", -1)
    batch.state.add_share(q, "research", {G5: 2}, "RESERVE")
    running(batch, vision, 1)
    job = batch.state.add_job(vision, "RUNNABLE", {G5: 1})

    assert cli(["explain", "--queue", "unowned", "--job", job, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reason_code"] == "DISPATCH_PENDING"
    assert cli(["explain", "--queue", "unowned", "--job", job, "--json",
                "--no-unowned-borrowing"]) == 0
    answer = json.loads(capsys.readouterr().out)
    # Nothing to borrow from: research only reserves, and the unowned g5 are not borrowable.
    assert answer["reason_code"] == "NOTHING_IDLE_TO_BORROW"
    assert "from no share" in answer["reason"]

    assert cli(["status", "--queue", "unowned", "--json", "--no-unowned-borrowing"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    assert totals[0]["unowned"] == 3 and totals[0]["reach"] == {"vision": 1, "research": 2}
