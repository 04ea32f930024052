"""CloudWatch metric objects for what the monitoring Lambdas publish, and for AWS/Batch.

Names and dimensions come from :mod:`quota_constructs.runtime.monitoring_contract`, the file
both the Lambdas and these constructs read, so a metric on the dashboard or behind an alarm is
exactly the one the runtime emits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from ..runtime.monitoring_contract import (
    CAPACITY_UNIT_DIMENSION,
    JOB_QUEUE_DIMENSION,
    PREEMPTION_KIND_DIMENSION,
    QUOTA_SHARE_DIMENSION,
)

AWS_BATCH_NAMESPACE: Final = "AWS/Batch"
AWS_BATCH_QUEUE_DIMENSION: Final = "JobQueueName"
# AWS/Batch queue metrics shown beside the per-share ones (user guide, "Using CloudWatch
# Metrics with AWS Batch"); AWS publishes them best effort, with the queue name only.
AWS_BATCH_COUNTS: Final = ("JobsPreempted", "JobsMovedToRunnable")
AWS_BATCH_WAIT: Final = "JobSubmittedToFirstScheduledDuration"


@dataclass(frozen=True)
class ShareMetrics:
    """Builds the metrics of one queue's shares in one namespace."""

    namespace: str
    job_queue_name: str

    def share(
        self, name: str, share: str, *, statistic: str, period: Duration, label: str | None = None
    ) -> cloudwatch.Metric:
        """A per-share metric (RunnableJobs, OldestRunnableJobAgeSeconds,
        HeadJobFitsIdleOwnCapacity, ShareDrift, Preemptions, JobsOverInterruptionBudget,
        JobsTerminatedOverBudget, BlockedJobs)."""
        return self._metric(
            name, {QUOTA_SHARE_DIMENSION: share}, statistic=statistic, period=period, label=label
        )

    def unit(
        self,
        name: str,
        share: str,
        unit: str,
        *,
        statistic: str,
        period: Duration,
        label: str | None = None,
    ) -> cloudwatch.Metric:
        """A per-share, per-capacity-unit metric (CapacityInUse)."""
        return self._metric(
            name,
            {QUOTA_SHARE_DIMENSION: share, CAPACITY_UNIT_DIMENSION: unit},
            statistic=statistic,
            period=period,
            label=label,
        )

    def preemption_kind(
        self, name: str, share: str, kind: str, *, period: Duration
    ) -> cloudwatch.Metric:
        """Preemptions of one kind (CROSS_SHARE, IN_SHARE, UNKNOWN)."""
        return self._metric(
            name,
            {QUOTA_SHARE_DIMENSION: share, PREEMPTION_KIND_DIMENSION: kind},
            statistic="Sum",
            period=period,
            label=kind,
        )

    def queue(self, name: str, *, statistic: str, period: Duration) -> cloudwatch.Metric:
        """A per-queue metric (MonitorHealthy)."""
        return self._metric(name, {}, statistic=statistic, period=period, label=None)

    def aws_batch(self, name: str, *, statistic: str, period: Duration) -> cloudwatch.Metric:
        """An AWS/Batch metric of the queue."""
        return cloudwatch.Metric(
            namespace=AWS_BATCH_NAMESPACE,
            metric_name=name,
            dimensions_map={AWS_BATCH_QUEUE_DIMENSION: self.job_queue_name},
            statistic=statistic,
            period=period,
        )

    def _metric(
        self,
        name: str,
        dimensions: dict[str, str],
        *,
        statistic: str,
        period: Duration,
        label: str | None,
    ) -> cloudwatch.Metric:
        return cloudwatch.Metric(
            namespace=self.namespace,
            metric_name=name,
            dimensions_map={JOB_QUEUE_DIMENSION: self.job_queue_name, **dimensions},
            statistic=statistic,
            period=period,
            label=label,
        )
