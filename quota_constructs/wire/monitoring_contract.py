"""What the monitoring constructs and the monitoring Lambdas agree on: handler entry points,
environment variables (and how the constructs write them), and the names of the metrics the
Lambdas publish.

Pure Python (no boto3, no aws_cdk): the constructs import it to configure the functions, build
the dashboard and the alarms; the runtimes import it to read their settings and emit metrics.
A name changed here changes on both sides at once.
"""

from __future__ import annotations

from typing import Final, TypeVar

# -- entry points (module.function inside the Lambda asset) ------------------------------------
SHARE_METRICS_HANDLER: Final = "quota_constructs.runtime.share_metrics_handler.handler"
"""Scheduled: reads the queue snapshot, the live shares, each share's head job and a bounded
count of RUNNABLE jobs; publishes EMF."""
JOB_EVENTS_HANDLER: Final = "quota_constructs.runtime.job_events_handler.handler"
"""EventBridge target: service-job state changes and preemption started/completed."""

PREEMPTIONS_HANDLER: Final = "quota_constructs.runtime.job_events_handler.preemptions_handler"
"""EventBridge target of one stack's preemption events, for every queue monitored in the stack:
each preemption is looked up once (DescribeServiceJob), whatever the number of queues."""

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
RUNNABLE_COUNT_CAP_ENV: Final = "QUOTA_MONITOR_RUNNABLE_COUNT_CAP"
"""The most RUNNABLE jobs counted per share and run; ``0`` = not counted."""
DEFAULT_RUNNABLE_COUNT_CAP: Final = 100
"""One ListServiceJobs page per share with a waiting job."""

MAX_SNAPSHOT_AGE_ENV: Final = "QUOTA_MONITOR_MAX_SNAPSHOT_AGE_SECONDS"
"""Whole seconds: a ``GetJobQueueSnapshot`` older than this is not judged; ``off``: any age."""
DEFAULT_MAX_SNAPSHOT_AGE_SECONDS: Final = 600
"""Ten minutes. AWS documents each part's ``lastUpdatedAt`` but not how often it is refreshed:
the bound says how old a reading may be before waits and idle capacity computed from it are
withheld (a third of the default ``starved_after``)."""

AGREEMENT_METRICS_ENV: Final = "QUOTA_MONITOR_AGREEMENT_METRICS"
"""``"false"``: the job-events function publishes no :data:`WAIT_TIME` and no
:data:`BUDGET_FAILURES` (the monitor's ``agreement_metrics_enabled=False``); absent or
anything else: it publishes them for the shares whose agreement declares a wait target or an
interruption budget."""

MONITORED_QUEUES_ENV: Final = "QUOTA_MONITOR_QUEUES"
"""The preemptions function's: a JSON list, one object per monitored queue, each mapping the
per-queue variables above (queue ARN and name, declaration file, namespace, owner topics,
budget enforcement) to their values for that queue."""

DEFAULT_METRIC_NAMESPACE: Final = "QuotaConstructs/Batch"

_Topics = TypeVar("_Topics")


def queue_variables(
    *, job_queue_arn: str, job_queue_name: str, declaration_file: str, namespace: str
) -> dict[str, str]:
    """The variables telling a monitoring function which queue it watches, where the declaration
    of its shares is and where it publishes: every function gets them (the preemptions function
    once per queue); ``runtime.monitor_settings`` reads them back."""
    return {
        JOB_QUEUE_ARN_ENV: job_queue_arn,
        JOB_QUEUE_NAME_ENV: job_queue_name,
        DECLARATION_FILE_ENV: declaration_file,
        METRIC_NAMESPACE_ENV: namespace,
    }


def notification_variables(
    owner_topics: _Topics, *, enforce_budget: bool
) -> dict[str, _Topics | str]:
    """The variables only the event functions read: each owner's topic (``owner_topics``, a
    JSON object or what becomes one) and whether jobs past their budget are terminated."""
    return {
        OWNER_TOPICS_ENV: owner_topics,
        ENFORCE_BUDGET_ENV: "true" if enforce_budget else "false",
    }


def agreement_variables(*, enabled: bool) -> dict[str, str]:
    """The job-events function's switch for the agreement's metrics (:data:`AGREEMENT_METRICS_ENV`):
    written only when they are off, so a monitor that keeps the default deploys the environment
    it deployed before the metrics existed."""
    return {} if enabled else {AGREEMENT_METRICS_ENV: "false"}


# -- metric dimensions -------------------------------------------------------------------------
JOB_QUEUE_DIMENSION: Final = "JobQueue"
"""Its value is the queue's name (as ``JobQueueName`` in ``AWS/Batch``), never its ARN."""
QUOTA_SHARE_DIMENSION: Final = "QuotaShare"
CAPACITY_UNIT_DIMENSION: Final = "CapacityUnit"
PREEMPTION_KIND_DIMENSION: Final = "PreemptionKind"

# -- metrics per queue, share and capacity unit (share_metrics_handler) ------------------------
# Only what cannot be derived is published: a share's own limit is a constant of the
# declaration, and borrowed / idle own capacity follow from in-use and that constant by metric
# math (the dashboard and the alarms do it).
CAPACITY_IN_USE: Final = "CapacityInUse"
UNIT_METRICS: Final = (CAPACITY_IN_USE,)

# -- metrics per queue and share (share_metrics_handler) ---------------------------------------
RUNNABLE_JOBS: Final = "RunnableJobs"
"""RUNNABLE jobs counted, at most the count cap: a value equal to the cap means at least that
many (the count is one bounded listing, so a run's cost never grows with the backlog)."""
OLDEST_RUNNABLE_JOB_AGE: Final = "OldestRunnableJobAgeSeconds"
"""How long the share's first RUNNABLE job (``frontOfQuotaShares``) has waited at the front of
the share: now minus the later of its ``earliestTimeAtPosition`` and the end of its latest
preempted attempt. 0 when nothing waits."""
HEAD_JOB_FITS_IDLE_OWN: Final = "HeadJobFitsIdleOwnCapacity"
"""1 when the share's first RUNNABLE job would fit in the share's own idle capacity of the
job's own instance type (own limit minus in use, at least the job's instance count); else 0."""
SHARE_DRIFT: Final = "ShareDrift"
"""1 when the live share differs from the declaration, is INVALID or is missing; else 0."""
SHARE_METRICS: Final = (RUNNABLE_JOBS, OLDEST_RUNNABLE_JOB_AGE, HEAD_JOB_FITS_IDLE_OWN,
                        SHARE_DRIFT)

# -- metric per queue (share_metrics_handler) --------------------------------------------------
MONITOR_HEALTHY: Final = "MonitorHealthy"
"""Published by every run, with the JobQueue dimension only: 1 when every AWS Batch read of the
run succeeded and the queue snapshot was recent enough to judge, 0 when any failed, ran out of
time or read a snapshot older than the bound (:data:`MAX_SNAPSHOT_AGE_ENV`). Its absence means
the function did not run or crashed; the health alarm treats missing data as breaching."""

# -- metrics per queue and share from job events (job_events_handler) --------------------------
PREEMPTIONS: Final = "Preemptions"
"""Published with (JobQueue, QuotaShare) and with (JobQueue, QuotaShare, PreemptionKind)."""
JOBS_OVER_BUDGET: Final = "JobsOverInterruptionBudget"
JOBS_TERMINATED_OVER_BUDGET: Final = "JobsTerminatedOverBudget"
BLOCKED_JOBS: Final = "BlockedJobs"
"""Jobs of the share reported blocking the queue (``Batch Service Job Queue Blocked``), once per
job."""
EVENT_METRICS: Final = (PREEMPTIONS, JOBS_OVER_BUDGET, JOBS_TERMINATED_OVER_BUDGET, BLOCKED_JOBS)

# -- the agreement watched: per queue and share, from job events (job_events_handler) ----------
WAIT_TIME: Final = "WaitTime"
"""Seconds from a job's ``createdAt`` to its first start, one value per started job, published
once, only for shares whose agreement declares ``target_wait_p95`` (unit Seconds; alarms read
its p95)."""
BUDGET_FAILURES: Final = "BudgetFailures"
"""1 for each FAILED job whose preempted attempts outnumber its
``preemptionRetriesBeforeTermination``, only for shares whose agreement declares an
``interruption_budget`` (unit Count; alarms read its Sum)."""
AGREEMENT_METRICS: Final = (WAIT_TIME, BUDGET_FAILURES)

CROSS_SHARE: Final = "CROSS_SHARE"
IN_SHARE: Final = "IN_SHARE"
UNKNOWN_KIND: Final = "UNKNOWN"
PREEMPTION_KINDS: Final = (CROSS_SHARE, IN_SHARE, UNKNOWN_KIND)

# -- EventBridge -------------------------------------------------------------------------------
EVENT_SOURCE: Final = "aws.batch"
STATE_CHANGE_DETAIL_TYPE: Final = "Batch Service Job State Change"
PREEMPTION_STARTED_DETAIL_TYPE: Final = "Batch Service Job Preemption Started"
PREEMPTION_COMPLETED_DETAIL_TYPE: Final = "Batch Service Job Preemption Completed"
QUEUE_BLOCKED_DETAIL_TYPE: Final = "Batch Service Job Queue Blocked"
"""AWS Batch user guide, "Service job queue blocked events": detail like DescribeServiceJob
(``jobQueue``, ``status`` RUNNABLE, ``statusReason``), resources[0] the service job."""
STATE_CHANGE_STATUSES: Final = ("FAILED",)
"""The only state change an owner is told about (a job failed after its preemption retries);
the rule filters on it so no other state change invokes the function."""
JOB_STARTED_STATUSES: Final = ("RUNNING",)
"""The state change of a job starting (``startedAt``): delivered by a rule of its own, only to
the job-events function of a queue with a share that declares a wait target."""
