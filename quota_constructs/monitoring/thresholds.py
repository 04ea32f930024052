"""When the monitoring's alarms go off, all in this one place: the thresholds a platform team
can keep, each one overridable (:class:`ShareAlarmThresholds`), and the fixed settings of every
alarm the library creates (periods, evaluation periods, missing-data treatment)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from ..model import QuotaConfigError
from ..model.capacity import check_count


@dataclass(frozen=True, kw_only=True)
class ShareAlarmThresholds:
    """Thresholds of one share's alarms (see :class:`QuotaShareMonitoring`).

    :param starved_after: the share is *starved* when its oldest RUNNABLE job has waited longer
        than this while part of the share's own limit stayed idle for a whole alarm period.
        Default 30 minutes: longer than a typical scheduling delay and cross-share preemption
        (which reclaims lent capacity within minutes), short enough to matter for a training
        job. Whole minutes, at least 1.
    :param max_preemptions_per_hour: alarm when the share's jobs are preempted more often than
        this in one hour, whatever their budget says. Default 10. ``None`` turns the alarm off
        (for shares that borrow heavily and expect it).
    :param drift_for: alarm when the live share has differed from the declaration (or been
        INVALID or missing) for this long; a deployment changing the share legitimately differs
        for a few minutes. Default 15 minutes. Whole minutes, at least 1.
    :param agreement_window: the window the share's agreement is judged over: the
        ``WaitTarget`` alarm reads the p95 of the waits of the jobs that started in it, the
        ``BudgetFailures`` alarm the jobs lost to their preemption budget in it (one period of
        this length, sliding). Default one day: a team of 20 jobs a day is judged on its day's
        jobs, and one slow night does not page for a week. Whole minutes, 1 minute to 7 days
        (CloudWatch's longest alarm evaluation).
    """

    starved_after: Duration = field(default_factory=lambda: Duration.minutes(30))
    max_preemptions_per_hour: int | None = 10
    drift_for: Duration = field(default_factory=lambda: Duration.minutes(15))
    agreement_window: Duration = field(default_factory=lambda: Duration.days(1))

    def validate(self, *, subject: str, field: str = "thresholds") -> ShareAlarmThresholds:
        for name in ("starved_after", "drift_for"):
            value = getattr(self, name)
            if not isinstance(value, Duration) or not _whole_minutes(value):
                raise QuotaConfigError(
                    subject, f"{field}.{name}", _show(value),
                    "a Duration of whole minutes, at least 1 minute",
                )
        window = self.agreement_window
        if not isinstance(window, Duration) or not _whole_minutes(window) or (
            window.to_seconds(integral=False) > MAX_AGREEMENT_WINDOW.to_seconds()
        ):
            raise QuotaConfigError(
                subject, f"{field}.agreement_window", _show(window),
                "a Duration of whole minutes, 1 minute to 7 days",
            )
        if self.max_preemptions_per_hour is not None:
            check_count(
                self.max_preemptions_per_hour, subject=subject,
                field=f"{field}.max_preemptions_per_hour", minimum=0,
            )
        return self


def _whole_minutes(value: Duration) -> bool:
    seconds = value.to_seconds(integral=False)
    return seconds >= 60 and seconds % 60 == 0


def _show(value: object) -> object:
    return value.to_human_string() if isinstance(value, Duration) else value


MAX_AGREEMENT_WINDOW: Final = Duration.days(7)
"""CloudWatch's limit on one alarm's evaluation range (``PutMetricAlarm``: Period multiplied by
EvaluationPeriods at most 604,800 seconds)."""

# Alarm and graph period: five one-minute measurements smooth out a single slow API call.
MIN_PERIOD: Final = Duration.minutes(5)
PREEMPTION_PERIOD: Final = Duration.hours(1)
"""The period of the ``Preemptions`` alarm (``max_preemptions_per_hour``)."""

_Compare = cloudwatch.ComparisonOperator
_Missing = cloudwatch.TreatMissingData


@dataclass(frozen=True)
class AlarmSetting:
    """How one kind of alarm judges its figure (threshold, comparison, evaluation periods,
    missing data); ``None`` where the caller supplies it (a user threshold)."""

    comparison: cloudwatch.ComparisonOperator
    treat_missing_data: cloudwatch.TreatMissingData
    threshold: float | None = 1
    evaluation_periods: int | None = 1
    low_sample_percentiles: str | None = None
    """For a percentile: ``evaluate`` or ``ignore`` a period with fewer than 10 / (1 - p) data
    points (CloudWatch's ``EvaluateLowSampleCountPercentile``); None: not set."""

    def create(
        self,
        figure: cloudwatch.Metric | cloudwatch.MathExpression,
        scope: Construct,
        id: str,
        *,
        description: str,
        threshold: float | None = None,
        evaluation_periods: int | None = None,
    ) -> cloudwatch.Alarm:
        chosen_threshold = self.threshold if threshold is None else threshold
        periods = self.evaluation_periods if evaluation_periods is None else evaluation_periods
        assert chosen_threshold is not None and periods is not None, "a setting left open"
        return figure.create_alarm(
            scope,
            id,
            alarm_description=description,
            threshold=chosen_threshold,
            comparison_operator=self.comparison,
            evaluation_periods=periods,
            treat_missing_data=self.treat_missing_data,
            evaluate_low_sample_count_percentile=self.low_sample_percentiles,
        )


STARVED: Final = AlarmSetting(
    _Compare.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    # No data: nothing measured, or a snapshot too old to judge (the health alarm pages for
    # that). Neither starvation nor its end: the alarm keeps its state, so a starving share is
    # not told "OK" because a reading was withheld.
    _Missing.IGNORE,
)
DRIFT: Final = AlarmSetting(
    _Compare.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    # A silent metrics function leaves the alarm INSUFFICIENT_DATA (visible on the dashboard)
    # rather than paging every owner for a monitoring fault.
    _Missing.MISSING,
    evaluation_periods=None,  # drift_evaluation_periods
)
COUNT_EXCEEDED: Final = AlarmSetting(
    _Compare.GREATER_THAN_THRESHOLD,
    # The count is published only when the event happens.
    _Missing.NOT_BREACHING,
    threshold=None,
)
WAIT_TARGET: Final = AlarmSetting(
    # "Exceeds" the target: a p95 equal to it keeps the promise.
    _Compare.GREATER_THAN_THRESHOLD,
    # No job started in the window: no wait was promised and none was broken (a job still
    # waiting is the Starved alarm's to report). The alarm goes back to OK.
    _Missing.NOT_BREACHING,
    threshold=None,  # the agreement's target_wait_p95, in seconds
    # A p95 wants 200 values before CloudWatch calls it significant; a team of 20 jobs a day is
    # judged on its 20 ("ignore" would leave its alarm unchanged forever).
    low_sample_percentiles="evaluate",
)
BUDGET_FAILED: Final = AlarmSetting(
    # One job lost to its preemption budget in the window is one too many.
    _Compare.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    # Published only when a job is lost.
    _Missing.NOT_BREACHING,
)
DEAD_LETTERS: Final = AlarmSetting(
    _Compare.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    # SQS publishes nothing for a period in which nothing was sent.
    _Missing.NOT_BREACHING,
)
DEAD_LETTERS_PERIOD: Final = MIN_PERIOD
MONITOR_HEALTH: Final = AlarmSetting(
    _Compare.LESS_THAN_THRESHOLD,
    # Every run publishes the figure: none at all means the monitor is not running.
    _Missing.BREACHING,
    # Two periods in a row: one failed run (a deployment, a single throttled minute) does not
    # page.
    evaluation_periods=2,
)


def drift_evaluation_periods(thresholds: ShareAlarmThresholds, period: Duration) -> int:
    """How many alarm periods cover ``drift_for`` (at least one)."""
    return max(1, math.ceil(thresholds.drift_for.to_seconds() / period.to_seconds()))
