"""One declared queue as AWS Batch serves it: its resources, its jobs and its operations.

Every operation takes the request's parameters (already checked against botocore's model by
:mod:`.protocol`) and returns the response's members; a request Batch would refuse raises
:class:`~.protocol.ApiError` naming the field and the value. Who runs is decided by the
simulator's engine (:mod:`.scheduler`); this module keeps what AWS shows of it.

Time: the service runs at the clock's time (:mod:`.clock`: it starts at the real time, or at
a start the user gives), and every time it answers with is on that clock. A submitted job is
SUBMITTED until the next scheduling pass (the clock moving: ``advance``, or real time under
the wall clock), which makes it RUNNABLE and offers it capacity; priority changes, finishes
and terminations take effect at once, and the capacity they free is offered at once too.
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from heapq import merge, nlargest
from itertools import islice
from operator import attrgetter
from typing import Any, TypeVar

from ..model import CapacityLimit, QuotaAllocation, QuotaConfigError, QuotaShareSpec
from ..model.submission import check_job_name
from ..model.tags import RESERVED_TAG_PREFIX, validate_tags
from ..runtime.ownership import LIFECYCLE_TAG_KEY, OWNER_TAG_KEY, owner_marker, stack_marker
from ..runtime.share_request import GuardOptIns
from ..simulation.engine import SteppingEngine
from ..simulation.inputs import SimulationOptions
from ..wire.monitoring_contract import QUEUE_BLOCKED_DETAIL_TYPE, STATE_CHANGE_DETAIL_TYPE
from ..wire.share_arn import QuotaShareArn, quota_share_arn
from ..wire.share_codec import api_configuration, resource_properties, spec_from_properties
from ..wire.share_config import ENABLED, Casing, recased
from ..wire.training_request import DEFAULT_MAX_RUNTIME_SECONDS
from . import events
from .clock import Clock
from .protocol import ApiError, bad_value
from .records import (
    ACTIVE,
    DISPATCHED,
    FINISHED,
    RECENT_PREEMPTIONS,
    Job,
    JobIndex,
    JobState,
    Share,
)
from .scheduler import compile_shares

ACCOUNT = "123456789012"
MAX_PAYLOAD_BYTES = 10 * 1024
MAX_SHARES = 20
MIN_PRIORITY, MAX_PRIORITY = 0, 9999
DEFAULT_MAX_RUNTIME = DEFAULT_MAX_RUNTIME_SECONDS
"""SageMaker's default ``StoppingCondition.MaxRuntimeInSeconds`` (one day), for a payload
that names none."""
MAX_RESULTS = 100
FRONT_OF_QUEUE = 100
TERMINATE_MANY = 50
JOB_FILTERS = ("JOB_NAME", "BEFORE_CREATED_AT", "AFTER_CREATED_AT", "SHARE_IDENTIFIER",
               "QUOTA_SHARE_NAME")
LIMIT_EXCEEDED = "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"
ENVIRONMENT_MAX = "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"
_seq = attrgetter("seq")
_T = TypeVar("_T")
_BLOCKED = 1 << 40
"""Queue entries of jobs that can never run carry this plus their number (not an engine job)."""


class QueueService:
    """The emulated AWS Batch of one queue (scheduling policy, service environment, queue,
    shares and service jobs). Thread-safe: each call runs under one lock."""

    def __init__(
        self, *, capacity_limits: Sequence[CapacityLimit], shares: Sequence[QuotaShareSpec],
        queue_name: str, clock: Clock, options: SimulationOptions | None = None,
        region: str = "us-east-1", account: str = ACCOUNT,
        lifecycles: Mapping[str, GuardOptIns] | None = None,
    ) -> None:
        self.options = options or SimulationOptions()
        self.capacity_limits = tuple(capacity_limits)
        self.clock = clock
        self.region, self.account = region, account
        self.lock = threading.RLock()
        prefix = f"arn:aws:batch:{region}:{account}"
        self.queue_name = queue_name
        self.queue_arn = f"{prefix}:job-queue/{queue_name}"
        self.environment_name = f"{queue_name}-environment"
        self.environment_arn = f"{prefix}:service-environment/{self.environment_name}"
        self.policy_name = f"{queue_name}-policy"
        self.policy_arn = f"{prefix}:scheduling-policy/{self.policy_name}"
        self.job_prefix = f"{prefix}:service-job/"
        self.training_prefix = f"arn:aws:sagemaker:{region}:{account}:training-job/"
        self.tags: dict[str, dict[str, str]] = {
            self.queue_arn: {}, self.environment_arn: {}, self.policy_arn: {},
        }
        self.stack_id = (f"arn:aws:cloudformation:{region}:{account}:stack/"
                         f"{queue_name}-emulated/00000000-0000-4000-8000-000000000000")
        """The stack the declared shares are recorded as deployed by (custom-resource
        provisioning, every guard on), so ``preview`` judges a change as it would live."""
        self.shares: dict[str, Share] = {}
        self.engine_shares: list[Share | None] = []
        for spec in shares:
            self._add_share(spec, (lifecycles or {}).get(spec.name, GuardOptIns()))
        self.allocation = self._check(list(self.shares.values()))
        self.engine = SteppingEngine(
            compile_shares(self.capacity_limits, [s.spec for s in self.shares.values()],
                           self.options),
            self.options, self,
        )
        self.unit_index = {u: k for k, u in enumerate(self.engine.problem.unit_names)}
        self.jobs = JobIndex()
        self.pending: list[Job] = []
        self.client_tokens: dict[str, tuple[dict[str, Any], Job]] = {}
        """Per clientToken, the request it came with (without the token) and its job."""
        self.events: list[dict[str, Any] | JobState] = []
        """Every event so far; a state change is kept as the job's state and rendered when
        first read."""
        self.blocked: dict[str, dict[int, Job]] = {}
        """RUNNABLE jobs that can never run, per share."""
        self.synced = clock.now()
        self.seq = itertools.count()
        self.operations: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            name[3:]: getattr(self, name) for name in dir(self) if name.startswith("op_")
        }

    # ------------------------------------------------------------------------- the clock

    def ms(self, seconds: float) -> int:
        """Emulated second ``seconds`` as Batch sends times: milliseconds since the epoch."""
        return self.clock.ms(seconds)

    def handle(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        run = self.operations.get(operation)
        if run is None:
            raise ApiError(f"operation {operation} is not emulated; the emulator serves "
                           + ", ".join(sorted(self.operations)))
        with self.lock:
            self.sync()
            return run(params)

    def sync(self) -> None:
        """Run scheduling up to the clock's time, if it moved (the wall clock)."""
        now = self.clock.now()
        if now > self.synced:
            self.scheduling_pass(now)

    def advance(self, seconds: float) -> float:
        """Move the clock ahead and run scheduling up to its time (also when ``seconds`` is
        0: a pass at the current time). Returns the new time in seconds."""
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not (
            seconds >= 0 and seconds != float("inf")
        ):
            raise bad_value("seconds", seconds, "a finite number of seconds >= 0")
        with self.lock:
            self.sync()
            now = self.clock.advance(seconds)
            self.scheduling_pass(max(now, self.synced))
            return self.synced

    def scheduling_pass(self, until: float) -> None:
        """Submitted jobs become RUNNABLE (at their submission time) and every moment up to
        ``until`` runs in the engine."""
        pending, self.pending = self.pending, []
        for job in pending:
            self._make_runnable(job)
        self.engine.advance(until)
        self.synced = until

    # ------------------------------------------------------------- what the engine reports

    def job_started(self, j: int, now: float, borrowed: bool) -> None:
        job = self.jobs.by_engine[j]
        at = self.ms(now)
        job.scheduled_at = job.started_at = job.attempt_started = at
        job.status_reason = None
        for status in DISPATCHED:  # all at this moment, each its own event
            self._move(job, status)

    def job_preempted(self, j: int, now: float, by: int, cross_share: bool,
                      failed: bool) -> None:
        job = self.jobs.by_engine[j]
        at = self.ms(now)
        reason = events.CROSS_SHARE_REASON if cross_share else events.IN_SHARE_REASON
        self.events.append(events.preemption_started(job.arn, reason, **self._where(at)))
        attempt = {
            "serviceResourceId": {"name": "TrainingJobArn", "value": job.training_job_arn},
            "startedAt": job.attempt_started, "stoppedAt": at, "statusReason": reason,
        }
        job.preempted_count += 1
        job.preempted.append(attempt)
        job.attempts.append(attempt)
        if failed:
            job.stopped_at = at
            job.status_reason = (
                f"Preempted {job.preempted_count} times, more than its "
                f"preemptionRetriesBeforeTermination ({job.retries})"
            )
            self._move(job, "FAILED")
        else:
            job.runnable_since = at
            job.status_reason = reason
            self._move(job, "RUNNABLE")
        self.events.append(events.preemption_completed(
            job.arn, self._preemption_summary(job, job), job.status, **self._where(at)
        ))

    def job_ended(self, j: int, now: float) -> None:
        job = self.jobs.by_engine[j]
        at = self.ms(now)
        job.attempts.append({
            "serviceResourceId": {"name": "TrainingJobArn", "value": job.training_job_arn},
            "startedAt": job.attempt_started, "stoppedAt": at,
            "statusReason": job.status_reason or "Training job completed",
        })
        job.stopped_at = at
        if job.end_as == "SUCCEEDED":
            job.status_reason = "Training job completed"
        self._move(job, job.end_as)

    # ------------------------------------------------------- the queue and its resources

    def op_DescribeJobQueues(self, params: dict[str, Any]) -> dict[str, Any]:
        wanted = params.get("jobQueues")
        if wanted and not {self.queue_name, self.queue_arn} & set(wanted):
            return {"jobQueues": []}
        return {"jobQueues": [{
            "jobQueueName": self.queue_name, "jobQueueArn": self.queue_arn,
            "state": ENABLED, "status": "VALID", "statusReason": "JobQueue Healthy",
            "priority": 1, "schedulingPolicyArn": self.policy_arn,
            "computeEnvironmentOrder": [],
            "serviceEnvironmentOrder": [{"order": 1, "serviceEnvironment": self.environment_arn}],
            "jobQueueType": "SAGEMAKER_TRAINING", "tags": self.tags[self.queue_arn],
        }]}

    def op_DescribeServiceEnvironments(self, params: dict[str, Any]) -> dict[str, Any]:
        wanted = params.get("serviceEnvironments")
        if wanted and not {self.environment_name, self.environment_arn} & set(wanted):
            return {"serviceEnvironments": []}
        return {"serviceEnvironments": [{
            "serviceEnvironmentName": self.environment_name,
            "serviceEnvironmentArn": self.environment_arn,
            "serviceEnvironmentType": "SAGEMAKER_TRAINING", "state": ENABLED, "status": "VALID",
            "capacityLimits": [{"capacityUnit": c.capacity_unit, "maxCapacity": c.max_capacity}
                               for c in self.capacity_limits],
            "tags": self.tags[self.environment_arn],
        }]}

    def op_DescribeSchedulingPolicies(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"schedulingPolicies": [{
            "name": self.policy_name, "arn": self.policy_arn,
            "quotaSharePolicy": {"idleResourceAssignmentStrategy": "FIFO"},
            "tags": self.tags[self.policy_arn],
        }] if self.policy_arn in params["arns"] else []}

    # ------------------------------------------------------------------------ quota shares

    def op_CreateQuotaShare(self, params: dict[str, Any]) -> dict[str, Any]:
        self._queue(params["jobQueue"], "jobQueue")
        name = params["quotaShareName"]
        if name in self.shares:
            raise bad_value("quotaShareName", name,
                            f"a name no quota share of job queue {self.queue_name!r} has "
                            "(Object already exists)")
        if len(self.shares) >= MAX_SHARES:
            raise bad_value("quotaShareName", name,
                            f"at most {MAX_SHARES} quota shares per job queue; "
                            f"{self.queue_name!r} has {len(self.shares)}")
        props = _share_properties(params, name, self.queue_arn)
        spec = self._spec(props)
        share = Share(spec, self._share_arn(name), len(self.engine_shares))
        self._reconfigure([*self.shares.values(), share])
        self.shares[name] = share
        self.engine_shares.append(share)
        self.tags[share.arn] = dict(params.get("tags") or {})
        return {"quotaShareName": name, "quotaShareArn": share.arn}

    def op_DescribeQuotaShare(self, params: dict[str, Any]) -> dict[str, Any]:
        share = self._share_by_arn(params["quotaShareArn"])
        return {**self._share_summary(share), "tags": self.tags[share.arn]}

    def op_UpdateQuotaShare(self, params: dict[str, Any]) -> dict[str, Any]:
        share = self._share_by_arn(params["quotaShareArn"])
        props = resource_properties(share.spec, self.queue_arn)
        props.pop("Tags", None)
        props.update(_share_properties(params, share.spec.name, self.queue_arn))
        spec = self._spec(props)
        updated = Share(spec, share.arn, share.index)
        self._reconfigure([updated if s is share else s for s in self.shares.values()])
        share.spec = spec
        return {"quotaShareName": spec.name, "quotaShareArn": share.arn}

    def op_DeleteQuotaShare(self, params: dict[str, Any]) -> dict[str, Any]:
        share = self._share_by_arn(params["quotaShareArn"])
        if share.spec.enabled:
            raise bad_value("quotaShareArn", share.arn,
                            "a DISABLED quota share (disable it with UpdateQuotaShare first)")
        # "All jobs in a deleted share are eventually terminated": here at once.
        for job in list(self.jobs.of(share.spec.name, ACTIVE)):
            self._terminate(job, "Quota share deleted")
        remaining = [s for s in self.shares.values() if s is not share]
        self._reconfigure(remaining)
        del self.shares[share.spec.name]
        self.engine_shares[share.index] = None
        del self.tags[share.arn]
        return {}

    def op_ListQuotaShares(self, params: dict[str, Any]) -> dict[str, Any]:
        self._queue(params["jobQueue"], "jobQueue")
        summaries = [self._share_summary(s) for s in self.shares.values()]
        start = _token(params.get("nextToken"))
        size = _page_size(params.get("maxResults"))
        page = summaries[start:start + size]
        more = start + size < len(summaries)
        return {"quotaShares": page, "nextToken": str(start + size) if more else None}

    # ---------------------------------------------------------------------- service jobs

    def op_SubmitServiceJob(self, params: dict[str, Any]) -> dict[str, Any]:
        self._queue(params["jobQueue"], "jobQueue")
        token = params.get("clientToken")
        request = {key: value for key, value in params.items() if key != "clientToken"}
        if token is not None and token in self.client_tokens:
            first, known = self.client_tokens[token]
            if request != first:
                raise bad_value("clientToken", token,
                                f"a token not used before: it names job {known.job_id}'s "
                                "SubmitServiceJob, and this request differs from that one")
            return {"jobArn": known.arn, "jobName": known.name, "jobId": known.job_id}
        name = _model_checked(check_job_name, params["jobName"], field="jobName")
        tags = _model_checked(validate_tags, params.get("tags") or {}, field="tags")
        if params.get("shareIdentifier") is not None:
            raise bad_value("shareIdentifier", params["shareIdentifier"],
                            "no value: the job queue has a quota share scheduling policy "
                            "(use quotaShareName)")
        share_name = params.get("quotaShareName")
        if share_name is None:
            raise ApiError("quotaShareName: a value is required (the job queue has a quota "
                           "share scheduling policy)")
        share = self.shares.get(share_name)
        if share is None:
            raise bad_value("quotaShareName", share_name,
                            "one of the job queue's quota shares: " + ", ".join(self.shares))
        if not share.spec.enabled:
            raise bad_value("quotaShareName", share_name,
                            "an ENABLED quota share (a DISABLED share accepts no new jobs)")
        priority = _priority(params.get("schedulingPriority", 0), "schedulingPriority")
        retries = (params.get("preemptionConfiguration") or {}).get(
            "preemptionRetriesBeforeTermination")
        if retries is not None and retries < 0:
            raise bad_value("preemptionConfiguration.preemptionRetriesBeforeTermination",
                            retries, "an integer >= 0")
        instance_type, count, duration = _payload(params["serviceRequestPayload"])
        seq = next(self.seq)
        job_id = str(uuid.uuid4())
        job = Job(
            seq=seq, job_id=job_id, arn=self.job_prefix + job_id, name=name,
            share=share_name, payload=params["serviceRequestPayload"],
            instance_type=instance_type, instance_count=count, duration=duration,
            priority=priority, retries=retries, created_at=self.ms(self.synced),
            submitted_s=self.synced,
            tags=tags, timeout_config=params.get("timeoutConfig"),
            retry_strategy=params.get("retryStrategy"), training_prefix=self.training_prefix,
        )
        self.jobs.add(job)
        self.pending.append(job)
        if token is not None:
            self.client_tokens[token] = (request, job)
        # "Events aren't created for the initial job submission" (AWS Batch user guide).
        return {"jobArn": job.arn, "jobName": job.name, "jobId": job.job_id}

    def op_DescribeServiceJob(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._describe(self._job(params["jobId"]))

    def op_ListServiceJobs(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("jobQueue") is None:
            raise ApiError("jobQueue: a value is required")
        self._queue(params["jobQueue"], "jobQueue")
        status = params.get("jobStatus")
        filters = params.get("filters") or []
        if len(filters) > 1:
            raise bad_value("filters", filters, "at most one filter")
        if filters:
            found = self._filtered(filters[0], status)
        else:
            statuses = (status or "RUNNING",)
            found = [j for share in self.jobs.buckets for j in self.jobs.of(share, statuses)]
        after = params.get("nextToken")
        limit = _token(after) if after is not None else None
        size = _page_size(params.get("maxResults"))
        # Newest first, the page and one more (to know whether there is a next page).
        ordered = nlargest(size + 1, found if limit is None else
                           (j for j in found if j.seq < limit), key=_seq)
        page = ordered[:size]
        more = len(ordered) > size
        return {"jobSummaryList": [self._summary(j) for j in page],
                "nextToken": str(page[-1].seq) if more else None}

    def op_UpdateServiceJob(self, params: dict[str, Any]) -> dict[str, Any]:
        job = self._job(params["jobId"])
        priority = _priority(params["schedulingPriority"], "schedulingPriority")
        if job.status in FINISHED:
            raise bad_value("jobId", params["jobId"],
                            f"a job that has not finished (it is {job.status})")
        job.priority = priority
        if job.engine >= 0:
            self.engine.update_priority(job.engine, priority, self.synced)
        return {"jobArn": job.arn, "jobName": job.name, "jobId": job.job_id}

    def op_TerminateServiceJob(self, params: dict[str, Any]) -> dict[str, Any]:
        self._terminate(self._job(params["jobId"]), params["reason"])
        return {}

    def op_TerminateServiceJobs(self, params: dict[str, Any]) -> dict[str, Any]:
        jobs = params["jobs"]
        if not 1 <= len(jobs) <= TERMINATE_MANY:
            raise bad_value("jobs", f"{len(jobs)} jobs", f"1 to {TERMINATE_MANY} job ids")
        successful: list[str] = []
        errors: list[dict[str, str]] = []
        for reference in jobs:
            job = self.jobs.find(reference)
            try:
                # "Service jobs that can't be found are treated as successfully processed."
                if job is not None:
                    self._terminate(job, params["reason"])
            except ApiError as error:
                errors.append({"job": reference, "code": error.code, "message": error.message})
            else:
                successful.append(reference)
        return {"successful": successful, "errors": errors}

    def op_GetJobQueueSnapshot(self, params: dict[str, Any]) -> dict[str, Any]:
        self._queue(params["jobQueue"], "jobQueue")
        at = self.ms(self.synced)
        front: dict[str, list[dict[str, Any]]] = {}
        streams: list[Iterable[tuple[int, float, int, int]]] = []
        for share in self.shares.values():
            heads, share_streams = self._runnable(share)
            streams.extend(share_streams)
            if heads:
                job = self._entry_job(min(heads))
                front[share.spec.name] = [{"jobArn": job.arn,
                                           "earliestTimeAtPosition": job.runnable_since}]
        first = islice(merge(*streams), FRONT_OF_QUEUE)
        return {
            "frontOfQueue": {
                "jobs": [{"jobArn": job.arn, "earliestTimeAtPosition": job.runnable_since}
                         for job in map(self._entry_job, first)],
                "lastUpdatedAt": at,
            },
            "frontOfQuotaShares": {"quotaShares": front, "lastUpdatedAt": at},
            "queueUtilization": self._utilization(at),
        }

    def _runnable(
        self, share: Share
    ) -> tuple[list[tuple[int, float, int, int]], list[Iterable[tuple[int, float, int, int]]]]:
        """The share's RUNNABLE jobs in the engine's scheduling order, as queue entries: the
        head of each of its queues, and each queue's jobs in order, lazily (its heap walked
        best first, never a sort of its jobs). Jobs that can never run are among them."""
        engine = self.engine
        base = share.index * engine.n_units
        heads: list[tuple[int, float, int, int]] = []
        streams: list[Iterable[tuple[int, float, int, int]]] = []
        for q in range(base, base + engine.n_units):
            j = engine.head(q)
            if j >= 0:
                heads.append((-engine.priority[j], engine.order_time[j], j,
                              engine.queue_token[j]))
                streams.append(engine.front(q))
        blocked = self.blocked.get(share.spec.name)
        if blocked:
            entries = sorted((-j.priority, j.submitted_s, _BLOCKED + j.seq, -1)
                             for j in blocked.values())
            heads.append(entries[0])
            streams.append(entries)
        return heads, streams

    def _entry_job(self, entry: tuple[int, float, int, int]) -> Job:
        j = entry[2]
        return self.jobs.created[j - _BLOCKED] if j >= _BLOCKED else self.jobs.by_engine[j]

    # -------------------------------------------------------------------------------- tags

    def op_TagResource(self, params: dict[str, Any]) -> dict[str, Any]:
        tags = self._tags_of(params["resourceArn"])
        added = _model_checked(validate_tags, params["tags"], field="tags")
        _model_checked(validate_tags, {**tags, **added}, field="tags",
                       subject=f"resource {params['resourceArn']}")  # 50 per resource
        tags.update(added)
        return {}

    def op_UntagResource(self, params: dict[str, Any]) -> dict[str, Any]:
        tags = self._tags_of(params["resourceArn"])
        for key in params["tagKeys"]:
            if key.lower().startswith(RESERVED_TAG_PREFIX):
                raise bad_value("tagKeys", key, "keys you set: AWS's own, starting with "
                                f"{RESERVED_TAG_PREFIX!r}, cannot be removed")
        for key in params["tagKeys"]:
            tags.pop(key, None)
        return {}

    def op_ListTagsForResource(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"tags": self._tags_of(params["resourceArn"])}

    # -------------------------------------------------------------------- the control API

    def finish(self, reference: str, status: str) -> dict[str, Any]:
        """End a dispatched job now, as ``status`` (SUCCEEDED or FAILED)."""
        if status not in FINISHED:
            raise bad_value("status", status, "SUCCEEDED or FAILED")
        with self.lock:
            self.sync()
            job = self._job(reference)
            if job.status not in DISPATCHED:
                raise bad_value("jobId", reference,
                                f"a SCHEDULED, STARTING or RUNNING job (it is {job.status})")
            job.end_as = status
            if status == "FAILED":
                job.status_reason = "Finished as FAILED through the emulator's control API"
            self.engine.end_early(job.engine, self.synced)
            return self._describe(job)

    def events_since(self, start: int = 0) -> list[dict[str, Any]]:
        with self.lock:
            self.sync()
            stored = self.events
            for index in range(start, len(stored)):
                item = stored[index]
                if isinstance(item, JobState):  # rendered once, when first read
                    stored[index] = self._render(item)
            return stored[start:]  # type: ignore[return-value]

    def _render(self, state: JobState) -> dict[str, Any]:
        detail = self._describe(state.job, event=True, view=state)
        where = self._where(state.at)
        if state.detail_type == QUEUE_BLOCKED_DETAIL_TYPE:
            return events.queue_blocked(detail, **where)
        return events.state_change(detail, **where)

    # ------------------------------------------------------------------------------ parts

    def _make_runnable(self, job: Job) -> None:
        job.runnable_since = job.created_at
        blocked = self._never_runnable(job)
        if blocked is not None:
            job.blocked_reason = job.status_reason = blocked
            self.blocked.setdefault(job.share, {})[job.seq] = job
            self._move(job, "RUNNABLE")
            self.events.append(JobState.of(job, job.created_at, QUEUE_BLOCKED_DETAIL_TYPE))
            return
        share = self.shares[job.share]
        job.engine = self.engine.add_job(
            share=share.index, unit=self.unit_index[job.instance_type],
            count=job.instance_count, duration=job.duration,
            submitted=job.submitted_s,
            priority=job.priority, retries=-1 if job.retries is None else job.retries,
        )
        self.jobs.by_engine[job.engine] = job
        self._move(job, "RUNNABLE")

    def _never_runnable(self, job: Job) -> str | None:
        if job.instance_type not in self.unit_index:
            return (f"{ENVIRONMENT_MAX} - the service environment lists no "
                    f"{job.instance_type}")
        rule = self.allocation.rules.rules(job.share, job.instance_type)
        if job.instance_count > rule.reach:
            return (f"{LIMIT_EXCEEDED} - {job.instance_count} x {job.instance_type} is more "
                    f"than quota share {job.share} can ever hold ({rule.reach})")
        return None

    def _terminate(self, job: Job, reason: str) -> None:
        if job.status in FINISHED:
            return
        job.is_terminated = True
        job.status_reason = reason
        job.end_as = "FAILED"
        if job.status in DISPATCHED:
            self.engine.end_early(job.engine, self.synced)
            return
        if job.status == "SUBMITTED":
            self.pending.remove(job)
        elif job.engine >= 0:
            self.engine.withdraw(job.engine, self.synced)
        job.stopped_at = self.ms(self.synced)
        self._move(job, "FAILED")

    def _move(self, job: Job, status: str) -> None:
        self.jobs.move(job, status)
        if job.blocked_reason is not None and status != "RUNNABLE":
            self.blocked[job.share].pop(job.seq, None)
        at = job.stopped_at if status in FINISHED else (
            job.started_at if status in DISPATCHED else job.runnable_since)
        self.events.append(JobState.of(job, at or job.created_at, STATE_CHANGE_DETAIL_TYPE))

    def _where(self, at_ms: int) -> dict[str, Any]:
        return {"account": self.account, "region": self.region, "at_ms": at_ms}

    def _describe(self, job: Job, *, event: bool = False,
                  view: Job | JobState | None = None) -> dict[str, Any]:
        """DescribeServiceJob's answer (as of ``view``, a past state, when given); for an
        event's detail, without tags or payload."""
        seen = view or job
        described = self._summary(job, seen)
        described["jobQueue"] = self.queue_arn
        described["schedulingPriority"] = seen.priority
        described["attempts"] = job.attempts[:seen.n_attempts] if isinstance(
            seen, JobState) else list(job.attempts)
        if job.timeout_config is not None:
            described["timeoutConfig"] = job.timeout_config
        if job.retry_strategy is not None:
            described["retryStrategy"] = job.retry_strategy
        if event:
            # Whether AWS's event carries the share is not documented: a consumer must look
            # the job up, so the emulator's events do not offer what it could wrongly rely on.
            del described["quotaShareName"]
        else:
            described["serviceRequestPayload"] = job.payload
            described["tags"] = job.tags or None
        if job.retries is not None:
            described["preemptionConfiguration"] = {
                "preemptionRetriesBeforeTermination": job.retries}
        if seen.preempted_count:
            described["preemptionSummary"] = self._preemption_summary(job, seen)
        return described

    def _summary(self, job: Job, seen: Job | JobState | None = None) -> dict[str, Any]:
        """ListServiceJobs' summary of ``job`` (its changing members as of ``seen``)."""
        seen = seen or job
        summary: dict[str, Any] = {
            "jobArn": job.arn, "jobId": job.job_id, "jobName": job.name,
            "serviceJobType": "SAGEMAKER_TRAINING", "quotaShareName": job.share,
            "status": seen.status, "createdAt": job.created_at,
            "isTerminated": seen.is_terminated,
            "capacityUsage": [{"capacityUnit": job.instance_type,
                               "quantity": float(job.instance_count)}],
        }
        # Members a job does not have yet are left out (as AWS does), not sent as null.
        if seen.status_reason is not None:
            summary["statusReason"] = seen.status_reason
        if seen.scheduled_at is not None:
            summary["scheduledAt"] = seen.scheduled_at
        if seen.started_at is not None:
            summary["startedAt"] = seen.started_at
            summary["latestAttempt"] = {"serviceResourceId": {
                "name": "TrainingJobArn", "value": seen.training_job_arn}}
        if seen.stopped_at is not None:
            summary["stoppedAt"] = seen.stopped_at
        return summary

    @staticmethod
    def _preemption_summary(job: Job, seen: Job | JobState) -> dict[str, Any]:
        count = seen.preempted_count
        return {"preemptedAttemptCount": count,
                "recentPreemptedAttempts": job.preempted[:count][-RECENT_PREEMPTIONS:]}

    def _filtered(self, item: Mapping[str, Any], status: str | None) -> list[Job]:
        name = item.get("name")
        values = item.get("values") or []
        if name not in JOB_FILTERS:
            raise bad_value("filters[0].name", name, "one of " + ", ".join(JOB_FILTERS))
        if len(values) != 1:
            raise bad_value(f"filters[0].values ({name})", values, "exactly one value")
        value = values[0]
        if name == "QUOTA_SHARE_NAME":
            return list(self.jobs.of(value, (status or "RUNNING",)))
        if name == "SHARE_IDENTIFIER":
            return []  # fair-share identifiers: no job of a quota-share queue has one
        if name == "JOB_NAME":
            prefix = value.endswith("*")
            wanted = value.rstrip("*").lower()
            return [j for j in self.jobs.created if (
                j.name.lower().startswith(wanted) if prefix else j.name.lower() == wanted)]
        try:
            bound = int(value)
        except ValueError:
            raise bad_value(f"filters[0].values ({name})", value,
                            "milliseconds since the epoch, as a string") from None
        created = [j.created_at for j in self.jobs.created]
        if name == "BEFORE_CREATED_AT":
            return self.jobs.created[:bisect_left(created, bound)]
        return self.jobs.created[bisect_right(created, bound):]

    def _utilization(self, at: int) -> dict[str, Any]:
        engine = self.engine
        units = engine.problem.unit_names
        n_units = len(units)
        total = [{"capacityUnit": u, "quantity": float(engine.in_use[k])}
                 for k, u in enumerate(units)]
        per_share = []
        for share in self.shares.values():
            usage = [{"capacityUnit": u, "quantity": float(engine.use[share.index * n_units + k])}
                     for k, u in enumerate(units) if engine.use[share.index * n_units + k]]
            if usage:
                per_share.append({"quotaShareName": share.spec.name, "capacityUsage": usage})
        return {"totalCapacityUsage": total,
                "quotaShareUtilization": {"topCapacityUtilization": per_share},
                "lastUpdatedAt": at}

    def _queue(self, reference: str, field: str) -> None:
        if reference not in (self.queue_name, self.queue_arn):
            raise bad_value(field, reference,
                            f"the emulated job queue {self.queue_name!r} ({self.queue_arn})")

    def _job(self, reference: str) -> Job:
        job = self.jobs.find(reference)
        if job is None:
            # "not found" in the message, as a client tells a missing job from a bad request.
            raise ApiError(f"jobId: service job {reference!r} not found; expected the id or ARN "
                           f"of a service job of job queue {self.queue_name!r}")
        return job

    def _share_arn(self, name: str) -> str:
        return quota_share_arn(self.queue_arn, name)

    def _share_by_arn(self, arn: str) -> Share:
        parsed = QuotaShareArn.parse(arn)
        share = self.shares.get(parsed.share_name) if parsed is not None else None
        if share is None or parsed is None or parsed.job_queue_arn != self.queue_arn:
            raise bad_value("quotaShareArn", arn, "the ARN of an existing quota share of job "
                            f"queue {self.queue_name!r}")
        return share

    def _share_summary(self, share: Share) -> dict[str, Any]:
        return {"quotaShareName": share.spec.name, "quotaShareArn": share.arn,
                "jobQueueArn": self.queue_arn, "status": share.status,
                **api_configuration(share.spec)}

    def _tags_of(self, arn: str) -> dict[str, str]:
        tags = self.tags.get(arn)
        if tags is not None:
            return tags
        job = self.jobs.by_arn.get(arn)
        if job is not None:
            return job.tags
        raise bad_value("resourceArn", arn, "the ARN of a resource of the emulated queue")

    def _add_share(self, spec: QuotaShareSpec, lifecycle: GuardOptIns) -> None:
        share = Share(spec, self._share_arn(spec.name), len(self.engine_shares))
        self.shares[spec.name] = share
        self.engine_shares.append(share)
        tags = {
            **spec.tags,
            OWNER_TAG_KEY: owner_marker(self.stack_id, spec.name),
            LIFECYCLE_TAG_KEY: lifecycle.tag_value(stack_marker(self.stack_id)),
        }
        # The declared tags and the custom resource's two markers must fit AWS's 50, as they
        # must when the stack deploys the share.
        self.tags[share.arn] = _model_checked(validate_tags, tags, field="tags",
                                              subject=f"quota share {spec.name!r}")

    @staticmethod
    def _spec(props: dict[str, Any]) -> QuotaShareSpec:
        try:
            spec, _ = spec_from_properties(props)
        except QuotaConfigError as error:
            raise ApiError(str(error)) from None
        return spec

    def _check(self, shares: list[Share]) -> QuotaAllocation:
        try:
            return QuotaAllocation.check(
                environment_limits=self.capacity_limits, shares=[s.spec for s in shares],
                queue_name=self.queue_name,
                unowned_capacity_borrowable=self.options.unowned_capacity_borrowable,
            )
        except QuotaConfigError as error:
            raise ApiError(str(error)) from None

    def _reconfigure(self, shares: list[Share]) -> None:
        """The engine's rules become those of ``shares`` (the live shares, as they will be)."""
        allocation = self._check(shares)
        problem = compile_shares(self.capacity_limits, [s.spec for s in shares], self.options)
        row_of = {s.index: row for row, s in enumerate(shares)}
        n_shares = max([len(self.engine_shares), *(s.index + 1 for s in shares)])
        rows = [row_of.get(i) for i in range(n_shares)]
        self.allocation = allocation
        self.engine.reconfigure(problem, rows, self.synced)


def _share_properties(params: Mapping[str, Any], name: str, queue_arn: str) -> dict[str, Any]:
    """The request's share fields as the share codec's properties (only those given)."""
    props: dict[str, Any] = {"QuotaShareName": name, "JobQueue": queue_arn,
                             **recased(params, Casing.CLOUDFORMATION)}
    if params.get("tags"):
        props["Tags"] = params["tags"]
    return props


def _model_checked(check: Callable[..., _T], value: Any, *, field: str,
                   subject: str = "") -> _T:
    """``check(value, subject=..., field=...)`` of the library's model (the rule AWS documents,
    kept in one place), its refusal as the ClientException naming the field and value."""
    try:
        return check(value, subject=subject, field=field)
    except QuotaConfigError as error:
        where = f"{subject}: " if subject else ""
        raise ApiError(f"{where}{error.field}: {error.value!r} is not valid; expected "
                       f"{error.allowed}") from None


def _payload(payload: str) -> tuple[str, int, float]:
    """(instance type, instance count, run time) of a CreateTrainingJob request."""
    size = len(payload.encode())
    if size > MAX_PAYLOAD_BYTES:
        raise bad_value("serviceRequestPayload", f"{size} bytes",
                        f"at most {MAX_PAYLOAD_BYTES} bytes (10 KiB)")
    try:
        request = json.loads(payload)
    except ValueError:
        raise bad_value("serviceRequestPayload", payload[:60],
                        "a CreateTrainingJob request as JSON") from None
    if not isinstance(request, dict):
        raise bad_value("serviceRequestPayload", payload[:60], "a JSON object")
    resources = request.get("ResourceConfig")
    if not isinstance(resources, dict):
        raise bad_value("serviceRequestPayload.ResourceConfig", resources,
                        "an object with InstanceType and InstanceCount")
    instance_type = resources.get("InstanceType")
    if not isinstance(instance_type, str) or not instance_type.startswith("ml."):
        raise bad_value("serviceRequestPayload.ResourceConfig.InstanceType", instance_type,
                        "a SageMaker training instance type (ml.*)")
    count = resources.get("InstanceCount", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise bad_value("serviceRequestPayload.ResourceConfig.InstanceCount", count,
                        "an integer >= 1")
    stopping = request.get("StoppingCondition") or {}
    runtime = stopping.get("MaxRuntimeInSeconds", DEFAULT_MAX_RUNTIME) if isinstance(
        stopping, dict) else None
    if isinstance(runtime, bool) or not isinstance(runtime, int | float) or runtime < 1:
        raise bad_value("serviceRequestPayload.StoppingCondition.MaxRuntimeInSeconds",
                        runtime, "a number of seconds >= 1")
    return instance_type, count, float(runtime)


def _priority(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (
        MIN_PRIORITY <= value <= MAX_PRIORITY
    ):
        raise bad_value(field, value, f"an integer between {MIN_PRIORITY} and {MAX_PRIORITY}")
    return value


def _token(value: Any) -> int:
    if value is None:
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise bad_value("nextToken", value, "a token from a previous answer") from None


def _page_size(value: Any) -> int:
    if value is None:
        return MAX_RESULTS
    if not 1 <= value <= MAX_RESULTS:
        raise bad_value("maxResults", value, f"between 1 and {MAX_RESULTS}")
    return int(value)
