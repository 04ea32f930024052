"""metric_*() on QuotaShareMonitoring: a user's own alarm and dashboard widget on a share's
metrics, with the share's dimensions and the metric's one statistic."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk.assertions import Template

from quota_constructs import (
    CapacityLimit,
    QuotaConfigError,
    QuotaManagedTrainingQueue,
    QuotaShareMonitoring,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.monitoring.metrics import STATISTICS

from ..constructs.support import G5, G6, spec

ENV = cdk.Environment(account="123456789012", region="us-east-1")
SHARES = (
    spec("QS1", SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200,
         agreement=ShareAgreement(owner="research")),
    spec("QS2", SharingStrategy.LEND, agreement=ShareAgreement(owner="product")),
)


@pytest.fixture(scope="module")
def built() -> tuple[Template, QuotaShareMonitoring]:
    app = cdk.App()
    stack = cdk.Stack(app, "Metrics", env=ENV)
    queue = QuotaManagedTrainingQueue(
        stack, "TrainingQueue", queue_name="gpu", capacity_limits=[CapacityLimit(G5, 3)],
        shares=SHARES,
    )
    monitoring = QuotaShareMonitoring(stack, "Monitoring", job_queue=queue)
    # The user's own alarm and widget, on the library's metrics.
    monitoring.metric_borrowed("QS1", G5).create_alarm(
        stack, "QS1BorrowsTwo", threshold=2, evaluation_periods=3,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    )
    monitoring.metric_preemptions("QS1", kind="CROSS_SHARE").create_alarm(
        stack, "QS1Reclaimed", threshold=5, evaluation_periods=1,
    )
    cloudwatch.Dashboard(stack, "Mine").add_widgets(cloudwatch.GraphWidget(
        title="mine",
        left=[monitoring.metric_capacity_in_use("QS2", G5),
              monitoring.metric_oldest_runnable_wait("QS2")],
    ))
    return Template.from_stack(stack), monitoring


def alarm(template: Template, logical_prefix: str) -> dict[str, Any]:
    found = {
        key: value for key, value in template.find_resources("AWS::CloudWatch::Alarm").items()
        if key.startswith(logical_prefix)
    }
    assert len(found) == 1, sorted(found)
    return next(iter(found.values()))["Properties"]


def test_an_alarm_on_derived_borrowing_reads_the_shares_in_use_metric(
    built: tuple[Template, QuotaShareMonitoring],
) -> None:
    properties = alarm(built[0], "QS1BorrowsTwo")
    expression, in_use = properties["Metrics"]
    assert expression["Expression"] == "IF(usedmlg5xlarge > 1, usedmlg5xlarge - 1, 0)"
    stat = in_use["MetricStat"]
    assert stat["Stat"] == STATISTICS["CapacityInUse"] == "Maximum"
    assert stat["Metric"]["MetricName"] == "CapacityInUse"
    assert {d["Name"]: d["Value"] for d in stat["Metric"]["Dimensions"]} == {
        "JobQueue": "gpu", "QuotaShare": "QS1", "CapacityUnit": G5,
    }


def test_an_alarm_on_preemptions_of_one_kind_sums_them(
    built: tuple[Template, QuotaShareMonitoring],
) -> None:
    properties = alarm(built[0], "QS1Reclaimed")
    # A labelled metric is rendered as a one-metric query.
    (query,) = properties["Metrics"]
    stat = query["MetricStat"]
    assert stat["Stat"] == "Sum"
    assert stat["Metric"]["MetricName"] == "Preemptions"
    assert {d["Name"]: d["Value"] for d in stat["Metric"]["Dimensions"]} == {
        "JobQueue": "gpu", "QuotaShare": "QS1", "PreemptionKind": "CROSS_SHARE",
    }


def test_a_widget_shows_the_metrics_with_their_dimensions(
    built: tuple[Template, QuotaShareMonitoring],
) -> None:
    template = built[0]
    (resource,) = [
        resource for key, resource in template.find_resources("AWS::CloudWatch::Dashboard").items()
        if key.startswith("Mine")
    ]
    parts = resource["Properties"]["DashboardBody"]["Fn::Join"][1]
    # The region is a token in the body; everything else is literal.
    body = json.loads("".join(part if isinstance(part, str) else "us-east-1" for part in parts))
    metrics = body["widgets"][0]["properties"]["metrics"]

    def described(row: list[Any]) -> tuple[str, str, dict[str, str], str]:
        namespace, name, *rest = row
        options = rest.pop() if rest and isinstance(rest[-1], dict) else {}
        return namespace, name, dict(zip(rest[::2], rest[1::2], strict=True)), options["stat"]

    assert [described(row) for row in metrics] == [
        ("QuotaConstructs/Batch", "CapacityInUse",
         {"JobQueue": "gpu", "QuotaShare": "QS2", "CapacityUnit": G5}, "Maximum"),
        ("QuotaConstructs/Batch", "OldestRunnableJobAgeSeconds",
         {"JobQueue": "gpu", "QuotaShare": "QS2"}, "Maximum"),
    ]


@pytest.mark.parametrize(("call", "field"), [
    (lambda m: m.metric_runnable_jobs("QS9"), "share"),
    (lambda m: m.metric_borrowed("QS1", G6), "instance_type"),
    (lambda m: m.metric_preemptions("QS1", kind="LATER"), "kind"),
])
def test_a_metric_that_would_never_have_data_is_refused(
    built: tuple[Template, QuotaShareMonitoring], call: Any, field: str
) -> None:
    with pytest.raises(QuotaConfigError, match=field):
        call(built[1])


def test_every_published_metric_has_one_statistic() -> None:
    from quota_constructs.wire import monitoring_contract as contract

    published = {*contract.UNIT_METRICS, *contract.SHARE_METRICS, contract.MONITOR_HEALTHY,
                 *contract.EVENT_METRICS}
    assert published <= set(STATISTICS)
