"""One CloudWatch dashboard per monitored queue: every share's capacity, waits and
preemptions, with AWS's own queue metrics beside them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from ..model import QuotaShareSpec
from ..model.agreement import describe_seconds
from ..wire.monitoring_contract import PREEMPTION_KINDS
from .metrics import AWS_BATCH_COUNTS, AWS_BATCH_WAIT, DerivedFrom, ShareMetrics

WIDTH: Final = 24
HEIGHT: Final = 6


class QuotaShareDashboard(Construct):
    """A dashboard (child ``Resource``) of one queue's shares.

    Per share, one row: capacity in use against the share's own limit and what it borrows
    (per capacity unit); RUNNABLE jobs and the oldest one's wait; preemptions by kind and
    jobs over their interruption budget. Above them the queue's ``AWS/Batch`` metrics
    (``JobsPreempted``, ``JobsMovedToRunnable``, ``JobSubmittedToFirstScheduledDuration``),
    which AWS publishes per queue only. Alarms are added with :meth:`add_alarms`.

    With ``agreement_metrics``, a share whose agreement declares ``target_wait_p95`` shows the
    p95 of its started jobs' waits (``WaitTime``, per graph period) in its wait graph, with the
    target as a horizontal line; a share that declares an interruption budget shows its jobs
    lost to it (``BudgetFailures``) beside its preemptions.

    :param metrics: how the queue's metrics are named.
    :param shares: the shares shown, one row each, in this order.
    :param period: the period of every graph (at least the metrics schedule).
    :param agreement_metrics: whether ``WaitTime`` and ``BudgetFailures`` are published.
        Default False.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        metrics: ShareMetrics,
        shares: Sequence[QuotaShareSpec],
        period: Duration,
        agreement_metrics: bool = False,
    ) -> None:
        super().__init__(scope, id)
        self._agreement_metrics = agreement_metrics
        self.resource = cloudwatch.Dashboard(
            self,
            "Resource",
            default_interval=Duration.hours(6),
            period_override=cloudwatch.PeriodOverride.INHERIT,
        )
        self.resource.add_widgets(
            cloudwatch.TextWidget(
                markdown=f"# Quota shares of job queue {metrics.job_queue_name}\n"
                "Per share: capacity in use against its own limit, waiting jobs, preemptions. "
                f"Custom metrics in `{metrics.namespace}`; AWS's own queue metrics in "
                "`AWS/Batch`.",
                width=WIDTH,
                height=2,
            )
        )
        self.resource.add_widgets(
            cloudwatch.GraphWidget(
                title="AWS/Batch: jobs preempted and moved back to RUNNABLE (queue)",
                left=[
                    metrics.aws_batch(name, period=period)
                    for name in AWS_BATCH_COUNTS
                ],
                width=WIDTH // 2,
                height=HEIGHT,
            ),
            cloudwatch.GraphWidget(
                title="AWS/Batch: submitted to first scheduled (queue)",
                left=[
                    metrics.aws_batch(AWS_BATCH_WAIT, statistic=statistic, period=period)
                    for statistic in ("Average", "p90")
                ],
                width=WIDTH // 2,
                height=HEIGHT,
            ),
        )
        self._metrics = metrics
        self._period = period
        for spec in shares:
            self.add_share(spec)

    def add_share(self, spec: QuotaShareSpec) -> None:
        """One more row, for ``spec``."""
        self.resource.add_widgets(*self._share_row(self._metrics, spec, self._period,
                                                   agreement_metrics=self._agreement_metrics))

    def add_alarms(self, alarms: Sequence[cloudwatch.IAlarm]) -> None:
        """Show ``alarms`` (their state at a glance) below the shares."""
        if alarms:
            self.resource.add_widgets(
                cloudwatch.AlarmStatusWidget(
                    title="Share alarms", alarms=list(alarms), width=WIDTH,
                    height=max(2, (len(alarms) + 3) // 4 + 1),
                )
            )

    @staticmethod
    def _share_row(
        metrics: ShareMetrics, spec: QuotaShareSpec, period: Duration, *,
        agreement_metrics: bool = False,
    ) -> list[cloudwatch.IWidget]:
        share = spec.name
        agreement = spec.agreement if agreement_metrics else None
        target = agreement.target_wait_p95_seconds if agreement is not None else None
        budget = agreement.interruption_budget if agreement is not None else None
        owner = f" ({spec.agreement.owner})" if spec.agreement is not None else ""
        capacity: list[cloudwatch.IMetric] = []
        for index, unit in enumerate(spec.units):
            used = f"used{index}"
            in_use = metrics.capacity_in_use(
                share, unit, period=period, label=f"in use {unit}"
            )
            limit = spec.limit_of(unit)
            capacity.append(in_use)
            # Own limit and borrowed are derived from the in-use series already on this graph.
            derived_from = DerivedFrom(used, in_use)
            capacity.append(metrics.own_limit(
                share, unit, limit, period=period, label=f"own limit {unit}",
                in_use=derived_from,
            ))
            capacity.append(metrics.borrowed(
                share, unit, limit, period=period, label=f"borrowed {unit}",
                in_use=derived_from,
            ))
        return [
            cloudwatch.GraphWidget(
                title=f"{share}{owner}: capacity in use, own limit, borrowed",
                left=capacity,
                left_y_axis=cloudwatch.YAxisProps(min=0, label="instances", show_units=False),
                width=WIDTH // 3,
                height=HEIGHT,
            ),
            QuotaShareDashboard._wait_widget(metrics, share, period, target),
            cloudwatch.GraphWidget(
                title=f"{share}: preemptions by kind, jobs over budget or blocking",
                left=[
                    metrics.preemptions(share, kind=kind, period=period)
                    for kind in PREEMPTION_KINDS
                ],
                right=[
                    metrics.jobs_over_budget(share, period=period, label="over budget"),
                    metrics.jobs_terminated_over_budget(
                        share, period=period, label="terminated over budget"
                    ),
                    metrics.blocked_jobs(share, period=period, label="blocking the queue"),
                    *([metrics.budget_failures(
                        share, period=period, label="lost to the preemption budget (FAILED)",
                    )] if budget is not None else []),
                ],
                stacked=True,
                left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
                right_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
                width=WIDTH // 3,
                height=HEIGHT,
            ),
        ]

    @staticmethod
    def _wait_widget(
        metrics: ShareMetrics, share: str, period: Duration, target: float | None
    ) -> cloudwatch.GraphWidget:
        """RUNNABLE jobs and the first one's wait; with a wait target, the p95 of the started
        jobs' waits beside it and the target as a horizontal line (both in seconds, on the
        right axis)."""
        waits: list[cloudwatch.IMetric] = [
            metrics.oldest_runnable_wait(
                share, period=period, label="first RUNNABLE job's wait at the front (s)",
            ),
            metrics.drift(
                share, period=period, label="drift (1 = differs from the declaration)",
            ),
        ]
        title = f"{share}: RUNNABLE jobs and oldest wait"
        target_line: list[cloudwatch.HorizontalAnnotation] = []
        if target is not None:
            waits.append(metrics.wait_time(
                share, period=period, label="started jobs' wait to first start, p95 (s)",
            ))
            title = f"{share}: RUNNABLE jobs, oldest wait, started jobs' wait p95"
            target_line.append(cloudwatch.HorizontalAnnotation(
                value=target, label=f"target_wait_p95 {describe_seconds(target)}",
                color=cloudwatch.Color.RED,
            ))
        return cloudwatch.GraphWidget(
            title=title,
            left=[
                metrics.runnable_jobs(
                    share, period=period, label="RUNNABLE jobs (at the count cap: at least)",
                )
            ],
            right=waits,
            right_annotations=target_line or None,
            left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
            right_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
            width=WIDTH // 3,
            height=HEIGHT,
        )
