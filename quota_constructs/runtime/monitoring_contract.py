"""What the monitoring constructs and the monitoring Lambdas agree on: handler entry points,
environment variables, and the names of the metrics the Lambdas publish.

Pure Python (no boto3, no aws_cdk): the constructs import it to configure the functions, build
the dashboard and the alarms; the runtimes import it to read their settings and emit metrics.
A name changed here changes on both sides at once.
"""

from __future__ import annotations

from typing import Final

# -- entry points (module.function inside the Lambda asset) ------------------------------------
SHARE_METRICS_HANDLER: Final = "quota_constructs.runtime.share_metrics_handler.handler"
"""Scheduled: reads the queue snapshot, the live shares and RUNNABLE jobs; publishes EMF."""
JOB_EVENTS_HANDLER: Final = "quota_constructs.runtime.job_events_handler.handler"
"""EventBridge target: service-job state changes and preemption started/completed."""

# -- environment variables ----------------------------------------------------------------------
JOB_QUEUE_ARN_ENV: Final = "QUOTA_MONITOR_JOB_QUEUE_ARN"
JOB_QUEUE_NAME_ENV: Final = "QUOTA_MONITOR_JOB_QUEUE_NAME"
DECLARATION_FILE_ENV: Final = "QUOTA_MONITOR_DECLARATION_FILE"
"""Path, relative to the function's code root, of the JSON declaration of the monitored shares
(rendered by the model in the custom resource's wire format, plus each share's agreement).
It travels as a file in the asset because Lambda limits all environment variables together to
4 KB, which 20 declared shares exceed."""
OWNER_TOPICS_ENV: Final = "QUOTA_MONITOR_OWNER_TOPICS"
"""JSON object: owner name -> SNS topic ARN that reaches that owner."""
METRIC_NAMESPACE_ENV: Final = "QUOTA_MONITOR_NAMESPACE"
ENFORCE_BUDGET_ENV: Final = "QUOTA_MONITOR_ENFORCE_INTERRUPTION_BUDGET"
"""``"true"`` only when the user opted in to terminating jobs past their share's budget."""

DEFAULT_METRIC_NAMESPACE: Final = "QuotaConstructs/Batch"

# -- metric dimensions -------------------------------------------------------------------------
JOB_QUEUE_DIMENSION: Final = "JobQueue"
"""Its value is the queue's name (as ``JobQueueName`` in ``AWS/Batch``), never its ARN."""
QUOTA_SHARE_DIMENSION: Final = "QuotaShare"
CAPACITY_UNIT_DIMENSION: Final = "CapacityUnit"
PREEMPTION_KIND_DIMENSION: Final = "PreemptionKind"

# -- metrics per queue, share and capacity unit (share_metrics_handler) ------------------------
CAPACITY_IN_USE: Final = "CapacityInUse"
CAPACITY_LIMIT: Final = "CapacityLimit"
"""The share's own declared limit for the unit."""
BORROWED_CAPACITY: Final = "BorrowedCapacity"
"""In use above the share's own limit."""
IDLE_OWN_CAPACITY: Final = "IdleOwnCapacity"
"""Own limit not in use by the share (lent out when the strategy lends)."""
UNIT_METRICS: Final = (CAPACITY_IN_USE, CAPACITY_LIMIT, BORROWED_CAPACITY, IDLE_OWN_CAPACITY)

# -- metrics per queue and share (share_metrics_handler) ---------------------------------------
RUNNABLE_JOBS: Final = "RunnableJobs"
OLDEST_RUNNABLE_JOB_AGE: Final = "OldestRunnableJobAgeSeconds"
SHARE_DRIFT: Final = "ShareDrift"
"""1 when the live share differs from the declaration, is INVALID or is missing; else 0."""
SHARE_METRICS: Final = (RUNNABLE_JOBS, OLDEST_RUNNABLE_JOB_AGE, SHARE_DRIFT)

# -- metrics per queue and share from job events (job_events_handler) --------------------------
PREEMPTIONS: Final = "Preemptions"
"""Published with (JobQueue, QuotaShare) and with (JobQueue, QuotaShare, PreemptionKind)."""
JOBS_OVER_BUDGET: Final = "JobsOverInterruptionBudget"
JOBS_TERMINATED_OVER_BUDGET: Final = "JobsTerminatedOverBudget"
EVENT_METRICS: Final = (PREEMPTIONS, JOBS_OVER_BUDGET, JOBS_TERMINATED_OVER_BUDGET)

CROSS_SHARE: Final = "CROSS_SHARE"
IN_SHARE: Final = "IN_SHARE"
UNKNOWN_KIND: Final = "UNKNOWN"
PREEMPTION_KINDS: Final = (CROSS_SHARE, IN_SHARE, UNKNOWN_KIND)

# -- EventBridge -------------------------------------------------------------------------------
EVENT_SOURCE: Final = "aws.batch"
STATE_CHANGE_DETAIL_TYPE: Final = "Batch Service Job State Change"
PREEMPTION_STARTED_DETAIL_TYPE: Final = "Batch Service Job Preemption Started"
PREEMPTION_COMPLETED_DETAIL_TYPE: Final = "Batch Service Job Preemption Completed"
