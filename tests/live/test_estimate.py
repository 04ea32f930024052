"""The start estimate's reading of a live queue (the fake AWS Batch on loopback): what it does
with what AWS may report and the emulator never does — a payload with no readable maximum run
time, an attempt whose start is unknown, listings past their caps, a blocked queue."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live import estimate as estimate_module
from quota_constructs.live.estimate import Submission, estimate_submission
from quota_constructs.live.explain import explain
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.wire.training_request import DEFAULT_MAX_RUNTIME_SECONDS

from ..runtime.conftest import G5, Batch

NOW = 1_000_000
DAY_MS = 86_400_000


def queue(batch: Batch) -> str:
    return batch.state.add_queue("small", {G5: 2})


def estimate_of(job: str) -> dict[str, object]:
    answer = explain("small", job_id=job, reader=QueueReader.connect(), now_ms=NOW).to_json()
    estimate = answer["start_estimate"]
    assert isinstance(estimate, dict)
    return estimate


def test_a_job_without_a_readable_maximum_run_time_gives_no_latest(batch: Batch) -> None:
    share = batch.state.add_share(queue(batch), "vision", {G5: 2}, "RESERVE")
    batch.state.add_job(share, "RUNNING", {G5: 1}, started_at=NOW - 10)
    endless = batch.state.add_job(share, "RUNNING", {G5: 1}, started_at=NOW - 10,
                                  payload="not a training request")
    waiting = batch.state.add_job(share, "RUNNABLE", {G5: 2})

    estimate = estimate_of(waiting)
    assert estimate["latest"] is None
    assert estimate["blocking_jobs"] == [endless]
    assert "no known maximum run time" in str(estimate["assumes"])


def test_the_default_maximum_is_sagemakers_day_from_the_attempts_start(batch: Batch) -> None:
    share = batch.state.add_share(queue(batch), "vision", {G5: 1}, "RESERVE")
    holder = batch.state.add_job(share, "RUNNING", {G5: 1}, started_at=NOW - 1000)
    waiting = batch.state.add_job(share, "RUNNABLE", {G5: 1})

    estimate = estimate_of(waiting)
    assert estimate["latest"] == _iso(NOW - 1000 + DAY_MS)
    assert estimate["earliest"] == _iso(NOW)
    assert estimate["blocking_jobs"] == [holder]


def test_an_attempt_of_unknown_start_may_have_started_as_late_as_now(batch: Batch) -> None:
    """Batch's ``startedAt`` predates the job's last preemption: it is an earlier attempt's."""
    share = batch.state.add_share(queue(batch), "vision", {G5: 1}, "RESERVE")
    batch.state.add_job(share, "RUNNING", {G5: 1}, started_at=NOW - 5000, preemptions=[
        {"statusReason": "preempted", "startedAt": NOW - 5000, "stoppedAt": NOW - 4000}])
    waiting = batch.state.add_job(share, "RUNNABLE", {G5: 1})
    assert estimate_of(waiting)["latest"] == _iso(NOW + DAY_MS)


def test_a_disabled_queue_starts_nothing(batch: Batch) -> None:
    q = queue(batch)
    batch.state.queues[q].state = "DISABLED"
    share = batch.state.add_share(q, "vision", {G5: 2}, "LEND")
    waiting = batch.state.add_job(share, "RUNNABLE", {G5: 1})
    estimate = estimate_of(waiting)
    assert estimate["latest"] is None and "DISABLED" in str(estimate["assumes"])


def test_past_the_reading_caps_no_latest_is_promised(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    share = batch.state.add_share(queue(batch), "vision", {G5: 2}, "RESERVE")
    for _ in range(2):
        batch.state.add_job(share, "RUNNING", {G5: 1}, started_at=NOW)
    waiting = [batch.state.add_job(share, "RUNNABLE", {G5: 1}) for _ in range(3)]

    monkeypatch.setattr(estimate_module, "DESCRIBED_AT_MOST", 3)
    described = estimate_of(waiting[-1])
    assert described["latest"] is None
    assert "more than 3 jobs hold or wait" in str(described["assumes"])

    monkeypatch.setattr(estimate_module, "DESCRIBED_AT_MOST", 100)
    monkeypatch.setattr(estimate_module, "LISTING_PAGES", 1)  # the fake's pages hold 2 jobs
    batch.state.add_job(share, "SCHEDULED", {G5: 0.0})
    batch.state.add_job(share, "SCHEDULED", {G5: 0.0})
    batch.state.add_job(share, "SCHEDULED", {G5: 0.0})
    listed = estimate_of(waiting[-1])
    assert listed["latest"] is None and "1 pages of ListServiceJobs" in str(listed["assumes"])


def test_a_submission_into_a_share_the_queue_lacks_is_an_error(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    batch.state.add_share(queue(batch), "vision", {G5: 2}, "LEND")
    assert cli(["estimate", "--queue", "small", "--share", "nlp",
                "--instance-type", G5]) == 2
    assert "quota share 'nlp' is not on job queue 'small'; its shares: vision" in (
        capsys.readouterr().err)


def test_a_submission_is_checked_before_any_call(batch: Batch) -> None:
    queue(batch)
    calls = len(batch.state.calls)
    with pytest.raises(ValueError, match="count got 0"):
        estimate_submission("small", Submission("vision", G5, 0), reader=QueueReader.connect())
    assert len(batch.state.calls) == calls


def test_explains_text_prints_the_estimate_before_the_snapshot_warning(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fake's answers carry a real HTTP Date (the endpoint's clock, which the live commands
    judge by) and a snapshot of 1970 (too old): the running job started on the endpoint's clock
    an hour ago, so it holds the share for its default day less that hour."""
    share = batch.state.add_share(queue(batch), "vision", {G5: 1}, "RESERVE")
    started = (int(time.time()) - 3600) * 1000
    batch.state.add_job(share, "RUNNING", {G5: 1}, started_at=started)
    waiting = batch.state.add_job(share, "RUNNABLE", {G5: 1})
    latest = datetime.fromtimestamp(started / 1000 + DEFAULT_MAX_RUNTIME_SECONDS, UTC)
    assert cli(["explain", "--queue", "small", "--job", waiting]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith(
        f"starts by {latest.strftime('%Y-%m-%d %H:%M:%S')} UTC at the latest")
    assert lines[-1].startswith("the queue's snapshot may be out of date")
    assert cli(["explain", "--queue", "small", "--job", waiting, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["start_estimate"]["latest"] == (
        latest.strftime("%Y-%m-%dT%H:%M:%SZ"))


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    from quota_constructs.wire.utc_time import iso_utc as iso

    return iso(datetime.fromtimestamp(ms / 1000, UTC))
