"""Which RUNNING event is a job's first start, what it waited, and which FAILED job its budget
lost (:mod:`quota_constructs.runtime.agreement_metrics`), then the job-events handler publishing
them only for the shares whose agreement declares the line."""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs.runtime import job_events_handler
from quota_constructs.runtime.agreement_metrics import (
    event_time_ms,
    is_budget_failure,
    read_start,
)
from quota_constructs.wire.monitoring_contract import (
    AGREEMENT_METRICS_ENV,
    BUDGET_FAILURES,
    WAIT_TIME,
)

from .conftest import G5, Monitor, context, shares_with_a_wait_target
from .emf_lines import data_points, values
from .events import state_change_now

CREATED = 1_790_000_000_000
MINUTE = 60_000


def attempt(started: int, stopped: int | None = None) -> dict[str, Any]:
    return {"startedAt": started, **({"stoppedAt": stopped} if stopped is not None else {})}


def preempted(*attempts: dict[str, Any], count: int | None = None) -> dict[str, Any]:
    return {"preemptedAttemptCount": len(attempts) if count is None else count,
            "recentPreemptedAttempts": list(attempts)}


# -- the first start ------------------------------------------------------------------------


def test_the_first_start_of_a_job_never_stopped() -> None:
    job = {"createdAt": CREATED, "startedAt": CREATED + 30 * MINUTE, "status": "RUNNING"}
    reading = read_start({"attempts": [attempt(CREATED + 30 * MINUTE)]}, job, None)
    assert reading.first and reading.wait_seconds == 1800


def test_a_start_whose_event_counts_a_preemption_is_a_later_one() -> None:
    detail = {"startedAt": CREATED + 90 * MINUTE,
              "preemptionSummary": preempted(attempt(CREATED + MINUTE, CREATED + 60 * MINUTE))}
    assert not read_start(detail, {"createdAt": CREATED}, None).first


@pytest.mark.parametrize(("this_start", "first"), [
    (CREATED + 10 * MINUTE, True),   # the attempt later preempted: its own event, handled late
    (CREATED + 70 * MINUTE, False),  # after the first attempt stopped: a restart
])
def test_a_start_is_the_first_when_no_attempt_had_stopped_before_it(
    this_start: int, first: bool
) -> None:
    # As described now: preempted at +60 min, running again since +70 min.
    job = {"createdAt": CREATED, "startedAt": CREATED + 70 * MINUTE,
           "preemptionSummary": preempted(attempt(CREATED + 10 * MINUTE, CREATED + 60 * MINUTE))}
    reading = read_start({"attempts": [attempt(this_start)]}, job, None)
    assert reading.first is first
    assert reading.wait_seconds == (this_start - CREATED) / 1000


def test_two_fields_written_for_one_moment_may_differ_a_little() -> None:
    # The job's startedAt a few milliseconds before the attempt's own: still its first start.
    job = {"createdAt": CREATED, "startedAt": CREATED + 10 * MINUTE - 7,
           "attempts": [attempt(CREATED + 10 * MINUTE + 3)]}
    reading = read_start({"startedAt": CREATED + 10 * MINUTE}, job, None)
    assert reading.first and reading.wait_seconds == 600


@pytest.mark.parametrize(("event_minute", "first"), [(30, True), (75, False)])
def test_an_event_without_a_start_time_is_placed_by_its_time(
    event_minute: int, first: bool
) -> None:
    job = {"createdAt": CREATED, "startedAt": CREATED + 20 * MINUTE,
           "preemptionSummary": preempted(attempt(CREATED + 20 * MINUTE, CREATED + 60 * MINUTE))}
    reading = read_start({}, job, CREATED + event_minute * MINUTE)
    assert reading.first is first
    assert reading.wait_seconds == 1200  # the earliest start the job reports


def test_an_event_time_before_the_job_existed_is_not_its_time() -> None:
    # An event copied from a sample keeps the sample's time: the job's own record decides.
    stopped = {"createdAt": CREATED,
               "preemptionSummary": preempted(attempt(CREATED + MINUTE, CREATED + 2 * MINUTE))}
    assert not read_start({}, stopped, CREATED - 10**9).first
    never_stopped = {"createdAt": CREATED, "startedAt": CREATED + 5 * MINUTE}
    reading = read_start({}, never_stopped, CREATED - 10**9)
    assert reading.first and reading.wait_seconds == 300


def test_a_job_preempted_more_often_than_aws_lists_is_not_judged() -> None:
    job = {"createdAt": CREATED,
           "preemptionSummary": preempted(attempt(CREATED + 50 * MINUTE, CREATED + 60 * MINUTE),
                                          count=7)}
    assert not read_start({"startedAt": CREATED + 10 * MINUTE}, job, None).first


def test_no_creation_time_no_wait() -> None:
    reading = read_start({"startedAt": CREATED}, {}, None)
    assert reading.first and reading.wait_seconds is None


def test_the_event_time_is_read_as_eventbridge_writes_it() -> None:
    # calendar.timegm((2026, 9, 21, 12, 0, 1)) seconds
    assert event_time_ms({"time": "2026-09-21T12:00:01Z"}) == 1_789_992_001_000
    assert event_time_ms({"time": "not a time"}) is None
    assert event_time_ms({}) is None


# -- budget failures --------------------------------------------------------------------------


@pytest.mark.parametrize(("retries", "count", "failure"), [
    (0, 1, True), (2, 3, True), (2, 2, False), (None, 9, False),
])
def test_a_budget_failure_is_more_preemptions_than_retries(
    retries: int | None, count: int, failure: bool
) -> None:
    job: dict[str, Any] = {"status": "FAILED", "preemptionSummary": preempted(
        *[attempt(CREATED + i, CREATED + i + 1) for i in range(count)])}
    if retries is not None:
        job["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": retries}
    assert is_budget_failure({}, job) is failure


def test_the_events_counts_stand_in_for_a_description_without_them() -> None:
    detail = {"preemptionConfiguration": {"preemptionRetriesBeforeTermination": 1},
              "preemptionSummary": preempted(attempt(1, 2), attempt(3, 4))}
    assert is_budget_failure(detail, {"status": "FAILED"})


# -- the handler --------------------------------------------------------------------------------


def with_targets(monitor: Monitor) -> None:
    shares = shares_with_a_wait_target()
    monitor.declare(shares)
    monitor.create_shares(shares)


def deliver(monitor: Monitor, event: dict[str, Any]) -> dict[str, Any]:
    return job_events_handler.handler(event, context(), monitor.connection)


def test_the_wait_is_published_at_the_first_start_of_a_share_with_a_target(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    with_targets(monitor)
    now = [CREATED]
    monitor.batch.clock_ms = lambda: now[0]
    ours = monitor.batch.add_service_job(monitor.training, "QS1", "RUNNABLE", {G5: 1},
                                         age_seconds=0)
    plain = monitor.batch.add_service_job(monitor.training, "QS3", "RUNNABLE", {G5: 1},
                                          age_seconds=0)
    now[0] += 45 * MINUTE
    outcomes = []
    for job in (ours, plain):
        monitor.batch.start(job.job_id)
        outcomes.append(deliver(monitor, state_change_now(job, now[0], event_id=job.job_id)))

    assert [o["outcome"] for o in outcomes] == [
        "published", "ignored: the share declares no wait target"]
    points = data_points(capsys.readouterr().out)
    assert values(points, WAIT_TIME, QuotaShare="QS1") == [2700]
    assert values(points, WAIT_TIME, QuotaShare="QS3") == []


@pytest.mark.parametrize(("share", "published"), [("QS2", [1]), ("QS3", [])])
def test_a_budget_failure_counts_only_where_the_agreement_sets_a_budget(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], share: str, published: list[int]
) -> None:
    with_targets(monitor)
    job = monitor.batch.add_service_job(monitor.training, share, "RUNNING", {G5: 1},
                                        retries_before_termination=0)
    monitor.batch.preempt(job.job_id)

    outcome = deliver(monitor, state_change_now(job, monitor.batch.clock_ms(), event_id="f"))

    assert outcome["outcome"] == "reported"  # the owner is told either way
    assert values(data_points(capsys.readouterr().out), BUDGET_FAILURES) == published


def test_the_switch_off_publishes_no_budget_failure(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    with_targets(monitor)
    monitor.monkeypatch.setenv(AGREEMENT_METRICS_ENV, "false")
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNING", {G5: 1},
                                        retries_before_termination=0)
    monitor.batch.preempt(job.job_id)

    outcome = deliver(monitor, state_change_now(job, monitor.batch.clock_ms(), event_id="f"))

    assert outcome["outcome"] == "reported" and outcome["budget_failure"] is False
    assert values(data_points(capsys.readouterr().out), BUDGET_FAILURES) == []
