"""Reviewer's probes of ``explain``: each reason code in a situation other than the feature
tests' own (another strategy, another instance type, the share's head through ``--share``)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live.explain import explain
from quota_constructs.live.queue_reader import QueueReader

from ..runtime.conftest import G5, G5_2X, Batch

CROSS = "PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim borrowed capacity"
QUEUE = "probe"


def _queue(batch: Batch) -> str:
    """4 g5.xlarge and 2 g5.2xlarge."""
    return batch.state.add_queue(QUEUE, {G5: 4, G5_2X: 2})


def _run(b: Batch, share: str, count: int, unit: str = G5, priority: int = 0) -> None:
    for _ in range(count):
        b.state.add_job(share, "RUNNING", {unit: 1}, priority=priority)


def no_limit_for_type_while_another_share_lends_it(b: Batch, q: str) -> str:
    # A lender has g5.2xlarge idle, but vision's borrow limit is a percentage of its own
    # g5.2xlarge limit, which is none.
    vision = b.state.add_share(q, "vision", {G5: 1}, "LEND_AND_BORROW", 300)
    b.state.add_share(q, "research", {G5: 1, G5_2X: 2}, "LEND")
    return b.state.add_job(vision, "RUNNABLE", {G5_2X: 1})


def larger_than_its_borrow_ceiling(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 1}, "LEND_AND_BORROW", 100)  # reaches 2
    b.state.add_share(q, "research", {G5: 3}, "LEND")
    return b.state.add_job(vision, "RUNNABLE", {G5: 3})


def disabled_borrower_that_would_fit(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW", state="DISABLED")
    return b.state.add_job(vision, "RUNNABLE", {G5: 1}, priority=3)


def blocked_by_a_misconfigured_job_of_its_own_share(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 2}, "LEND")
    b.state.add_job(vision, "RUNNABLE", {G5: 1}, priority=9, status_reason=(
        "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE - exceeds the environment"))
    return b.state.add_job(vision, "RUNNABLE", {G5: 1}, priority=9)


def invalid_queue(b: Batch, q: str) -> str:
    b.state.queues[q].status = "INVALID"
    vision = b.state.add_share(q, "vision", {G5: 2}, "RESERVE")
    return b.state.add_job(vision, "RUNNABLE", {G5: 1})


def reserve_share_full_without_in_share_preemption(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5_2X: 1}, "RESERVE")
    _run(b, vision, 1, unit=G5_2X, priority=0)
    return b.state.add_job(vision, "RUNNABLE", {G5_2X: 1}, priority=9000)


def behind_equal_priority_jobs_submitted_earlier(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 1}, "RESERVE")
    _run(b, vision, 1)
    b.state.add_job(vision, "RUNNABLE", {G5: 1}, priority=5)
    b.state.add_job(vision, "RUNNABLE", {G5: 1}, priority=5)
    mine = b.state.add_job(vision, "RUNNABLE", {G5: 1}, priority=5)
    b.state.add_job(vision, "RUNNABLE", {G5: 1}, priority=5)
    return mine


def borrow_limit_zero_while_lenders_are_idle(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW", 0)
    b.state.add_share(q, "research", {G5: 2}, "LEND")
    _run(b, vision, 2)
    return b.state.add_job(vision, "RUNNABLE", {G5: 1})


def only_a_reserve_share_is_idle(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW")
    b.state.add_share(q, "vault", {G5: 2}, "RESERVE")  # idle, but never lends
    _run(b, vision, 2)
    return b.state.add_job(vision, "RUNNABLE", {G5: 1})


def lender_idle_capacity_already_borrowed_by_a_third_share(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 1}, "LEND_AND_BORROW")
    b.state.add_share(q, "research", {G5: 2}, "LEND")
    other = b.state.add_share(q, "other", {G5: 1}, "LEND_AND_BORROW")
    _run(b, vision, 1)
    _run(b, other, 3)
    return b.state.add_job(vision, "RUNNABLE", {G5: 1})


def lender_of_another_type_reclaiming(b: Batch, q: str) -> str:
    research = b.state.add_share(q, "research", {G5_2X: 1}, "LEND_AND_BORROW")
    vision = b.state.add_share(q, "vision", {G5_2X: 1}, "LEND_AND_BORROW")
    _run(b, vision, 2, unit=G5_2X)
    return b.state.add_job(research, "RUNNABLE", {G5_2X: 1})


def requeued_after_a_preemption_waiting_for_own_capacity(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 1}, "LEND")
    _run(b, vision, 1)
    return b.state.add_job(vision, "RUNNABLE", {G5: 1}, preemptions=[
        {"statusReason": CROSS, "startedAt": 1, "stoppedAt": 2}], attempts=[{}])


SITUATIONS: dict[str, tuple[Callable[[Batch, str], str], str, bool]] = {
    "no limit of the type, a lender has it": (
        no_limit_for_type_while_another_share_lends_it, "NO_CAPACITY_LIMIT_FOR_TYPE", True),
    "larger than limit plus borrow": (
        larger_than_its_borrow_ceiling, "LARGER_THAN_SHARE_CAN_REACH", True),
    "disabled borrower": (disabled_borrower_that_would_fit, "SHARE_DISABLED", False),
    "blocked by own share's job": (
        blocked_by_a_misconfigured_job_of_its_own_share, "QUEUE_BLOCKED", False),
    "queue INVALID": (invalid_queue, "QUEUE_BLOCKED", False),
    "RESERVE full, preemption off": (
        reserve_share_full_without_in_share_preemption, "OWN_CAPACITY_IN_USE", True),
    "behind equal priority": (
        behind_equal_priority_jobs_submitted_earlier, "BEHIND_HIGHER_PRIORITY", True),
    "borrow limit 0": (borrow_limit_zero_while_lenders_are_idle, "BORROW_LIMIT_REACHED", True),
    "only RESERVE idle": (only_a_reserve_share_is_idle, "NOTHING_IDLE_TO_BORROW", True),
    "lent capacity borrowed by another": (
        lender_idle_capacity_already_borrowed_by_a_third_share, "NOTHING_IDLE_TO_BORROW", True),
    "lender reclaiming g5.2xlarge": (
        lender_of_another_type_reclaiming, "LENDER_RECLAIMING", True),
    "requeued job": (
        requeued_after_a_preemption_waiting_for_own_capacity, "OWN_CAPACITY_IN_USE", True),
}


@pytest.mark.parametrize("situation", SITUATIONS, ids=str)
def test_reason_code_in_other_situations(batch: Batch, situation: str) -> None:
    arrange, code, inferred = SITUATIONS[situation]
    job = arrange(batch, _queue(batch))

    answer = explain(QUEUE, job_id=job, reader=QueueReader.connect()).to_json()

    assert (answer["reason_code"], answer["inferred"]) == (code, inferred), answer["reason"]
    assert answer["job_id"] == job and answer["share"] == batch.state.job(job).share_name
    assert answer["reason"] and "\n" not in answer["reason"]


def test_share_option_answers_for_the_head_when_it_is_too_large(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    q = _queue(batch)
    vision = batch.state.add_share(q, "vision", {G5: 1}, "RESERVE")
    batch.state.add_job(vision, "RUNNABLE", {G5: 1}, priority=1)
    head = batch.state.add_job(vision, "RUNNABLE", {G5: 2}, priority=7)

    assert cli(["explain", "--queue", QUEUE, "--share", "vision", "--json"]) == 0

    answer = json.loads(capsys.readouterr().out)
    assert set(answer) >= {"job_id", "share", "status", "reason_code", "reason", "inferred"}
    assert (answer["job_id"], answer["share"], answer["status"]) == (head, "vision", "RUNNABLE")
    assert answer["reason_code"] == "LARGER_THAN_SHARE_CAN_REACH"


def test_a_job_that_failed_after_preemptions_gets_its_history(batch: Batch) -> None:
    q = _queue(batch)
    vision = batch.state.add_share(q, "vision", {G5: 1}, "LEND_AND_BORROW")
    job = batch.state.add_job(vision, "FAILED", {G5: 1}, preemptions=[
        {"statusReason": CROSS, "startedAt": 1, "stoppedAt": 2},
        {"statusReason": CROSS, "startedAt": 3, "stoppedAt": 4},
    ], attempts=[{}, {}], status_reason="Preempted too many times")

    answer = explain(QUEUE, job_id=job, reader=QueueReader.connect())

    assert answer.reason_code == "FINISHED" and answer.history is not None
    assert answer.history["preemptions"] == 2
    assert answer.history["preemptions_by_kind"]["CROSS_SHARE"] == 2
