"""The alarms of one quota share, routed to its owner."""

from __future__ import annotations

import math
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_sns as sns
from constructs import Construct

from ..model import QuotaShareSpec
from ..runtime.monitoring_contract import (
    IDLE_OWN_CAPACITY,
    JOBS_OVER_BUDGET,
    OLDEST_RUNNABLE_JOB_AGE,
    PREEMPTIONS,
    SHARE_DRIFT,
)
from ._metrics import ShareMetrics
from .thresholds import ShareAlarmThresholds

PREEMPTION_PERIOD: Final = Duration.hours(1)


class ShareAlarms(Construct):
    """Alarms of one share (children, each created only where it applies):

    - ``Starved``: the oldest RUNNABLE job has waited longer than ``starved_after`` while part
      of the share's own limit stayed idle for a whole period (metric math over
      ``OldestRunnableJobAgeSeconds`` and ``IdleOwnCapacity`` of every unit). Missing data is
      *not breaching*: no data means no waiting job (or no measurement), never starvation.
    - ``OverBudget`` (shares whose agreement sets an interruption budget): a job was preempted
      more often than the budget allows (``JobsOverInterruptionBudget`` > 0). Not breaching
      when missing: the count is only published when it happens.
    - ``Preemptions`` (unless ``max_preemptions_per_hour`` is None): more preemptions in one
      hour than the threshold. Not breaching when missing, as above.
    - ``Drift``: the live share has differed from the declaration, been INVALID or missing
      (``ShareDrift`` >= 1) for ``drift_for``. Missing data is *missing*: a silent metrics
      function leaves the alarm INSUFFICIENT_DATA (visible on the dashboard) rather than
      paging every owner for a monitoring fault.

    With ``owner_topic`` every alarm notifies it when it goes into ALARM and back to OK.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        spec: QuotaShareSpec,
        metrics: ShareMetrics,
        thresholds: ShareAlarmThresholds,
        period: Duration,
        share_metrics: bool,
        job_events: bool,
        owner_topic: sns.ITopic | None,
    ) -> None:
        super().__init__(scope, id)
        share = spec.name
        owner = spec.agreement.owner if spec.agreement is not None else None
        whose = f"quota share {share}" + (f" (owner: {owner})" if owner else "")
        self.alarms: list[cloudwatch.Alarm] = []
        if share_metrics:
            self.alarms.append(self._starved(spec, metrics, thresholds, period, whose))
            self.alarms.append(self._drift(spec, metrics, thresholds, period, whose))
        if job_events:
            agreement = spec.agreement
            if agreement is not None and agreement.interruption_budget is not None:
                self.alarms.append(self._count_exceeded(
                    "OverBudget", metrics.share(JOBS_OVER_BUDGET, share, statistic="Sum",
                                                period=period),
                    threshold=0,
                    description=(f"A job of {whose} was preempted more often than its "
                                 f"interruption budget ({agreement.describe_budget()})."),
                ))
            if thresholds.max_preemptions_per_hour is not None:
                self.alarms.append(self._count_exceeded(
                    "Preemptions", metrics.share(PREEMPTIONS, share, statistic="Sum",
                                                 period=PREEMPTION_PERIOD),
                    threshold=thresholds.max_preemptions_per_hour,
                    description=(f"Jobs of {whose} were preempted more than "
                                 f"{thresholds.max_preemptions_per_hour} times in one hour."),
                ))
        if owner_topic is not None:
            action = actions.SnsAction(owner_topic)
            for alarm in self.alarms:
                alarm.add_alarm_action(action)
                alarm.add_ok_action(action)

    def _count_exceeded(
        self, id: str, count: cloudwatch.Metric, *, threshold: float, description: str
    ) -> cloudwatch.Alarm:
        """An alarm on an event count above ``threshold`` in one period; not breaching when
        missing, because the count is published only when the event happens."""
        return count.create_alarm(
            self,
            id,
            alarm_description=description,
            threshold=threshold,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )

    def _starved(
        self,
        spec: QuotaShareSpec,
        metrics: ShareMetrics,
        thresholds: ShareAlarmThresholds,
        period: Duration,
        whose: str,
    ) -> cloudwatch.Alarm:
        share = spec.name
        wait = int(thresholds.starved_after.to_seconds())
        using: dict[str, cloudwatch.IMetric] = {
            "age": metrics.share(OLDEST_RUNNABLE_JOB_AGE, share, statistic="Maximum", period=period)
        }
        for index, unit in enumerate(spec.units):
            # Minimum over the period: the capacity stayed idle the whole time.
            using[f"idle{index}"] = metrics.unit(
                IDLE_OWN_CAPACITY, share, unit, statistic="Minimum", period=period
            )
        idle = " + ".join(name for name in using if name != "age")
        expression = cloudwatch.MathExpression(
            expression=f"IF(age > {wait} AND ({idle}) > 0, 1, 0)",
            using_metrics=using,
            period=period,
            label="starved (1 = jobs wait while own capacity is idle)",
        )
        return expression.create_alarm(
            self,
            "Starved",
            alarm_description=(
                f"Jobs of {whose} have waited longer than "
                f"{thresholds.starved_after.to_human_string()} while part of its own limit "
                "stayed idle: check the share's RUNNABLE jobs (status reason) and who holds "
                "its lent capacity."
            ),
            threshold=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )

    def _drift(
        self,
        spec: QuotaShareSpec,
        metrics: ShareMetrics,
        thresholds: ShareAlarmThresholds,
        period: Duration,
        whose: str,
    ) -> cloudwatch.Alarm:
        periods = max(1, math.ceil(thresholds.drift_for.to_seconds() / period.to_seconds()))
        drift = metrics.share(SHARE_DRIFT, spec.name, statistic="Maximum", period=period)
        return drift.create_alarm(
            self,
            "Drift",
            alarm_description=(
                f"The live {whose} has differed from its declaration, or been INVALID or "
                f"missing, for {thresholds.drift_for.to_human_string()}: someone changed it "
                "outside the stack, or a deployment failed."
            ),
            threshold=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=periods,
            treat_missing_data=cloudwatch.TreatMissingData.MISSING,
        )
