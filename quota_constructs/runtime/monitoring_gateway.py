"""The AWS Batch reads (and the one write) of the monitoring Lambdas.

Built on :class:`BatchGateway`: the same plain boto3 client (``AWS_ENDPOINT_URL_BATCH`` applies),
the same bounded retries with backoff for throttling and 5xx, the same readable errors; the
reads themselves are :mod:`.batch_reads`, shared with the custom resource.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import is_job_queue_arn, quota_share_arn

from .batch_gateway import BatchConnection, BatchGateway, BatchRequestError
from .batch_reads import (
    QueueSnapshot,
    RunnableCount,
    ServiceJobDetail,
    count_runnable,
    describe_service_job,
    list_service_jobs,
    read_queue_snapshot,
)
from .service_job import DISPATCHED_STATUSES, ServiceJob
from .structured_log import log

_CONFIG_KEYS = ("capacityLimits", "resourceSharingConfiguration", "state", "status")


@dataclass(frozen=True)
class LiveShares:
    """The queue's shares as AWS Batch reports them, and the names it could not be asked about."""

    shares: Mapping[str, LiveShare]
    unknown: frozenset[str] = frozenset()

    def knows(self, name: str) -> bool:
        return name not in self.unknown

    def get(self, name: str) -> LiveShare | None:
        return self.shares.get(name)


class MonitoringGateway(BatchGateway):
    @classmethod
    def from_context(
        cls, context: Any, connection: BatchConnection | None = None
    ) -> MonitoringGateway:
        gateway = super().from_context(context, connection)
        assert isinstance(gateway, MonitoringGateway)
        return gateway

    def snapshot(self, job_queue: str) -> QueueSnapshot:
        return read_queue_snapshot(self._call, job_queue)

    def job_detail(self, job_id: str) -> ServiceJobDetail:
        return describe_service_job(self._call, job_id)

    def runnable_count(self, job_queue: str, share: str, max_jobs: int) -> RunnableCount:
        return count_runnable(self._call, job_queue, share, max_jobs=max_jobs)

    def held_capacity(self, job_queue: str, share: str, max_jobs: int) -> dict[str, float]:
        """Capacity ``share``'s SCHEDULED, STARTING and RUNNING jobs hold, per unit: for a share
        the snapshot's *top* list leaves out. Bounded by the capacity it holds (at most
        ``max_jobs`` jobs), not by its backlog."""
        found, _ = list_service_jobs(self._call, job_queue, share, DISPATCHED_STATUSES,
                                     limit=max_jobs)
        held: dict[str, float] = {}
        for summary in found:
            for unit, quantity in ServiceJob.from_api(summary).capacity_usage.items():
                held[unit] = held.get(unit, 0.0) + quantity
        return held

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
            arn = quota_share_arn(job_queue_arn, name)
            try:
                response = self._call("DescribeQuotaShare", quotaShareArn=arn)
            except BatchRequestError as error:
                # Only a share AWS Batch says is not there is absent; a denied or failed
                # describe leaves it unknown, which MonitorHealthy reports.
                if not error.not_found:
                    unknown.add(name)
                continue
            if response.get("quotaShareArn"):
                shares[name] = LiveShare.from_api(response, tags={})
        return LiveShares(shares, frozenset(unknown))

    def describe_job(self, job_id: str) -> dict[str, Any] | None:
        """DescribeServiceJob, or None when AWS Batch does not know the job (any longer)."""
        try:
            job: dict[str, Any] = self._call("DescribeServiceJob", jobId=job_id)
            return job
        except BatchRequestError as error:
            # Only a job AWS Batch says it does not know is skipped; a denied lookup is an
            # error (the event goes to the dead-letter queue), never a silently skipped event.
            if error.not_found:
                log("service_job_not_found", job_id=job_id, detail=error.detail[:300])
                return None
            raise

    def terminate_job(self, job_id: str, reason: str) -> None:
        self._call("TerminateServiceJob", jobId=job_id, reason=reason)

