"""The agreement watched live, end to end: a monitor synthesized with the public API, the
job-events function the template names run as deployed on a timeline of jobs against the fake
Batch, fed every State Change the template's rules pass, and the template's ``WaitTarget`` and
``BudgetFailures`` alarms evaluated on the EMF it printed as CloudWatch would
(:mod:`.cloudwatch_alarms`: p95 of the raw values of the period, Sum for counts, the declared
missing-data treatment)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs import QuotaShareMonitoring, ShareAlarmThresholds
from quota_constructs.model import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.wire.monitoring_contract import (
    AGREEMENT_METRICS_ENV,
    BUDGET_FAILURES,
    JOB_QUEUE_DIMENSION,
    QUOTA_SHARE_DIMENSION,
    WAIT_TIME,
)

from ..constructs.support import logical_id
from ..monitoring_runtime.conftest import G5, Monitor, context, shares_with_a_wait_target
from ..monitoring_runtime.emf_lines import DataPoint, data_points, values
from ..monitoring_runtime.events import state_change_now
from ..monitoring_runtime.fake_service_jobs import FakeServiceJob
from . import sample_events
from .cloudwatch_alarms import alarm_state
from .test_template_handlers import deploy, run_as_deployed

HOUR = 3600.0
TARGET = 4 * HOUR
START_MS = 1_790_000_000_000
"""The timeline's first moment; every time below is counted from it, on the fakes' clock."""


class Timeline:
    """Jobs submitted, started, preempted and finished at given times on the fakes' clock; each
    change makes the State Change AWS Batch would send, held until :meth:`deliver` hands it to
    every function whose rule in the template passes it."""

    def __init__(self, monitor: Monitor, outdir: Path, capsys: pytest.CaptureFixture[str],
                 *, described: bool = True, **props: Any) -> None:
        self.monitor = monitor
        self.batch = monitor.batch
        self.capsys = capsys
        self.described = described
        self.now_ms = START_MS
        self.batch.clock_ms = lambda: self.now_ms
        props.setdefault("shares", shares_with_a_wait_target())
        monitor.declare(props["shares"])
        monitor.create_shares(props["shares"])
        self.monitoring: QuotaShareMonitoring = deploy(monitor, outdir, **props)
        self.stack = cdk.Stack.of(self.monitoring)
        self.resources: dict[str, Any] = Template.from_stack(self.stack).to_json()["Resources"]
        function = self.monitoring.job_events_function
        assert function is not None
        self.function_arn = self.stack.resolve(function.function_arn)
        self.handler = run_as_deployed(monitor, self.monitoring, function, outdir)
        self.rules = [r["Properties"] for r in self.resources.values()
                      if r["Type"] == "AWS::Events::Rule" and "EventPattern" in r["Properties"]]
        self.pending: list[dict[str, Any]] = []
        self.outcomes: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    # -- the timeline ---------------------------------------------------------------------------

    def at(self, seconds: float) -> Timeline:
        self.now_ms = START_MS + int(seconds * 1000)
        return self

    def submit(self, share: str, *, queue: str | None = None,
               retries: int | None = None) -> FakeServiceJob:
        return self.batch.add_service_job(queue or self.monitor.training, share, "RUNNABLE",
                                          {G5: 1}, age_seconds=0,
                                          retries_before_termination=retries)

    def start(self, job: FakeServiceJob) -> dict[str, Any]:
        self.batch.start(job.job_id)
        return self._changed(job)

    def preempt(self, job: FakeServiceJob) -> dict[str, Any]:
        self.batch.preempt(job.job_id)
        return self._changed(job)

    def succeed(self, job: FakeServiceJob) -> dict[str, Any]:
        job.status = "SUCCEEDED"
        return self._changed(job)

    def run_job(self, share: str, *, submitted: float, waited: float,
                **kwargs: Any) -> FakeServiceJob:
        """A job submitted at ``submitted`` that starts ``waited`` seconds later."""
        job = self.at(submitted).submit(share, **kwargs)
        self.at(submitted + waited).start(job)
        return job

    def _changed(self, job: FakeServiceJob) -> dict[str, Any]:
        event = state_change_now(job, self.now_ms, event_id=f"event-{next(self._ids)}",
                                 described=self.described)
        self.pending.append(event)
        return event

    # -- EventBridge and CloudWatch -------------------------------------------------------------

    def deliver(self) -> list[DataPoint]:
        """Every pending event to the function of each rule that passes it; what it printed."""
        self.capsys.readouterr()
        events, self.pending = self.pending, []
        for event in events:
            self.send(event)
        return data_points(self.capsys.readouterr().out)

    def send(self, event: dict[str, Any]) -> None:
        for rule in self.rules:
            if sample_events.matches(rule["EventPattern"], event):
                [target] = rule["Targets"]
                assert target["Arn"] == self.function_arn
                self.outcomes.append(self.handler(event, context()))

    def alarm(self, share: str, name: str) -> dict[str, Any]:
        [alarm] = [a for a in self.monitoring.alarms_of(share) if a.node.id == name]
        props: dict[str, Any] = self.resources[logical_id(alarm)]["Properties"]
        return props

    def state(self, share: str, name: str, window: list[DataPoint],
              previous: str = "INSUFFICIENT_DATA") -> str:
        """The alarm's state after one period (the window) holding ``window``."""
        return alarm_state(self.alarm(share, name), [window], previous)


@pytest.fixture
def timeline(monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Timeline:
    return Timeline(monitor, tmp_path, capsys)


def waits(points: list[DataPoint], share: str) -> list[float]:
    return sorted(values(points, WAIT_TIME, QuotaShare=share))


# -- WaitTarget ----------------------------------------------------------------------------------


def test_a_day_of_waits_under_the_target_keeps_the_promise(timeline: Timeline) -> None:
    # 20 jobs a day, each waiting 10 minutes more than the one before: 10 min to 3 h 20.
    for index in range(20):
        timeline.run_job("QS1", submitted=index * HOUR, waited=(index + 1) * 600)

    window = timeline.deliver()

    assert waits(window, "QS1") == [(index + 1) * 600.0 for index in range(20)]
    [point] = {(p.unit, p.dimensions, p.sets) for p in window if p.name == WAIT_TIME}
    assert point == ("Seconds", ((JOB_QUEUE_DIMENSION, "training"), (QUOTA_SHARE_DIMENSION, "QS1")),
                     ((JOB_QUEUE_DIMENSION, QUOTA_SHARE_DIMENSION),))
    assert timeline.state("QS1", "WaitTarget", window) == "OK"


@pytest.mark.parametrize(("long_waits", "state"), [(1, "OK"), (2, "ALARM"), (5, "ALARM")])
def test_a_few_long_waits_push_the_p95_over_the_target(
    timeline: Timeline, long_waits: int, state: str
) -> None:
    # Of 20 waits the p95 is the 19th shortest: one 6-hour wait is the 5 % the promise allows,
    # two are not.
    for index in range(20):
        waited = 6 * HOUR if index < long_waits else HOUR
        timeline.run_job("QS1", submitted=index * 600, waited=waited)

    window = timeline.deliver()

    assert len(waits(window, "QS1")) == 20
    assert timeline.state("QS1", "WaitTarget", window) == state


@pytest.mark.parametrize(("waited", "state"), [
    (TARGET, "OK"),  # equal to the target: the promise is kept ("exceeds" is strictly greater)
    (TARGET + 1, "ALARM"),
])
def test_the_boundary_is_strictly_greater(timeline: Timeline, waited: float, state: str) -> None:
    for index in range(20):
        timeline.run_job("QS1", submitted=index * 60, waited=waited)

    window = timeline.deliver()

    assert waits(window, "QS1") == [waited] * 20
    assert timeline.alarm("QS1", "WaitTarget")["ComparisonOperator"] == "GreaterThanThreshold"
    assert timeline.state("QS1", "WaitTarget", window) == state


def test_a_small_team_is_judged_on_its_few_jobs(timeline: Timeline) -> None:
    # Three jobs in the day, far fewer than the 200 CloudWatch wants for a significant p95:
    # evaluated all the same, so the broken promise pages (with "ignore" it never would).
    for index in range(3):
        timeline.run_job("QS1", submitted=index * HOUR, waited=8 * HOUR)

    window = timeline.deliver()

    assert timeline.alarm("QS1", "WaitTarget")["EvaluateLowSampleCountPercentile"] == "evaluate"
    assert timeline.state("QS1", "WaitTarget", window, previous="OK") == "ALARM"


def test_a_day_without_a_started_job_breaks_no_promise(timeline: Timeline) -> None:
    # A job still waiting is Starved's to report; no wait is published until it starts.
    timeline.at(0).submit("QS1")
    window = timeline.deliver()

    assert values(window, WAIT_TIME) == []
    assert timeline.alarm("QS1", "WaitTarget")["TreatMissingData"] == "notBreaching"
    for previous in ("ALARM", "OK", "INSUFFICIENT_DATA"):
        assert timeline.state("QS1", "WaitTarget", window, previous) == "OK"


def test_the_window_is_one_period_of_a_day_read_as_p95(timeline: Timeline) -> None:
    alarm = timeline.alarm("QS1", "WaitTarget")
    assert (alarm["Namespace"], alarm["MetricName"], alarm["ExtendedStatistic"]) == (
        "QuotaConstructs/Batch", WAIT_TIME, "p95")
    assert (alarm["Period"], alarm["EvaluationPeriods"], alarm["Threshold"]) == (86400, 1, TARGET)
    assert alarm["Dimensions"] == [{"Name": JOB_QUEUE_DIMENSION, "Value": "training"},
                                   {"Name": QUOTA_SHARE_DIMENSION, "Value": "QS1"}]
    assert "target_wait_p95" in alarm["AlarmDescription"]
    owner = timeline.stack.resolve(timeline.monitoring.owner_topics["vision-team"].topic_arn)
    assert alarm["AlarmActions"] == [owner] and alarm["OKActions"] == [owner]


def test_a_share_without_a_target_has_no_wait_alarm_and_no_points(timeline: Timeline) -> None:
    for share in ("QS2", "QS3"):
        timeline.run_job(share, submitted=0, waited=9 * HOUR)
    timeline.run_job("QS1", submitted=0, waited=HOUR)

    window = timeline.deliver()

    assert waits(window, "QS1") == [HOUR]
    assert values(window, WAIT_TIME, QuotaShare="QS2") == []
    assert values(window, WAIT_TIME, QuotaShare="QS3") == []
    for share in ("QS2", "QS3"):
        assert "WaitTarget" not in {a.node.id for a in timeline.monitoring.alarms_of(share)}
    wait_alarms = [r for r in timeline.resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"
                   and r["Properties"].get("MetricName") == WAIT_TIME]
    assert len(wait_alarms) == 1


# -- one wait per started job ---------------------------------------------------------------------


@pytest.mark.parametrize("described", [True, False], ids=["described-detail", "documented-detail"])
@pytest.mark.parametrize("moves", [False, True], ids=["startedAt-first", "startedAt-latest"])
def test_a_job_preempted_and_restarted_counts_its_first_wait_once(
    monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    described: bool, moves: bool,
) -> None:
    timeline = Timeline(monitor, tmp_path, capsys, described=described)
    timeline.batch.started_at_moves_on_restart = moves
    job = timeline.run_job("QS1", submitted=0, waited=HOUR, retries=2)
    timeline.at(2 * HOUR).preempt(job)
    timeline.at(5 * HOUR).start(job)  # its second start: 3 hours back in the queue
    timeline.at(6 * HOUR).succeed(job)

    # Delivered only now, after the job finished: each event is judged for the start it
    # reports, whatever the job has done since.
    window = timeline.deliver()

    assert waits(window, "QS1") == [HOUR]
    assert [o["outcome"] for o in timeline.outcomes] == [
        "published", "ignored: not the job's first start"]


def test_a_job_that_finished_before_its_start_was_handled_counts(timeline: Timeline) -> None:
    job = timeline.run_job("QS1", submitted=0, waited=2 * HOUR)
    timeline.at(2 * HOUR + 60).succeed(job)

    assert waits(timeline.deliver(), "QS1") == [2 * HOUR]


def test_a_repeated_delivery_counts_once(timeline: Timeline) -> None:
    job = timeline.at(0).submit("QS1")
    started = timeline.at(HOUR).start(job)
    timeline.pending.append(dict(started, id="another-delivery-of-the-same-event"))

    assert waits(timeline.deliver(), "QS1") == [HOUR]
    assert [o["outcome"] for o in timeline.outcomes] == ["published", "duplicate"]


def test_jobs_of_another_queue_publish_no_wait(timeline: Timeline) -> None:
    theirs = timeline.run_job("QS1", submitted=0, waited=9 * HOUR,
                              queue=timeline.monitor.research)
    [event] = timeline.pending

    window = timeline.deliver()

    assert timeline.outcomes == []  # the rule does not pass it
    assert values(window, WAIT_TIME) == []
    # Handed to the function all the same, it is still ignored.
    outcome = timeline.handler(event, context())
    assert outcome["outcome"] == "ignored: another job queue"
    assert theirs.status == "RUNNING"


def test_one_start_costs_one_lookup_whatever_the_backlog(timeline: Timeline) -> None:
    batch = timeline.batch
    for _ in range(30_000):
        timeline.at(0).submit("QS1")
    job = timeline.at(0).submit("QS1")
    timeline.at(HOUR).start(job)
    batch.calls.clear()

    assert waits(timeline.deliver(), "QS1") == [HOUR]
    assert [operation for operation, _ in batch.calls] == ["DescribeServiceJob"]


# -- BudgetFailures --------------------------------------------------------------------------------


def test_a_budget_failure_alarms_its_share_only(timeline: Timeline) -> None:
    # QS2 allows no preemption; its job was submitted with no retries.
    lost = timeline.run_job("QS2", submitted=0, waited=60, retries=0)
    timeline.at(HOUR).preempt(lost)
    assert lost.status == "FAILED"

    window = timeline.deliver()

    assert values(window, BUDGET_FAILURES, QuotaShare="QS2") == [1]
    assert timeline.state("QS2", "BudgetFailures", window) == "ALARM"
    assert timeline.state("QS1", "BudgetFailures", window, previous="OK") == "OK"
    [message] = timeline.monitor.sns.published
    assert message.topic_arn == timeline.monitor.topics["nlp-team"]
    alarm = timeline.alarm("QS2", "BudgetFailures")
    assert (alarm["Statistic"], alarm["ComparisonOperator"], alarm["Threshold"],
            alarm["Period"], alarm["TreatMissingData"]) == (
        "Sum", "GreaterThanOrEqualToThreshold", 1, 86400, "notBreaching")
    assert "interruption_budget = 0" in alarm["AlarmDescription"]


def test_a_preemption_within_the_budget_alarms_nothing(timeline: Timeline) -> None:
    job = timeline.run_job("QS1", submitted=0, waited=HOUR, retries=2)
    timeline.at(2 * HOUR).preempt(job)
    timeline.at(2 * HOUR + 600).start(job)
    timeline.at(3 * HOUR).succeed(job)

    window = timeline.deliver()

    assert values(window, BUDGET_FAILURES) == []
    for name in ("WaitTarget", "BudgetFailures"):
        assert timeline.state("QS1", name, window) == "OK"


def test_a_job_failed_for_another_reason_is_no_budget_failure(timeline: Timeline) -> None:
    job = timeline.run_job("QS2", submitted=0, waited=60, retries=0)
    job.status, job.status_reason = "FAILED", "Received status from SageMaker: AlgorithmError"
    timeline.at(HOUR)._changed(job)

    window = timeline.deliver()

    assert values(window, BUDGET_FAILURES) == []
    assert timeline.state("QS2", "BudgetFailures", window) == "OK"


# -- the switch, and what a queue without targets deploys ---------------------------------------


def test_agreement_metrics_off_deploys_and_publishes_neither(
    monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    timeline = Timeline(monitor, tmp_path, capsys, agreement_metrics_enabled=False)
    lost = timeline.run_job("QS2", submitted=0, waited=60, retries=0)
    timeline.at(HOUR).preempt(lost)
    started = timeline.run_job("QS1", submitted=0, waited=HOUR)

    window = timeline.deliver()

    assert values(window, BUDGET_FAILURES) == [] and values(window, WAIT_TIME) == []
    names = {a.node.id for share in ("QS1", "QS2") for a in timeline.monitoring.alarms_of(share)}
    assert names.isdisjoint({"WaitTarget", "BudgetFailures"})
    assert timeline.monitoring.job_events is not None
    assert timeline.monitoring.job_events.job_started_rule is None
    # Handed a start all the same, the function publishes nothing.
    assert timeline.handler(state_change_now(started, timeline.now_ms, event_id="direct"),
                            context())["outcome"] == "ignored: the agreement's metrics are off"
    assert values(timeline.deliver(), WAIT_TIME) == []


def test_a_queue_whose_shares_declare_no_target_or_budget_deploys_nothing_more(
    monitor: Monitor, tmp_path: Path
) -> None:
    plain = [QuotaShareSpec(name="QS1", capacity_limits=[CapacityLimit(G5, 1)],
                            strategy=SharingStrategy.LEND,
                            agreement=ShareAgreement(owner="vision-team", purpose="p")),
             QuotaShareSpec(name="QS2", capacity_limits=[CapacityLimit(G5, 1)],
                            strategy=SharingStrategy.RESERVE)]
    monitoring = deploy(monitor, tmp_path, shares=plain)
    rendered = json.dumps(Template.from_stack(cdk.Stack.of(monitoring)).to_json())

    for absent in (WAIT_TIME, BUDGET_FAILURES, "WaitTarget", "JobStartedRule", "RUNNING",
                   AGREEMENT_METRICS_ENV, "EvaluateLowSampleCountPercentile"):
        assert absent not in rendered


# -- metric methods and the dashboard ---------------------------------------------------------


def test_metric_methods_carry_the_statistic_the_dimensions_and_the_window(
    monitor: Monitor, tmp_path: Path
) -> None:
    monitoring = deploy(monitor, tmp_path, shares=shares_with_a_wait_target(),
                        share_thresholds={"QS2": ShareAlarmThresholds(
                            agreement_window=cdk.Duration.hours(6))})
    stack = cdk.Stack.of(monitoring)
    dims = {JOB_QUEUE_DIMENSION: "training"}
    for metric, share, name, statistic, seconds in (
        (monitoring.metric_wait_time("QS1"), "QS1", WAIT_TIME, "p95", 86400),
        (monitoring.metric_budget_failures("QS1"), "QS1", BUDGET_FAILURES, "Sum", 86400),
        (monitoring.metric_budget_failures("QS2"), "QS2", BUDGET_FAILURES, "Sum", 21600),
        (monitoring.metric_wait_time("QS1", period=cdk.Duration.hours(1)), "QS1", WAIT_TIME,
         "p95", 3600),
    ):
        stat = metric.to_metric_config().metric_stat
        assert stat is not None
        assert (stat.metric_name, stat.namespace, stat.statistic) == (
            name, "QuotaConstructs/Batch", statistic)
        assert {d.name: d.value for d in stat.dimensions or []} == {
            **dims, QUOTA_SHARE_DIMENSION: share}
        assert stack.resolve(stat.period.to_seconds()) == seconds
    # The alarm reads the method's metric over the share's own window.
    alarm = Template.from_stack(stack).to_json()["Resources"][logical_id(
        next(a for a in monitoring.alarms_of("QS2") if a.node.id == "BudgetFailures"))]
    assert alarm["Properties"]["Period"] == 21600


def test_the_wait_graph_shows_the_target_as_a_horizontal_line(
    monitor: Monitor, tmp_path: Path
) -> None:
    monitoring = deploy(monitor, tmp_path, shares=shares_with_a_wait_target())
    assert monitoring.dashboard is not None
    resources = Template.from_stack(cdk.Stack.of(monitoring)).to_json()["Resources"]
    parts = resources[logical_id(monitoring.dashboard.resource)]["Properties"][
        "DashboardBody"]["Fn::Join"][1]
    # The region is a token in the body; everything else is literal.
    body = json.loads("".join(part if isinstance(part, str) else "us-east-1" for part in parts))
    graphs = [w["properties"] for w in body["widgets"] if w["type"] == "metric"]
    with_wait = [g for g in graphs if any(WAIT_TIME in m for m in g["metrics"])]
    [graph] = with_wait  # only QS1 declares a target
    assert "QS1" in graph["title"]
    assert graph["annotations"]["horizontal"] == [
        {"value": TARGET, "label": "target_wait_p95 4 h", "color": "#d62728", "yAxis": "right"}]
    [wait] = [m for m in graph["metrics"] if WAIT_TIME in m]
    assert wait[-1]["stat"] == "p95"
