"""Submit into one quota share with what its grants and agreement require, checked before any
call to AWS Batch."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ..model.errors import QuotaConfigError
from ..model.share import check_share_name
from ..model.submission import check_priority, share_tags, submit_service_job_request
from .agreement_file import ShareTerms, StackOutput, read_share_terms
from .instance_types import check_instance_types

if TYPE_CHECKING:
    from ..live.estimate import StartEstimate

ACTIVE_JOB_STATUSES: Final = ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING",
                              "RUNNING")
"""What :meth:`ShareClient.jobs` lists by default. ``ListServiceJobs`` answers one status per
call (RUNNING when none is given), so each status is one listing."""


@dataclass(frozen=True)
class ShareJob:
    """One service job of the share, as ``ListServiceJobs`` summarises it."""

    job_id: str
    job_arn: str
    job_name: str
    status: str
    share: str
    created_at: int | None


class ShareClient:
    """A team's handle on its quota share (boto3 only).

    ``queue`` is the job queue's name or ARN; ``max_priority`` the team's priority ceiling
    (``grant_submit(max_priority=...)``), enforced here before anything is sent, so a request
    IAM would deny is never made; ``preemption_budget`` the share's interruption budget, sent
    as every job's ``preemptionRetriesBeforeTermination`` (None: requeued without limit).
    ``instance_types`` the types the share has a limit for: a training request asking for
    any other is refused before any call (it would wait forever); None skips the check.
    ``batch_client`` defaults to ``boto3.client("batch")`` with the standard configuration
    (profile, region, ``AWS_ENDPOINT_URL_BATCH``).
    """

    def __init__(
        self,
        *,
        queue: str,
        share: str,
        max_priority: int | None = None,
        preemption_budget: int | None = None,
        batch_client: Any = None,
        instance_types: Sequence[str] | None = None,
    ) -> None:
        subject = f"quota share {share!r}"
        check_share_name(share, subject=subject)
        if not isinstance(queue, str) or not queue:
            raise QuotaConfigError(subject, "queue", queue, "the job queue's name or ARN")
        if max_priority is not None:
            check_priority(max_priority, subject=subject, ceiling=None, field="max_priority")
        if preemption_budget is not None and (
            isinstance(preemption_budget, bool) or not isinstance(preemption_budget, int)
            or preemption_budget < 0
        ):
            raise QuotaConfigError(
                subject, "preemption_budget", preemption_budget,
                "None (requeued without limit) or a whole number >= 0",
            )
        self.queue: Final = queue
        self.share: Final = share
        self.max_priority: Final = max_priority
        self.preemption_budget: Final = preemption_budget
        self.instance_types: Final = _checked_types(instance_types, subject=subject)
        self._batch = batch_client

    @classmethod
    def from_agreement(
        cls,
        path: str | Path,
        *,
        share: str,
        principal: str | None = None,
        queue: str | None = None,
        batch_client: Any = None,
        cloudformation_client: Any = None,
    ) -> ShareClient:
        """A client for ``share`` from the agreement's JSON twin.

        The queue is the name the agreement gives; where only a stack output holds it (a name
        CloudFormation generates), ``queue`` if given, else that output read from the deployed
        stack (``cloudformation:DescribeStacks``). The ceiling is ``principal``'s (see
        :func:`read_share_terms`), by default the strictest of the share's submit grants.
        """
        terms = read_share_terms(path, share=share, principal=principal)
        return cls(
            queue=queue or _queue_of(terms, cloudformation_client),
            share=terms.share,
            max_priority=terms.max_priority,
            preemption_budget=terms.preemption_budget,
            batch_client=batch_client,
            instance_types=terms.instance_types,
        )

    @property
    def submission_tags(self) -> Mapping[str, str]:
        return share_tags(self.share)

    def submit_request(
        self,
        *,
        job_name: str,
        training_job_request: Mapping[str, Any] | str,
        priority: int | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The ``submit_service_job`` arguments :meth:`submit` sends (nothing is called)."""
        checked = check_priority(priority, subject=self._subject, ceiling=self.max_priority)
        if self.instance_types is not None:
            check_instance_types(training_job_request, self.instance_types,
                                 subject=self._subject)
        return submit_service_job_request(
            job_queue=self.queue, share=self.share, job_name=job_name,
            training_job_request=training_job_request, priority=checked,
            budget=self.preemption_budget, extra_tags=tags,
        )

    def submit(
        self,
        *,
        job_name: str,
        training_job_request: Mapping[str, Any] | str,
        priority: int | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> str:
        """Submit a SageMaker ``CreateTrainingJob`` request (a mapping, or its JSON) into the
        share; returns the service job's id.

        ``tags`` (cost allocation, experiment ids) are sent with the share's tag, which
        ``grant_submit`` allows. A priority above the ceiling, or none under a ceiling, and a
        tag key the library reserves (``quota-constructs:...``) or AWS does (``aws:...``)
        raise :class:`QuotaConfigError` before any call.
        """
        request = self.submit_request(
            job_name=job_name, training_job_request=training_job_request, priority=priority,
            tags=tags,
        )
        answer = self._client().submit_service_job(**request)
        # The job's id is the last part of its ARN (service-job/<id>) where jobId is absent.
        return str(answer.get("jobId") or str(answer["jobArn"]).rsplit("/", 1)[-1])

    def jobs(self, statuses: Iterable[str] = ACTIVE_JOB_STATUSES) -> list[ShareJob]:
        """This share's jobs in ``statuses``, newest first within each status."""
        found: dict[str, ShareJob] = {}
        paginator = self._client().get_paginator("list_service_jobs")
        for status in statuses:
            pages = paginator.paginate(
                jobQueue=self.queue, jobStatus=status,
                filters=[{"name": "QUOTA_SHARE_NAME", "values": [self.share]}],
            )
            for page in pages:
                # A job that changed status between two listings appears in both: once here.
                for job in self._own(page.get("jobSummaryList", [])):
                    found.setdefault(job.job_id, job)
        return list(found.values())

    def update_priority(self, job_id: str, priority: int) -> None:
        """Change a job's scheduling priority, within the ceiling (checked before the call)."""
        checked = check_priority(priority, subject=self._subject, ceiling=self.max_priority)
        self._client().update_service_job(jobId=job_id, schedulingPriority=checked)

    def estimate(
        self,
        *,
        instance_type: str,
        count: int = 1,
        priority: int | None = None,
        max_runtime_seconds: int | None = None,
    ) -> StartEstimate:
        """By when a job of this share needing ``count`` x ``instance_type`` would start at the
        latest if it were submitted now (``quota-constructs estimate``): ``latest`` (a UTC
        datetime, None when no moment can be promised), ``earliest``, ``assumes`` (one
        sentence: what the bound assumes, or why there is none) and ``blocking_jobs``.

        The priority is checked as :meth:`submit` checks it, before any call; the answer reads
        the live queue once (read-only: ``batch:DescribeJobQueues``,
        ``DescribeServiceEnvironments``, ``ListQuotaShares``, ``GetJobQueueSnapshot``,
        ``ListServiceJobs``, ``DescribeServiceJob``).
        """
        from ..live.estimate import Submission, estimate_submission
        from ..live.queue_reader import QueueReader
        from ..wire.training_request import DEFAULT_MAX_RUNTIME_SECONDS

        checked = check_priority(priority, subject=self._subject, ceiling=self.max_priority)
        submission = Submission(
            self.share, instance_type, count, checked,
            DEFAULT_MAX_RUNTIME_SECONDS if max_runtime_seconds is None else max_runtime_seconds,
        )
        return estimate_submission(self.queue, submission, reader=QueueReader(self._client()))

    @property
    def _subject(self) -> str:
        return f"quota share {self.share!r}"

    def _own(self, summaries: Sequence[Mapping[str, Any]]) -> list[ShareJob]:
        # The filter asks Batch for this share's jobs; a summary naming another share is
        # dropped all the same, so the answer never shows another team's job.
        return [
            ShareJob(
                job_id=str(item["jobId"]), job_arn=str(item.get("jobArn", "")),
                job_name=str(item.get("jobName", "")), status=str(item.get("status", "")),
                share=str(item.get("quotaShareName") or self.share),
                created_at=item.get("createdAt"),
            )
            for item in summaries
            if item.get("quotaShareName") in (None, self.share)
        ]

    def _client(self) -> Any:
        if self._batch is None:
            import boto3

            self._batch = boto3.client("batch")
        return self._batch


def _checked_types(
    instance_types: Sequence[str] | None, *, subject: str
) -> tuple[str, ...] | None:
    if instance_types is None:
        return None
    if isinstance(instance_types, str) or not all(
        isinstance(item, str) and item for item in instance_types
    ):
        raise QuotaConfigError(
            subject, "instance_types", instance_types,
            "None, or a list of the instance types the share has a limit for",
        )
    return tuple(instance_types)


def _queue_of(terms: ShareTerms, cloudformation_client: Any) -> str:
    if terms.queue_name:
        return terms.queue_name
    output = terms.queue_output
    if output is None:
        raise QuotaConfigError(
            f"quota share {terms.share!r}", "queue", None,
            "a queue name in the agreement, a stack output holding it, or ShareClient."
            "from_agreement(..., queue=NAME)",
        )
    return _read_output(output, cloudformation_client)


def _read_output(output: StackOutput, cloudformation_client: Any) -> str:
    if cloudformation_client is None:
        import boto3

        cloudformation_client = boto3.client("cloudformation")
    stacks = cloudformation_client.describe_stacks(StackName=output.stack)["Stacks"]
    for item in stacks[0].get("Outputs", []) if stacks else []:
        if item.get("OutputKey") == output.output_key:
            return str(item["OutputValue"])
    raise QuotaConfigError(
        f"stack {output.stack!r}", "outputs", output.output_key,
        "the stack output holding the job queue's name: deploy the stack first, or pass "
        "queue=NAME",
    )
