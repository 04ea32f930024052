"""The job ledger's layout in its bucket: what the monitoring writes and ``usage --ledger`` reads.

AWS Batch lists a finished job for about a week; the ledger keeps every attempt for as long as
its bucket's lifecycle rule says. The job-events functions write one object per terminal
attempt: a preempted attempt (``Batch Service Job Preemption Completed``) and a job's last
attempt (``Batch Service Job State Change`` to SUCCEEDED or FAILED), each the job as
``DescribeServiceJob`` answered then (a :class:`~quota_constructs.wire.job_record.JobRecord`),
under::

    <prefix><queue name>/<YYYY>/<MM>/<DD>/<job id>/<kind>.json

The date is the UTC day the attempt stopped; ``kind`` is ``final`` or ``preempted-<attempt
start, epoch ms>``. A delivery repeated by EventBridge or Lambda writes the same key again with
the same record, so the ledger holds each attempt once whatever the retries. Keys sort by day,
so a reader starting at a day lists nothing older. A job's objects are merged by its id
(``quota_constructs.usage.jobs``): the preemption records keep the attempts AWS's window of
recent preempted attempts would drop.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from .job_record import JobRecord

LEDGER_BUCKET_ENV: Final = "QUOTA_MONITOR_LEDGER_BUCKET"
LEDGER_PREFIX_ENV: Final = "QUOTA_MONITOR_LEDGER_PREFIX"
"""The ledger's key prefix (ending in ``/``, or empty)."""
DEFAULT_PREFIX: Final = "job-ledger/"
FORMAT: Final = 1
FINAL: Final = "final"
PREEMPTED_KIND: Final = "preempted"
URL_SYNTAX: Final = "s3://BUCKET/PREFIX/QUEUE (the queue's folder of the job ledger)"
STATE_CHANGE_STATUSES: Final = ("SUCCEEDED", "FAILED")
"""The state changes a monitor keeping a ledger receives: every job's end."""


def object_key(prefix: str, queue: str, record: JobRecord, *,
               preempted_start_ms: int | None = None, stopped_ms: int | None = None) -> str:
    """The key of ``record``'s final object, or of its preempted attempt started at
    ``preempted_start_ms``; dated by ``stopped_ms`` (default: the record's latest stop, else
    its submission)."""
    stops = [run.stopped_ms for run in record.runs if run.stopped_ms is not None]
    day = stopped_ms if stopped_ms is not None else max(stops, default=record.created_ms)
    kind = FINAL if preempted_start_ms is None else f"{PREEMPTED_KIND}-{preempted_start_ms}"
    return f"{queue_folder(prefix, queue)}{day_path(day)}{record.job_id}/{kind}.json"


def queue_folder(prefix: str, queue: str) -> str:
    return f"{prefix}{queue}/"


def day_path(epoch_ms: int) -> str:
    """``YYYY/MM/DD/`` of the UTC day of ``epoch_ms``."""
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).strftime("%Y/%m/%d/")


def document(queue: str, record: JobRecord) -> bytes:
    """The object's body."""
    return json.dumps({"format": FORMAT, "queue": queue, "job": record.as_json()},
                      separators=(",", ":")).encode()


def read_document(body: bytes) -> JobRecord:
    """An object's record; ``ValueError`` saying what is wrong."""
    parsed: Any = json.loads(body)
    if not isinstance(parsed, dict) or parsed.get("format") != FORMAT:
        raise ValueError(f"not a job ledger object of format {FORMAT}")
    job = parsed.get("job")
    if not isinstance(job, dict):
        raise ValueError("no job")
    return JobRecord.of_json(job)


@dataclass(frozen=True)
class LedgerLocation:
    bucket: str
    folder: str
    """The queue's folder (a key prefix ending in ``/``, or empty)."""

    @classmethod
    def parse(cls, url: str) -> LedgerLocation:
        """``s3://bucket/prefix/queue``; ``ValueError`` otherwise."""
        if not url.startswith("s3://"):
            raise ValueError(url)
        bucket, _, folder = url[len("s3://"):].partition("/")
        if not bucket or "/" in bucket:
            raise ValueError(url)
        if folder and not folder.endswith("/"):
            folder += "/"
        return cls(bucket, folder)

    def start_after(self, epoch_ms: int) -> str:
        """The key to list after so that only days from ``epoch_ms``'s on come back."""
        return f"{self.folder}{day_path(epoch_ms)}"[:-1]

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.folder}"
