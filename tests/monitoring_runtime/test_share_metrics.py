"""The scheduled metrics handler against the fake Batch: values, drift, health and isolation of
faults."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

import pytest

from quota_constructs.runtime import share_metrics_handler
from quota_constructs.runtime.batch_gateway import BatchConnection
from quota_constructs.runtime.clock import WALL_CLOCK, Clock
from quota_constructs.runtime.retry import ClientTimeouts
from quota_constructs.wire.monitoring_contract import (
    CAPACITY_IN_USE,
    HEAD_JOB_FITS_IDLE_OWN,
    MAX_SNAPSHOT_AGE_ENV,
    MONITOR_HEALTHY,
    OLDEST_RUNNABLE_JOB_AGE,
    RUNNABLE_JOBS,
    SHARE_DRIFT,
)

from .conftest import G5, NAMESPACE, Monitor, context
from .emf_lines import DataPoint, data_points, values


def run(capsys: pytest.CaptureFixture[str], remaining_ms: int = 60_000, *,
        connection: BatchConnection,
        clock: Clock = WALL_CLOCK) -> tuple[dict[str, Any], list[DataPoint]]:
    capsys.readouterr()
    summary = share_metrics_handler.handler({}, context(remaining_ms), connection, clock)
    return summary, data_points(capsys.readouterr().out)


def arrange_reference_load(monitor: Monitor) -> None:
    """QS1 runs two jobs on its own limit of one (so borrows one), QS3 one, QS2 none; QS2 has
    three RUNNABLE jobs (two pages), QS1 one. The fake does not schedule: usage is as stated."""
    monitor.create_shares()
    batch, training = monitor.batch, monitor.training
    for _ in range(2):
        batch.add_service_job(training, "QS1", "RUNNING", {G5: 1})
    batch.add_service_job(training, "QS3", "STARTING", {G5: 1})
    for age in (30, 900, 120):
        batch.add_service_job(training, "QS2", "RUNNABLE", {G5: 1}, age_seconds=age)
    batch.add_service_job(training, "QS1", "RUNNABLE", {G5: 1}, age_seconds=5)
    batch.add_service_job(training, "QS1", "SUCCEEDED", {G5: 1}, age_seconds=5000)
    # Another queue's jobs, in a share of the same name, never count.
    monitor.create_shares([monitor.shares[0]], queue=monitor.research)
    batch.add_service_job(monitor.research, "QS1", "RUNNING", {G5: 1})
    batch.add_service_job(monitor.research, "QS1", "RUNNABLE", {G5: 1}, age_seconds=9999)


def test_per_share_values_equal_the_fakes_state(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    arrange_reference_load(monitor)

    summary, points = run(capsys, connection=monitor.connection)

    assert summary["missing"] == [] and summary["drifted"] == []
    assert {p.namespace for p in points} == {NAMESPACE}
    assert {p.dimension("JobQueue") for p in points} == {"training"}
    for share, in_use in {"QS1": 2, "QS2": 0, "QS3": 1}.items():
        dims = {"QuotaShare": share, "CapacityUnit": G5}
        assert values(points, CAPACITY_IN_USE, **dims) == [in_use]
        assert values(points, SHARE_DRIFT, QuotaShare=share) == [0]
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS1") == [1]
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS2") == [3]  # two pages
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS3") == [0]
    [oldest] = values(points, OLDEST_RUNNABLE_JOB_AGE, QuotaShare="QS2")
    assert 900 <= oldest < 900 + 60
    assert values(points, OLDEST_RUNNABLE_JOB_AGE, QuotaShare="QS3") == [0]
    # QS2's own instance is idle and its first job needs one; QS1's own instance is in use.
    assert values(points, HEAD_JOB_FITS_IDLE_OWN, QuotaShare="QS2") == [1]
    assert values(points, HEAD_JOB_FITS_IDLE_OWN, QuotaShare="QS1") == [0]
    assert values(points, HEAD_JOB_FITS_IDLE_OWN, QuotaShare="QS3") == [0]
    assert values(points, MONITOR_HEALTHY, JobQueue="training") == [1]
    # Unit metrics carry the unit; share metrics do not.
    assert all(p.dimension("CapacityUnit") == G5 for p in points if p.name == CAPACITY_IN_USE)
    assert all(p.dimension("CapacityUnit") is None for p in points if p.name == RUNNABLE_JOBS)
    assert {p.unit for p in points if p.name == OLDEST_RUNNABLE_JOB_AGE} == {"Seconds"}
    # Derivable figures are not published.
    assert {p.name for p in points} == {CAPACITY_IN_USE, RUNNABLE_JOBS, OLDEST_RUNNABLE_JOB_AGE,
                                        HEAD_JOB_FITS_IDLE_OWN, SHARE_DRIFT, MONITOR_HEALTHY}


def test_only_shares_with_a_waiting_job_are_listed_each_filtered_on_it(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    arrange_reference_load(monitor)
    run(capsys, connection=monitor.connection)
    listings = [p for name, p in monitor.batch.calls if name == "ListServiceJobs"]
    assert {p["filters"][0]["values"][0] for p in listings} == {"QS1", "QS2"}
    assert all(p["jobStatus"] == "RUNNABLE" and len(p["filters"]) == 1 for p in listings)
    assert all(p["jobQueue"] == monitor.training for p in listings)
    # One description per share with a waiting job: its first job.
    assert monitor.batch.count("DescribeServiceJob") == 2


def test_the_runnable_count_stops_at_its_cap_and_says_at_least(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.monkeypatch.setenv("QUOTA_MONITOR_RUNNABLE_COUNT_CAP", "4")
    monitor.create_shares()
    for age in range(10):
        monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", {G5: 1},
                                      age_seconds=age + 1)

    _, points = run(capsys, connection=monitor.connection)

    assert values(points, RUNNABLE_JOBS, QuotaShare="QS2") == [4]
    assert monitor.batch.count("ListServiceJobs") == 2  # pages of 2, up to the cap


def test_no_count_when_switched_off(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.monkeypatch.setenv("QUOTA_MONITOR_RUNNABLE_COUNT_CAP", "0")
    arrange_reference_load(monitor)

    _, points = run(capsys, connection=monitor.connection)

    assert values(points, RUNNABLE_JOBS) == []
    assert monitor.batch.count("ListServiceJobs") == 0
    assert len(values(points, OLDEST_RUNNABLE_JOB_AGE)) == 3


def test_drift_missing_invalid_and_changed_shares(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares(monitor.shares[:2])  # QS3 is missing
    qs1 = monitor.batch.share(monitor.training, "QS1")
    qs2 = monitor.batch.share(monitor.training, "QS2")
    assert qs1 is not None and qs2 is not None
    qs1.borrow_limit = 100  # declared 200
    qs2.status = "INVALID"

    summary, points = run(capsys, connection=monitor.connection)

    assert sorted(summary["drifted"]) == ["QS1", "QS2", "QS3"]
    for share in ("QS1", "QS2", "QS3"):
        assert values(points, SHARE_DRIFT, QuotaShare=share) == [1]
    # A missing share still reports its own limit, and nothing in use.
    assert values(points, CAPACITY_IN_USE, QuotaShare="QS3") == [0]


def test_drift_is_compared_through_the_model_not_as_text(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    unlimited = dataclasses.replace(monitor.shares[0], borrow_limit_percent=None)
    monitor.declare([unlimited, *monitor.shares[1:]])
    monitor.create_shares()
    qs1 = monitor.batch.share(monitor.training, "QS1")
    assert qs1 is not None and qs1.borrow_limit == -1  # what Batch reports for "unlimited"

    _, points = run(capsys, connection=monitor.connection)

    assert values(points, SHARE_DRIFT) == [0, 0, 0]


def test_a_terse_listing_is_completed_by_describing_the_share(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares()
    monitor.batch.terse_listing = True

    _, points = run(capsys, connection=monitor.connection)

    assert values(points, SHARE_DRIFT) == [0, 0, 0]
    assert monitor.batch.count("DescribeQuotaShare") == 3


def test_a_failing_share_loses_only_its_own_data_points(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    arrange_reference_load(monitor)
    monitor.batch.fail_share_next("QS2", 50, code="ServerException", status=500)

    summary, points = run(capsys, connection=monitor.connection)

    assert summary["missing"] == ["ListServiceJobs(QS2)"]
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS2") == []
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS1") == [1]
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS3") == [0]
    assert values(points, CAPACITY_IN_USE, QuotaShare="QS2") == [0]
    assert values(points, SHARE_DRIFT, QuotaShare="QS2") == [0]
    assert len(values(points, OLDEST_RUNNABLE_JOB_AGE, QuotaShare="QS2")) == 1
    assert values(points, MONITOR_HEALTHY) == [0]


def test_throttling_is_retried_and_nothing_is_lost(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    arrange_reference_load(monitor)
    monitor.batch.fail_next("GetJobQueueSnapshot", 2)
    monitor.batch.fail_next("ListQuotaShares", 1, code="TooManyRequestsException", status=429)
    monitor.batch.fail_share_next("QS3", 2, code="ServiceUnavailableException", status=503)
    # QS3 has no waiting job, so it is never listed and its faults stay unused.

    summary, points = run(capsys, connection=monitor.connection)

    assert summary["missing"] == []
    assert values(points, CAPACITY_IN_USE, QuotaShare="QS1") == [2]
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS3") == [0]
    assert values(points, MONITOR_HEALTHY) == [1]
    assert len(monitor.sleeps) == 3


def test_without_a_snapshot_the_other_figures_are_still_published(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    arrange_reference_load(monitor)
    monitor.batch.fail_next("GetJobQueueSnapshot", 50, code="ServerException", status=500)

    summary, points = run(capsys, connection=monitor.connection)

    assert summary["missing"] == ["GetJobQueueSnapshot"]
    assert values(points, CAPACITY_IN_USE) == []
    # Without the fronts nothing is known about waiting jobs: no figure rather than "none".
    assert values(points, OLDEST_RUNNABLE_JOB_AGE) == []
    assert values(points, HEAD_JOB_FITS_IDLE_OWN) == []
    assert values(points, RUNNABLE_JOBS) == []
    assert values(points, SHARE_DRIFT) == [0, 0, 0]
    assert values(points, MONITOR_HEALTHY) == [0]


def test_when_the_listing_fails_each_share_is_described_on_its_own(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares(monitor.shares[:2])  # QS3 is missing
    monitor.batch.fail_next("ListQuotaShares", 50, code="ServerException", status=500)
    monitor.batch.fail_describe_next("QS2", 50)

    summary, points = run(capsys, connection=monitor.connection)

    assert summary["missing"] == ["DescribeQuotaShare(QS2)"]
    assert values(points, SHARE_DRIFT, QuotaShare="QS1") == [0]
    assert values(points, SHARE_DRIFT, QuotaShare="QS2") == []  # unknown is not "no drift"
    assert values(points, SHARE_DRIFT, QuotaShare="QS3") == [1]
    assert values(points, RUNNABLE_JOBS) == [0, 0, 0]
    assert values(points, MONITOR_HEALTHY) == [0]


def test_a_slow_share_is_abandoned_at_the_deadline_and_the_rest_published(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    arrange_reference_load(monitor)
    # A read timeout longer than the Lambda has left: the call is still running at the deadline.
    # The other calls get nine seconds, which a loaded machine needs too; the slow one answers
    # long after, whatever the machine's speed.
    monitor.connection = replace(monitor.connection, timeouts=ClientTimeouts(2, 60))
    monitor.batch.slow_share_next("QS2", 40.0)

    summary, points = run(capsys, remaining_ms=10_000, connection=monitor.connection)

    assert summary["missing"] == ["ListServiceJobs(QS2)"]
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS2") == []
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS1") == [1]
    assert values(points, CAPACITY_IN_USE, QuotaShare="QS2") == [0]


def test_units_in_use_but_not_declared_are_published_too(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares()
    monitor.batch.queues[monitor.training].environment["ml.g5.2xlarge"] = 2
    monitor.batch.add_service_job(monitor.training, "QS1", "RUNNING", {"ml.g5.2xlarge": 2})

    _, points = run(capsys, connection=monitor.connection)

    dims = {"QuotaShare": "QS1", "CapacityUnit": "ml.g5.2xlarge"}
    assert values(points, CAPACITY_IN_USE, **dims) == [2]


def test_calls_still_queued_at_the_deadline_are_given_up_too(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    arrange_reference_load(monitor)
    monkeypatch.setattr(share_metrics_handler, "MAX_WORKERS", 1)
    monitor.connection = replace(monitor.connection, timeouts=ClientTimeouts(2, 30))
    monitor.batch.slow_next("GetJobQueueSnapshot", 6.0)  # the first call holds the only worker

    summary, points = run(capsys, remaining_ms=4_000, connection=monitor.connection)

    assert summary["missing"] == ["GetJobQueueSnapshot", "ListQuotaShares"]
    assert values(points, CAPACITY_IN_USE) == []
    assert values(points, RUNNABLE_JOBS) == []
    assert values(points, MONITOR_HEALTHY) == [0]


def _tag_as_deployed(monitor: Monitor, share: str, **changes: Any) -> None:
    """The share as a deployment of its own stack left it: changed, and tagged with the
    fingerprint of what that deployment declared (computed here from the fake's own fields)."""
    import hashlib
    import json

    live = monitor.batch.share(monitor.training, share)
    assert live is not None
    for name, value in changes.items():
        setattr(live, name, value)
    canonical = json.dumps({
        "limits": sorted(live.limits.items()), "strategy": live.strategy,
        "borrow_limit": (-1 if live.borrow_limit is None else live.borrow_limit)
        if live.strategy == "LEND_AND_BORROW" else None,
        "in_share_preemption": live.in_share_preemption, "state": live.state,
    }, sort_keys=True, separators=(",", ":"))
    live.tags["quota-constructs:deployed-config"] = hashlib.sha256(
        canonical.encode()).hexdigest()[:16]


def test_a_change_deployed_by_the_shares_own_stack_is_not_drift(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares()
    _tag_as_deployed(monitor, "QS1", borrow_limit=100)  # declared 200 in the monitor's stack

    summary, points = run(capsys, connection=monitor.connection)

    assert summary["drifted"] == []
    assert values(points, SHARE_DRIFT, QuotaShare="QS1") == [0]
    assert values(points, MONITOR_HEALTHY) == [1]


def test_a_change_made_outside_any_deployment_is_drift(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares()
    _tag_as_deployed(monitor, "QS1", borrow_limit=100)
    qs1 = monitor.batch.share(monitor.training, "QS1")
    assert qs1 is not None
    qs1.limits = {G5: 2}  # by hand, after that deployment

    summary, points = run(capsys, connection=monitor.connection)

    assert summary["drifted"] == ["QS1"]
    assert values(points, SHARE_DRIFT, QuotaShare="QS1") == [1]


# -- the snapshot's age ---------------------------------------------------------------------------

NOW_MS = 1_893_456_000_000
"""The injected clock's reading (the fake dates its snapshot relative to it)."""


@pytest.fixture
def clock() -> Clock:
    """The handler's clock, fixed at :data:`NOW_MS`."""
    return lambda: NOW_MS / 1000.0


def arrange_starving_share(monitor: Monitor, snapshot_age_seconds: float) -> None:
    """QS2 idle, its one job waiting at the front for two hours: Starved, were it judged."""
    monitor.create_shares()
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", {G5: 1})
    job.runnable_since = NOW_MS - 2 * 3600 * 1000
    monitor.batch.add_service_job(monitor.training, "QS1", "RUNNING", {G5: 1})
    monitor.batch.snapshot_updated_at_ms = NOW_MS - int(snapshot_age_seconds * 1000)


def snapshot_figures(points: list[DataPoint]) -> list[Any]:
    return [p for p in points if p.name in (CAPACITY_IN_USE, OLDEST_RUNNABLE_JOB_AGE,
                                             HEAD_JOB_FITS_IDLE_OWN, RUNNABLE_JOBS)]


def test_a_snapshot_within_the_bound_is_judged(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], clock: Clock
) -> None:
    arrange_starving_share(monitor, snapshot_age_seconds=599)

    summary, points = run(capsys, connection=monitor.connection, clock=clock)

    assert summary["missing"] == []
    assert values(points, OLDEST_RUNNABLE_JOB_AGE, QuotaShare="QS2") == [7200.0]
    assert values(points, HEAD_JOB_FITS_IDLE_OWN, QuotaShare="QS2") == [1]
    assert values(points, MONITOR_HEALTHY) == [1]


@pytest.mark.parametrize("age_seconds", [601, 3 * 3600])
def test_a_snapshot_older_than_the_bound_is_not_judged_and_health_says_so(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], clock: Clock, age_seconds: float
) -> None:
    arrange_starving_share(monitor, snapshot_age_seconds=age_seconds)

    summary, points = run(capsys, connection=monitor.connection, clock=clock)

    # Nothing from the snapshot: no false Starved (wait, fit) and no false all-clear (a wait
    # of 0, "nothing waits", idle capacity) — the figures are withheld, not zeroed.
    assert snapshot_figures(points) == []
    [why] = summary["missing"]
    assert why.startswith("GetJobQueueSnapshot (") and "600 s allowed" in why
    assert values(points, MONITOR_HEALTHY) == [0]
    # What does not come from the snapshot is still measured.
    assert values(points, SHARE_DRIFT) == [0, 0, 0]
    # And nothing was read on the strength of the stale snapshot.
    assert monitor.batch.count("DescribeServiceJob") == 0
    assert monitor.batch.count("ListServiceJobs") == 0


def test_a_snapshot_of_unknown_age_is_not_judged(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], clock: Clock
) -> None:
    arrange_starving_share(monitor, snapshot_age_seconds=0)
    monitor.batch.snapshot_undated = True

    summary, points = run(capsys, connection=monitor.connection, clock=clock)

    assert snapshot_figures(points) == []
    assert "no lastUpdatedAt" in summary["missing"][0]
    assert values(points, MONITOR_HEALTHY) == [0]


def test_one_stale_part_is_enough(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], clock: Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The usage fresh, the shares' fronts (the waits) old: still not judged."""
    arrange_starving_share(monitor, snapshot_age_seconds=0)
    original = type(monitor.batch)._GetJobQueueSnapshot

    def fronts_behind(self: Any, p: dict[str, Any]) -> dict[str, Any]:
        response = original(self, p)
        response["frontOfQuotaShares"]["lastUpdatedAt"] = NOW_MS - 3600 * 1000
        return response

    monkeypatch.setattr(type(monitor.batch), "_GetJobQueueSnapshot", fronts_behind)

    summary, points = run(capsys, connection=monitor.connection, clock=clock)

    assert snapshot_figures(points) == []
    assert "frontOfQuotaShares was last updated 3600 s ago" in summary["missing"][0]


@pytest.mark.parametrize(("setting", "judged"), [("1200", True), ("off", True), ("300", False)])
def test_the_bound_is_the_monitors_setting(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], clock: Clock,
    setting: str, judged: bool,
) -> None:
    # 11 minutes old: within a 20-minute bound, judged; "off": any age is judged; a 5-minute
    # bound withholds it.
    arrange_starving_share(monitor, snapshot_age_seconds=660)
    monitor.monkeypatch.setenv(MAX_SNAPSHOT_AGE_ENV, setting)

    summary, points = run(capsys, connection=monitor.connection, clock=clock)

    assert bool(snapshot_figures(points)) is judged
    assert values(points, MONITOR_HEALTHY) == [1 if judged else 0]
    assert (summary["missing"] == []) is judged


@pytest.mark.parametrize("setting", ["0", "ten", "-5", "1.5"])
def test_an_unreadable_bound_is_a_configuration_error(
    monitor: Monitor, setting: str
) -> None:
    from quota_constructs.runtime.monitor_settings import (
        MonitorConfigurationError,
        MonitorSettings,
    )

    monitor.monkeypatch.setenv(MAX_SNAPSHOT_AGE_ENV, setting)
    with pytest.raises(MonitorConfigurationError, match=MAX_SNAPSHOT_AGE_ENV):
        MonitorSettings.from_environment()
