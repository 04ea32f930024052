"""EventBridge target: preemptions counted per share, owners told, budgets watched.

One notification per preemption. *Preemption Completed* is the event that acts: it carries the
``preemptionSummary`` (which attempt this was, when it ran, why it stopped); *Preemption
Started* only logs, so the pair never notifies twice. Neither carries a queue or a share, so the
job is looked up (DescribeServiceJob) and jobs of other queues are ignored.

*Service Job Queue Blocked* (AWS Batch user guide, "Service job queue blocked events") is a job
at the front that can never start (``MISCONFIGURATION:...``); it names the queue but not the
share, so the job is looked up, its owner told once per job, and the share's ``BlockedJobs``
count published. *Service Job State Change* (FAILED only, filtered by the rule) tells an owner
about a job that FAILED after exhausting its preemption retries. A FAILED job the monitor
itself terminated is not reported again.

The agreement watched (:mod:`.agreement_metrics`): for a share whose agreement declares an
interruption budget, such a FAILED job also counts in ``BudgetFailures``; for a share that
declares a wait target, the *State Change* to RUNNING (delivered by a rule of its own, only
where a share declares one) publishes the job's ``WaitTime`` at its first start.

The job is looked up by a form DescribeServiceJob accepts, its ``jobId`` (the API reference
documents a job id, not an ARN): the event's ``detail.jobId`` first, then the id ending its ARN.
AWS's own sample *State Change* and *Queue Blocked* events carry a ``detail.jobId`` that differs
from the id in ``detail.jobArn``; whichever AWS Batch knows is the job, and from then on the
job's own ARN (as DescribeServiceJob returns it) names it.

Failures raise, so Lambda's asynchronous retries and then the dead-letter queue take over. The
order makes a retry safe: look up, terminate (only an active job), notify, publish metrics,
remember; a retry after a failed notification does not terminate twice. Duplicate deliveries
are dropped by :class:`EventMemory` (see there for what remains at-least-once).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from quota_constructs.wire.monitoring_contract import (
    BLOCKED_JOBS,
    ENFORCE_BUDGET_ENV,
    JOB_QUEUE_ARN_ENV,
    JOB_QUEUE_DIMENSION,
    JOB_QUEUE_NAME_ENV,
    JOB_STARTED_STATUSES,
    JOBS_OVER_BUDGET,
    JOBS_TERMINATED_OVER_BUDGET,
    MONITORED_QUEUES_ENV,
    OWNER_TOPICS_ENV,
    PREEMPTION_COMPLETED_DETAIL_TYPE,
    PREEMPTION_KIND_DIMENSION,
    PREEMPTION_STARTED_DETAIL_TYPE,
    PREEMPTIONS,
    QUEUE_BLOCKED_DETAIL_TYPE,
    QUOTA_SHARE_DIMENSION,
    STATE_CHANGE_DETAIL_TYPE,
)

from .agreement_metrics import (
    budget_failure_record,
    event_time_ms,
    is_budget_failure,
    read_start,
    wait_time_record,
)
from .batch_gateway import BatchConnection
from .emf import COUNT, MetricRecord, emit
from .event_memory import EventMemory
from .job_ledger import LedgerWriter
from .monitor_settings import MonitorConfigurationError, MonitorSettings
from .monitoring_gateway import MonitoringGateway
from .notifier import Notifier, OwnerMessage, create_sns_client
from .owner_messages import (
    TERMINATION_REASON_PREFIX,
    failed_after_preemptions_message,
    preemption_message,
    stuck_message,
    termination_reason,
)
from .preemption import Preemption
from .structured_log import log

FINISHED_STATUSES = frozenset({"SUCCEEDED", "FAILED"})
# A duplicate is the same event under the same configuration; a monitor pointed elsewhere (or a
# test's fresh fake) is not a duplicate.
_FINGERPRINT_VARIABLES = (JOB_QUEUE_ARN_ENV, JOB_QUEUE_NAME_ENV, OWNER_TOPICS_ENV,
                          ENFORCE_BUDGET_ENV, "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BATCH",
                          "AWS_ENDPOINT_URL_SNS")

MEMORY = EventMemory()


def preemptions_handler(event: Mapping[str, Any], context: Any,
                        connection: BatchConnection | None = None) -> dict[str, Any]:
    """Preemption events of every queue monitored in one stack: one lookup per preemption,
    then the monitor of the job's queue acts as :func:`handler` would."""
    detail_type, job_arn, fields = _received(event)
    if detail_type == PREEMPTION_STARTED_DETAIL_TYPE:
        return _outcome("logged", fields)
    if detail_type != PREEMPTION_COMPLETED_DETAIL_TYPE:
        return _outcome("ignored: not a preemption event", fields)
    if not job_arn:
        return _outcome("ignored: no service job ARN", fields)
    queues = monitored_queues()
    batch = MonitoringGateway.from_context(context, connection)
    job = describe_first(batch, job_ids(event, job_arn))
    if job is None:
        return _outcome("ignored: AWS Batch does not know the job", fields)
    settings = next((s for s in queues if s.queue.holds(job.get("jobQueue"))), None)
    if settings is None:
        return _outcome("ignored: another job queue", fields, job_queue=job.get("jobQueue"))
    monitor = _Monitor(settings, context, connection, batch=batch, known_job=job)
    return monitor.act(detail_type, event, _arn_of(job, job_arn), fields)


def monitored_queues() -> list[MonitorSettings]:
    """The settings of every queue the preemptions function serves."""
    raw = os.environ.get(MONITORED_QUEUES_ENV, "")
    try:
        entries = json.loads(raw)
    except ValueError:
        entries = None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise MonitorConfigurationError(
            f"{MONITORED_QUEUES_ENV} is not a JSON list of objects: {raw[:300]!r}"
        )
    # Each entry holds one queue's variables; the rest (code root, endpoints) is the function's.
    return [
        MonitorSettings.from_environment({
            **os.environ,
            **{name: value if isinstance(value, str) else json.dumps(value)
               for name, value in entry.items()},
        })
        for entry in entries
    ]


def handler(event: Mapping[str, Any], context: Any,
            connection: BatchConnection | None = None) -> dict[str, Any]:
    """Lambda's entry point (``connection``: how to reach AWS; the default in Lambda)."""
    detail_type, job_arn, fields = _received(event)
    if detail_type == PREEMPTION_STARTED_DETAIL_TYPE:
        # Counted and reported once, from the Completed event that follows.
        return _outcome("logged", fields)
    if detail_type not in (PREEMPTION_COMPLETED_DETAIL_TYPE, STATE_CHANGE_DETAIL_TYPE,
                           QUEUE_BLOCKED_DETAIL_TYPE):
        return _outcome("ignored: not a service-job event", fields)
    if not job_arn:
        return _outcome("ignored: no service job ARN", fields)
    monitor = _Monitor(MonitorSettings.from_environment(), context, connection)
    return monitor.act(detail_type, event, job_arn, fields)


def _received(event: Mapping[str, Any]) -> tuple[Any, str, dict[str, Any]]:
    """What both entry points read and log first: the event's type, its service job's ARN, and
    the fields every outcome carries."""
    detail_type = event.get("detail-type")
    job_arn = _job_arn(event)
    fields = {"event_id": event.get("id"), "detail_type": detail_type, "job_arn": job_arn}
    log("job_event", **fields)
    return detail_type, job_arn, fields


class _NothingToDo(Exception):
    """The event asks nothing of this monitor (another queue, a job AWS Batch does not know, a
    repeated delivery): raised by the steps every event kind shares, answered in
    :meth:`_Monitor.act` with the outcome that says why."""

    def __init__(self, outcome: str) -> None:
        super().__init__(outcome)
        self.outcome = outcome


class _ShareJob(NamedTuple):
    """The event's job, as AWS Batch describes it, with its own ARN and its quota share."""

    job: dict[str, Any]
    arn: str
    share: str


class _Monitor:
    def __init__(self, settings: MonitorSettings, context: Any,
                 connection: BatchConnection | None,
                 batch: MonitoringGateway | None = None,
                 known_job: dict[str, Any] | None = None) -> None:
        self.settings = settings
        self._connection = connection or BatchConnection()
        self.batch = batch or MonitoringGateway.from_context(context, self._connection)
        self._known_job = known_job
        self._notifier: Notifier | None = None
        self.fingerprint = "|".join(
            [os.environ.get(name, "") for name in _FINGERPRINT_VARIABLES]
            + [settings.queue.arn, settings.queue.name]
        )

    @property
    def notifier(self) -> Notifier:
        if self._notifier is None:
            # The connection's retry policy is the one every AWS call of the invocation follows.
            self._notifier = Notifier(create_sns_client(), self._connection.policy)
        return self._notifier

    def act(self, detail_type: str, event: Mapping[str, Any], job_arn: str,
            fields: dict[str, Any]) -> dict[str, Any]:
        """The outcome of this monitor's step for the event's type (one it acts on)."""
        step = {
            PREEMPTION_COMPLETED_DETAIL_TYPE: self.preemption_completed,
            QUEUE_BLOCKED_DETAIL_TYPE: self.queue_blocked,
            STATE_CHANGE_DETAIL_TYPE: self.state_changed,
        }[detail_type]
        try:
            outcome = step(event, job_arn, fields)
        except _NothingToDo as nothing:
            outcome = _outcome(nothing.outcome, fields)
        self._keep_in_ledger(detail_type, event, job_arn)
        return outcome

    # -- preemptions ----------------------------------------------------------------------------

    def preemption_completed(self, event: Mapping[str, Any], job_arn: str,
                             fields: dict[str, Any]) -> dict[str, Any]:
        job, job_arn, share = self._job_of_this_queue(event, job_arn, fields)
        detail = event.get("detail") or {}
        summary = detail.get("preemptionSummary") or job.get("preemptionSummary") or {}
        preemption = Preemption.from_summary(summary) if isinstance(summary, Mapping) else None
        if preemption is None:
            return _outcome("ignored: no preemption recorded for the job", fields)
        fields.update(quota_share=share, attempt=preemption.attempt_count, kind=preemption.kind)
        key = f"preemption/{job_arn}/{job.get('createdAt')}/{preemption.attempt_count}"
        self._unless_handled(key)

        agreement = self.settings.agreement_of(share)
        budget = agreement.interruption_budget if agreement is not None else None
        over = budget is not None and preemption.attempt_count > budget
        terminated = False
        if over and self.settings.enforce_budget and _still_active(job):
            assert budget is not None
            self.batch.terminate_job(
                str(job.get("jobId") or _job_id(job_arn)),
                termination_reason(share, preemption.attempt_count, budget),
            )
            terminated = True
            log("job_terminated_over_budget", **fields, budget=budget)
        self._notify(topic=self.settings.topic_of(agreement), fields=fields,
                     message=preemption_message(
                         job=job, job_arn=job_arn, share=share, queue=self.settings.queue.name,
                         preemption=preemption, agreement=agreement,
                         enforce_budget=self.settings.enforce_budget, terminated=terminated,
                         key=key,
                     ))
        emit(self._preemption_records(share, preemption.kind, budget, over, terminated))
        MEMORY.remember(self._memory_key(key))
        return _outcome("terminated" if terminated else "reported", fields,
                        over_budget=over)

    def _preemption_records(self, share: str, kind: str, budget: int | None, over: bool,
                            terminated: bool) -> list[MetricRecord]:
        namespace = self.settings.namespace
        dims = {JOB_QUEUE_DIMENSION: self.settings.queue.name, QUOTA_SHARE_DIMENSION: share}
        counted = MetricRecord(
            namespace, {**dims, PREEMPTION_KIND_DIMENSION: kind},
            dimension_sets=[list(dims), [*dims, PREEMPTION_KIND_DIMENSION]],
        )
        counted.put(PREEMPTIONS, 1, COUNT)
        records = [counted]
        if budget is not None:
            contract = MetricRecord(namespace, dims)
            contract.put(JOBS_OVER_BUDGET, 1 if over else 0, COUNT)
            contract.put(JOBS_TERMINATED_OVER_BUDGET, 1 if terminated else 0, COUNT)
            records.append(contract)
        return records

    # -- a job blocking the queue ---------------------------------------------------------------

    def queue_blocked(self, event: Mapping[str, Any], job_arn: str,
                      fields: dict[str, Any]) -> dict[str, Any]:
        detail = event.get("detail") or {}
        job, job_arn, share = self._job_of_this_queue(event, job_arn, fields,
                                                      reported_queue=detail.get("jobQueue"))
        fields.update(quota_share=share)
        # Once per job (AWS may report a blocked queue again while the job stays at the front).
        key = f"blocked/{job_arn}/{job.get('createdAt')}"
        self._unless_handled(key)
        reason = str(detail.get("statusReason") or job.get("statusReason") or "no reason given")
        self._notify(topic=self.settings.topic_of(self.settings.agreement_of(share)),
                     fields=fields,
                     message=stuck_message(job=job, job_arn=job_arn, share=share,
                                           queue=self.settings.queue.name, reason=reason,
                                           key=key))
        record = MetricRecord(self.settings.namespace, {
            JOB_QUEUE_DIMENSION: self.settings.queue.name, QUOTA_SHARE_DIMENSION: share,
        })
        record.put(BLOCKED_JOBS, 1, COUNT)
        emit([record])
        MEMORY.remember(self._memory_key(key))
        return _outcome("reported", fields)

    # -- state changes --------------------------------------------------------------------------

    def state_changed(self, event: Mapping[str, Any], job_arn: str,
                      fields: dict[str, Any]) -> dict[str, Any]:
        detail = event.get("detail") or {}
        status = str(detail.get("status") or "")
        reason = str(detail.get("statusReason") or "")
        fields.update(status=status)
        if status in JOB_STARTED_STATUSES:
            return self.job_started(event, job_arn, fields)
        if status != "FAILED":
            # A job that can never start is reported from the Queue Blocked event instead.
            return _outcome("ignored: nothing for an owner", fields)
        if TERMINATION_REASON_PREFIX in reason:
            return _outcome("ignored: terminated by this monitor, owner already told", fields)
        job, job_arn, share = self._job_of_this_queue(event, job_arn, fields,
                                                      reported_queue=detail.get("jobQueue"))
        fields.update(quota_share=share)
        key = f"{status}/{job_arn}/{job.get('createdAt')}/{event.get('time')}/{reason}"
        self._unless_handled(key)
        topic = self.settings.topic_of(self.settings.agreement_of(share))
        queue_name = self.settings.queue.name
        preemption = Preemption.from_summary(job.get("preemptionSummary") or {})
        retries = (job.get("preemptionConfiguration") or {}).get(
            "preemptionRetriesBeforeTermination")
        if TERMINATION_REASON_PREFIX in str(job.get("statusReason") or ""):
            return _outcome("ignored: terminated by this monitor, owner already told", fields)
        exhausted = preemption is not None and (
            (isinstance(retries, int) and preemption.attempt_count > retries)
            or "preempt" in reason.lower()
        )
        if preemption is None or not exhausted:
            return _outcome("ignored: failed, not for preemptions", fields)
        message = failed_after_preemptions_message(
            job=job, job_arn=job_arn, share=share, queue=queue_name,
            count=preemption.attempt_count,
            retries=retries if isinstance(retries, int) else None, key=key,
        )
        self._notify(topic=topic, fields=fields, message=message)
        budget_failure = self._publish_budget_failure(detail, job, share)
        MEMORY.remember(self._memory_key(key))
        return _outcome("reported", fields, budget_failure=budget_failure)

    # -- the agreement watched: waits to first start, jobs lost to their budget ----------------

    def job_started(self, event: Mapping[str, Any], job_arn: str,
                    fields: dict[str, Any]) -> dict[str, Any]:
        """``WaitTime`` of the job at its first start, for a share that declares a wait
        target; a later start (after a preemption) publishes nothing."""
        if not self.settings.agreement_metrics:
            return _outcome("ignored: the agreement's metrics are off", fields)
        detail = event.get("detail") or {}
        job, job_arn, share = self._job_of_this_queue(event, job_arn, fields,
                                                      reported_queue=detail.get("jobQueue"))
        fields.update(quota_share=share)
        agreement = self.settings.agreement_of(share)
        if agreement is None or agreement.target_wait_p95 is None:
            return _outcome("ignored: the share declares no wait target", fields)
        reading = read_start(detail, job, event_time_ms(event))
        if not reading.first:
            return _outcome("ignored: not the job's first start", fields)
        if reading.wait_seconds is None:
            return _outcome("ignored: AWS Batch gives no creation time for the job", fields)
        # One wait per job, whichever delivery of its first start comes first.
        key = f"started/{job_arn}/{job.get('createdAt')}"
        self._unless_handled(key)
        emit([wait_time_record(self.settings.namespace, self.settings.queue.name, share,
                               reading.wait_seconds)])
        MEMORY.remember(self._memory_key(key))
        return _outcome("published", fields, wait_seconds=reading.wait_seconds)

    def _publish_budget_failure(self, detail: Mapping[str, Any], job: Mapping[str, Any],
                                share: str) -> bool:
        """Count a FAILED job that exhausted its preemption retries in ``BudgetFailures``, for
        a share that declares an interruption budget; whether it was counted."""
        agreement = self.settings.agreement_of(share)
        if (not self.settings.agreement_metrics or agreement is None
                or agreement.interruption_budget is None
                or not is_budget_failure(detail, job)):
            return False
        emit([budget_failure_record(self.settings.namespace, self.settings.queue.name, share)])
        return True

    # -- the job ledger (optional) --------------------------------------------------------------

    def _keep_in_ledger(self, detail_type: str, event: Mapping[str, Any], job_arn: str) -> None:
        """A terminal attempt of this queue's job kept in the job ledger
        (:mod:`.job_ledger`), when the monitor keeps one: the job's final record when it
        finished, the job as it stood when an attempt was preempted."""
        bucket = self.settings.ledger_bucket
        detail = event.get("detail") or {}
        finished = (detail_type == STATE_CHANGE_DETAIL_TYPE
                    and str(detail.get("status") or "") in FINISHED_STATUSES)
        if bucket is None or not (finished or detail_type == PREEMPTION_COMPLETED_DETAIL_TYPE):
            return
        try:
            job, _, _ = self._job_of_this_queue(
                event, job_arn, {}, reported_queue=detail.get("jobQueue") if finished else None)
        except _NothingToDo:
            return
        writer = LedgerWriter(bucket, self.settings.ledger_prefix,
                              policy=self._connection.policy)
        queue = self.settings.queue.name
        if finished:
            writer.keep_final(queue, job)
            return
        summary = detail.get("preemptionSummary") or job.get("preemptionSummary") or {}
        preemption = Preemption.from_summary(summary) if isinstance(summary, Mapping) else None
        if preemption is not None:
            writer.keep_preempted(queue, job, preemption)

    # -- shared steps ---------------------------------------------------------------------------

    def _job_of_this_queue(
        self, event: Mapping[str, Any], job_arn: str, fields: dict[str, Any], *,
        reported_queue: Any = None,
    ) -> _ShareJob:
        """The event's job, or :class:`_NothingToDo` (``fields`` naming what was found) to ignore
        the event. An event that names another queue (``reported_queue``, its
        ``detail.jobQueue``) is ignored without looking the job up."""
        if reported_queue and not self.settings.queue.holds(reported_queue):
            fields["job_queue"] = reported_queue
            raise _NothingToDo("ignored: another job queue")
        ids = job_ids(event, job_arn)
        job = self._known_job if self._known_job is not None else describe_first(self.batch, ids)
        self._known_job = job  # one lookup per event, whoever asks (the ledger too)
        if job is None:
            fields["job_ids"] = list(ids)
            raise _NothingToDo("ignored: AWS Batch does not know the job")
        if not self.settings.queue.holds(job.get("jobQueue")):
            fields["job_queue"] = job.get("jobQueue")
            raise _NothingToDo("ignored: another job queue")
        if not job.get("quotaShareName"):
            # Every job of a quota-share queue has a share; a botocore too old to know the
            # field drops it, and a metric without its share would mislead.
            raise _NothingToDo("ignored: AWS Batch names no quota share for the job")
        return _ShareJob(job, _arn_of(job, job_arn), str(job["quotaShareName"]))

    def _unless_handled(self, key: str) -> None:
        """Go on only with the first delivery of the event remembered by ``key``."""
        if MEMORY.seen(self._memory_key(key)):
            raise _NothingToDo("duplicate")

    def _notify(self, *, topic: str | None, fields: Mapping[str, Any],
                message: OwnerMessage) -> None:
        if topic is None:
            log("owner_not_notified", **fields,
                why="the share has no agreement, or no topic was given for its owner")
            return
        self.notifier.publish(topic, message)

    def _memory_key(self, key: str) -> str:
        return f"{self.fingerprint}|{key}"


def _job_arn(event: Mapping[str, Any]) -> str:
    detail = event.get("detail") or {}
    for candidate in (detail.get("preemptedJobArn"), detail.get("jobArn"),
                      *(event.get("resources") or [])):
        if isinstance(candidate, str) and ":service-job/" in candidate:
            return candidate
    return ""


def job_ids(event: Mapping[str, Any], job_arn: str) -> list[str]:
    """The ids to look the event's job up by, in order, each once: ``detail.jobId``, then the
    id ending ``job_arn`` (DescribeServiceJob takes a job id; AWS documents no ARN form)."""
    detail = event.get("detail") or {}
    given = detail.get("jobId") if isinstance(detail, Mapping) else None
    ids = [given] if isinstance(given, str) and given else []
    from_arn = _job_id(job_arn)
    if from_arn and from_arn not in ids:
        ids.append(from_arn)
    return ids


def describe_first(batch: MonitoringGateway, ids: Sequence[str]) -> dict[str, Any] | None:
    """DescribeServiceJob of the first of ``ids`` AWS Batch knows; None when it knows none.
    Only "not found" moves on to the next id: any other failure raises."""
    for job_id in ids:
        job = batch.describe_job(job_id)
        if job is not None:
            if job_id != ids[0]:
                log("service_job_found_by_arn_id", job_id=job_id, event_job_id=ids[0])
            return job
    return None


def _arn_of(job: Mapping[str, Any], event_arn: str) -> str:
    """The job's own ARN as AWS Batch describes it, else the event's."""
    own = job.get("jobArn")
    return own if isinstance(own, str) and own else event_arn


def _still_active(job: Mapping[str, Any]) -> bool:
    """Not finished: a finished job is never terminated (so a retry never terminates twice)."""
    return job.get("status") not in FINISHED_STATUSES and not job.get("isTerminated")


def _job_id(job_arn: str) -> str:
    return job_arn.rsplit("/", 1)[-1]


def _outcome(outcome: str, fields: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    result = {**fields, **extra, "outcome": outcome}
    log("job_event_done", **result)
    return result
