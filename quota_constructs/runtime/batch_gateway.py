"""Every AWS Batch call the runtime makes, with retries and readable errors.

The client is an ordinary boto3 ``batch`` client (built from the AWS Batch model the Lambda
carries, see :mod:`.service_models`), so ``AWS_ENDPOINT_URL_BATCH`` and the Lambda's region apply
as boto3 defines them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import UTC
from email.utils import parsedate_to_datetime
from enum import Enum
from typing import Any

import botocore
from botocore import xform_name
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from quota_constructs.wire.listing import MAX_LISTING_PAGES
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn

from .batch_reads import (
    QueueSnapshot,
    ServiceJobDetail,
    describe_service_job,
    list_service_jobs,
    paginate,
    read_queue_snapshot,
)
from .errors import QuotaShareLifecycleError
from .retry import (
    Again,
    ClientTimeouts,
    RetryPolicy,
    call_with_retries,
    is_retryable,
    raise_again,
    with_backoff,
)
from .service_job import ServiceJob
from .service_models import (
    MINIMUM_BOTOCORE,
    REQUIRED_BATCH_OPERATIONS,
    STAGED_MODELS,
    boto3_session,
    carries_models,
)
from .share_writes import Progress, ShareWrite, is_busy_refusal
from .structured_log import log

PAGE_LIMIT = MAX_LISTING_PAGES


class Refusal(Enum):
    """What a refused AWS Batch call means: the one decision rule every reader and writer uses.

    AWS Batch answers many refusals with the same ``ClientException``, which AWS documents as
    covering both a missing resource and "an action or resource on behalf of a user that
    doesn't have permissions". So the code alone never says "not found": a denial is never
    taken for a missing share (a Delete would report success while the share stays), and a
    ``ClientException`` counts as "not found" only when its message says so. Anything else is
    an error, or ambiguous where the caller can confirm by another read (a listing).
    """

    NOT_FOUND = "not found"
    DENIED = "denied"
    ALREADY_EXISTS = "already exists"
    OTHER = "other"


DENIED_CODES = frozenset({
    "AccessDeniedException", "AccessDenied", "UnauthorizedOperation", "UnauthorizedException",
})
NOT_FOUND_CODES = frozenset({"ResourceNotFoundException", "NotFoundException"})
EXISTS_CODES = frozenset({
    "ResourceAlreadyExistsException", "AlreadyExistsException", "ConflictException",
})
_DENIED_TEXT = re.compile(
    r"not authori[sz]ed|access ?denied|unauthori[sz]ed|forbidden|"
    r"(?:do|does|did) not have (?:the )?(?:required )?permissions?|no identity-based policy",
    re.IGNORECASE,
)
_NOT_FOUND_TEXT = re.compile(
    r"does not exist|doesn't exist|not found|cannot be found|could not be found|no such|"
    r"unable to find",
    re.IGNORECASE,
)
_EXISTS_TEXT = re.compile(r"already exists?", re.IGNORECASE)


def classify_refusal(code: str, message: str, status: int | None = None) -> Refusal:
    """Denied first (HTTP 403, a denial code, or a message saying the caller may not), then
    "already exists", then not found (a not-found code, or a message saying so)."""
    if code in DENIED_CODES or status == 403 or _DENIED_TEXT.search(message):
        return Refusal.DENIED
    if code in EXISTS_CODES or _EXISTS_TEXT.search(message):
        return Refusal.ALREADY_EXISTS
    if code in NOT_FOUND_CODES or _NOT_FOUND_TEXT.search(message):
        return Refusal.NOT_FOUND
    return Refusal.OTHER


def create_batch_client(timeouts: ClientTimeouts | None = None) -> Any:
    """A Batch client that does not retry (the :class:`BatchConnection`'s policy does).

    Built from the AWS Batch model the Lambda asset carries, when it carries one.
    """
    timeouts = timeouts or ClientTimeouts()
    config = Config(
        connect_timeout=timeouts.connect,
        read_timeout=timeouts.read,
        retries={"mode": "standard", "total_max_attempts": 1},
        user_agent_extra="quota-constructs-runtime",
    )
    return boto3_session().client("batch", config=config)


@dataclass(frozen=True)
class BatchConnection:
    """How a runtime reaches AWS Batch: the client (per-attempt timeouts) and the retry policy.

    The Lambdas use the default; whoever drives a handler elsewhere (tests, the soak run)
    passes its own, e.g. a policy that records its sleeps, shorter timeouts, or a client of its
    own making."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    timeouts: ClientTimeouts = field(default_factory=ClientTimeouts)
    make_client: Callable[[ClientTimeouts], Any] = create_batch_client

    def client(self) -> Any:
        return self.make_client(self.timeouts)


# Not eq or repr: an error compares by identity and shows its message, as other exceptions do.
@dataclass(eq=False, repr=False)
class BatchRequestError(QuotaShareLifecycleError):
    """AWS Batch refused a request (after retries, when it was worth retrying)."""

    operation: str
    code: str
    detail: str
    """AWS Batch's own message."""
    text: str
    """The error's message, as CloudFormation shows it."""
    _: KW_ONLY
    ambiguous: bool = False
    """The request may or may not have taken effect (5xx, timeout, throttling)."""
    status: int | None = None

    def __post_init__(self) -> None:
        super().__init__(self.text)

    @property
    def refusal(self) -> Refusal:
        if self.ambiguous:
            return Refusal.OTHER
        return classify_refusal(self.code, self.detail, self.status)

    @property
    def busy_refusal(self) -> bool:
        return is_busy_refusal(self.code, self.detail)

    @property
    def denied(self) -> bool:
        return self.refusal is Refusal.DENIED

    @property
    def not_found(self) -> bool:
        return self.refusal is Refusal.NOT_FOUND

    @property
    def already_exists(self) -> bool:
        return self.refusal is Refusal.ALREADY_EXISTS

    @property
    def permission(self) -> str:
        """The IAM action the call needs (``batch:<operation>``)."""
        return f"batch:{self.operation}"


class BatchGateway:
    def __init__(
        self,
        client: Any,
        policy: RetryPolicy | None = None,
        seconds_left: Callable[[], float] | None = None,
    ) -> None:
        self._client = client
        self._policy = policy or RetryPolicy()
        self._seconds_left = seconds_left
        self.answered_at_ms: int | None = None
        """The endpoint's clock when it sent its last answer (the HTTP ``Date`` header, whole
        seconds); None when the answer carried none."""
        missing = [op for op in REQUIRED_BATCH_OPERATIONS if op not in _operation_names(client)]
        if missing:
            carried = (
                f"the AWS Batch model carried in {STAGED_MODELS} lacks them too (the app was "
                "synthesized with an older botocore)" if carries_models() else
                "the function's code carries no AWS Batch model of its own (it is staged "
                "from the botocore installed where the app is synthesized)"
            )
            raise QuotaShareLifecycleError(
                f"the botocore in this Lambda ({botocore.__version__}) does not know the AWS "
                f"Batch operations {', '.join(missing)}, and {carried}; quota shares need "
                f"botocore >= {MINIMUM_BOTOCORE}. Synthesize the app with botocore >= "
                f"{MINIMUM_BOTOCORE} installed, or give the provider a layer with boto3/botocore "
                f">= {MINIMUM_BOTOCORE} (handler_layers)."
            )

    @classmethod
    def from_context(
        cls, context: Any, connection: BatchConnection | None = None
    ) -> BatchGateway:
        """A gateway for one invocation: ``connection``'s client and policy, bounded by the
        time the Lambda ``context`` has left."""
        connection = connection or BatchConnection()
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        if not callable(remaining):
            return cls(connection.client(), connection.policy)
        # A retry is only worth starting if even a hung attempt would end before the Lambda.
        attempt = connection.timeouts.connect + connection.timeouts.read
        return cls(connection.client(), connection.policy,
                   seconds_left=lambda: remaining() / 1000.0 - attempt)

    # -- quota shares -------------------------------------------------------------------------

    def describe(self, arn: QuotaShareArn) -> LiveShare | None:
        """The share, or None when AWS Batch no longer has it.

        Not found only when AWS Batch says so (or answers a plain ClientException) *and* the
        queue's listing confirms it; a denial is never "gone". A share the listing shows but
        DescribeQuotaShare does not yet is described again, within the retry policy.
        """
        absent: dict[str, Any] = {}  # DescribeQuotaShare's answer when the listing lacks it

        def attempt(_: int) -> dict[str, Any] | Again[dict[str, Any]]:
            try:
                return self._call("DescribeQuotaShare", quotaShareArn=arn.arn)
            except BatchRequestError as error:
                vague = error.refusal is Refusal.OTHER and error.code == "ClientException"
                if not (error.not_found or vague):
                    raise
                if self._absent_from_queue(arn):
                    return absent
                return Again(raise_again(error), lambda number, _: log(
                    "quota_share_listed_not_described", quota_share=arn.arn, attempt=number))

        # No time bound here (as before the loops were one): a read is short.
        response = with_backoff(attempt, self._policy)
        if response is absent or not response.get("quotaShareArn"):
            return None
        tags = response.get("tags")
        if tags is None:
            tags = self._call("ListTagsForResource", resourceArn=arn.arn).get("tags") or {}
        return LiveShare.from_api(response, tags)

    def find(self, job_queue: str, name: str) -> LiveShare | None:
        """The share called ``name`` on ``job_queue`` (a name or ARN), if there is one."""
        for item in self._pages("ListQuotaShares", "quotaShares", jobQueue=job_queue):
            if item.get("quotaShareName") == name:
                arn = QuotaShareArn.parse(item.get("quotaShareArn"))
                if arn is None:
                    raise QuotaShareLifecycleError(
                        f"AWS Batch listed quota share {name!r} with an unexpected ARN "
                        f"{item.get('quotaShareArn')!r}"
                    )
                return self.describe(arn)
        return None

    def find_once_visible(self, job_queue: str, name: str) -> LiveShare | None:
        """The share called ``name``, read again (with backoff, within the retry policy's
        attempts and the time left) while reads do not show it yet.

        For a share AWS Batch said exists ("already exists", or a create whose answer was lost):
        nothing documents read-after-write consistency for quota shares, so "not seen yet" is
        not "not there". None when it never showed within the bound.
        """
        reads = 0

        def attempt(number: int) -> LiveShare | Again[LiveShare | None] | None:
            nonlocal reads
            reads = number
            return self.find(job_queue, name) or Again(not_seen)

        def not_seen() -> None:
            log("quota_share_not_seen_yet", quota_share=name, job_queue=job_queue, reads=reads)

        return with_backoff(attempt, self._policy, self._seconds_left)

    def create(self, job_queue: str, name: str, fields: Mapping[str, Any],
               tags: Mapping[str, str], owner: str) -> QuotaShareArn | None:
        """Create the share with ``tags``, which carry ``owner``'s marker.

        After an ambiguous answer, a share of that name carrying the marker is this create's.
        None: the answer was lost and a share of that name that is not this resource's is
        there; the caller's adoption rules decide.
        """
        params = {"quotaShareName": name, "jobQueue": job_queue, "tags": dict(tags), **fields}
        found: list[LiveShare | None] = []

        def read() -> LiveShare | None:
            found[:] = [self.find(job_queue, name)]
            return found[0]

        progress, response = self._write(ShareWrite.create(params, owner), read)
        if response is None:
            share = found[0] if found else None
            if progress is not Progress.APPLIED or share is None:
                return None
            response = {"quotaShareArn": share.arn}
        arn = QuotaShareArn.parse(response.get("quotaShareArn"))
        if arn is None:
            raise QuotaShareLifecycleError(
                f"AWS Batch created quota share {name!r} but returned the unexpected ARN "
                f"{response.get('quotaShareArn')!r}"
            )
        return arn

    def update(self, arn: QuotaShareArn, fields: Mapping[str, Any]) -> Progress:
        """Submit ``fields``; IN_TRANSITION when the share is busy and nothing was sent."""
        return self._share_write(ShareWrite.update(arn.arn, fields), arn)

    def delete(self, arn: QuotaShareArn) -> Progress:
        return self._share_write(ShareWrite.delete(arn.arn), arn)

    def tag(self, arn: QuotaShareArn, tags: Mapping[str, str]) -> None:
        self._share_write(ShareWrite.tag(arn.arn, tags), arn)

    def untag(self, arn: QuotaShareArn, keys: Sequence[str]) -> None:
        self._share_write(ShareWrite.untag(arn.arn, keys), arn)

    # -- jobs and usage -----------------------------------------------------------------------

    def jobs(self, arn: QuotaShareArn, statuses: Iterable[str],
             limit: int = 1000) -> tuple[list[ServiceJob], bool]:
        """The share's jobs in ``statuses`` (at most ``limit``), and whether there were more."""
        found, more = list_service_jobs(
            self._call, arn.job_queue_arn, arn.share_name, statuses, limit=limit
        )
        return [ServiceJob.from_api(summary) for summary in found], more

    def snapshot_usage(self, arn: QuotaShareArn) -> dict[str, float] | None:
        """Capacity the share holds per unit (GetJobQueueSnapshot), None if it is not listed."""
        snapshot = read_queue_snapshot(self._call, arn.job_queue_arn)
        if arn.share_name not in snapshot.usage:
            return None
        return dict(snapshot.usage_of(arn.share_name))

    # The in-share preemption guard's further reads (its own names, so that the custom resource
    # and ``preview``'s reader, a subclass, read exactly alike).

    def service_job_detail(self, job_id: str) -> ServiceJobDetail:
        """DescribeServiceJob: the only read that carries a job's ``schedulingPriority``."""
        return describe_service_job(self._call, job_id)

    def queue_snapshot(self, job_queue: str) -> QueueSnapshot:
        return read_queue_snapshot(self._call, job_queue)

    def queue_shares(self, job_queue: str) -> list[LiveShare]:
        """Every share on ``job_queue`` with its configuration, as ListQuotaShares lists it."""
        return [LiveShare.from_api(item, tags={})
                for item in self._pages("ListQuotaShares", "quotaShares", jobQueue=job_queue)
                if item.get("quotaShareArn")]

    def environment_capacity(self, job_queue: str) -> dict[str, int]:
        """The instances of each type the queue's service environment may run (empty when the
        queue names none)."""
        queues = self._call("DescribeJobQueues", jobQueues=[job_queue]).get("jobQueues") or []
        environments = [str(item["serviceEnvironment"]) for queue in queues
                        for item in queue.get("serviceEnvironmentOrder") or []
                        if item.get("serviceEnvironment")]
        return self.capacity_of_environments(environments) if environments else {}

    def capacity_of_environments(self, environments: Sequence[str]) -> dict[str, int]:
        """DescribeServiceEnvironments: the instances of each type ``environments`` may run
        together (one reading of the answer for the guards and ``status``)."""
        answer = self._call("DescribeServiceEnvironments", serviceEnvironments=list(environments))
        capacity: dict[str, int] = {}
        for environment in answer.get("serviceEnvironments") or []:
            for item in environment.get("capacityLimits") or []:
                unit = str(item.get("capacityUnit", ""))
                capacity[unit] = capacity.get(unit, 0) + int(item.get("maxCapacity") or 0)
        return capacity

    # -- writes (see :mod:`.share_writes`) ------------------------------------------------------

    def _share_write(self, write: ShareWrite, arn: QuotaShareArn) -> Progress:
        progress, _ = self._write(write, lambda: self.describe(arn))
        return progress

    def _write(
        self, write: ShareWrite, read: Callable[[], LiveShare | None]
    ) -> tuple[Progress, dict[str, Any] | None]:
        """Send ``write``; after an ambiguous answer, let the re-read share decide.

        APPLIED with the response when AWS Batch answered. When the answer was lost: APPLIED
        (without a response) if the re-read share shows the change, IN_TRANSITION if it is
        busy with another one (nothing is sent again; the next ``is_complete`` poll decides),
        and the change is sent again only while the share shows it did not happen.
        """
        # Sent once per attempt: after an ambiguous answer the share decides, not a blind repeat.
        once = replace(self._policy, max_attempts=1)
        Written = tuple[Progress, dict[str, Any] | None]

        def attempt(number: int) -> Written | Again[Written]:
            try:
                return Progress.APPLIED, self._request(write.operation, write.params, once)
            except BatchRequestError as error:
                if not (error.ambiguous or error.busy_refusal):
                    raise
                progress = write.progress(read())
                log("ambiguous_answer", operation=write.operation, code=error.code,
                    attempt=number, decided=progress.value)
                if progress is not Progress.NOT_APPLIED:
                    return progress, None
                return Again(raise_again(error))

        return with_backoff(attempt, self._policy, self._seconds_left)

    # -- plumbing -----------------------------------------------------------------------------

    def _absent_from_queue(self, arn: QuotaShareArn) -> bool:
        # DescribeQuotaShare answers a missing share with a generic ClientException; the queue's
        # listing confirms it is really gone before a delete is reported as done.
        try:
            listed = self._pages("ListQuotaShares", "quotaShares", jobQueue=arn.job_queue_arn)
            return all(item.get("quotaShareArn") != arn.arn for item in listed)
        except BatchRequestError as error:
            if error.not_found:
                return True  # the queue itself is gone, and every share with it
            raise

    def _pages(self, operation: str, key: str, **params: Any) -> list[dict[str, Any]]:
        # Acting on part of a listing (a share not found because it is on page 101) would be
        # wrong, so the custom resource refuses rather than truncates.
        listing = paginate(self._call, operation, key, **params)
        if not listing.complete:
            raise QuotaShareLifecycleError(
                f"AWS Batch {operation} returned more than {PAGE_LIMIT} pages; giving up"
            )
        return list(listing.items)

    def _call(self, operation: str, **params: Any) -> dict[str, Any]:
        return self._request(operation, params, self._policy)

    def _request(
        self, operation: str, params: Mapping[str, Any], policy: RetryPolicy
    ) -> dict[str, Any]:
        method = getattr(self._client, xform_name(operation))
        try:
            response: dict[str, Any] = call_with_retries(
                operation, lambda: method(**params), policy, self._seconds_left
            )
        except ClientError as error:
            details = error.response.get("Error", {})
            code, message = str(details.get("Code", "")), str(details.get("Message", ""))
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            log("batch_error", operation=operation, code=code, status=status,
                detail=message[:500])
            retryable = is_retryable(error)
            text = f"AWS Batch {operation} failed: {code}: {message}"
            if retryable:
                text = (f"AWS Batch {operation} kept failing after retries (AWS Batch is "
                        f"throttling or unavailable; retry the deployment later): {code}: "
                        f"{message}")
            elif classify_refusal(code, message, status) is Refusal.DENIED:
                text = _denied_text(operation, params, code, message)
            raise BatchRequestError(
                operation, code, message, text, ambiguous=retryable,
                status=status if isinstance(status, int) else None,
            ) from error
        except BotoCoreError as error:
            log("batch_request_error", operation=operation, detail=str(error)[:500])
            problem = (
                "could not be reached after retries" if is_retryable(error)
                else "could not be sent"
            )
            raise BatchRequestError(
                operation, type(error).__name__, str(error),
                f"AWS Batch {operation} {problem}: {error}", ambiguous=is_retryable(error),
            ) from error
        self.answered_at_ms = http_date_ms(response.pop("ResponseMetadata", None))
        return response


def http_date_ms(metadata: object) -> int | None:
    """The ``Date`` header of a boto3 answer's ``ResponseMetadata``, in milliseconds since the
    epoch; None when it is missing or unreadable."""
    headers = metadata.get("HTTPHeaders") if isinstance(metadata, Mapping) else None
    text = headers.get("date") if isinstance(headers, Mapping) else None
    if not isinstance(text, str):
        return None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT
        when = when.replace(tzinfo=UTC)
    return round(when.timestamp() * 1000)


def _denied_text(operation: str, params: Mapping[str, Any], code: str, message: str) -> str:
    resource = next((str(params[key]) for key in ("quotaShareArn", "resourceArn", "jobQueue",
                                                  "jobId") if params.get(key)), "")
    on = f" on {resource}" if resource else ""
    return (
        f"AWS Batch denied {operation}{on} ({code}: {message}); the caller lacks the IAM "
        f"permission batch:{operation}. A denied call is never taken to mean the share is "
        "missing: grant the permission (or fix the policy that denies it) and retry."
    )


def _operation_names(client: Any) -> frozenset[str]:
    try:
        return frozenset(client.meta.service_model.operation_names)
    except AttributeError:
        return frozenset()
