"""``explain``: the expected reason code in one constructed situation per reason."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live.explain import explain
from quota_constructs.live.queue_reader import QueueReader

from ..runtime.conftest import G5, G5_2X, Batch

CROSS = "PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim borrowed capacity"
IN_SHARE = "Preempted by a higher priority job in the same share (in-share preemption)"


def queue(batch: Batch) -> str:
    """A small queue: 4 g5.xlarge and 2 g5.2xlarge."""
    return batch.state.add_queue("small", {G5: 4, G5_2X: 2})


def running(batch: Batch, share: str, count: int, priority: int = 0) -> None:
    for _ in range(count):
        batch.state.add_job(share, "RUNNING", {G5: 1}, priority=priority)


def _running_job(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND")
    return b.state.add_job(share, "RUNNING", {G5: 1}, preemptions=[
        {"statusReason": CROSS, "startedAt": 1, "stoppedAt": 2},
        {"statusReason": IN_SHARE, "startedAt": 3, "stoppedAt": 4},
    ], attempts=[{}, {}, {}], started_at=5)


def _finished_job(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND")
    return b.state.add_job(share, "SUCCEEDED", {G5: 1}, started_at=1, stopped_at=9)


def _no_limit_for_type(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW")
    return b.state.add_job(share, "RUNNABLE", {G5_2X: 1})


def _too_large(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "RESERVE")
    b.state.add_share(q, "research", {G5: 2}, "LEND")
    return b.state.add_job(share, "RUNNABLE", {G5: 3})


def _too_large_reported(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW")
    return b.state.add_job(share, "RUNNABLE", {G5: 1}, status_reason=(
        "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED - job exceeds the share's limit"))


def _share_disabled(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND", state="DISABLED")
    return b.state.add_job(share, "RUNNABLE", {G5: 1})


def _queue_disabled(b: Batch, q: str) -> str:
    b.state.queues[q].state = "DISABLED"
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND")
    return b.state.add_job(share, "RUNNABLE", {G5: 1})


def _queue_blocked_by_another_job(b: Batch, q: str) -> str:
    vision = b.state.add_share(q, "vision", {G5: 2}, "LEND")
    other = b.state.add_share(q, "research", {G5: 2}, "LEND")
    b.state.add_job(other, "RUNNABLE", {G5: 1}, priority=9, status_reason=(
        "CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY - Service cannot fulfill the capacity"))
    return b.state.add_job(vision, "RUNNABLE", {G5: 1})


def _own_capacity_in_use(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND", in_share_preemption="ENABLED")
    running(b, share, 2, priority=5)
    return b.state.add_job(share, "RUNNABLE", {G5: 1}, priority=5)


def _behind_higher_priority(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND")
    running(b, share, 2)
    b.state.add_job(share, "RUNNABLE", {G5: 1}, priority=9)
    b.state.add_job(share, "RUNNABLE", {G5: 1}, priority=4)
    mine = b.state.add_job(share, "RUNNABLE", {G5: 1}, priority=1)
    b.state.add_job(share, "RUNNABLE", {G5: 1}, priority=0)
    return mine


def _borrow_limit_reached(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW", 50)  # ceiling 3
    b.state.add_share(q, "research", {G5: 2}, "LEND")
    running(b, share, 3)
    return b.state.add_job(share, "RUNNABLE", {G5: 1})


def _vision_waits_beside_research(b: Batch, q: str, vision: tuple[int, str, int],
                                  research: tuple[int, str, int]) -> str:
    """Shares vision and research, each (limit, strategy, jobs running); a job of vision
    waits."""
    shares: dict[str, str] = {}
    for name, (limit, strategy, count) in (("vision", vision), ("research", research)):
        shares[name] = b.state.add_share(q, name, {G5: limit}, strategy)
        running(b, shares[name], count)
    return b.state.add_job(shares["vision"], "RUNNABLE", {G5: 1})


def _nothing_idle_to_borrow(b: Batch, q: str) -> str:
    return _vision_waits_beside_research(b, q, (2, "LEND_AND_BORROW", 2), (2, "LEND", 2))


def _lender_reclaiming(b: Batch, q: str) -> str:
    lender = b.state.add_share(q, "research", {G5: 2}, "LEND")
    borrower = b.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW")
    running(b, borrower, 4)
    return b.state.add_job(lender, "RUNNABLE", {G5: 1})


def _environment_over_allocated(b: Batch, q: str) -> str:
    """Limits of 3 + 3 in an environment of 4, all held within the shares' own limits."""
    return _vision_waits_beside_research(b, q, (3, "LEND", 1), (3, "LEND", 3))


def _in_share_preemption_pending(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND", in_share_preemption="ENABLED")
    running(b, share, 2, priority=1)
    return b.state.add_job(share, "RUNNABLE", {G5: 1}, priority=7)


def _dispatch_pending(b: Batch, q: str) -> str:
    share = b.state.add_share(q, "vision", {G5: 2}, "LEND")
    return b.state.add_job(share, "RUNNABLE", {G5: 1})


SITUATIONS: dict[str, tuple[Callable[[Batch, str], str], str, bool]] = {
    "running": (_running_job, "RUNNING", False),
    "finished": (_finished_job, "FINISHED", False),
    "no limit for type": (_no_limit_for_type, "NO_CAPACITY_LIMIT_FOR_TYPE", True),
    "too large": (_too_large, "LARGER_THAN_SHARE_CAN_REACH", True),
    "too large (Batch says)": (_too_large_reported, "LARGER_THAN_SHARE_CAN_REACH", False),
    "share disabled": (_share_disabled, "SHARE_DISABLED", False),
    "queue disabled": (_queue_disabled, "QUEUE_BLOCKED", False),
    "queue blocked by a job": (_queue_blocked_by_another_job, "QUEUE_BLOCKED", False),
    "own capacity in use": (_own_capacity_in_use, "OWN_CAPACITY_IN_USE", True),
    "behind higher priority": (_behind_higher_priority, "BEHIND_HIGHER_PRIORITY", True),
    "borrow limit": (_borrow_limit_reached, "BORROW_LIMIT_REACHED", True),
    "nothing idle": (_nothing_idle_to_borrow, "NOTHING_IDLE_TO_BORROW", True),
    "lender reclaiming": (_lender_reclaiming, "LENDER_RECLAIMING", True),
    "over-allocated": (_environment_over_allocated, "ENVIRONMENT_OVER_ALLOCATED", True),
    "in-share preemption": (_in_share_preemption_pending, "IN_SHARE_PREEMPTION_PENDING", True),
    "dispatch pending": (_dispatch_pending, "DISPATCH_PENDING", True),
}


@pytest.mark.parametrize("situation", SITUATIONS, ids=str)
def test_each_situation_gets_its_reason_code(batch: Batch, situation: str) -> None:
    arrange, code, inferred = SITUATIONS[situation]
    job = arrange(batch, queue(batch))

    answer = explain("small", job_id=job, reader=QueueReader.connect()).to_json()

    assert (answer["job_id"], answer["reason_code"], answer["inferred"]) == (job, code, inferred)
    assert answer["reason"] and "\n" not in answer["reason"]
    assert answer["share"] == batch.state.job(job).share_name


def test_a_running_job_gets_its_history(batch: Batch) -> None:
    job = _running_job(batch, queue(batch))
    history = explain("small", job_id=job, reader=QueueReader.connect()).history
    assert history is not None
    assert (history["attempts"], history["preemptions"]) == (3, 2)
    assert history["preemptions_by_kind"] == {"CROSS_SHARE": 1, "IN_SHARE": 1, "UNKNOWN": 0}


def test_behind_names_how_many_jobs_are_ahead(batch: Batch) -> None:
    job = _behind_higher_priority(batch, queue(batch))
    answer = explain("small", job_id=job, reader=QueueReader.connect())
    assert "behind 2 job(s)" in answer.reason


def test_share_option_explains_its_head_job(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    q = queue(batch)
    share = batch.state.add_share(q, "vision", {G5: 2}, "LEND", state="DISABLED")
    batch.state.add_job(share, "RUNNABLE", {G5: 1}, priority=1)
    head = batch.state.add_job(share, "RUNNABLE", {G5: 1}, priority=8)
    assert cli(["explain", "--queue", "small", "--share", "vision", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["job_id"], answer["reason_code"]) == (head, "SHARE_DISABLED")
    empty = batch.state.add_share(q, "idle", {G5: 1}, "LEND")
    assert empty
    assert cli(["explain", "--queue", "small", "--share", "idle", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reason_code"] == "NO_WAITING_JOB"


def test_an_unknown_job_is_one_line(batch: Batch, capsys: pytest.CaptureFixture[str]) -> None:
    queue(batch)
    assert cli(["explain", "--queue", "small", "--job", "job-9999"]) == 2
    err = capsys.readouterr().err.strip()
    assert "service job 'job-9999' not found" in err and "\n" not in err


@pytest.mark.parametrize("json_output", [False, True])
def test_an_unknown_share_is_an_error_naming_the_shares_there(
    batch: Batch, capsys: pytest.CaptureFixture[str], json_output: bool
) -> None:
    q = queue(batch)
    for name in ("vision", "nlp"):
        batch.state.add_share(q, name, {G5: 1}, "LEND")
    argv = ["explain", "--queue", "small", "--share", "visoin"] + (["--json"] * json_output)
    assert cli(argv) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line == ("quota-constructs explain: error: quota share 'visoin' not found on job "
                    "queue 'small'; its shares: nlp, vision")
    if json_output:
        answer = json.loads(captured.out)
        assert (answer["reason_code"], answer["share"]) == ("SHARE_NOT_FOUND", "visoin")
    else:
        assert captured.out == ""


def test_an_unknown_queue_is_an_error_naming_the_training_queues(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    queue(batch)
    assert cli(["explain", "--queue", "smal", "--share", "vision"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "job queue 'smal' not found" in line and "SAGEMAKER_TRAINING queues: " in line
    assert "small" in line.split("queues: ", 1)[1]


def test_a_borrower_is_told_what_it_holds_of_its_own_and_borrowed(batch: Batch) -> None:
    """Not "uses 4 of its own 2": 2 of its own and 2 borrowed."""
    q = queue(batch)
    share = batch.state.add_share(q, "vision", {G5: 2}, "LEND_AND_BORROW", 100)  # ceiling 4
    batch.state.add_share(q, "research", {G5: 2}, "LEND")
    running(batch, share, 4)
    job = batch.state.add_job(share, "RUNNABLE", {G5: 1})
    answer = explain("small", job_id=job, reader=QueueReader.connect())
    assert answer.reason_code == "BORROW_LIMIT_REACHED"
    assert "already uses 4: all 2 of its own and 2 borrowed" in answer.reason
    assert "of its own 2" not in answer.reason


@pytest.mark.parametrize("now_ms", [600_000, 600_001])
def test_an_answer_read_from_an_old_snapshot_says_so(batch: Batch, now_ms: int) -> None:
    """The fake's snapshot was last updated at 0 ms: its age is ``now_ms``; the limit 600 s."""
    q = queue(batch)
    job = _behind_higher_priority(batch, q)
    batch.state.add_share(q, "nobody-waits", {G5: 1}, "LEND")
    answer = explain("small", job_id=job, reader=QueueReader.connect(), now_ms=now_ms)
    idle = explain("small", share="nobody-waits", reader=QueueReader.connect(), now_ms=now_ms)

    stale = now_ms > 600_000
    for result in (answer, idle):
        assert (result.snapshot_warning is not None) is stale
        assert ("snapshot_warning" in result.to_json()) is stale
    assert "behind 2 job(s)" in answer.reason  # the answer is given either way
    assert idle.reason_code == "NO_WAITING_JOB"


def test_the_explain_command_prints_the_snapshot_warning(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    job = _behind_higher_priority(batch, queue(batch))
    # The wall clock is decades past the fake's snapshot (updated at 0 ms).
    assert cli(["explain", "--queue", "small", "--job", job]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith("the queue's snapshot may be out of date (queueUtilization was "
                                "last updated ")
    assert cli(["explain", "--queue", "small", "--job", job, "--max-snapshot-age", "-5"]) == 2
    assert "--max-snapshot-age got -5; allowed" in capsys.readouterr().err
