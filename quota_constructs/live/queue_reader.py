"""Every AWS Batch read of the live commands (``status``, ``explain``, ``preview``), in one place.

Built on the runtime's :class:`~quota_constructs.runtime.monitoring_gateway.MonitoringGateway`
(the custom resource's and the monitoring's client wrapper): the same bounded retries with
backoff for throttling and 5xx, the same snapshot and job parsing. Nothing else in
``quota_constructs.live`` calls Batch, so switching to another read layer changes this module
only.

The client is an ordinary boto3 ``batch`` client from the standard configuration: profile
(``AWS_PROFILE`` or ``--profile``), region (``--region``, else ``AWS_REGION``, else
``AWS_DEFAULT_REGION``, else the profile's: :func:`region_of`), credentials from the usual
chain, and ``AWS_ENDPOINT_URL_BATCH``. Every failure becomes a :class:`LiveQueueError` whose
message is one line a person can act on.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from quota_constructs.runtime.batch_gateway import BatchRequestError
from quota_constructs.runtime.batch_reads import (
    QueueSnapshot,
    paginate,
    parse_queue_snapshot,
    runnable_jobs,
)
from quota_constructs.runtime.errors import QuotaShareLifecycleError
from quota_constructs.runtime.monitoring_gateway import MonitoringGateway
from quota_constructs.runtime.retry import ClientTimeouts, RetryPolicy
from quota_constructs.runtime.service_job import DISPATCHED_STATUSES, ServiceJob
from quota_constructs.runtime.service_models import MINIMUM_BOTOCORE, REQUIRED_BATCH_OPERATIONS
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn, job_queue_name_of

SAGEMAKER_TRAINING = "SAGEMAKER_TRAINING"
RUNNABLE_PAGE_SIZE = 100
"""ListServiceJobs' largest page."""
RUNNABLE_PAGES = 10
"""Pages of RUNNABLE jobs read per share at most: a status costs at most this many listing calls
per share however long the backlog is; past it the count is a floor (``runnable_capped``)."""

LIVE_OPERATIONS = ("DescribeJobQueues", "DescribeServiceEnvironments", "DescribeServiceJob")
"""Operations the live commands call beyond the custom resource's."""

Progress = Callable[[str], None]


NO_REGION = (
    "no AWS region configured: pass --region REGION, set AWS_REGION (or AWS_DEFAULT_REGION), "
    "or give the profile a region (aws configure set region REGION [--profile NAME])"
)


def region_of(option: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The region to use: ``--region``, else ``AWS_REGION``, else None (boto3 then reads
    ``AWS_DEFAULT_REGION``, then the profile's ``region``).

    Assumption (stated once): boto3 itself never reads ``AWS_REGION`` (botocore's region
    setting is ``AWS_DEFAULT_REGION`` or the profile), while the AWS CLI v2 and the other AWS
    SDKs read it first; an operator who exported ``AWS_REGION`` means that region, so it is
    honoured ahead of ``AWS_DEFAULT_REGION`` and the profile, as the AWS CLI does."""
    if option:
        return option
    value = (os.environ if environ is None else environ).get("AWS_REGION", "").strip()
    return value or None


class LiveQueueError(Exception):
    """A live command cannot answer; the message is one line naming what to fix."""


class NotFoundError(LiveQueueError):
    """The queue, share or job a command was asked about does not exist; the message names it
    and what does exist. ``reason_code``: ``QUEUE_NOT_FOUND``, ``SHARE_NOT_FOUND`` or
    ``JOB_NOT_FOUND``."""

    def __init__(self, reason_code: str, message: str, *, job_id: str | None = None,
                 share: str | None = None) -> None:
        super().__init__(message)
        self.reason_code = reason_code
        self.job_id, self.share = job_id, share

    def to_json(self) -> dict[str, Any]:
        """As ``explain --json`` answers (the command still exits with an error)."""
        return {"job_id": self.job_id, "share": self.share, "status": None,
                "reason_code": self.reason_code, "reason": str(self), "inferred": False}


@dataclass(frozen=True)
class QueueFacts:
    """The job queue as DescribeJobQueues and DescribeServiceEnvironments report it."""

    name: str
    arn: str
    state: str
    status: str
    status_reason: str
    environment_limits: Mapping[str, int]
    """Per instance type, the service environment's capacity (empty if it could not be read)."""


@dataclass(frozen=True)
class RunnableCount:
    count: int
    capped: bool
    """True when :data:`RUNNABLE_PAGES` pages were read and more remained: ``count`` is a floor."""
    job_ids: tuple[str, ...] = ()


def judged_at_ms(snapshot: QueueSnapshot, now_ms: int | None = None,
                 local_clock: Callable[[], float] = time.time) -> int:
    """The time a command judges ``snapshot``'s age and the waits by: ``now_ms`` when the caller
    gives one, else the endpoint's own clock (:meth:`QueueSnapshot.endpoint_now_ms`, the one
    rule), else this machine's clock (an answer without a ``Date`` header)."""
    if now_ms is not None:
        return now_ms
    endpoint = snapshot.endpoint_now_ms()
    return endpoint if endpoint is not None else int(local_clock() * 1000)


def job_id_of(job_arn: object) -> str:
    """``abc`` for ``arn:aws:batch:…:service-job/abc`` (and for ``abc``)."""
    return str(job_arn or "").rsplit("/", 1)[-1]


class QueueReader(MonitoringGateway):
    """The reads of one command run; ``progress`` hears about long reads (stderr in the CLI)."""

    def __init__(self, client: Any, policy: RetryPolicy | None = None,
                 progress: Progress | None = None) -> None:
        super().__init__(client, policy)
        self._progress = progress or (lambda _message: None)
        self.calls = 0

    @classmethod
    def connect(cls, *, profile: str | None = None, region: str | None = None,
                progress: Progress | None = None,
                policy: RetryPolicy | None = None) -> QueueReader:
        """A reader with the standard boto3 configuration; errors say what is missing."""
        import boto3
        import botocore
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, NoRegionError, ProfileNotFound

        timeouts = ClientTimeouts()
        config = Config(
            connect_timeout=timeouts.connect,
            read_timeout=timeouts.read,
            retries={"mode": "standard", "total_max_attempts": 1},
            user_agent_extra="quota-constructs-cli",
        )
        try:
            session = boto3.Session(profile_name=profile, region_name=region_of(region))
            client = session.client("batch", config=config)
        except NoRegionError as error:
            raise LiveQueueError(NO_REGION) from error
        except ProfileNotFound as error:
            raise LiveQueueError(f"{error}; see `aws configure list-profiles`") from error
        except BotoCoreError as error:
            raise LiveQueueError(f"cannot create an AWS Batch client: {error}") from error
        known = set(client.meta.service_model.operation_names)
        missing = [op for op in (*REQUIRED_BATCH_OPERATIONS, *LIVE_OPERATIONS) if op not in known]
        if missing:
            raise LiveQueueError(
                f"the installed botocore ({botocore.__version__}) does not know the AWS Batch "
                f"operations {', '.join(missing)}; install botocore >= {MINIMUM_BOTOCORE} "
                f"(pip install 'boto3>=1.42' 'botocore>={MINIMUM_BOTOCORE}')"
            )
        return cls(client, policy, progress)

    # -- the queue ----------------------------------------------------------------------------

    def queue(self, reference: str) -> QueueFacts:
        """The queue named (or ARN'd) ``reference``; a missing or non-training queue is an error."""
        queues = self.read("DescribeJobQueues", jobQueues=[reference]).get("jobQueues") or []
        found = [q for q in queues if reference in (q.get("jobQueueName"), q.get("jobQueueArn"))]
        if not found:
            region = self._client.meta.region_name
            raise NotFoundError(
                "QUEUE_NOT_FOUND",
                f"job queue {job_queue_name_of(reference)!r} not found in region {region} of "
                f"these credentials' account; {self._training_queues()} (check --queue, "
                "--region and --profile)"
            )
        queue = found[0]
        kind = str(queue.get("jobQueueType") or "EC2/Fargate (no jobQueueType)")
        if kind != SAGEMAKER_TRAINING:
            raise LiveQueueError(
                f"job queue {queue.get('jobQueueName')!r} is a {kind} queue; quota shares exist "
                f"only on {SAGEMAKER_TRAINING} queues"
            )
        environments = [
            str(item.get("serviceEnvironment"))
            for item in queue.get("serviceEnvironmentOrder") or []
            if item.get("serviceEnvironment")
        ]
        return QueueFacts(
            name=str(queue.get("jobQueueName")),
            arn=str(queue.get("jobQueueArn")),
            state=str(queue.get("state", "")),
            status=str(queue.get("status", "")),
            status_reason=str(queue.get("statusReason") or ""),
            environment_limits=self._environment_limits(environments),
        )

    def _training_queues(self) -> str:
        """What exists instead, for an error: the SAGEMAKER_TRAINING queues of the first page
        (one more call, only when the queue asked for is missing)."""
        try:
            queues = self.read("DescribeJobQueues", maxResults=100).get("jobQueues") or []
        except LiveQueueError:
            return "the queues there could not be listed"
        names = sorted(str(q.get("jobQueueName")) for q in queues
                       if q.get("jobQueueType") == SAGEMAKER_TRAINING)
        return (f"its {SAGEMAKER_TRAINING} queues: {', '.join(names)}" if names else
                f"it has no {SAGEMAKER_TRAINING} queue")

    def _environment_limits(self, environments: list[str]) -> dict[str, int]:
        if not environments:
            return {}
        try:
            return self.capacity_of_environments(environments)
        except BatchRequestError as error:
            # Only the queue's totals and what a share can reach need the environment; every
            # other figure stands without it, so its absence is said, not fatal.
            self._progress(f"note: the service environment's capacity is unknown "
                           f"({readable_error(error)}); queue totals and what a share can reach "
                           "are left out")
            return {}

    def shares(self, queue_arn: str, *, with_tags: bool = False) -> list[LiveShare]:
        """Every share on the queue (ListQuotaShares); ``with_tags`` describes each (tags)."""
        listed = self.pages("ListQuotaShares", "quotaShares", jobQueue=queue_arn)
        shares = []
        for item in listed:
            arn = QuotaShareArn.parse(item.get("quotaShareArn"))
            if arn is None:
                continue
            if with_tags or not all(k in item for k in ("capacityLimits", "state", "status")):
                try:
                    described = self.describe(arn)
                except BatchRequestError as error:
                    # A denied describe is said (naming the permission), never taken for a
                    # share that is gone.
                    raise readable_error(error) from error
                if described is not None:
                    shares.append(described)
                continue
            shares.append(LiveShare.from_api(item, tags={}))
        return sorted(shares, key=lambda share: share.name)

    def snapshot_of(self, queue_arn: str) -> QueueSnapshot:
        """The queue's snapshot, with the endpoint's clock when it answered (the rule that
        reads it: :meth:`QueueSnapshot.endpoint_now_ms`)."""
        answer = self.read("GetJobQueueSnapshot", jobQueue=queue_arn)
        return parse_queue_snapshot(answer, answered_at_ms=self.answered_at_ms)

    def complete_usage(
        self, snapshot: QueueSnapshot, shares: Iterable[LiveShare]
    ) -> QueueSnapshot:
        """The snapshot with the usage of shares it leaves out, when it leaves any out.

        ``topCapacityUtilization`` lists the *top* shares; when what it lists adds up to less
        than ``totalCapacityUsage``, the shares it omits are counted from their SCHEDULED,
        STARTING and RUNNING jobs (bounded by the capacity they hold, not by the backlog), as
        the custom resource's shrink guard does.
        """
        by_name = {share.name: share for share in shares}
        left_out = snapshot.left_out(by_name)
        if not left_out:
            return snapshot
        usage = {name: dict(units) for name, units in snapshot.usage.items()}
        for share in (by_name[name] for name in left_out):
            arn = QuotaShareArn.parse(share.arn)
            if arn is None:
                continue
            self._progress(f"counting the capacity quota share {share.name} holds "
                           "(the snapshot lists only the top shares) ...")
            jobs, _ = self.share_jobs(arn, DISPATCHED_STATUSES)
            held: dict[str, float] = {}
            for job in jobs:
                for unit, quantity in job.capacity_usage.items():
                    held[unit] = held.get(unit, 0.0) + quantity
            if held:
                usage[share.name] = held
        return replace(snapshot, usage=usage)

    def runnable(self, queue_arn: str, share: str, *, max_pages: int = RUNNABLE_PAGES,
                 keep_ids: bool = False) -> RunnableCount:
        """Count ``share``'s RUNNABLE jobs reading at most ``max_pages`` pages."""
        pages = 0

        def read_page(operation: str, **params: Any) -> dict[str, Any]:
            nonlocal pages
            pages += 1
            if pages == 2:
                self._progress(f"counting RUNNABLE jobs of quota share {share} ...")
            return self.read(operation, **params)

        jobs, complete = runnable_jobs(read_page, queue_arn, share, max_pages=max_pages,
                                       page_size=RUNNABLE_PAGE_SIZE)
        ids = tuple(sorted(str(job.get("jobId")) for job in jobs)) if keep_ids else ()
        return RunnableCount(len(jobs), not complete, ids)

    def queue_jobs(self, queue_arn: str, status: str, *, max_pages: int = RUNNABLE_PAGES
                   ) -> tuple[list[dict[str, Any]], bool]:
        """Every share's jobs in ``status`` (one ListServiceJobs listing of the whole queue,
        newest first), reading at most ``max_pages`` pages, and whether that was all of them."""
        listing = paginate(self.read, "ListServiceJobs", "jobSummaryList", max_pages=max_pages,
                           page_size=RUNNABLE_PAGE_SIZE, jobQueue=queue_arn, jobStatus=status)
        # Checked again: an endpoint that ignored the status must not mix others in.
        jobs = [job for job in listing.items if job.get("status", status) == status]
        return jobs, listing.complete

    def service_job(self, job_id: str) -> dict[str, Any] | None:
        """DescribeServiceJob; None when Batch does not know the job."""
        try:
            job: dict[str, Any] = self.read("DescribeServiceJob", jobId=job_id)
        except LiveQueueError as error:
            cause = error.__cause__
            if isinstance(cause, BatchRequestError) and cause.not_found:
                return None
            raise
        return job if job.get("jobId") else None

    def share_jobs(self, arn: QuotaShareArn, statuses: Iterable[str],
                   limit: int = 1000) -> tuple[list[ServiceJob], bool]:
        """The guard's job listing (the same call the custom resource makes), errors readable."""
        try:
            return self.jobs(arn, statuses, limit)
        except BatchRequestError as error:
            raise readable_error(error) from error

    # -- plumbing -----------------------------------------------------------------------------

    def read(self, operation: str, **params: Any) -> dict[str, Any]:
        """One Batch call (with the runtime's retries); failures as :class:`LiveQueueError`."""
        try:
            return self._call(operation, **params)
        except BatchRequestError as error:
            raise readable_error(error) from error

    def pages(self, operation: str, key: str, **params: Any) -> list[dict[str, Any]]:
        try:
            return self._pages(operation, key, **params)
        except BatchRequestError as error:
            raise readable_error(error) from error
        except QuotaShareLifecycleError as error:
            raise LiveQueueError(str(error)) from error

    def attempt(self, operation: str, **params: Any) -> dict[str, Any]:
        """One Batch call, no retries: the caller paces and retries (``history``'s adaptive
        rate needs to hear every throttle). Raises :class:`BatchRequestError`."""
        self.calls += 1
        return self._request(operation, params, replace(self._policy, max_attempts=1))

    def _call(self, operation: str, **params: Any) -> dict[str, Any]:
        self.calls += 1
        return super()._call(operation, **params)


def readable_error(error: BatchRequestError) -> LiveQueueError:
    action = f"batch:{error.operation}"
    if error.denied:
        return LiveQueueError(
            f"access denied: these credentials may not call {action} ({error.detail[:200]}); "
            "grant the read-only status policy (TrainingJobQueue.grant_read_status, or the "
            "README's JSON policy)"
        )
    if error.code in ("NoCredentialsError", "PartialCredentialsError"):
        return LiveQueueError(
            "no AWS credentials found: set AWS_PROFILE (or pass --profile), run "
            "`aws sso login`, or export AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"
        )
    if error.code in ("ExpiredTokenException", "ExpiredToken", "InvalidSignatureException"):
        return LiveQueueError(
            f"AWS rejected the credentials for {action} ({error.code}); refresh them "
            "(e.g. `aws sso login`) and retry"
        )
    return LiveQueueError(str(error).replace("retry the deployment later", "retry later"))


def payload_of(job: Mapping[str, Any]) -> Mapping[str, Any]:
    """The SageMaker CreateTrainingJob request a service job carries (empty if unreadable)."""
    raw = job.get("serviceRequestPayload")
    if not isinstance(raw, str):
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, Mapping) else {}
