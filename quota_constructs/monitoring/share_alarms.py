"""The alarms of one quota share, routed to its owner."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_sns as sns
from constructs import Construct

from ..model import QuotaShareSpec, ShareAgreement
from ..model.agreement import describe_seconds
from .metrics import ShareMetrics
from .thresholds import (
    BUDGET_FAILED,
    COUNT_EXCEEDED,
    DRIFT,
    PREEMPTION_PERIOD,
    STARVED,
    WAIT_TARGET,
    ShareAlarmThresholds,
    drift_evaluation_periods,
)


class ShareAlarms(Construct):
    """Alarms of one share (children, each created only where it applies):

    - ``Starved``: the share's first RUNNABLE job has waited at the front longer than
      ``starved_after`` while the share's own idle capacity *of that job's instance type*
      could hold it (its instance count), at every measurement of a period (metric math over
      ``OldestRunnableJobAgeSeconds`` and ``HeadJobFitsIdleOwnCapacity``). Missing data is
      *ignored* (the alarm keeps its state): a failed, stale or silent measurement neither
      pages nor clears a starvation — it is the monitor-health alarm's to report.
    - ``OverBudget`` (shares whose agreement sets an interruption budget): a job was preempted
      more often than the budget allows (``JobsOverInterruptionBudget`` > 0). Not breaching
      when missing: the count is only published when it happens.
    - ``Preemptions`` (unless ``max_preemptions_per_hour`` is None): more preemptions in one
      hour than the threshold. Not breaching when missing, as above.
    - ``Drift``: the live share has differed from the declaration, been INVALID or missing
      (``ShareDrift`` >= 1) for ``drift_for``. Missing data is *missing*: a silent metrics
      function leaves the alarm INSUFFICIENT_DATA (visible on the dashboard) rather than
      paging every owner for a monitoring fault.

    The agreement watched (with ``agreement_metrics``, over the thresholds'
    ``agreement_window``, one period, default one day):

    - ``WaitTarget`` (shares whose agreement declares ``target_wait_p95``): the p95 of
      ``WaitTime`` (each started job's seconds from submission to first start) is greater than
      the target; a p95 equal to it keeps the promise. Small samples are evaluated (20 jobs a
      day is a real team). Not breaching when missing: no job started, no promise broken (a
      job still waiting is ``Starved``'s to report).
    - ``BudgetFailures`` (shares whose agreement declares ``interruption_budget``): one job or
      more FAILED because its preemptions outnumbered its
      ``preemptionRetriesBeforeTermination`` (``BudgetFailures`` Sum >= 1). Not breaching when
      missing: published only when a job is lost.

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
        agreement_metrics: bool = True,
    ) -> None:
        super().__init__(scope, id)
        share = spec.name
        owner = spec.agreement.owner if spec.agreement is not None else None
        whose = f"quota share {share}" + (f" (owner: {owner})" if owner else "")
        # What every alarm of the share is built from, kept once for the alarm methods below.
        self._share = share
        self._metrics = metrics
        self._thresholds = thresholds
        self._period = period
        self._whose = whose
        self.alarms: list[cloudwatch.Alarm] = []
        if share_metrics:
            self.alarms.append(self._starved())
            self.alarms.append(self._drift())
        if job_events:
            agreement = spec.agreement
            if agreement is not None and agreement.interruption_budget is not None:
                self.alarms.append(self._count_exceeded(
                    "OverBudget", metrics.jobs_over_budget(share, period=period),
                    threshold=0,
                    description=(f"A job of {whose} was preempted more often than its "
                                 f"interruption budget ({agreement.describe_budget()})."),
                ))
            if thresholds.max_preemptions_per_hour is not None:
                self.alarms.append(self._count_exceeded(
                    "Preemptions", metrics.preemptions(share, period=PREEMPTION_PERIOD),
                    threshold=thresholds.max_preemptions_per_hour,
                    description=(f"Jobs of {whose} were preempted more than "
                                 f"{thresholds.max_preemptions_per_hour} times in one hour."),
                ))
            if agreement is not None and agreement_metrics:
                self.alarms.extend(self._agreement_alarms(agreement))
        if owner_topic is not None:
            action = actions.SnsAction(owner_topic)
            for alarm in self.alarms:
                alarm.add_alarm_action(action)
                alarm.add_ok_action(action)

    def _agreement_alarms(self, agreement: ShareAgreement) -> list[cloudwatch.Alarm]:
        """``WaitTarget`` and ``BudgetFailures``, each where the agreement declares its line."""
        share, metrics, whose = self._share, self._metrics, self._whose
        window = self._thresholds.agreement_window
        over = window.to_human_string()
        alarms = []
        target = agreement.target_wait_p95_seconds
        if target is not None:
            alarms.append(WAIT_TARGET.create(
                metrics.wait_time(share, period=window),
                self,
                "WaitTarget",
                threshold=target,
                description=(
                    f"The agreement of {whose} promises target_wait_p95 = "
                    f"{describe_seconds(target)} (95% of jobs start within "
                    f"{describe_seconds(target)} of submission): the p95 of the waits of the "
                    f"jobs that started over the last {over} exceeds it."
                ),
            ))
        if agreement.interruption_budget is not None:
            alarms.append(BUDGET_FAILED.create(
                metrics.budget_failures(share, period=window),
                self,
                "BudgetFailures",
                description=(
                    f"The agreement of {whose} sets interruption_budget = "
                    f"{agreement.interruption_budget} ({agreement.describe_budget()}): over the "
                    f"last {over} a job FAILED because its preemptions outnumbered its "
                    "preemptionRetriesBeforeTermination."
                ),
            ))
        return alarms

    def _count_exceeded(
        self, id: str, count: cloudwatch.Metric, *, threshold: float, description: str
    ) -> cloudwatch.Alarm:
        """An alarm on an event count above ``threshold`` in one period; not breaching when
        missing, because the count is published only when the event happens."""
        return COUNT_EXCEEDED.create(count, self, id, description=description,
                                     threshold=threshold)

    def _starved(self) -> cloudwatch.Alarm:
        share, metrics, period = self._share, self._metrics, self._period
        wait = int(self._thresholds.starved_after.to_seconds())
        # Minimum over the period, both: the head job waited longer than the threshold, and
        # would have fitted in the share's idle own capacity of its type, at every measurement.
        expression = cloudwatch.MathExpression(
            expression=f"IF(wait > {wait} AND fits >= 1, 1, 0)",
            using_metrics={
                "wait": metrics.oldest_runnable_wait_throughout(share, period=period),
                "fits": metrics.head_job_fits_idle_own(share, period=period),
            },
            period=period,
            label="starved (1 = the head job waits while its type's own capacity is idle)",
        )
        return STARVED.create(
            expression,
            self,
            "Starved",
            description=(
                f"The first waiting job of {self._whose} has waited longer than "
                f"{self._thresholds.starved_after.to_human_string()} although the share's own idle "
                "capacity of that job's instance type could hold it: check the job's status "
                "reason and who holds the share's lent capacity."
            ),
        )

    def _drift(self) -> cloudwatch.Alarm:
        drift = self._metrics.drift(self._share, period=self._period)
        return DRIFT.create(
            drift,
            self,
            "Drift",
            description=(
                f"The live {self._whose} has differed from its declaration, or been INVALID or "
                f"missing, for {self._thresholds.drift_for.to_human_string()}: someone changed it "
                "outside the stack, or a deployment failed."
            ),
            evaluation_periods=drift_evaluation_periods(self._thresholds, self._period),
        )
