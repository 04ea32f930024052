"""metric_lent(): the lending attribution of the model, as metric math over the published
CapacityInUse, equal to the model's figure on any usage; and a user's alarm and widget on it."""

from __future__ import annotations

import json
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk.assertions import Template
from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs import (
    CapacityLimit,
    QuotaConfigError,
    QuotaManagedTrainingQueue,
    QuotaShareMonitoring,
    QuotaShareSpec,
    SharingStrategy,
)
from quota_constructs.model import BorrowingRules, LendingParties
from quota_constructs.monitoring.metrics import MAX_ALARM_METRICS, ShareMetrics

from ..constructs.support import G5, G6, spec
from .metric_math import dimensions, evaluate

METRICS = ShareMetrics("QuotaConstructs/Batch", "gpu", cdk.Duration.minutes(1))


@st.composite
def queues(draw: st.DrawFn) -> tuple[list[QuotaShareSpec], dict[str, float], int | None]:
    """Shares of G5 (and one of G6 only, which holds no G5), what each holds, and the
    environment's G5 capacity (None: unknown)."""
    count = draw(st.integers(1, 5))
    shares = [
        QuotaShareSpec(
            name=f"QS{index}",
            capacity_limits=[CapacityLimit(G5, draw(st.integers(1, 4)))],
            strategy=(strategy := draw(st.sampled_from(list(SharingStrategy)))),
            borrow_limit_percent=(draw(st.sampled_from([None, 0, 50, 100, 300]))
                                  if strategy is SharingStrategy.LEND_AND_BORROW else None),
        )
        for index in range(count)
    ]
    shares.append(spec("OnlyG6", SharingStrategy.LEND_AND_BORROW, unit=G6))
    usage = {share.name: draw(st.sampled_from([0, 0.5, 1, 2, 3, 4, 6, 9]))
             for share in shares if share.name != "OnlyG6"}
    owned = sum(share.limit_of(G5) for share in shares)
    capacity = draw(st.one_of(st.none(), st.integers(owned, owned + 6)))
    return shares, usage, capacity


def parties_of(shares: list[QuotaShareSpec], capacity: int | None,
               unowned_capacity_borrowable: bool) -> LendingParties:
    if capacity is None:
        return LendingParties.by_strategy({s.name: s.limit_of(G5) for s in shares},
                                          {s.name: s.strategy for s in shares})
    rules = BorrowingRules.of(environment={G5: capacity, G6: 1}, shares=shares,
                              unowned_capacity_borrowable=unowned_capacity_borrowable)
    return LendingParties.of_rules(rules, G5)


@settings(max_examples=300, deadline=None)
@given(queues(), st.booleans())
def test_the_expression_equals_the_models_attribution_on_any_usage(
    queue: tuple[list[QuotaShareSpec], dict[str, float], int | None], borrowable: bool,
) -> None:
    shares, usage, capacity = queue
    parties = parties_of(shares, capacity, borrowable)
    expected = parties.lent(usage)

    def in_use(metric: cloudwatch.Metric) -> float:
        dims = dimensions(metric)
        assert metric.metric_name == "CapacityInUse" and dims["CapacityUnit"] == G5
        assert dims["JobQueue"] == "gpu" and metric.statistic == "Maximum"
        return usage.get(dims["QuotaShare"], 0.0)

    lenders = parties.listing().lenders
    for share in lenders:
        assert evaluate(METRICS.lent(share, G5, parties), in_use) == expected.get(share, 0.0)
    # Whatever is lent is the type's lenders', and never more than they hold idle.
    assert {name for name, amount in expected.items() if amount} <= set(lenders)
    assert all(amount <= parties.own[name] - usage.get(name, 0.0)
               for name, amount in expected.items() if amount)


def test_unowned_capacity_is_taken_before_a_lenders() -> None:
    shares = [spec("Borrower", SharingStrategy.LEND_AND_BORROW, 1, borrow_limit_percent=300),
              spec("Lender", SharingStrategy.LEND, 2)]
    parties = parties_of(shares, 5, True)
    lent = METRICS.lent("Lender", G5, parties)

    def holding(borrower: float, lender: float) -> float:
        usage = {"Borrower": borrower, "Lender": lender}
        return evaluate(lent, lambda m: usage[dimensions(m)["QuotaShare"]])

    # 2 unowned: a borrower holding 3 (2 above its own) holds nothing of the lender's.
    assert holding(3, 0) == 0
    assert holding(4, 0) == 1
    assert holding(4, 2) == 0       # the lender uses its own: nothing idle to lend


def test_a_share_that_never_lends_the_type_is_refused() -> None:
    shares = [spec("Kept", SharingStrategy.RESERVE),
              spec("Borrower", SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100)]
    with pytest.raises(QuotaConfigError, match=r"Kept.*lenders of ml\.g5\.xlarge: Borrower"):
        METRICS.lent("Kept", G5, parties_of(shares, None, True))


def test_it_reads_one_metric_per_share_listing_the_type() -> None:
    shares = [spec(f"QS{index}", SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100)
              for index in range(12)] + [spec("OnlyG6", unit=G6)]
    parties = parties_of(shares, None, True)
    assert ShareMetrics.lent_metric_count(parties) == 12 > MAX_ALARM_METRICS


# -- a user's own alarm and widget --------------------------------------------------------------

@pytest.fixture(scope="module")
def template() -> Template:
    app = cdk.App()
    stack = cdk.Stack(app, "Lent", env=cdk.Environment(account="123456789012", region="us-east-1"))
    queue = QuotaManagedTrainingQueue(
        stack, "TrainingQueue", queue_name="gpu", capacity_limits=[CapacityLimit(G5, 4)],
        shares=[spec("QS1", SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200),
                spec("QS2", SharingStrategy.LEND, 2)],
    )
    monitoring = QuotaShareMonitoring(stack, "Monitoring", job_queue=queue)
    monitoring.metric_lent("QS2", G5).create_alarm(
        stack, "QS2LendsAll", threshold=2, evaluation_periods=3,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    )
    cloudwatch.Dashboard(stack, "Mine").add_widgets(cloudwatch.GraphWidget(
        title="lent", left=[monitoring.metric_lent("QS2", G5)],
    ))
    return Template.from_stack(stack)


def used_dimensions(queries: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{d["Name"]: d["Value"] for d in query["MetricStat"]["Metric"]["Dimensions"]}
            for query in queries if "MetricStat" in query]


def test_an_alarm_on_lent_reads_the_in_use_of_the_types_shares(template: Template) -> None:
    (alarm,) = [resource["Properties"] for key, resource
                in template.find_resources("AWS::CloudWatch::Alarm").items()
                if key.startswith("QS2LendsAll")]
    queries = alarm["Metrics"]
    assert next(q for q in queries if q.get("ReturnData", True))["Expression"].startswith(
        "IF(restmlg5xlarge > 0")
    # The environment's capacity is known: 1 unowned G5 is taken first.
    assert any(q.get("Expression") == "IF(borrowedmlg5xlarge > 1, borrowedmlg5xlarge - 1, 0)"
               for q in queries)
    assert sorted(d["QuotaShare"] for d in used_dimensions(queries)) == ["QS1", "QS2"]
    assert all(d == {"JobQueue": "gpu", "QuotaShare": d["QuotaShare"], "CapacityUnit": G5}
               for d in used_dimensions(queries))
    assert {q["MetricStat"]["Stat"] for q in queries if "MetricStat" in q} == {"Maximum"}
    assert len(used_dimensions(queries)) <= MAX_ALARM_METRICS


def test_a_widget_on_lent_shows_the_expression_over_the_shares_metrics(
    template: Template,
) -> None:
    (resource,) = [resource for key, resource
                   in template.find_resources("AWS::CloudWatch::Dashboard").items()
                   if key.startswith("Mine")]
    parts = resource["Properties"]["DashboardBody"]["Fn::Join"][1]
    body = json.loads("".join(part if isinstance(part, str) else "us-east-1" for part in parts))
    rows = body["widgets"][0]["properties"]["metrics"]
    expressions = [row[0]["expression"] for row in rows if isinstance(row[0], dict)]
    assert any(text.startswith("IF(restmlg5xlarge > 0") for text in expressions)
    shown = [row for row in rows if row[0] == "QuotaConstructs/Batch"]
    assert {row[row.index("QuotaShare") + 1] for row in shown} == {"QS1", "QS2"}
