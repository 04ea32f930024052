"""Evaluate a synthesized ``AWS::CloudWatch::Alarm`` the way CloudWatch does, on data points the
handlers printed as EMF.

Written from CloudWatch's documentation, not from the constructs: per period, each metric's
statistic over the data points whose namespace, name and *exact* dimension set match; metric
math (``IF``, ``AND``, ``OR``, comparisons, arithmetic) on those values, a period whose inputs
are missing having no value; then the alarm is in ALARM when each of the last
``EvaluationPeriods`` periods breaches, a period without a value counting as the alarm's
``TreatMissingData`` says (``breaching``, ``notBreaching``; ``missing``: all missing gives
INSUFFICIENT_DATA; ``ignore``: "the current alarm state is maintained", so all missing keeps the
state the alarm was in, INSUFFICIENT_DATA for a new one).

Percentiles (``ExtendedStatistic`` ``pNN``) are the nearest-rank percentile of the raw values
in the period (the smallest value with at least NN % of the values at or below it); CloudWatch
does not document its interpolation, so the tests keep a margin wherever two definitions would
differ. With ``EvaluateLowSampleCountPercentile`` ``ignore``, a period holding fewer than
10 / (1 - p) values (for p >= 0.5; CloudWatch user guide, "Percentile-based alarms and low data
samples") leaves the alarm's state unchanged; with ``evaluate`` or unset it is evaluated.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tests.monitoring_runtime.emf_lines import DataPoint

STATISTICS: dict[str, Callable[[list[float]], float]] = {
    "Minimum": min,
    "Maximum": max,
    "Sum": sum,
    "Average": lambda xs: sum(xs) / len(xs),
    "SampleCount": lambda xs: float(len(xs)),
}
COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "GreaterThanOrEqualToThreshold": operator.ge,
    "GreaterThanThreshold": operator.gt,
    "LessThanThreshold": operator.lt,
    "LessThanOrEqualToThreshold": operator.le,
}
_TOKEN = re.compile(r"\s*(>=|<=|==|!=|[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|[()+\-*/,<>])")


def _matches(point: DataPoint, metric: Mapping[str, Any]) -> bool:
    wanted = {d["Name"]: d["Value"] for d in metric.get("Dimensions", [])}
    published = dict(point.dimensions)
    return (
        point.namespace == metric["Namespace"]
        and point.name == metric["MetricName"]
        # A metric is identified by its exact dimension set.
        and tuple(sorted(wanted)) in {tuple(sorted(s)) for s in point.sets}
        and all(published.get(k) == v for k, v in wanted.items())
    )


_PERCENTILE = re.compile(r"p(\d+(?:\.\d+)?)")


def _percentile(stat: str) -> float | None:
    """``p95`` -> 0.95; None for a statistic that is not a percentile."""
    matched = _PERCENTILE.fullmatch(stat)
    return float(matched.group(1)) / 100 if matched else None


def _nearest_rank(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


def _samples(points: Sequence[DataPoint], metric: Mapping[str, Any]) -> list[float]:
    return [p.value for p in points if _matches(p, metric)]


def _statistic(points: Sequence[DataPoint], metric: Mapping[str, Any],
               stat: str) -> float | None:
    found = _samples(points, metric)
    if not found:
        return None
    fraction = _percentile(stat)
    if fraction is not None:
        return _nearest_rank(found, fraction)
    return STATISTICS[stat](found)


def _single_metric(alarm: Mapping[str, Any]) -> dict[str, Any]:
    metric = {key: alarm[key] for key in ("Namespace", "MetricName")}
    metric["Dimensions"] = alarm.get("Dimensions", [])
    return metric


def _too_few_for_percentile(alarm: Mapping[str, Any], points: Sequence[DataPoint]) -> bool:
    """Whether the period holds too few values for the alarm's percentile and the alarm says to
    ignore such periods."""
    fraction = _percentile(str(alarm.get("ExtendedStatistic", "")))
    if fraction is None or alarm.get("EvaluateLowSampleCountPercentile") != "ignore":
        return False
    needed = 10 / (1 - fraction) if fraction >= 0.5 else 10 / fraction
    return len(_samples(points, _single_metric(alarm))) < needed


def _evaluate(expression: str, values: Mapping[str, float | None]) -> float | None:
    tokens = _TOKEN.findall(expression)
    if "".join(tokens) != expression.replace(" ", ""):
        raise AssertionError(f"cannot parse metric math {expression!r}")
    python: list[str] = []
    for token in tokens:
        if token == "AND":
            python.append(" and ")
        elif token == "OR":
            python.append(" or ")
        elif token == "IF":
            python.append("_if")
        elif re.fullmatch(r"[A-Za-z_]\w*", token):
            if token not in values:
                raise AssertionError(f"metric math uses {token!r}, which is not defined")
            if values[token] is None:
                return None
            python.append(f"_v[{token!r}]")
        else:
            python.append(token)
    result = eval("".join(python), {"__builtins__": {}},
                  {"_if": lambda c, a, b: a if c else b, "_v": values})
    return float(result)


def period_value(alarm: Mapping[str, Any], points: Sequence[DataPoint]) -> float | None:
    """The alarm's value over one period holding ``points``."""
    if "Metrics" not in alarm:
        statistic = alarm.get("Statistic") or alarm["ExtendedStatistic"]
        return _statistic(points, _single_metric(alarm), statistic)
    values: dict[str, float | None] = {}
    expressions = []
    for query in alarm["Metrics"]:
        if "MetricStat" in query:
            stat = query["MetricStat"]
            values[query["Id"]] = _statistic(points, stat["Metric"], stat["Stat"])
        else:
            expressions.append(query)
    [returned] = [q for q in expressions if q.get("ReturnData", True)]
    return _evaluate(returned["Expression"], values)


def alarm_state(alarm: Mapping[str, Any], periods: Sequence[Sequence[DataPoint]],
                previous: str = "INSUFFICIENT_DATA") -> str:
    """ALARM, OK or INSUFFICIENT_DATA after the last of ``periods`` (oldest first), for an
    alarm that was in ``previous`` before them."""
    needed = int(alarm["EvaluationPeriods"])
    window = list(periods)[-needed:]
    if len(window) < needed:
        raise AssertionError(f"the alarm needs {needed} periods, got {len(window)}")
    compare = COMPARISONS[alarm["ComparisonOperator"]]
    treat = alarm.get("TreatMissingData", "missing")
    if any(_too_few_for_percentile(alarm, points) for points in window):
        return previous
    breaches: list[bool | None] = []
    for points in window:
        value = period_value(alarm, points)
        breaches.append(None if value is None else compare(value, float(alarm["Threshold"])))
    if all(b is None for b in breaches) and treat == "ignore":
        return previous
    if all(b is None for b in breaches) and treat == "missing":
        return "INSUFFICIENT_DATA"
    if treat in ("missing", "ignore"):
        # Only the periods with data are evaluated.
        resolved = [b for b in breaches if b is not None]
        return "ALARM" if all(resolved) else "OK"
    resolved = [(treat == "breaching") if b is None else b for b in breaches]
    return "ALARM" if all(resolved) else "OK"
