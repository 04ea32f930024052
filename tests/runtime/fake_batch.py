"""A stateful fake of the AWS Batch quota-share API, served over HTTP on loopback.

It speaks the wire protocol botocore uses for ``batch`` (rest-json: ``POST /v1/<operation>``
with a JSON body, tags at ``/v1/tags/{resourceArn}``, errors as ``{"__type", "message"}`` with
the HTTP status of the error shape), so the real handler runs with a real boto3 client against
it. It keeps queues, shares and jobs, enforces the service rules the runtime must respect, makes
status transitions happen after a counted number of DescribeQuotaShare calls (never by time),
records what happened to jobs, and injects faults on request.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..loopback import LoopbackServer
from .fake_cloudformation import FakeCloudFormation

ACCOUNT = "123456789012"
REGION = "us-east-1"
MAX_SHARES_PER_QUEUE = 20
SHARE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
TRANSITIONAL = {"CREATING", "UPDATING", "DELETING"}
DISPATCHED = ("SCHEDULED", "STARTING", "RUNNING")
FINISHED = ("SUCCEEDED", "FAILED")

ROUTES = {
    ("POST", "/v1/createquotashare"): "CreateQuotaShare",
    ("POST", "/v1/describequotashare"): "DescribeQuotaShare",
    ("POST", "/v1/updatequotashare"): "UpdateQuotaShare",
    ("POST", "/v1/deletequotashare"): "DeleteQuotaShare",
    ("POST", "/v1/listquotashares"): "ListQuotaShares",
    ("POST", "/v1/getjobqueuesnapshot"): "GetJobQueueSnapshot",
    ("POST", "/v1/listservicejobs"): "ListServiceJobs",
    ("POST", "/v1/describeservicejob"): "DescribeServiceJob",
    ("POST", "/v1/describejobqueues"): "DescribeJobQueues",
    ("POST", "/v1/describeserviceenvironments"): "DescribeServiceEnvironments",
    ("GET", "/v1/tags"): "ListTagsForResource",
    ("POST", "/v1/tags"): "TagResource",
    ("DELETE", "/v1/tags"): "UntagResource",
}


class BatchError(Exception):
    def __init__(self, message: str, code: str = "ClientException", status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


@dataclass
class FakeQueue:
    name: str
    arn: str
    environment: dict[str, int]
    queue_type: str = "SAGEMAKER_TRAINING"
    state: str = "ENABLED"
    status: str = "VALID"
    status_reason: str = "JobQueue Healthy"

    @property
    def environment_arn(self) -> str:
        return f"arn:aws:batch:{REGION}:{ACCOUNT}:service-environment/{self.name}-environment"


@dataclass
class FakeShare:
    name: str
    arn: str
    queue_arn: str
    limits: dict[str, int]
    strategy: str
    borrow_limit: int | None
    in_share_preemption: str
    state: str
    status: str
    tags: dict[str, str]
    polls_left: int = 0
    unseen_reads: int = 0
    """Reads (DescribeQuotaShare, ListQuotaShares, ListTagsForResource) that still miss the
    share: AWS documents no read-after-write consistency for quota shares."""

    def ceiling_of(self, unit: str) -> float:
        own = self.limits.get(unit, 0)
        if self.strategy != "LEND_AND_BORROW":
            return own
        if self.borrow_limit is None or self.borrow_limit == -1:
            return float("inf")
        return own * (1 + self.borrow_limit / 100)

    def summary(self) -> dict[str, Any]:
        sharing: dict[str, Any] = {"strategy": self.strategy}
        if self.borrow_limit is not None:
            sharing["borrowLimit"] = self.borrow_limit
        return {
            "quotaShareName": self.name,
            "quotaShareArn": self.arn,
            "jobQueueArn": self.queue_arn,
            "capacityLimits": [
                {"capacityUnit": unit, "maxCapacity": count} for unit, count in self.limits.items()
            ],
            "resourceSharingConfiguration": sharing,
            "preemptionConfiguration": {"inSharePreemption": self.in_share_preemption},
            "state": self.state,
            "status": self.status,
        }


@dataclass
class FakeJob:
    job_id: str
    name: str
    queue_arn: str
    share_name: str
    status: str
    usage: dict[str, float]
    created_at: int
    terminated: bool = False
    priority: int = 0
    status_reason: str | None = None
    front_since: int | None = None
    """When the job reached its place at the front of its share (ms); None = ``created_at``."""
    preemptions: list[dict[str, Any]] = field(default_factory=list)
    """``recentPreemptedAttempts`` entries, oldest first."""
    attempts: list[dict[str, Any]] = field(default_factory=list)
    started_at: int | None = None
    stopped_at: int | None = None
    payload: str | None = None
    """Its ``serviceRequestPayload`` as sent; None: a request naming only its resources."""

    @property
    def arn(self) -> str:
        return f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{self.job_id}"

    def detail(self) -> dict[str, Any]:
        """DescribeServiceJob: the summary plus priority, payload and preemption history."""
        unit, count = next(iter(self.usage.items()), ("ml.g5.xlarge", 1.0))
        payload = {"ResourceConfig": {"InstanceType": unit, "InstanceCount": int(count),
                                      "VolumeSizeInGB": 30}}
        detail = {
            **self.summary(),
            "jobQueue": self.queue_arn,
            "schedulingPriority": self.priority,
            "serviceRequestPayload": json.dumps(payload) if self.payload is None else self.payload,
            "attempts": list(self.attempts),
            "preemptionSummary": {
                "preemptedAttemptCount": len(self.preemptions),
                "recentPreemptedAttempts": self.preemptions[-5:],
            },
        }
        if self.status_reason is not None:
            detail["statusReason"] = self.status_reason
        if self.started_at is not None:
            detail["startedAt"] = self.started_at
        if self.stopped_at is not None:
            detail["stoppedAt"] = self.stopped_at
        return detail

    def summary(self) -> dict[str, Any]:
        return {
            "jobId": self.job_id,
            "jobArn": f"arn:aws:batch:{REGION}:{ACCOUNT}:service-job/{self.job_id}",
            "jobName": self.name,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "quotaShareName": self.share_name,
            "status": self.status,
            "createdAt": self.created_at,
            "isTerminated": self.terminated,
            "capacityUsage": [
                {"capacityUnit": unit, "quantity": quantity}
                for unit, quantity in self.usage.items()
            ],
        }


@dataclass
class Fault:
    """Injected behaviour for the next calls of one operation."""

    error: BatchError | None = None
    latency: float = 0.0
    after: bool = False
    """The operation takes effect first, then the error is answered (a lost success)."""


@dataclass
class FakeBatch:
    """The fake service's state. Every public method is safe to call from tests."""

    transition_polls: int = 1
    """DescribeQuotaShare calls a share stays CREATING / UPDATING / DELETING for."""
    page_size: int = 2
    """Items per page of the listing operations, small so that pagination is exercised."""
    unseen_reads: int = 0
    """Reads that miss each share CreateQuotaShare makes, before they show it."""
    queues: dict[str, FakeQueue] = field(default_factory=dict)
    shares: dict[str, FakeShare] = field(default_factory=dict)
    jobs: list[FakeJob] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    terminated_jobs: list[str] = field(default_factory=list)
    preempted_jobs: list[str] = field(default_factory=list)
    stuck: dict[str, set[str]] = field(default_factory=dict)
    invalid: set[str] = field(default_factory=set)
    hidden_from_snapshot: set[str] = field(default_factory=set)
    faults: dict[str, deque[Fault]] = field(default_factory=dict)
    cloudformation: FakeCloudFormation = field(default_factory=FakeCloudFormation)
    """The stacks DescribeStacks knows, served on the same endpoint (``preview`` asks it)."""
    lock: threading.RLock = field(default_factory=threading.RLock)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    # -- test helpers -------------------------------------------------------------------------

    def add_queue(self, name: str, environment: Mapping[str, int]) -> str:
        arn = f"arn:aws:batch:{REGION}:{ACCOUNT}:job-queue/{name}"
        with self.lock:
            self.queues[arn] = FakeQueue(name, arn, dict(environment))
        return arn

    def add_job(
        self, share_arn: str, status: str, usage: Mapping[str, float] | None = None,
        name: str | None = None, **detail: Any,
    ) -> str:
        """A job of the share; ``usage`` is what it holds once dispatched (and needs before).

        ``detail`` sets other :class:`FakeJob` fields (priority, status_reason, preemptions...).
        """
        with self.lock:
            share = self.shares[share_arn]
            number = next(self._ids)
            job = FakeJob(
                job_id=f"job-{number:04d}",
                name=name or f"train-{number}",
                queue_arn=share.queue_arn,
                share_name=share.name,
                status=status,
                usage=dict(usage or {}),
                created_at=number,
                **detail,
            )
            self.jobs.append(job)
            return job.job_id

    def add_share(self, queue_arn: str, name: str, limits: Mapping[str, int],
                  strategy: str = "LEND", borrow_limit: int | None = None, *,
                  in_share_preemption: str = "DISABLED", state: str = "ENABLED",
                  tags: Mapping[str, str] | None = None) -> str:
        """A VALID share put in place directly (as if created long ago)."""
        with self.lock:
            arn = f"{queue_arn}/quota-share/{name}"
            self.shares[arn] = FakeShare(
                name, arn, queue_arn, dict(limits), strategy,
                -1 if strategy == "LEND_AND_BORROW" and borrow_limit is None else borrow_limit,
                in_share_preemption, state, "VALID", dict(tags or {}),
            )
            return arn

    def share(self, queue_arn: str, name: str) -> FakeShare | None:
        with self.lock:
            return self.shares.get(f"{queue_arn}/quota-share/{name}")

    def shares_on(self, queue_arn: str) -> list[FakeShare]:
        with self.lock:
            return [s for s in self.shares.values() if s.queue_arn == queue_arn]

    def job(self, job_id: str) -> FakeJob:
        return next(job for job in self.jobs if job.job_id == job_id)

    def stick(self, share_name: str, *statuses: str) -> None:
        """The share never leaves ``statuses`` (every transitional status when none is given)."""
        with self.lock:
            self.stuck[share_name] = set(statuses or TRANSITIONAL)

    def fail_next(self, operation: str, times: int = 1, code: str = "ThrottlingException",
                  status: int = 400, message: str = "Rate exceeded") -> None:
        """The next ``times`` calls of ``operation`` fail with ``code`` before doing anything."""
        with self.lock:
            queue = self.faults.setdefault(operation, deque())
            queue.extend(Fault(error=BatchError(message, code, status)) for _ in range(times))

    def deny_next(self, operation: str, times: int = 1, *, as_client_exception: bool = False
                  ) -> None:
        """The next ``times`` calls of ``operation`` are denied: a 403 AccessDeniedException,
        or (``as_client_exception``) the 400 ClientException AWS Batch also uses for a caller
        without permissions."""
        action = f"batch:{operation}"
        if as_client_exception:
            self.fail_next(operation, times, "ClientException", 400,
                           f"User: arn:aws:sts::{ACCOUNT}:assumed-role/provider/fn is not "
                           f"authorized to perform: {action}")
        else:
            self.fail_next(operation, times, "AccessDeniedException", 403,
                           f"User: arn:aws:sts::{ACCOUNT}:assumed-role/provider/fn is not "
                           f"authorized to perform: {action} because no identity-based "
                           "policy allows the action")

    def fail_after_next(self, operation: str, times: int = 1, code: str = "ServerException",
                        status: int = 500, message: str = "Internal server error") -> None:
        """The next ``times`` calls of ``operation`` take effect, then answer with ``code``."""
        with self.lock:
            queue = self.faults.setdefault(operation, deque())
            queue.extend(
                Fault(error=BatchError(message, code, status), after=True) for _ in range(times)
            )

    def slow_next(self, operation: str, seconds: float, times: int = 1) -> None:
        """The next ``times`` calls of ``operation`` take effect, then answer after ``seconds``."""
        with self.lock:
            queue = self.faults.setdefault(operation, deque())
            queue.extend(Fault(latency=seconds) for _ in range(times))

    def settle(self) -> None:
        """Let every share finish what it is doing, as time passing would (stuck ones stay)."""
        with self.lock:
            for share in list(self.shares.values()):
                while share.status in TRANSITIONAL and self.shares.get(share.arn) is share:
                    if share.status in self.stuck.get(share.name, ()):
                        break
                    self._advance(share)

    def waiting_jobs_become_runnable(self) -> list[str]:
        """Every SUBMITTED and PENDING job becomes RUNNABLE, as AWS Batch moves them on by itself
        with nothing asked of anyone; in a share whose in-share preemption is on, the new
        RUNNABLE jobs then preempt as RUNNABLE jobs do. Returns the jobs moved on."""
        with self.lock:
            moved = [job for job in self.jobs if job.status in ("SUBMITTED", "PENDING")]
            for job in moved:
                job.status = "RUNNABLE"
            for share in list(self.shares.values()):
                if share.in_share_preemption == "ENABLED":
                    self._preempt_in_share(share)
            return [job.job_id for job in moved]

    def count(self, operation: str) -> int:
        return sum(1 for name, _ in self.calls if name == operation)

    def mutations(self) -> list[str]:
        """The state-changing operations called so far, in order."""
        changing = {"CreateQuotaShare", "UpdateQuotaShare", "DeleteQuotaShare", "TagResource",
                    "UntagResource"}
        return [name for name, _ in self.calls if name in changing]

    # -- dispatch -----------------------------------------------------------------------------

    def handle(self, operation: str, params: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """Run ``operation``; returns the response body and the latency to add before it."""
        with self.lock:
            self.calls.append((operation, params))
            pending = self.faults.get(operation)
            fault = pending.popleft() if pending else None
            if fault is not None and fault.error is not None and not fault.after:
                raise fault.error
            handler: Callable[[dict[str, Any]], dict[str, Any]] = getattr(self, f"_{operation}")
            response = handler(params)
            if fault is not None and fault.error is not None:
                raise fault.error
            return response, fault.latency if fault is not None else 0.0

    # -- quota shares -------------------------------------------------------------------------

    def _CreateQuotaShare(self, p: dict[str, Any]) -> dict[str, Any]:
        name = p.get("quotaShareName", "")
        if not SHARE_NAME.fullmatch(name):
            raise BatchError(f"Invalid quota share name {name!r}")
        queue = self._queue(p.get("jobQueue", ""))
        arn = f"{queue.arn}/quota-share/{name}"
        if arn in self.shares:
            raise BatchError(f"Object already exists: quota share {name} on {queue.name}")
        if len(self.shares_on(queue.arn)) >= MAX_SHARES_PER_QUEUE:
            raise BatchError(f"job queue {queue.name} already has {MAX_SHARES_PER_QUEUE} shares")
        tags = p.get("tags") or {}
        if len(tags) > 50:
            raise BatchError("at most 50 tags")
        strategy, borrow = self._sharing(p.get("resourceSharingConfiguration"))
        share = FakeShare(
            name=name,
            arn=arn,
            queue_arn=queue.arn,
            limits=self._limits(p.get("capacityLimits")),
            strategy=strategy,
            borrow_limit=borrow,
            in_share_preemption=self._switch(
                (p.get("preemptionConfiguration") or {}).get("inSharePreemption")
            ),
            state=self._switch(p.get("state", "ENABLED")),
            status="CREATING",
            tags=dict(tags),
            polls_left=self.transition_polls,
            unseen_reads=self.unseen_reads,
        )
        self.shares[arn] = share
        return {"quotaShareName": name, "quotaShareArn": arn}

    def _DescribeQuotaShare(self, p: dict[str, Any]) -> dict[str, Any]:
        share = self._seen(self._share(p.get("quotaShareArn", "")))
        self._advance(share)
        if share.arn not in self.shares:
            raise BatchError(f"Quota share {share.arn} does not exist")
        return {**share.summary(), "tags": dict(share.tags)}

    def _UpdateQuotaShare(self, p: dict[str, Any]) -> dict[str, Any]:
        share = self._share(p.get("quotaShareArn", ""))
        if share.status in TRANSITIONAL:
            # AWS Batch's wording: a share accepts no update until the previous one settled.
            raise BatchError(
                f"Cannot update quota share {share.name} while its status is {share.status}"
            )
        limits = (
            self._limits(p["capacityLimits"]) if "capacityLimits" in p else dict(share.limits)
        )
        strategy, borrow = share.strategy, share.borrow_limit
        if "resourceSharingConfiguration" in p:
            strategy, borrow = self._sharing(p["resourceSharingConfiguration"])
        preemption = share.in_share_preemption
        if "preemptionConfiguration" in p:
            preemption = self._switch(p["preemptionConfiguration"].get("inSharePreemption"))
        state = self._switch(p["state"]) if "state" in p else share.state
        before = FakeShare(**{**share.__dict__, "limits": dict(share.limits)})
        share.limits, share.strategy, share.borrow_limit = limits, strategy, borrow
        share.in_share_preemption, share.state = preemption, state
        share.status, share.polls_left = "UPDATING", self.transition_polls
        self._preempt_after_shrink(before, share)
        if before.in_share_preemption != "ENABLED" and share.in_share_preemption == "ENABLED":
            self._preempt_in_share(share)
        return {"quotaShareName": share.name, "quotaShareArn": share.arn}

    def _DeleteQuotaShare(self, p: dict[str, Any]) -> dict[str, Any]:
        share = self._share(p.get("quotaShareArn", ""))
        if share.state != "DISABLED":
            raise BatchError(f"Quota share {share.name} must be DISABLED before it is deleted")
        if share.status in ("CREATING", "UPDATING"):
            raise BatchError(f"Quota share {share.name} cannot be deleted while {share.status}")
        if share.status != "DELETING":
            share.status, share.polls_left = "DELETING", self.transition_polls
        return {}

    def _ListQuotaShares(self, p: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(p.get("jobQueue", ""))
        items = [s.summary() for s in self.shares_on(queue.arn) if self._shows(s)]
        return self._page(items, "quotaShares", p)

    # -- tags ---------------------------------------------------------------------------------

    def _ListTagsForResource(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"tags": dict(self._seen(self._share(p["resourceArn"])).tags)}

    def _TagResource(self, p: dict[str, Any]) -> dict[str, Any]:
        share = self._share(p["resourceArn"])
        merged = {**share.tags, **(p.get("tags") or {})}
        if len(merged) > 50:
            raise BatchError("at most 50 tags")
        share.tags = merged
        return {}

    def _UntagResource(self, p: dict[str, Any]) -> dict[str, Any]:
        share = self._share(p["resourceArn"])
        for key in p.get("tagKeys") or []:
            share.tags.pop(key, None)
        return {}

    # -- jobs ---------------------------------------------------------------------------------

    def _ListServiceJobs(self, p: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(p.get("jobQueue", ""))
        share_names: list[str] | None = None
        for item in p.get("filters") or []:
            if item.get("name") != "QUOTA_SHARE_NAME":
                raise BatchError(f"filter {item.get('name')} is not supported by this fake")
            share_names = list(item.get("values") or [])
        status = p.get("jobStatus") or "RUNNING"
        jobs = [
            job for job in sorted(self.jobs, key=lambda j: -j.created_at)
            if job.queue_arn == queue.arn and job.status == status
            and (share_names is None or job.share_name in share_names)
        ]
        return self._page([job.summary() for job in jobs], "jobSummaryList", p)

    def _DescribeServiceJob(self, p: dict[str, Any]) -> dict[str, Any]:
        for job in self.jobs:
            if job.job_id == p.get("jobId"):
                return job.detail()
        raise BatchError(f"Job {p.get('jobId')} not found")

    def _DescribeJobQueues(self, p: dict[str, Any]) -> dict[str, Any]:
        found = []
        # Like Batch: no jobQueues lists every queue.
        wanted = p.get("jobQueues") or [queue.arn for queue in self.queues.values()]
        for reference in wanted:
            for queue in self.queues.values():
                if reference in (queue.arn, queue.name):
                    found.append({
                        "jobQueueName": queue.name,
                        "jobQueueArn": queue.arn,
                        "jobQueueType": queue.queue_type,
                        "state": queue.state,
                        "status": queue.status,
                        "statusReason": queue.status_reason,
                        "priority": 1,
                        "serviceEnvironmentOrder": [
                            {"order": 1, "serviceEnvironment": queue.environment_arn}
                        ],
                    })
        # Like Batch: an unknown queue is simply absent from the answer.
        return {"jobQueues": found}

    def _DescribeServiceEnvironments(self, p: dict[str, Any]) -> dict[str, Any]:
        found = []
        for reference in p.get("serviceEnvironments") or []:
            for queue in self.queues.values():
                if reference == queue.environment_arn:
                    found.append({
                        "serviceEnvironmentName": f"{queue.name}-environment",
                        "serviceEnvironmentArn": queue.environment_arn,
                        "serviceEnvironmentType": "SAGEMAKER_TRAINING",
                        "state": "ENABLED",
                        "status": "VALID",
                        "capacityLimits": [
                            {"capacityUnit": unit, "maxCapacity": count}
                            for unit, count in queue.environment.items()
                        ],
                    })
        return {"serviceEnvironments": found}

    def _front(self, queue_arn: str, share_name: str | None = None) -> list[FakeJob]:
        """RUNNABLE jobs in the order they would start: highest priority, then oldest."""
        waiting = [
            job for job in self.jobs
            if job.queue_arn == queue_arn and job.status == "RUNNABLE"
            and (share_name is None or job.share_name == share_name)
        ]
        return sorted(waiting, key=lambda job: (-job.priority, job.created_at))

    def _GetJobQueueSnapshot(self, p: dict[str, Any]) -> dict[str, Any]:
        queue = self._queue(p.get("jobQueue", ""))
        front_of_shares: dict[str, list[dict[str, Any]]] = {}
        total: dict[str, float] = {}
        for share in self.shares_on(queue.arn):
            for unit, quantity in self._usage(share).items():
                total[unit] = total.get(unit, 0.0) + quantity
            head = self._front(queue.arn, share.name)[:1]
            if head:
                front_of_shares[share.name] = [{
                    "jobArn": head[0].arn,
                    "earliestTimeAtPosition": head[0].front_since or head[0].created_at,
                }]
        front_of_queue = [
            {"jobArn": job.arn, "earliestTimeAtPosition": job.front_since or job.created_at}
            for job in self._front(queue.arn)[:100]
        ]
        shares = []
        for share in self.shares_on(queue.arn):
            if share.name in self.hidden_from_snapshot:
                continue
            usage = self._usage(share)
            if usage:
                shares.append({
                    "quotaShareName": share.name,
                    "capacityUsage": [
                        {"capacityUnit": unit, "quantity": quantity}
                        for unit, quantity in usage.items()
                    ],
                })
        return {
            "frontOfQueue": {"jobs": front_of_queue, "lastUpdatedAt": 0},
            "frontOfQuotaShares": {"quotaShares": front_of_shares, "lastUpdatedAt": 0},
            "queueUtilization": {
                "quotaShareUtilization": {"topCapacityUtilization": shares},
                "totalCapacityUsage": [
                    {"capacityUnit": unit, "quantity": quantity} for unit, quantity in total.items()
                ],
                "lastUpdatedAt": 0,
            },
        }

    # -- rules --------------------------------------------------------------------------------

    def _advance(self, share: FakeShare) -> None:
        if share.status not in TRANSITIONAL or share.status in self.stuck.get(share.name, ()):
            return
        share.polls_left -= 1
        if share.polls_left > 0:
            return
        if share.status == "DELETING":
            del self.shares[share.arn]
            for job in self.jobs:
                if (job.queue_arn, job.share_name) == (share.queue_arn, share.name) and (
                    job.status not in FINISHED
                ):
                    job.status, job.terminated = "FAILED", True
                    self.terminated_jobs.append(job.job_id)
            return
        queue = self.queues[share.queue_arn]
        fits = all(
            unit in queue.environment and count <= queue.environment[unit]
            for unit, count in share.limits.items()
        )
        share.status = "VALID" if fits and share.name not in self.invalid else "INVALID"

    def _preempt_after_shrink(self, before: FakeShare, after: FakeShare) -> None:
        # Lowering a share's limit (or borrow ceiling) makes its dispatched jobs above the new
        # value eligible for preemption; the fake preempts them at once, newest first.
        for unit in set(before.limits) | set(after.limits):
            allowed = min(
                after.limits.get(unit, 0)
                if after.limits.get(unit, 0) < before.limits.get(unit, 0) else float("inf"),
                after.ceiling_of(unit)
                if after.ceiling_of(unit) < before.ceiling_of(unit) else float("inf"),
            )
            running = sorted(
                (j for j in self._jobs_of(after) if j.status in DISPATCHED and unit in j.usage),
                key=lambda j: -j.created_at,
            )
            used = sum(j.usage[unit] for j in running)
            for job in running:
                if used <= allowed:
                    break
                job.status = "RUNNABLE"
                used -= job.usage[unit]
                self.preempted_jobs.append(job.job_id)

    def _preempt_in_share(self, share: FakeShare) -> None:
        # In-share preemption just turned on: each waiting job, highest priority first, that
        # cannot start within what the share has free (its own idle limit, plus for a borrowing
        # share the environment's idle capacity within its ceiling) preempts the share's
        # lower-priority dispatched jobs of that type, lowest priority and newest first, until
        # it fits. The preemptor itself is left RUNNABLE: this fake never dispatches.
        queue = self.queues[share.queue_arn]
        for waiting in self._front(share.queue_arn, share.name):
            for unit, needed in waiting.usage.items():
                victims = sorted(
                    (j for j in self._jobs_of(share) if j.status in DISPATCHED
                     and unit in j.usage and j.priority < waiting.priority),
                    key=lambda j: (j.priority, -j.created_at),
                )
                while victims and self._free(share, queue, unit) < needed:
                    victim = victims.pop(0)
                    victim.status = "RUNNABLE"
                    self.preempted_jobs.append(victim.job_id)

    def _free(self, share: FakeShare, queue: FakeQueue, unit: str) -> float:
        used = self._usage(share).get(unit, 0.0)
        own = share.limits.get(unit, 0)
        free = max(0.0, own - used)
        if share.strategy == "LEND_AND_BORROW":
            in_use = sum(self._usage(s).get(unit, 0.0) for s in self.shares_on(queue.arn))
            idle = queue.environment.get(unit, 0) - in_use
            free += max(0.0, min(share.ceiling_of(unit) - max(own, used), idle))
        return free

    def _jobs_of(self, share: FakeShare) -> list[FakeJob]:
        key = (share.queue_arn, share.name)
        return [j for j in self.jobs if (j.queue_arn, j.share_name) == key]

    def _usage(self, share: FakeShare) -> dict[str, float]:
        usage: dict[str, float] = {}
        for job in self._jobs_of(share):
            if job.status in DISPATCHED:
                for unit, quantity in job.usage.items():
                    usage[unit] = usage.get(unit, 0.0) + quantity
        return usage

    def _queue(self, reference: str) -> FakeQueue:
        for queue in self.queues.values():
            if reference in (queue.arn, queue.name):
                return queue
        raise BatchError(f"job queue {reference!r} does not exist")

    def _shows(self, share: FakeShare) -> bool:
        """One read of ``share``: False while reads still miss it."""
        if share.unseen_reads > 0:
            share.unseen_reads -= 1
            return False
        return True

    def _seen(self, share: FakeShare) -> FakeShare:
        if not self._shows(share):
            raise BatchError(f"Quota share {share.arn} does not exist")
        return share

    def _share(self, arn: str) -> FakeShare:
        share = self.shares.get(arn)
        if share is None:
            raise BatchError(f"Quota share {arn} does not exist")
        return share

    def _limits(self, raw: Any) -> dict[str, int]:
        if not isinstance(raw, list) or not 1 <= len(raw) <= 5:
            raise BatchError("capacityLimits must list 1 to 5 limits")
        limits: dict[str, int] = {}
        for item in raw:
            unit, count = item.get("capacityUnit"), item.get("maxCapacity")
            if not isinstance(count, int) or count < 1:
                raise BatchError(f"maxCapacity must be at least 1 (got {count!r})")
            if unit in limits:
                raise BatchError(f"capacity unit {unit} listed twice")
            limits[str(unit)] = count
        return limits

    def _sharing(self, raw: Any) -> tuple[str, int | None]:
        raw = raw or {}
        strategy = raw.get("strategy")
        if strategy not in ("RESERVE", "LEND", "LEND_AND_BORROW"):
            raise BatchError(f"unknown strategy {strategy!r}")
        borrow = raw.get("borrowLimit")
        if borrow is not None and strategy != "LEND_AND_BORROW":
            raise BatchError("borrowLimit can only be applied with LEND_AND_BORROW")
        if borrow is not None and (not isinstance(borrow, int) or borrow < -1):
            raise BatchError(f"invalid borrowLimit {borrow!r}")
        if strategy == "LEND_AND_BORROW" and borrow is None:
            borrow = -1
        return strategy, borrow

    def _switch(self, value: Any) -> str:
        if value not in ("ENABLED", "DISABLED"):
            raise BatchError(f"expected ENABLED or DISABLED, got {value!r}")
        return str(value)

    def _page(self, items: list[dict[str, Any]], key: str, p: dict[str, Any]) -> dict[str, Any]:
        start = int(p.get("nextToken") or 0)
        size = min(int(p.get("maxResults") or self.page_size), self.page_size)
        page: dict[str, Any] = {key: items[start:start + size]}
        if start + size < len(items):
            page["nextToken"] = str(start + size)
        return page


class FakeBatchServer(LoopbackServer):
    """Serves one :class:`FakeBatch` on ``127.0.0.1`` on a free port, in a daemon thread."""

    def __init__(self) -> None:
        super().__init__()
        self.state = FakeBatch()

    def reset(self) -> FakeBatch:
        self.state = FakeBatch()
        return self.state

    def serve(self, request: BaseHTTPRequestHandler) -> None:
        url = urlsplit(request.path)
        length = int(request.headers.get("Content-Length") or 0)
        raw = request.rfile.read(length) if length else b""
        if request.command == "POST" and url.path == "/":
            # CloudFormation's query protocol (a form body naming the Action): DescribeStacks.
            form = {key: values[0] for key, values in parse_qs(raw.decode()).items()}
            code, xml = self.state.cloudformation.handle(form)
            _answer(request, code, {"Content-Type": "text/xml"}, xml.encode())
            return
        params: dict[str, Any] = json.loads(raw) if raw else {}
        path = url.path
        if path.startswith("/v1/tags/"):
            params["resourceArn"] = unquote(path[len("/v1/tags/"):])
            path = "/v1/tags"
            if request.command == "DELETE":
                params["tagKeys"] = parse_qs(url.query).get("tagKeys", [])
        operation = ROUTES.get((request.command, path))
        status, headers, body, latency = 200, {}, b"{}", 0.0
        try:
            if operation is None:
                raise BatchError(f"no route for {request.command} {path}", "UnknownOperation", 404)
            response, latency = self.state.handle(operation, params)
            body = json.dumps(response).encode()
        except BatchError as error:
            status = error.status
            headers = {"x-amzn-ErrorType": error.code}
            body = json.dumps({"__type": error.code, "message": str(error)}).encode()
        if latency:
            time.sleep(latency)
        _answer(request, status, {"Content-Type": "application/json", **headers}, body)


def _answer(request: BaseHTTPRequestHandler, status: int, headers: dict[str, str],
            body: bytes) -> None:
    try:
        request.send_response(status)
        for name, value in headers.items():
            request.send_header(name, value)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up waiting (a read-timeout test)
