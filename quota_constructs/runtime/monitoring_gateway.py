"""The AWS Batch reads (and the one write) of the monitoring Lambdas.

Built on :class:`BatchGateway`: the same plain boto3 client (``AWS_ENDPOINT_URL_BATCH`` applies),
the same bounded retries with backoff for throttling and 5xx, the same readable errors.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .batch_gateway import NOT_FOUND_CODES, PAGE_LIMIT, BatchGateway, BatchRequestError
from .live_share import LiveShare
from .share_arn import is_job_queue_arn
from .structured_log import log

RUNNABLE = "RUNNABLE"
QUOTA_SHARE_FILTER = "QUOTA_SHARE_NAME"
_CONFIG_KEYS = ("capacityLimits", "resourceSharingConfiguration", "state", "status")


@dataclass(frozen=True)
class QueueSnapshot:
    """GetJobQueueSnapshot, per share: capacity in use per unit."""

    usage: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def usage_of(self, share: str) -> Mapping[str, float]:
        """What ``share`` holds per unit; a share the snapshot does not list holds nothing."""
        return self.usage.get(share, {})


@dataclass(frozen=True)
class LiveShares:
    """The queue's shares as AWS Batch reports them, and the names it could not be asked about."""

    shares: Mapping[str, LiveShare]
    unknown: frozenset[str] = frozenset()

    def knows(self, name: str) -> bool:
        return name not in self.unknown

    def get(self, name: str) -> LiveShare | None:
        return self.shares.get(name)


@dataclass(frozen=True)
class RunnableJobs:
    """The RUNNABLE jobs of one share: how many, and when the oldest was submitted."""

    count: int
    oldest_created_at_ms: int | None
    complete: bool
    """False when the listing was cut off after :data:`PAGE_LIMIT` pages (count is a floor)."""


class MonitoringGateway(BatchGateway):
    @classmethod
    def from_context(cls, context: Any) -> MonitoringGateway:
        gateway = super().from_context(context)
        assert isinstance(gateway, MonitoringGateway)
        return gateway

    def snapshot(self, job_queue: str) -> QueueSnapshot:
        response = self._call("GetJobQueueSnapshot", jobQueue=job_queue)
        utilization = (response.get("queueUtilization") or {}).get("quotaShareUtilization") or {}
        usage: dict[str, dict[str, float]] = {}
        for entry in utilization.get("topCapacityUtilization") or []:
            share = _share_name(entry.get("quotaShareName"))
            units = usage.setdefault(share, {})
            for item in entry.get("capacityUsage") or []:
                unit = str(item.get("capacityUnit", ""))
                units[unit] = units.get(unit, 0.0) + float(item.get("quantity") or 0.0)
        return QueueSnapshot(usage)

    def live_shares(self, job_queue: str, names: Collection[str]) -> LiveShares:
        """Every share on the queue by name, as ListQuotaShares reports it (all pages).

        A listed share among ``names`` whose entry lacks its configuration is described
        (DescribeQuotaShare), so a terse listing is never mistaken for drift. When the listing
        fails, each of ``names`` is described on its own instead, so one failure costs only
        that share's figure.
        """
        try:
            listed = self._pages("ListQuotaShares", "quotaShares", jobQueue=job_queue)
        except BatchRequestError as error:
            if not is_job_queue_arn(job_queue):
                raise
            log("live_shares_listing_failed", job_queue=job_queue, code=error.code)
            return self._described(job_queue, names)
        shares: dict[str, LiveShare] = {}
        for item in listed:
            if not (item.get("quotaShareArn") and item.get("quotaShareName")):
                continue
            if item["quotaShareName"] in names and not all(key in item for key in _CONFIG_KEYS):
                item = {**item, **self._call("DescribeQuotaShare",
                                             quotaShareArn=item["quotaShareArn"])}
            share = LiveShare.from_api(item, tags={})
            shares[share.name] = share
        return LiveShares(shares, frozenset())

    def _described(self, job_queue_arn: str, names: Collection[str]) -> LiveShares:
        shares: dict[str, LiveShare] = {}
        unknown: set[str] = set()
        for name in sorted(names):
            arn = f"{job_queue_arn}/quota-share/{name}"
            try:
                response = self._call("DescribeQuotaShare", quotaShareArn=arn)
            except BatchRequestError as error:
                if error.code not in NOT_FOUND_CODES:
                    unknown.add(name)
                continue
            if response.get("quotaShareArn"):
                shares[name] = LiveShare.from_api(response, tags={})
        return LiveShares(shares, frozenset(unknown))

    def runnable_jobs(self, job_queue: str, share: str) -> RunnableJobs:
        """Count ``share``'s RUNNABLE jobs, reading at most :data:`PAGE_LIMIT` pages."""
        count, oldest, seen = 0, None, set()
        token: str | None = None
        for _ in range(PAGE_LIMIT):
            page = self._call(
                "ListServiceJobs",
                jobQueue=job_queue,
                jobStatus=RUNNABLE,
                # One filter per call: only QUOTA_SHARE_NAME combines with a job status.
                filters=[{"name": QUOTA_SHARE_FILTER, "values": [share]}],
                **({"nextToken": token} if token else {}),
            )
            for job in page.get("jobSummaryList") or []:
                # Checked again: a filter or status an endpoint ignored must not count others.
                if job.get("quotaShareName", share) != share or job.get("status", RUNNABLE) != (
                    RUNNABLE
                ) or job.get("jobId") in seen:
                    continue
                seen.add(job.get("jobId"))
                count += 1
                created = job.get("createdAt")
                if isinstance(created, int) and (oldest is None or created < oldest):
                    oldest = created
            token = page.get("nextToken")
            if not token:
                return RunnableJobs(count, oldest, complete=True)
        log("runnable_jobs_truncated", quota_share=share, pages=PAGE_LIMIT, counted=count)
        return RunnableJobs(count, oldest, complete=False)

    def describe_job(self, job_id: str) -> dict[str, Any] | None:
        """DescribeServiceJob, or None when AWS Batch does not know the job (any longer)."""
        try:
            job: dict[str, Any] = self._call("DescribeServiceJob", jobId=job_id)
            return job
        except BatchRequestError as error:
            # Batch answers an unknown job id with a ClientException; retrying cannot help.
            if error.code in NOT_FOUND_CODES:
                log("service_job_not_found", job_id=job_id, detail=error.detail[:300])
                return None
            raise

    def terminate_job(self, job_id: str, reason: str) -> None:
        self._call("TerminateServiceJob", jobId=job_id, reason=reason)


def _share_name(reference: object) -> str:
    """The snapshot names a share by name; accept its ARN too."""
    text = str(reference or "")
    return text.rsplit("/quota-share/", 1)[-1]
