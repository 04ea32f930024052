"""The scheduled Lambda that publishes per-share metrics of one job queue."""

from __future__ import annotations

from typing import Final

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from constructs import Construct

from .._l1_resources import default_policy
from ..nag_acknowledgments import acknowledge_wildcard_resource
from ..wire.monitoring_contract import (
    MAX_SNAPSHOT_AGE_ENV,
    RUNNABLE_COUNT_CAP_ENV,
    SHARE_METRICS_HANDLER,
)
from ..wire.share_arn import quota_shares_of
from ._function import (
    Invocation,
    QueueFunctionProps,
    Retries,
    acknowledge_xray,
    monitoring_function,
)

# Read-only, from the AWS Batch service authorization reference.
QUEUE_READ_ACTIONS: Final = ("batch:GetJobQueueSnapshot", "batch:ListQuotaShares")
SHARE_READ_ACTIONS: Final = ("batch:DescribeQuotaShare",)
# ListServiceJobs and DescribeServiceJob define no resource type: IAM accepts only "*" for them.
UNSCOPED_READ_ACTIONS: Final = ("batch:DescribeServiceJob", "batch:ListServiceJobs")

# One run reads a snapshot, the shares, and per share with a waiting job its first job and one
# bounded count; bounded well below the one-minute default schedule so that runs do not pile up
# behind a slow API.
SCHEDULED_INVOCATION: Final = Invocation(
    timeout=Duration.seconds(50),
    # The next run supersedes a missed or failed one: only record that it was missed.
    delivery=Retries(attempts=0, max_age=Duration.minutes(1)),
    invoke=Retries(attempts=0, max_age=Duration.minutes(1)),
)


class ShareMetricsFunction(Construct):
    """Runs the share-metrics handler on a schedule (an EventBridge rule, child ``Schedule``).

    Its role (``Role``) may read the queue's snapshot and quota shares and list service jobs,
    nothing else; its log group (``LogGroup``) is where the embedded-metric-format records
    become CloudWatch metrics. A failed run is not retried (the next one reads fresher data)
    and is recorded in the monitor's dead-letter queue.

    :param props: the monitor's: the monitoring asset (runtime + declaration file), the queue
        whose shares are measured, the handler's environment (see ``monitoring_contract``).
    :param schedule: time between runs.
    :param max_snapshot_age_seconds: the oldest snapshot judged (None: any age).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        props: QueueFunctionProps,
        schedule: Duration,
        runnable_count_cap: int,
        max_snapshot_age_seconds: int | None,
    ) -> None:
        super().__init__(scope, id)
        self.function, self.role, self.log_group = monitoring_function(
            self,
            props.settings,
            SCHEDULED_INVOCATION,
            code=props.code,
            handler=SHARE_METRICS_HANDLER,
            description=f"AWS Batch quota shares: per-share metrics ({self.node.path})",
            environment={
                **props.environment,
                RUNNABLE_COUNT_CAP_ENV: str(runnable_count_cap),
                MAX_SNAPSHOT_AGE_ENV: (
                    "off" if max_snapshot_age_seconds is None else str(max_snapshot_age_seconds)
                ),
            },
        )
        shares = quota_shares_of(props.job_queue_arn)
        self.role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(QUEUE_READ_ACTIONS), resources=[props.job_queue_arn])
        )
        self.role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(SHARE_READ_ACTIONS), resources=[shares])
        )
        self.role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(UNSCOPED_READ_ACTIONS), resources=["*"])
        )
        self.schedule = events.Rule(
            self,
            "Schedule",
            schedule=events.Schedule.rate(schedule),
            description=f"Runs the per-share metrics of {self.node.path}",
            targets=[SCHEDULED_INVOCATION.target(self.function, props.settings)],
        )
        policy = default_policy(self.role)
        acknowledge_wildcard_resource(
            policy,
            shares,
            "Read-only DescribeQuotaShare on the quota shares of this one job queue: shares are "
            "created and renamed at deploy time, and AWS Batch has no quota-share-name "
            "condition key.",
        )
        acknowledge_xray(
            policy,
            "and batch:ListServiceJobs / batch:DescribeServiceJob (read-only: a bounded count of "
            "each share's RUNNABLE jobs, and the instance type and count of each share's first "
            "waiting job) define no resource type either.",
        )
