"""The metrics of one monitored queue's shares, each with its fixed statistic.

What the monitoring Lambdas publish (names and dimensions from
:mod:`quota_constructs.wire.monitoring_contract`, the file both sides read) and the
``AWS/Batch`` queue metrics, as ``aws_cloudwatch`` metrics a user can graph or alarm on. As in
aws-cdk-lib (``metric…()`` on a resource) and cdk-monitoring-constructs (metric factories), the
statistic belongs to the metric, not to the call site: each metric's statistic is in
:data:`STATISTICS`, chosen once for what the figure means. A figure the Lambdas do not publish
(a share's own limit, what it borrows above it, its idle own capacity, what other shares borrow
of it) is a ``MathExpression`` over the published ones, so reading it costs nothing more.

:class:`QuotaShareMonitoring` exposes these as its ``metric_…()`` methods; the library's own
dashboard and alarms are built from them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partialmethod
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from ..model import (
    BorrowingRules,
    LendingParties,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    is_unresolved,
    share_subject,
)
from ..wire.monitoring_contract import (
    BLOCKED_JOBS,
    BUDGET_FAILURES,
    CAPACITY_IN_USE,
    CAPACITY_UNIT_DIMENSION,
    HEAD_JOB_FITS_IDLE_OWN,
    JOB_QUEUE_DIMENSION,
    JOBS_OVER_BUDGET,
    JOBS_TERMINATED_OVER_BUDGET,
    MONITOR_HEALTHY,
    OLDEST_RUNNABLE_JOB_AGE,
    PREEMPTION_KIND_DIMENSION,
    PREEMPTION_KINDS,
    PREEMPTIONS,
    QUOTA_SHARE_DIMENSION,
    RUNNABLE_JOBS,
    SHARE_DRIFT,
    WAIT_TIME,
)

AWS_BATCH_NAMESPACE: Final = "AWS/Batch"
AWS_BATCH_QUEUE_DIMENSION: Final = "JobQueueName"
# AWS/Batch queue metrics shown beside the per-share ones (user guide, "Using CloudWatch
# Metrics with AWS Batch"); AWS publishes them best effort, with the queue name only.
AWS_BATCH_COUNTS: Final = ("JobsPreempted", "JobsMovedToRunnable")
AWS_BATCH_WAIT: Final = "JobSubmittedToFirstScheduledDuration"
MAX_ALARM_METRICS: Final = 10
"""The most metrics (``MetricStat`` queries) one CloudWatch alarm on metric math may read
(``PutMetricAlarm``: up to 20 queries, at most 10 of them metrics and 10 expressions)."""

STATISTICS: Final[Mapping[str, str]] = {
    # Levels measured once a minute: the period's highest is what a graph should show.
    CAPACITY_IN_USE: "Maximum",
    RUNNABLE_JOBS: "Maximum",
    OLDEST_RUNNABLE_JOB_AGE: "Maximum",
    SHARE_DRIFT: "Maximum",
    # 1/0 flags an alarm wants true at *every* measurement of a period.
    HEAD_JOB_FITS_IDLE_OWN: "Minimum",
    MONITOR_HEALTHY: "Minimum",
    # Counts of events: the period's total.
    PREEMPTIONS: "Sum",
    JOBS_OVER_BUDGET: "Sum",
    JOBS_TERMINATED_OVER_BUDGET: "Sum",
    BLOCKED_JOBS: "Sum",
    BUDGET_FAILURES: "Sum",
    # One value per started job: the agreement's wait target is a 95th percentile.
    WAIT_TIME: "p95",
    "JobsPreempted": "Sum",
    "JobsMovedToRunnable": "Sum",
}
"""The one statistic of each metric. ``OldestRunnableJobAgeSeconds`` has a second, named reading
(:meth:`ShareMetrics.oldest_runnable_wait_throughout`: the Minimum, "waited at least this long
at every measurement"), which the Starved alarm uses."""


OWN_LIMIT_EXPRESSION: Final = "{used} * 0 + {limit}"
BORROWED_EXPRESSION: Final = "IF({used} > {limit}, {used} - {limit}, 0)"
IDLE_OWN_EXPRESSION: Final = "IF({used} < {limit}, {limit} - {used}, 0)"
"""The figures derived from a share's ``CapacityInUse`` of a type (``{used}``) and its own
limit (``{limit}``), as metric-math templates."""


@dataclass(frozen=True)
class DerivedFrom:
    """The ``CapacityInUse`` metric a derived figure reads, under the id its expression names:
    the one already on the same graph, so the graph fetches it once."""

    metric_id: str
    metric: cloudwatch.IMetric


@dataclass(frozen=True)
class ShareMetrics:
    """Builds the metrics of one queue's shares in one namespace.

    :param namespace: the custom metrics' CloudWatch namespace.
    :param job_queue_name: the queue's name (the ``JobQueue`` dimension's value).
    :param period: the default period of every metric.
    """

    namespace: str
    job_queue_name: str
    period: Duration

    # -- the two general forms: the tables below are rows of them ------------------------

    def share_metric(
        self, name: str, share: str, *, period: Duration | None = None,
        label: str | None = None,
    ) -> cloudwatch.Metric:
        """The published per-share metric ``name`` of ``share``, with its one statistic."""
        return self._custom(name, {QUOTA_SHARE_DIMENSION: share}, period=period, label=label)

    def derived(
        self, template: str, share: str, instance_type: str, limit: int, *,
        period: Duration | None = None, label: str | None = None,
        in_use: DerivedFrom | None = None,
    ) -> cloudwatch.MathExpression:
        """``template`` (``{used}``: the share's ``CapacityInUse`` of the type, ``{limit}``: its
        own limit) as metric math over the published use."""
        if in_use is None:
            # One id per instance type, so several types' expressions can share one graph.
            in_use = DerivedFrom(
                f"used{_unit_key(instance_type)}",
                self.capacity_in_use(share, instance_type, period=period),
            )
        used = in_use.metric_id
        return cloudwatch.MathExpression(
            expression=template.format(used=used, limit=limit),
            using_metrics={used: in_use.metric},
            label=label,
            period=period or self.period,
        )

    # -- per share and instance type ------------------------------------------------------

    def capacity_in_use(
        self, share: str, instance_type: str, *, period: Duration | None = None,
        label: str | None = None,
    ) -> cloudwatch.Metric:
        """Instances of ``instance_type`` the share's jobs hold (own and borrowed), Maximum."""
        return self._custom(
            CAPACITY_IN_USE,
            {QUOTA_SHARE_DIMENSION: share, CAPACITY_UNIT_DIMENSION: instance_type},
            period=period, label=label,
        )

    own_limit = partialmethod(derived, OWN_LIMIT_EXPRESSION)
    """The share's own limit of the type, as a series beside its use (a constant of the
    declaration: derived, not published)."""
    borrowed = partialmethod(derived, BORROWED_EXPRESSION)
    """Instances held above the share's own limit (0 when within it)."""
    idle_own = partialmethod(derived, IDLE_OWN_EXPRESSION)
    """The part of the share's own limit it does not use (what it can lend, or reclaim)."""

    def lent(
        self, share: str, instance_type: str, parties: LendingParties, *,
        period: Duration | None = None, label: str | None = None,
    ) -> cloudwatch.MathExpression:
        """The part of the share's idle own capacity other shares borrow, by the one attribution
        rule (:class:`~quota_constructs.model.lending.LendingParties`, whose assumption it
        follows): metric math over the ``CapacityInUse`` of every share listing the type, so
        nothing more is published.

        Three expressions, each named by the type: ``borrowed…`` (the shares' use above their
        own limits, added up), ``rest…`` (less the borrowable capacity no share owns) and
        ``idle…`` (the lenders' idle own capacity, added up); the figure is ``rest × mine /
        idle``, at most ``mine`` (the share's own idle capacity), and 0 when either is 0. It uses
        only arithmetic, comparisons and ``IF`` (CloudWatch metric math), and divides only where
        ``idle`` is above 0. Each ``CapacityInUse`` is the period's Maximum, so over a period
        longer than the measurement the figure can overstate what was lent at any one moment.

        **Limit**: a CloudWatch alarm (``PutMetricAlarm``) may read at most
        :data:`MAX_ALARM_METRICS` metrics and 10 expressions; this figure is 4 expressions over
        one metric per share that lists the type (:meth:`lent_metric_count`), so an alarm on it
        fails to deploy when more than 10 shares list the type. A dashboard graph may read up
        to 500.
        """
        listing = parties.listing()
        if share not in listing.lenders:
            raise QuotaConfigError(share_subject(share), "share", share,
                                   f"one of the lenders of {instance_type}: "
                                   f"{', '.join(listing.lenders) or 'none'}")
        key = _unit_key(instance_type)
        period = period or self.period
        ids = {name: f"inuse{key}n{index}" for index, name in enumerate(listing.own)}

        def used(names: Sequence[str]) -> dict[str, cloudwatch.IMetric]:
            return {ids[name]: self.capacity_in_use(name, instance_type, period=period)
                    for name in names}

        def above_own(name: str) -> str:
            return BORROWED_EXPRESSION.format(used=ids[name], limit=listing.own[name])

        def idle_own(name: str) -> str:
            return IDLE_OWN_EXPRESSION.format(used=ids[name], limit=listing.own[name])

        borrowed = cloudwatch.MathExpression(
            expression=" + ".join(above_own(name) for name in listing.own),
            using_metrics=used(list(listing.own)), period=period,
        )
        unowned = listing.unowned_borrowable
        rest = cloudwatch.MathExpression(
            expression=f"IF(borrowed{key} > {unowned}, borrowed{key} - {unowned}, 0)",
            using_metrics={f"borrowed{key}": borrowed}, period=period,
        )
        idle = cloudwatch.MathExpression(
            expression=" + ".join(idle_own(name) for name in listing.lenders),
            using_metrics=used(listing.lenders), period=period,
        )
        mine = idle_own(share)
        return cloudwatch.MathExpression(
            expression=(
                f"IF(rest{key} > 0, IF(idle{key} > 0, IF(rest{key} >= idle{key}, {mine}, "
                f"rest{key} * {mine} / idle{key}), 0), 0)"
            ),
            using_metrics={f"rest{key}": rest, f"idle{key}": idle, **used([share])},
            label=label, period=period,
        )

    @staticmethod
    def lent_metric_count(parties: LendingParties) -> int:
        """How many metrics :meth:`lent` reads: one per share that lists the type."""
        return len(parties.listing().own)

    # -- per share ----------------------------------------------------------------------------

    runnable_jobs = partialmethod(share_metric, RUNNABLE_JOBS)
    """RUNNABLE jobs counted (at most the count cap: a value at the cap means at least)."""
    oldest_runnable_wait = partialmethod(share_metric, OLDEST_RUNNABLE_JOB_AGE)
    """Seconds the share's first RUNNABLE job has waited at the front, Maximum."""
    head_job_fits_idle_own = partialmethod(share_metric, HEAD_JOB_FITS_IDLE_OWN)
    """1 when the first RUNNABLE job fits the share's idle own capacity of its type at every
    measurement of the period."""
    drift = partialmethod(share_metric, SHARE_DRIFT)
    """1 when the live share differs from the declaration, is INVALID or is missing."""
    jobs_over_budget = partialmethod(share_metric, JOBS_OVER_BUDGET)
    """Jobs preempted more often than the share's interruption budget."""
    jobs_terminated_over_budget = partialmethod(share_metric, JOBS_TERMINATED_OVER_BUDGET)
    """Jobs the monitor terminated for exceeding the budget (only when enforcing it)."""
    blocked_jobs = partialmethod(share_metric, BLOCKED_JOBS)
    """The share's jobs reported blocking the queue (once per job)."""
    wait_time = partialmethod(share_metric, WAIT_TIME)
    """Seconds from submission to first start of the share's started jobs, p95."""
    budget_failures = partialmethod(share_metric, BUDGET_FAILURES)
    """The share's jobs FAILED by exhausting their preemption retries, Sum."""

    def oldest_runnable_wait_throughout(
        self, share: str, *, period: Duration | None = None, label: str | None = None
    ) -> cloudwatch.Metric:
        """The same wait's Minimum: how long the front job had waited at *every* measurement
        of the period (so one late minute does not read as a long wait)."""
        return self._custom(
            OLDEST_RUNNABLE_JOB_AGE, {QUOTA_SHARE_DIMENSION: share}, period=period,
            label=label, statistic="Minimum",
        )

    def preemptions(
        self, share: str, *, kind: str | None = None, period: Duration | None = None,
        label: str | None = None,
    ) -> cloudwatch.Metric:
        """Preemptions the share's jobs suffered; of one ``kind`` (CROSS_SHARE, IN_SHARE,
        UNKNOWN) when given."""
        if kind is None:
            return self.share_metric(PREEMPTIONS, share, period=period, label=label)
        return self._custom(
            PREEMPTIONS, {QUOTA_SHARE_DIMENSION: share, PREEMPTION_KIND_DIMENSION: kind},
            period=period, label=kind if label is None else label,
        )

    # -- per queue ----------------------------------------------------------------------------

    def monitor_healthy(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """1 when every AWS Batch read of every run of the period succeeded; missing when the
        metrics function did not run."""
        return self._custom(MONITOR_HEALTHY, {}, period=period, label=None)

    def aws_batch(
        self, name: str, *, period: Duration | None = None, statistic: str | None = None
    ) -> cloudwatch.Metric:
        """An ``AWS/Batch`` metric of the queue (counts summed; the wait duration takes the
        statistic asked for, e.g. Average or p90)."""
        chosen = statistic if statistic is not None else STATISTICS[name]
        return cloudwatch.Metric(
            namespace=AWS_BATCH_NAMESPACE,
            metric_name=name,
            dimensions_map={AWS_BATCH_QUEUE_DIMENSION: self.job_queue_name},
            statistic=chosen,
            period=period or self.period,
        )

    # -- parts -------------------------------------------------------------------------------

    def _custom(
        self,
        name: str,
        dimensions: Mapping[str, str],
        *,
        period: Duration | None,
        label: str | None,
        statistic: str | None = None,
    ) -> cloudwatch.Metric:
        return cloudwatch.Metric(
            namespace=self.namespace,
            metric_name=name,
            dimensions_map={JOB_QUEUE_DIMENSION: self.job_queue_name, **dimensions},
            statistic=statistic if statistic is not None else STATISTICS[name],
            period=period or self.period,
            label=label,
        )


def _unit_key(instance_type: str) -> str:
    """``ml.g5.xlarge`` → ``mlg5xlarge``: a metric-math id must be letters and digits."""
    return "".join(character for character in instance_type if character.isalnum())


class ShareMetricMethods:
    """The ``metric_…()`` methods of :class:`QuotaShareMonitoring`: each share's metrics with
    the ``JobQueue`` and ``QuotaShare`` dimensions (and ``CapacityUnit`` per instance type) and
    the statistic of :data:`STATISTICS`, for a user's own alarms and dashboard widgets.

    A share or instance type the queue does not declare is refused (``QuotaConfigError``),
    since its metric would never have data.
    """

    _share_metrics: ShareMetrics

    def _declared_specs(self) -> Sequence[QuotaShareSpec]:
        raise NotImplementedError

    def _metrics_subject(self) -> str:
        raise NotImplementedError

    def _queue_allocation(self) -> QuotaAllocation | None:
        """How the queue's environment capacity is divided; None when the app does not know
        it."""
        raise NotImplementedError

    def _agreement_window(self, share: str) -> Duration:
        """The window the share's agreement is judged over (its ``agreement_window``)."""
        raise NotImplementedError

    def _declared_share_metric(
        self, name: str, share: str, *, period: Duration | None = None
    ) -> cloudwatch.IMetric:
        """A published per-share metric, once the share is found declared (the table below)."""
        self._spec(share)
        return self._share_metrics.share_metric(name, share, period=period)

    def _declared_derived(
        self, template: str, share: str, instance_type: str, *, period: Duration | None = None
    ) -> cloudwatch.IMetric:
        """A figure derived from the share's use and its declared limit (the table below)."""
        limit = self._limit(share, instance_type)
        return self._share_metrics.derived(template, share, instance_type, limit, period=period)

    def metric_capacity_in_use(
        self, share: str, instance_type: str, *, period: Duration | None = None
    ) -> cloudwatch.IMetric:
        """Instances of ``instance_type`` the share's jobs hold, own and borrowed (Maximum)."""
        self._limit(share, instance_type)
        return self._share_metrics.capacity_in_use(share, instance_type, period=period)

    metric_own_limit = partialmethod(_declared_derived, OWN_LIMIT_EXPRESSION)
    """``(share, instance_type, *, period=None)``: the share's declared limit of the type, as a
    series (metric math)."""
    metric_borrowed = partialmethod(_declared_derived, BORROWED_EXPRESSION)
    """``(share, instance_type, *, period=None)``: instances held above the share's own limit
    (metric math over capacity in use)."""
    metric_idle_own = partialmethod(_declared_derived, IDLE_OWN_EXPRESSION)
    """``(share, instance_type, *, period=None)``: the part of its own limit the share does not
    use: what it can lend, or what its next job can start on (metric math over capacity in
    use)."""

    def metric_lent(
        self, share: str, instance_type: str, *, period: Duration | None = None
    ) -> cloudwatch.IMetric:
        """The part of the share's idle own capacity of the type other shares borrow (metric
        math over the ``CapacityInUse`` of the type's shares; see :meth:`ShareMetrics.lent` for
        the rule, its assumption and the limit of 10 metrics an alarm may read). The capacity no
        share owns is taken first when the queue's environment capacity is known; otherwise
        lenders are judged by strategy alone, as ``quota-constructs status`` does. A share that
        never lends the type (RESERVE, or nobody can borrow it) is refused."""
        self._limit(share, instance_type)
        return self._share_metrics.lent(
            share, instance_type, self._lending_parties(instance_type), period=period
        )

    metric_runnable_jobs = partialmethod(_declared_share_metric, RUNNABLE_JOBS)
    """``(share, *, period=None)``: RUNNABLE jobs counted (Maximum; a value at the count cap
    means at least)."""
    metric_oldest_runnable_wait = partialmethod(_declared_share_metric, OLDEST_RUNNABLE_JOB_AGE)
    """``(share, *, period=None)``: seconds the share's first RUNNABLE job has waited at the
    front (Maximum)."""
    metric_jobs_over_budget = partialmethod(_declared_share_metric, JOBS_OVER_BUDGET)
    """``(share, *, period=None)``: jobs preempted more often than the share's interruption
    budget (Sum)."""
    metric_blocked_jobs = partialmethod(_declared_share_metric, BLOCKED_JOBS)
    """``(share, *, period=None)``: the share's jobs reported blocking the queue (Sum)."""
    metric_drift = partialmethod(_declared_share_metric, SHARE_DRIFT)
    """``(share, *, period=None)``: 1 when the live share differs from the declaration, is
    INVALID or missing (Maximum)."""

    def metric_wait_time(self, share: str, *, period: Duration | None = None) -> cloudwatch.IMetric:
        """Seconds from submission (``createdAt``) to first start of the share's started jobs,
        their 95th percentile (p95) over ``period``, by default the share's agreement window
        (``ShareAlarmThresholds.agreement_window``, one day): what its ``target_wait_p95``
        promises. Published only for a share whose agreement declares a wait target."""
        self._spec(share)
        return self._share_metrics.wait_time(share, period=period or self._agreement_window(share))

    def metric_budget_failures(
        self, share: str, *, period: Duration | None = None
    ) -> cloudwatch.IMetric:
        """Jobs of the share that FAILED because their preemptions outnumbered their
        ``preemptionRetriesBeforeTermination`` (Sum over ``period``, by default the share's
        agreement window). Published only for a share whose agreement declares an
        interruption budget."""
        self._spec(share)
        return self._share_metrics.budget_failures(
            share, period=period or self._agreement_window(share))

    def metric_preemptions(
        self, share: str, *, kind: str | None = None, period: Duration | None = None
    ) -> cloudwatch.IMetric:
        """Preemptions the share's jobs suffered (Sum); of one kind (``CROSS_SHARE``,
        ``IN_SHARE``, ``UNKNOWN``) when given."""
        self._spec(share)
        if kind is not None and kind not in PREEMPTION_KINDS:
            raise QuotaConfigError(
                self._metrics_subject(), "kind", kind, f"one of {', '.join(PREEMPTION_KINDS)}"
            )
        return self._share_metrics.preemptions(share, kind=kind, period=period)

    def metric_monitor_healthy(self, *, period: Duration | None = None) -> cloudwatch.IMetric:
        """1 when every AWS Batch read of the period's runs succeeded (Minimum); missing when
        the metrics function did not run."""
        return self._share_metrics.monitor_healthy(period=period)

    def _lending_parties(self, instance_type: str) -> LendingParties:
        """The rules model's parties when the environment's capacity is known (every figure
        resolved at synthesis), else the strategy-only form."""
        specs = self._declared_specs()
        allocation = self._queue_allocation()
        if allocation is not None:
            environment = {limit.capacity_unit: limit.max_capacity
                           for limit in allocation.environment_limits}
            figures = [*environment, *environment.values(),
                       *(limit.max_capacity for spec in specs for limit in spec.capacity_limits)]
            if instance_type in environment and not is_unresolved(figures):
                rules = BorrowingRules.of(
                    environment=environment, shares=specs,
                    unowned_capacity_borrowable=allocation.unowned_capacity_borrowable,
                )
                return LendingParties.of_rules(rules, instance_type)
        return LendingParties.by_strategy(
            {spec.name: spec.limit_of(instance_type) for spec in specs},
            {spec.name: spec.strategy for spec in specs},
        )

    def _spec(self, share: str) -> QuotaShareSpec:
        specs = {spec.name: spec for spec in self._declared_specs()}
        spec = specs.get(share) if isinstance(share, str) else None
        if spec is None:
            raise QuotaConfigError(
                self._metrics_subject(), "share", share,
                f"a share declared on the monitored queue: {', '.join(sorted(specs)) or 'none'}",
            )
        return spec

    def _limit(self, share: str, instance_type: str) -> int:
        spec = self._spec(share)
        limit = spec.limit_of(instance_type) if isinstance(instance_type, str) else 0
        if limit <= 0:
            raise QuotaConfigError(
                share_subject(share), "instance_type", instance_type,
                f"an instance type the share has a limit for: {', '.join(map(str, spec.units))}",
            )
        return limit
