"""The start estimate against the emulator, through boto3, on a declaration of its own, in cases
worked by hand: ``latest`` is the moment the blocking job's maximum run time is over, for the
job that waits and for one not yet submitted; then jobs end early and the job starts no later
than ``latest`` and not before ``earliest``. A job that can never run, and a state where no
moment can be promised, get ``latest: null`` and the reason.

The declaration: 4 x ml.g5.xlarge; research RESERVE 2; vision LEND_AND_BORROW 1 (borrows up
to 200 %, in-share preemption); nlp LEND 1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.cli import main as cli
from quota_constructs.emulator import Emulator
from quota_constructs.live.estimate import Submission, clock, estimate_submission
from quota_constructs.live.queue_reader import QueueReader

from .start_times import G5, client, emulated, estimate_of, started_since, submit
from .support import QUEUE as WALKTHROUGH_QUEUE
from .support import EmulatorProcess, point_boto3_at, serving

QUEUE = "lab-gpus"
DECLARATION = {
    "capacity_limits": [CapacityLimit(G5, 4)],
    "shares": [
        QuotaShareSpec(name="research", capacity_limits=[CapacityLimit(G5, 2)],
                       strategy=SharingStrategy.RESERVE),
        QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200,
                       in_share_preemption=True),
        QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND),
    ],
}


@pytest.fixture
def emu(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    with serving(monkeypatch, DECLARATION, QUEUE) as emulator:
        yield emulator


@pytest.fixture
def batch(emu: Emulator) -> Any:
    return client(emu)


def new_job(batch: Any, share: str, count: int = 1, priority: int = 0,
            instance_type: str = G5) -> Any:
    return estimate_submission(QUEUE, Submission(share, instance_type, count, priority, 300),
                               reader=QueueReader(batch))


def status(batch: Any, job: str) -> str:
    return str(batch.describe_service_job(jobId=job)["status"])


def at(emu: Emulator, seconds: float) -> datetime:
    return emulated(emu, seconds)


def test_a_reserve_share_full_of_its_own_jobs(emu: Emulator, batch: Any) -> None:
    first = submit(batch, QUEUE, "research", 600)
    second = submit(batch, QUEUE, "research", 900)
    waiting = submit(batch, QUEUE, "research", 300)
    emu.advance(10)  # all three submitted at 0; two run from 0
    assert [status(batch, j) for j in (first, second, waiting)] == [
        "RUNNING", "RUNNING", "RUNNABLE"]

    estimate = estimate_of(batch, QUEUE, waiting)
    assert estimate.latest == at(emu, 600)  # first's maximum run time is over
    assert estimate.earliest == at(emu, 10)
    assert estimate.blocking_jobs == (first,)
    later = new_job(batch, "research")
    assert later.latest == at(emu, 900)  # behind the waiting job: second's end
    assert later.blocking_jobs == (second, waiting)
    late = submit(batch, QUEUE, "research", 300)
    emu.advance(0)

    emu.advance(90)
    emu.finish(second)  # at 100, early
    assert started_since(batch, waiting, at(emu, 10)) == at(emu, 100)
    emu.advance(300)  # waiting, started at 100, is over at 400: late takes its instance
    assert started_since(batch, late, at(emu, 10)) == at(emu, 400)
    assert later.latest is not None and at(emu, 400) <= later.latest


def test_a_borrower_waiting_on_a_lenders_reclaim(emu: Emulator, batch: Any) -> None:
    own = submit(batch, QUEUE, "vision", 3000)
    borrowed = submit(batch, QUEUE, "vision", 600)  # borrows nlp's idle instance
    emu.advance(10)
    lender = submit(batch, QUEUE, "nlp", 1200)  # nlp takes it back: borrowed is preempted
    emu.advance(10)
    assert [status(batch, j) for j in (own, borrowed, lender)] == [
        "RUNNING", "RUNNABLE", "RUNNING"]

    estimate = estimate_of(batch, QUEUE, borrowed)
    assert estimate.latest == at(emu, 10 + 1200)  # the lender's job is over: borrow again
    assert estimate.blocking_jobs == (lender,)
    # A job submitted now comes after it, and borrows nlp's instance once it is over again
    # (vision's own instance frees only at 3000).
    after = new_job(batch, "vision")
    assert (after.latest, after.blocking_jobs) == (at(emu, 1210 + 600), (borrowed,))

    emu.advance(480)
    emu.finish(lender)  # at 500, early
    assert started_since(batch, borrowed, at(emu, 20)) == at(emu, 500)


def test_a_job_behind_a_higher_priority_one(emu: Emulator, batch: Any) -> None:
    running = submit(batch, QUEUE, "nlp", 500, priority=5)
    emu.advance(10)
    high = submit(batch, QUEUE, "nlp", 400, priority=9)
    low = submit(batch, QUEUE, "nlp", 300, priority=1)
    emu.advance(10)

    first = estimate_of(batch, QUEUE, high)
    assert (first.latest, first.blocking_jobs) == (at(emu, 500), (running,))
    estimate = estimate_of(batch, QUEUE, low)
    assert estimate.latest == at(emu, 500 + 400)  # running's end, then high's whole run
    assert estimate.blocking_jobs == (high,)
    assert new_job(batch, "nlp", priority=5).latest == at(emu, 900)  # ahead of low, behind high
    assert new_job(batch, "nlp", priority=0).latest == at(emu, 900 + 300)  # behind low too

    emu.advance(480)  # running ends at 500: high starts
    emu.advance(100)
    emu.finish(high)  # at 600, early
    assert started_since(batch, low, at(emu, 20)) == at(emu, 600)


def test_a_job_that_can_never_run_has_no_latest_and_says_why(emu: Emulator,
                                                              batch: Any) -> None:
    too_large = new_job(batch, "nlp", count=2)
    assert too_large.latest is None
    assert "can reach at most 1" in too_large.assumes
    other_type = new_job(batch, "vision", instance_type="ml.g5.2xlarge")
    assert other_type.latest is None
    assert "lists no ml.g5.2xlarge" in other_type.assumes

    stuck = submit(batch, QUEUE, "research", 300, count=3)  # RESERVE 2 never lends or borrows
    emu.advance(1)
    estimate = estimate_of(batch, QUEUE, stuck)
    assert estimate.latest is None and "QUOTA_MANAGEMENT_LIMIT_EXCEEDED" in estimate.assumes


def test_no_moment_is_promised_where_an_early_end_could_let_another_job_in_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The anomaly of :mod:`quota_constructs.live.start_bounds`: with every job at its maximum,
    the borrower would start at 600; one lender job ending early lets the other borrower in
    first, for its whole run time."""
    speech = QuotaShareSpec(name="speech", capacity_limits=[CapacityLimit(G5, 1)],
                            strategy=SharingStrategy.LEND_AND_BORROW)
    vision = QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 1)],
                            strategy=SharingStrategy.LEND_AND_BORROW)
    nlp = QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 2)],
                         strategy=SharingStrategy.LEND)
    with Emulator(capacity_limits=[CapacityLimit(G5, 4)], shares=[speech, vision, nlp],
                  queue_name=QUEUE) as emu:
        batch = client(emu)
        for share in ("speech", "vision", "nlp", "nlp"):
            submit(batch, QUEUE, share, 600 if share == "nlp" else 20000)
        emu.advance(1)
        wide = submit(batch, QUEUE, "vision", 300, count=2)  # needs both of nlp's
        emu.advance(1)
        narrow = submit(batch, QUEUE, "speech", 28800)
        emu.advance(1)

        estimate = estimate_of(batch, QUEUE, wide)
        assert estimate.latest is None
        assert narrow in estimate.assumes and narrow in estimate.blocking_jobs
        lent = [j.job_id for j in emu.service.jobs.created
                if j.share == "nlp" and j.status == "RUNNING"]
        emu.finish(lent[0])  # early: narrow borrows it
        emu.advance(600)  # the other lent one is over: wide still needs two
        assert status(batch, narrow) == "RUNNING" and status(batch, wide) == "RUNNABLE"


def test_a_running_job_reports_its_start(emu: Emulator, batch: Any) -> None:
    job = submit(batch, QUEUE, "nlp", 300)
    emu.advance(5)
    estimate = estimate_of(batch, QUEUE, job)
    assert estimate.latest == estimate.earliest == at(emu, 0)


def test_the_commands_answer_in_json_and_in_one_line(
    emu: Emulator, batch: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    holder = submit(batch, QUEUE, "nlp", 500)
    waiting = submit(batch, QUEUE, "nlp", 300)
    emu.advance(10)

    assert cli(["explain", "--queue", QUEUE, "--job", waiting, "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)["start_estimate"]
    assert datetime.fromisoformat(explained["latest"]) == at(emu, 500)
    assert datetime.fromisoformat(explained["earliest"]) == at(emu, 10)
    assert explained["blocking_jobs"] == [holder] and explained["assumes"]

    assert cli(["explain", "--queue", QUEUE, "--job", waiting]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("starts by")]
    assert line == (f"starts by {clock(at(emu, 500))} at the latest, if nothing of higher "
                    f"priority arrives; earliest now ({clock(at(emu, 10))}), if job(s) "
                    f"{holder} finish early")

    assert cli(["estimate", "--queue", QUEUE, "--share", "nlp", "--instance-type", G5,
                "--priority", "3", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["share"], answer["count"], answer["priority"]) == ("nlp", 1, 3)
    # Priority 3 goes ahead of the waiting job (priority 0): it starts when holder ends.
    assert datetime.fromisoformat(answer["latest"]) == at(emu, 500)
    assert answer["blocking_jobs"] == [holder]
    assert datetime.fromisoformat(answer["earliest"]) - at(emu, 10) == timedelta(0)


@pytest.mark.parametrize("argv, named", [
    (["--share", "nlp", "--instance-type", G5, "--count", "0"], "count got 0"),
    (["--share", "nlp", "--instance-type", G5, "--priority", "10000"], "priority got 10000"),
    (["--share", "nlp", "--instance-type", G5, "--max-runtime", "0"], "max_runtime_seconds"),
    (["--share", "nlp", "--instance-type", "ml.nothing"], "instance_type got 'ml.nothing'"),
    (["--share", "no such", "--instance-type", G5], "share got 'no such'"),
    (["--share", "speech", "--instance-type", G5], "quota share 'speech' is not on job queue"),
])
def test_bad_input_is_one_line(emu: Emulator, capsys: pytest.CaptureFixture[str],
                               argv: list[str], named: str) -> None:
    assert cli(["estimate", "--queue", QUEUE, *argv]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("quota-constructs estimate: error: ") and named in line
    assert captured.out == ""


def test_against_the_emulate_command_with_a_manual_clock(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The walkthrough's queue served by ``quota-constructs emulate``: QS1 borrows QS2's idle
    instance, QS2 takes it back, and the commands say when QS1's job starts again."""
    process = EmulatorProcess()
    try:
        point_boto3_at(monkeypatch, process.url)
        batch = boto3.client("batch")
        own = submit(batch, WALKTHROUGH_QUEUE, "QS1", 3000, priority=1)
        borrowed = submit(batch, WALKTHROUGH_QUEUE, "QS1", 600, priority=1)
        start = datetime.fromtimestamp(process.advance(10)["now"] / 1000 - 10, UTC)
        lender = submit(batch, WALKTHROUGH_QUEUE, "QS2", 1200)
        process.advance(10)
        assert (status(batch, own), status(batch, borrowed)) == ("RUNNING", "RUNNABLE")

        assert cli(["explain", "--queue", WALKTHROUGH_QUEUE, "--job", borrowed, "--json"]) == 0
        estimate = json.loads(capsys.readouterr().out)["start_estimate"]
        assert datetime.fromisoformat(estimate["latest"]) == start + timedelta(seconds=1210)
        assert estimate["blocking_jobs"] == [lender]
        assert cli(["estimate", "--queue", WALKTHROUGH_QUEUE, "--share", "QS3",
                    "--instance-type", G5, "--json"]) == 0
        reserved = json.loads(capsys.readouterr().out)
        assert reserved["latest"] == reserved["earliest"]  # QS3 keeps its instance idle

        process.advance(100)
        process.control("POST", f"/_emulator/jobs/{lender}/finish", {"status": "SUCCEEDED"})
        since = start + timedelta(seconds=20)  # the estimate's moment
        assert started_since(batch, borrowed, since) == start + timedelta(seconds=120)
    finally:
        process.terminate()
