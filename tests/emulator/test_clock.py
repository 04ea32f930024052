"""Emulated time starts at the real time (or the start given) and every time the emulator answers
with is on its clock; ``status`` and ``explain`` judge ages and waits on that clock, through
boto3, under the manual and the wall clock. Every clock here is injected: no test reads the
machine's time."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import boto3
import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.cli import main as console
from quota_constructs.emulator import Clock, Emulator
from quota_constructs.emulator.clock import parse_start
from quota_constructs.live.explain import explain
from quota_constructs.live.queue_reader import QueueReader, judged_at_ms
from quota_constructs.live.status import read_status
from quota_constructs.runtime.batch_reads import QueueSnapshot

from .support import G5, EmulatorProcess, point_boto3_at, training_payload

QUEUE = "clocked"
REAL_NOW = 1_800_000_000.25
"""The machine's wall clock as the tests inject it (2027-01-15T08:00:00.25Z)."""
SHARES = [QuotaShareSpec(name="only", capacity_limits=[CapacityLimit(G5, 1)],
                         strategy=SharingStrategy.RESERVE)]


class FakeTime:
    """Real time as a test moves it: ``wall`` (seconds since the epoch) and ``monotonic``."""

    def __init__(self) -> None:
        self.elapsed = 0.0

    def wall(self) -> float:
        return REAL_NOW + self.elapsed

    def monotonic(self) -> float:
        return 500.0 + self.elapsed


@pytest.fixture
def time_source() -> FakeTime:
    return FakeTime()


@pytest.fixture(params=["manual", "wall"])
def emu(request: pytest.FixtureRequest, time_source: FakeTime,
        monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    clock = Clock(request.param, monotonic=time_source.monotonic, wall=time_source.wall)
    with Emulator(capacity_limits=[CapacityLimit(G5, 1)], shares=SHARES, queue_name=QUEUE,
                  clock=clock) as emulator:
        point_boto3_at(monkeypatch, emulator.endpoint_url)
        yield emulator


def let_time_pass(emu: Emulator, time_source: FakeTime, seconds: float) -> None:
    """``seconds`` of emulated time: by hand under the manual clock, as real time under the
    wall clock (speed 1)."""
    if emu.service.clock.manual:
        emu.advance(seconds)
    else:
        time_source.elapsed += seconds
        emu.advance(0)  # a scheduling pass now (the server's own tick would do it too)


def submit(name: str) -> str:
    return str(boto3.client("batch").submit_service_job(
        jobName=name, jobQueue=QUEUE, serviceJobType="SAGEMAKER_TRAINING",
        serviceRequestPayload=training_payload(runtime=86400), quotaShareName="only",
    )["jobId"])


def test_emulated_time_starts_at_the_real_time(emu: Emulator, time_source: FakeTime) -> None:
    start_ms = round(REAL_NOW * 1000)
    assert emu.start_ms == start_ms
    job = submit("first")
    batch = boto3.client("batch")
    assert batch.describe_service_job(jobId=job)["createdAt"] == start_ms
    let_time_pass(emu, time_source, 30)
    described = batch.describe_service_job(jobId=job)
    assert described["status"] == "RUNNING"
    # RUNNABLE at its submission time, when the pass placed it on the idle instance.
    assert described["startedAt"] == start_ms
    snapshot = batch.get_job_queue_snapshot(jobQueue=QUEUE)
    assert snapshot["queueUtilization"]["lastUpdatedAt"] == start_ms + 30_000
    # The HTTP Date header is the emulator's clock too (whole seconds).
    date = snapshot["ResponseMetadata"]["HTTPHeaders"]["date"]
    assert parsedate_to_datetime(date).timestamp() == (start_ms + 30_000) // 1000
    (change,) = [e for e in emu.events() if e["detail"]["status"] == "RUNNING"]
    assert change["time"] == "2027-01-15T08:00:00Z"


def test_status_and_explain_read_waits_and_ages_on_the_emulators_clock(
    emu: Emulator, time_source: FakeTime, capsys: pytest.CaptureFixture[str]
) -> None:
    submit("runs")
    let_time_pass(emu, time_source, 1)
    waiting = submit("waits")
    let_time_pass(emu, time_source, 120)

    status = read_status(QUEUE, reader=QueueReader.connect())
    (share,) = status.shares
    assert share.head_job is not None and share.head_job.job_id == waiting
    assert share.head_job.waiting_seconds == 120
    assert status.snapshot_warning is None  # the snapshot is as recent as the emulator's now

    answer = explain(QUEUE, job_id=waiting, reader=QueueReader.connect())
    assert answer.waiting_seconds == 120 and answer.snapshot_warning is None

    # An hour of emulated time later (whatever the machine's clock says), the same.
    let_time_pass(emu, time_source, 3600 - 120)
    assert console(["status", "--queue", QUEUE]) == 0
    out = capsys.readouterr().out
    assert f"{waiting} (1h 0m)" in out and "out of date" not in out, out
    assert console(["explain", "--queue", QUEUE, "--job", waiting]) == 0
    assert "waiting 1h 0m (on the queue's clock)" in capsys.readouterr().out


def test_a_start_the_user_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    start = datetime(2031, 3, 4, 5, 6, 7, tzinfo=UTC)
    with Emulator(capacity_limits=[CapacityLimit(G5, 1)], shares=SHARES, queue_name=QUEUE,
                  start=start) as emu:
        point_boto3_at(monkeypatch, emu.endpoint_url)
        job = submit("dated")
        emu.advance(5)
        described = boto3.client("batch").describe_service_job(jobId=job)
        assert described["createdAt"] == round(start.timestamp() * 1000)
        assert described["startedAt"] == round(start.timestamp() * 1000)
        assert emu.now_ms == round(start.timestamp() * 1000) + 5000
    assert parse_start("2031-03-04T05:06:07") == start  # no offset: UTC
    assert parse_start("2031-03-04T06:06:07+01:00") == start
    with pytest.raises(ValueError, match="--start got 'soon'"):
        parse_start("soon")


def test_the_command_starts_where_it_is_told() -> None:
    emulator = EmulatorProcess("--start", "2030-01-01T00:00:00Z")
    try:
        with urllib.request.urlopen(emulator.url + "/_emulator/clock", timeout=30) as answer:
            clock = json.loads(answer.read())
        assert (clock["start"], clock["now"], clock["kind"]) == (1_893_456_000_000,
                                                                 1_893_456_000_000, "manual")
        assert emulator.advance(90)["now"] == 1_893_456_090_000
    finally:
        assert emulator.terminate() == 0


@pytest.mark.parametrize(("answered", "updated", "expected"), [
    (None, 5_000, None),             # no Date header: the caller's own clock decides
    (10_000, 5_000, 10_000),         # AWS: Date is now, the snapshot older
    (10_000, 10_400, 10_400),        # Date is whole seconds: the answer's own time is later
])
def test_now_is_the_endpoints_clock(answered: int | None, updated: int,
                                    expected: int | None) -> None:
    snapshot = QueueSnapshot(usage_updated_at_ms=updated, heads_updated_at_ms=updated - 1,
                             answered_at_ms=answered)
    assert snapshot.endpoint_now_ms() == expected
    assert judged_at_ms(snapshot, local_clock=lambda: 77.0) == (
        expected if expected is not None else 77_000)
    assert judged_at_ms(snapshot, 1234, local_clock=lambda: 77.0) == 1234  # injected wins


def test_the_emulator_serves_no_clock_control_it_does_not_document(emu: Emulator) -> None:
    request = urllib.request.Request(emu.endpoint_url + "/_emulator/clock", method="GET")
    with urllib.request.urlopen(request, timeout=10) as answer:
        clock: dict[str, Any] = json.loads(answer.read())
    assert clock["start"] == emu.start_ms and clock["kind"] in ("manual", "wall")
