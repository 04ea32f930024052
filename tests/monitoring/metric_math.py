"""A small evaluator of the CloudWatch metric-math subset the library emits: numbers, metric and
expression ids, ``+ - * /``, the comparisons ``> < >= <=`` and ``IF(condition, then, else)``,
one data point at a time. Enough to check that a derived figure computes what the model says."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(>=|<=|[-+*/(),<>]))")
_COMPARE: Mapping[str, Callable[[float, float], bool]] = {
    ">": lambda a, b: a > b, "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
}


def evaluate(metric: cloudwatch.IMetric, value_of: Callable[[cloudwatch.Metric], float]) -> float:
    """The value of ``metric`` when each plain metric reads ``value_of(metric)``."""
    if isinstance(metric, cloudwatch.Metric):
        return value_of(metric)
    assert isinstance(metric, cloudwatch.MathExpression), metric
    values = {name: evaluate(used, value_of) for name, used in metric.using_metrics.items()}
    return _Parser(metric.expression, values).parse()


def dimensions(metric: cloudwatch.Metric) -> dict[str, Any]:
    return dict(metric.dimensions or {})


class _Parser:
    def __init__(self, text: str, values: Mapping[str, float]) -> None:
        self.tokens = _tokens(text)
        self.values = values
        self.at = 0

    def parse(self) -> float:
        value = self.comparison()
        assert self.at == len(self.tokens), f"unread: {self.tokens[self.at:]}"
        return value

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.tokens[self.at]
        assert expected is None or token == expected, (token, expected)
        self.at += 1
        return token

    def comparison(self) -> float:
        left = self.sum()
        operator = self.peek()
        if operator in _COMPARE:
            self.take()
            return 1.0 if _COMPARE[operator](left, self.sum()) else 0.0
        return left

    def sum(self) -> float:
        value = self.product()
        while self.peek() in ("+", "-"):
            value = value + self.product() if self.take() == "+" else value - self.product()
        return value

    def product(self) -> float:
        value = self.atom()
        while self.peek() in ("*", "/"):
            if self.take() == "*":
                value = value * self.atom()
            else:
                # CloudWatch yields no number for x/0; the IF around a division drops it.
                divisor = self.atom()
                value = value / divisor if divisor else math.nan
        return value

    def atom(self) -> float:
        token = self.take()
        if token == "(":
            value = self.comparison()
            self.take(")")
            return value
        if token == "IF":
            self.take("(")
            condition = self.comparison()
            self.take(",")
            then = self.comparison()
            self.take(",")
            otherwise = self.comparison()
            self.take(")")
            return then if condition else otherwise
        if token[0].isdigit():
            return float(token)
        assert token in self.values, f"unknown id {token!r}"
        return self.values[token]


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    at = 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        assert match is not None, f"cannot read {text[at:]!r}"
        tokens.append(next(group for group in match.groups() if group is not None))
        at = match.end()
    return tokens
