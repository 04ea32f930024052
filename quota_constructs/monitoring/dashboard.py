"""One CloudWatch dashboard per monitored queue: every share's capacity, waits and
preemptions, with AWS's own queue metrics beside them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from ..model import QuotaShareSpec
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

    :param metrics: how the queue's metrics are named.
    :param shares: the shares shown, one row each, in this order.
    :param period: the period of every graph (at least the metrics schedule).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        metrics: ShareMetrics,
        shares: Sequence[QuotaShareSpec],
        period: Duration,
    ) -> None:
        super().__init__(scope, id)
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
        self.resource.add_widgets(*self._share_row(self._metrics, spec, self._period))

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
        metrics: ShareMetrics, spec: QuotaShareSpec, period: Duration
    ) -> list[cloudwatch.IWidget]:
        share = spec.name
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
            cloudwatch.GraphWidget(
                title=f"{share}: RUNNABLE jobs and oldest wait",
                left=[
                    metrics.runnable_jobs(
                        share, period=period, label="RUNNABLE jobs (at the count cap: at least)",
                    )
                ],
                right=[
                    metrics.oldest_runnable_wait(
                        share, period=period, label="first RUNNABLE job's wait at the front (s)",
                    ),
                    metrics.drift(
                        share, period=period, label="drift (1 = differs from the declaration)",
                    ),
                ],
                left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
                right_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
                width=WIDTH // 3,
                height=HEIGHT,
            ),
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
                ],
                stacked=True,
                left_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
                right_y_axis=cloudwatch.YAxisProps(min=0, show_units=False),
                width=WIDTH // 3,
                height=HEIGHT,
            ),
        ]
