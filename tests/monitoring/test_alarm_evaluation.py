"""The metrics handler the template names, run against the fake Batch in constructed situations,
and the Starved and MonitorHealth alarms evaluated on what it printed as CloudWatch would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs import QuotaShareMonitoring, ShareAlarmThresholds
from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.wire.monitoring_contract import (
    OLDEST_RUNNABLE_JOB_AGE,
    RUNNABLE_JOBS,
)

from ..constructs.support import logical_id
from ..monitoring_runtime.conftest import G5, NLP, Monitor, context, reference_shares
from ..monitoring_runtime.emf_lines import DataPoint, data_points, values
from .cloudwatch_alarms import alarm_state
from .test_template_handlers import deploy, run_as_deployed

P4D = "ml.p4d.24xlarge"
HOUR = 3600.0
NOW_MS = 1_790_000_000_000
"""Every test here reads one fixed time: job ages are exact, however long the machine takes
to add the jobs and run the handler."""


class Deployed:
    """One synthesized monitor, its metrics handler ready to run as deployed; the fake and the
    handler read one fixed time (:attr:`now_ms`)."""

    def __init__(self, monitor: Monitor, outdir: Path, capsys: pytest.CaptureFixture[str],
                 **props: Any) -> None:
        props.setdefault("thresholds", ShareAlarmThresholds(starved_after=cdk.Duration.minutes(30)))
        self.monitor = monitor
        self.capsys = capsys
        self.now_ms = NOW_MS
        monitor.batch.clock_ms = lambda: NOW_MS
        self.monitoring: QuotaShareMonitoring = deploy(monitor, outdir, **props)
        self.resources = Template.from_stack(cdk.Stack.of(self.monitoring)).to_json()[
            "Resources"]
        self.handler = run_as_deployed(monitor, self.monitoring,
                                       self.monitoring.metrics_function, outdir)

    def run(self) -> list[DataPoint]:
        self.capsys.readouterr()
        # The monitor's connection records backoff instead of sleeping it: a Batch failing
        # every call is retried as deployed, without the test waiting out real delays.
        self.handler({}, context(), connection=self.monitor.connection,
                     clock=lambda: self.now_ms / 1000)
        return data_points(self.capsys.readouterr().out)

    def alarm(self, construct: Any) -> dict[str, Any]:
        props: dict[str, Any] = self.resources[logical_id(construct)]["Properties"]
        return props

    def starved(self, share: str, periods: list[list[DataPoint]],
                previous: str = "INSUFFICIENT_DATA") -> str:
        [alarm] = [a for a in self.monitoring.alarms_of(share) if a.node.id == "Starved"]
        return alarm_state(self.alarm(alarm), periods, previous)

    def health(self, periods: list[list[DataPoint]]) -> str:
        assert self.monitoring.monitor_health_alarm is not None
        return alarm_state(self.alarm(self.monitoring.monitor_health_alarm), periods)


@pytest.fixture
def deployed(monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Deployed:
    monitor.create_shares()
    return Deployed(monitor, tmp_path, capsys)


def test_a_waiting_job_that_fits_in_idle_own_capacity_is_starved(deployed: Deployed) -> None:
    batch, queue = deployed.monitor.batch, deployed.monitor.training
    batch.add_service_job(queue, "QS2", "RUNNABLE", {G5: 1}, age_seconds=HOUR)
    runs = [deployed.run() for _ in range(2)]
    assert deployed.starved("QS2", [runs[0] + runs[1]]) == "ALARM"
    assert deployed.health([runs[0], runs[1]]) == "OK"
    # The other shares have nothing waiting.
    assert deployed.starved("QS1", [runs[0]]) == "OK"


def test_idle_capacity_of_another_instance_type_does_not_starve(
    monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # QS2 owns one p4d (idle) and one g5 (in use); its g5 job waits.
    shares = reference_shares()
    shares[1] = QuotaShareSpec(name="QS2", strategy=SharingStrategy.LEND, agreement=NLP,
                               capacity_limits=[CapacityLimit(G5, 1), CapacityLimit(P4D, 1)])
    monitor.batch.queues[monitor.training].environment[P4D] = 1
    monitor.create_shares(shares)
    monitor.declare(shares)
    deployed = Deployed(monitor, tmp_path, capsys, shares=shares)
    monitor.batch.add_service_job(monitor.training, "QS2", "RUNNING", {G5: 1})
    monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", {G5: 1}, age_seconds=HOUR)

    points = deployed.run()

    assert deployed.starved("QS2", [points]) == "OK"
    [wait] = values(points, OLDEST_RUNNABLE_JOB_AGE, QuotaShare="QS2")
    assert wait == HOUR  # it does wait; it is not starved


def test_a_job_larger_than_the_idle_part_does_not_starve(
    monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shares = reference_shares()
    shares[1] = QuotaShareSpec(name="QS2", strategy=SharingStrategy.LEND, agreement=NLP,
                               capacity_limits=[CapacityLimit(G5, 2)])
    monitor.batch.queues[monitor.training].environment[G5] = 4
    monitor.create_shares(shares)
    monitor.declare(shares)
    deployed = Deployed(monitor, tmp_path, capsys, shares=shares)
    batch, queue = monitor.batch, monitor.training
    batch.add_service_job(queue, "QS2", "RUNNING", {G5: 1})  # one of two idle
    batch.add_service_job(queue, "QS2", "RUNNABLE", {G5: 2}, age_seconds=HOUR)

    assert deployed.starved("QS2", [deployed.run()]) == "OK"

    # Once its own two instances are idle, the same job is starved.
    batch.jobs[-2].status = "SUCCEEDED"
    assert deployed.starved("QS2", [deployed.run()]) == "ALARM"


@pytest.mark.parametrize("kept", [False, True], ids=["position-restarts", "position-kept"])
def test_a_job_requeued_a_moment_ago_is_not_starved(deployed: Deployed, kept: bool) -> None:
    batch, queue = deployed.monitor.batch, deployed.monitor.training
    batch.position_kept_on_requeue = kept
    job = batch.add_service_job(queue, "QS2", "RUNNING", {G5: 1}, age_seconds=5 * HOUR)
    batch.preempt(job.job_id)

    points = deployed.run()

    [wait] = values(points, OLDEST_RUNNABLE_JOB_AGE, QuotaShare="QS2")
    assert wait == 0  # put back at this very time
    assert deployed.starved("QS2", [points]) == "OK"


@pytest.mark.parametrize(("code", "status"), [
    ("AccessDeniedException", 403),  # an SCP denies Batch
    ("ThrottlingException", 400),  # sustained throttling outlasts every retry
])
def test_batch_failing_every_call_pages_operations_not_owners(
    deployed: Deployed, code: str, status: int
) -> None:
    batch, queue = deployed.monitor.batch, deployed.monitor.training
    batch.add_service_job(queue, "QS2", "RUNNABLE", {G5: 1}, age_seconds=HOUR)
    for operation in ("GetJobQueueSnapshot", "ListQuotaShares", "DescribeQuotaShare",
                      "ListServiceJobs", "DescribeServiceJob"):
        if code == "AccessDeniedException":
            batch.deny_next(operation, 1000)  # with the denial's own message, not throttling's
        else:
            batch.fail_next(operation, 1000, code=code, status=status)

    runs = [deployed.run() for _ in range(2)]

    assert deployed.health(runs) == "ALARM"
    # Throttling is retried with backoff before the monitor gives up; a denial is not.
    assert bool(deployed.monitor.sleeps) == (code == "ThrottlingException")
    # Nothing measured is neither starvation nor its end: the alarm keeps its state.
    for previous in ("OK", "ALARM", "INSUFFICIENT_DATA"):
        assert deployed.starved("QS2", [runs[-1]], previous) == previous


def test_a_stale_snapshot_neither_starves_nor_clears_and_pages_operations(
    deployed: Deployed, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch, queue = deployed.monitor.batch, deployed.monitor.training
    now_ms = 1_893_456_000_000
    deployed.now_ms = now_ms
    job = batch.add_service_job(queue, "QS2", "RUNNABLE", {G5: 1})
    job.runnable_since = now_ms - int(HOUR * 1000)
    batch.snapshot_updated_at_ms = now_ms - 60_000
    fresh = [deployed.run() for _ in range(2)]
    assert deployed.starved("QS2", [fresh[0] + fresh[1]]) == "ALARM"
    assert deployed.starved("QS1", [fresh[0]]) == "OK"

    # The snapshot stops being refreshed: 20 minutes old, past the default bound of 10.
    batch.snapshot_updated_at_ms = now_ms - 20 * 60_000
    stale = [deployed.run() for _ in range(2)]

    assert deployed.starved("QS2", [stale[0] + stale[1]], previous="ALARM") == "ALARM"
    assert deployed.starved("QS1", [stale[0] + stale[1]], previous="OK") == "OK"
    assert deployed.health(stale) == "ALARM"
    assert deployed.health(fresh) == "OK"


def test_a_monitor_that_does_not_run_is_unhealthy(deployed: Deployed) -> None:
    assert deployed.health([[], []]) == "ALARM"


def test_batch_answering_normally_keeps_health_ok(deployed: Deployed) -> None:
    assert deployed.health([deployed.run(), deployed.run()]) == "OK"


def test_tens_of_thousands_of_runnable_jobs_cost_no_more_calls(deployed: Deployed) -> None:
    batch, queue = deployed.monitor.batch, deployed.monitor.training
    batch.page_size = 100  # what AWS Batch answers with maxResults=100
    batch.add_service_job(queue, "QS1", "RUNNABLE", {G5: 1}, age_seconds=10)
    batch.calls.clear()
    deployed.run()
    small = len(batch.calls)

    # 30,000 jobs in QS2, submitted over the last 30,000 seconds; the oldest waits longest.
    for index in range(30_000):
        batch.add_service_job(queue, "QS2", "RUNNABLE", {G5: 1}, age_seconds=2 * HOUR - index)
    batch.calls.clear()
    points = deployed.run()

    assert len(batch.calls) <= small + 2  # QS2's first job described, one page counted
    [wait] = values(points, OLDEST_RUNNABLE_JOB_AGE, QuotaShare="QS2")
    assert wait == 2 * HOUR
    assert values(points, RUNNABLE_JOBS, QuotaShare="QS2") == [100]  # the cap: at least 100
    assert deployed.starved("QS2", [points]) == "ALARM"
