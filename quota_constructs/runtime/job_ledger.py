"""The job ledger's writer: each terminal attempt of the monitored queue's jobs, kept in the
app's bucket (layout and document: :mod:`quota_constructs.wire.job_ledger`).

Called by the job-events handler after it has acted on an event: a ``Batch Service Job State
Change`` to SUCCEEDED or FAILED keeps the job's final record, a ``Batch Service Job Preemption
Completed`` the job as it stood when that attempt was preempted (so a job preempted more often
than AWS's window of recent preempted attempts shows keeps every one). A write that keeps
failing raises: Lambda retries the event (the owner is not told twice: the handler remembers
what it reported), then sends it to the dead-letter queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from botocore.config import Config

from quota_constructs.wire.job_ledger import document, object_key
from quota_constructs.wire.job_record import FINISHED_STATUSES, job_record

from .preemption import Preemption
from .retry import RetryPolicy, call_with_retries
from .service_models import boto3_session
from .structured_log import log


def create_s3_client() -> Any:
    config = Config(connect_timeout=5, read_timeout=10,
                    retries={"mode": "standard", "total_max_attempts": 1},
                    user_agent_extra="quota-constructs-monitoring")
    return boto3_session().client("s3", config=config)


class LedgerWriter:
    """Puts job records into ``bucket`` under ``prefix``; ``client`` is made on first use."""

    def __init__(self, bucket: str, prefix: str, client: Any = None,
                 policy: RetryPolicy | None = None) -> None:
        self.bucket, self.prefix = bucket, prefix
        self._client = client
        self._policy = policy or RetryPolicy()

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = create_s3_client()
        return self._client

    def keep_final(self, queue: str, job: Mapping[str, Any]) -> str | None:
        """The finished job's record; None (nothing written) for a job not finished."""
        record = job_record(job)
        if record.status not in FINISHED_STATUSES:
            return None
        return self._put(queue, record, object_key(self.prefix, queue, record))

    def keep_preempted(self, queue: str, job: Mapping[str, Any],
                       preemption: Preemption) -> str | None:
        """The job as it stood when ``preemption``'s attempt was preempted; None when AWS did
        not say when that attempt ran."""
        if preemption.started_at_ms is None or preemption.stopped_at_ms is None:
            log("ledger_preemption_without_times", job_id=job.get("jobId"))
            return None
        record = job_record(job)
        key = object_key(self.prefix, queue, record, preempted_start_ms=preemption.started_at_ms,
                         stopped_ms=preemption.stopped_at_ms)
        return self._put(queue, record, key)

    def _put(self, queue: str, record: Any, key: str) -> str:
        body = document(queue, record)
        call_with_retries("PutObject", lambda: self.client.put_object(
            Bucket=self.bucket, Key=key, Body=body, ContentType="application/json"),
            self._policy)
        log("ledger_kept", bucket=self.bucket, key=key)
        return key
