"""``quota-constructs history``: a queue's service jobs as a workload file the simulator replays.

    quota-constructs history --queue gpu-prod --days 7 --out jobs.csv [--rate 10]

Read-only; it needs ``batch:ListServiceJobs`` and ``batch:DescribeServiceJob``, which IAM
grants only on ``"Resource": "*"`` (``grant_read_status`` includes both). Every call goes
through the live commands' read layer (:class:`~quota_constructs.live.queue_reader.QueueReader`:
standard boto3 configuration with ``--profile``/``--region``, ``AWS_ENDPOINT_URL_BATCH``, the
runtime's retries, one-line errors).

How it reads
------------
- ``ListServiceJobs`` once per status (SUBMITTED, PENDING, RUNNABLE, SCHEDULED, STARTING,
  RUNNING, SUCCEEDED, FAILED: without a status only RUNNING jobs come back), 100 per page, at
  most :data:`MAX_PAGES` pages per status (stated on stderr when reached).
- ``DescribeServiceJob`` for every job: the listing carries no priority, no preemption budget
  and no attempts. Describes are paced to ``--rate`` per second (default
  :data:`DEFAULT_RATE`): AWS Batch documents 50 transactions per second per account for its API
  (5 for SubmitServiceJob) and no separate rate for DescribeServiceJob, so the default takes a
  fifth of it and leaves the rest to the teams submitting. 8,000 jobs take about 13 minutes.
- Throttling and transient errors are retried with backoff (the runtime's retry policy).

What each row holds (the workload format of ``quota_constructs.simulation.workloads.files``)
-----------------------------------------------------------------------------------------------
- ``share``: ``quotaShareName``; ``instance_type``/``instance_count``: the job's
  ``capacityUsage`` (its first unit), or the SageMaker request's ``ResourceConfig`` for a job
  that never held capacity; ``priority``: ``schedulingPriority`` (0 when absent);
  ``preemption_retries``: ``preemptionConfiguration.preemptionRetriesBeforeTermination``
  (empty: unlimited).
- ``submitted_at``: seconds from the earliest exported job's ``createdAt``;
  ``submitted_at_utc`` the absolute time.
- ``duration``, the run time the job needed: for a SUCCEEDED job, its last attempt's
  ``stoppedAt - startedAt`` — earlier attempts were preempted and their work redone (or
  resumed from a checkpoint, which this cannot see; then the figure is short by the work
  resumed). For a FAILED job, the sum of its attempts' run times (a lower bound: it did not
  finish). For a job still running, the time since its last attempt started (a lower bound).
  For a job that never ran, 0.
- ``history`` says which: ``finished``, ``failed``, ``running`` or ``never_ran``; ``status``,
  ``attempts`` and ``preemptions`` (``preemptionSummary.preemptedAttemptCount``) are kept too.
  Drop the rows you do not want replayed.

What AWS keeps: the AWS Batch user guide keeps finished jobs listable for a limited time (at
least 7 days after they finish, per its job-states page); older jobs cannot be exported, so
export regularly to build a longer history.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from ..runtime.batch_reads import paginate
from . import command_line
from .queue_reader import LiveQueueError, QueueReader

STATUSES = ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING",
            "SUCCEEDED", "FAILED")
RUNNING_STATUSES = frozenset({"SCHEDULED", "STARTING", "RUNNING"})
PAGE_SIZE = 100
MAX_PAGES = 2000
"""Pages read per status at most (200,000 jobs), so a misbehaving listing cannot loop forever."""
DEFAULT_RATE = 10.0
"""DescribeServiceJob calls per second (a fifth of AWS Batch's documented 50 per account)."""
COLUMNS = (
    "job_id", "share", "submitted_at", "duration", "instance_type", "instance_count",
    "priority", "preemption_retries", "submitted_at_utc", "job_name", "status", "history",
    "attempts", "preemptions",
)


@dataclass(frozen=True)
class ExportedJob:
    job_id: str
    job_name: str
    share: str
    created_at: float
    """Seconds since the epoch."""
    duration: float
    instance_type: str
    instance_count: int
    priority: int
    preemption_retries: int | None
    status: str
    history: str
    attempts: int
    preemptions: int


class Pacer:
    """At most ``rate`` calls per second (0: no pacing); ``clock``/``sleep`` for tests."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.clock = clock
        self.sleep = sleep
        self.next_at: float | None = None

    def wait(self) -> None:
        if not self.interval:
            return
        now = self.clock()
        if self.next_at is not None and now < self.next_at:
            self.sleep(self.next_at - now)
            now = self.next_at
        self.next_at = now + self.interval


Read = Callable[..., dict[str, Any]]
"""``read(operation, **params)``: one Batch call with retries (``QueueReader.read``)."""


def list_job_ids(read: Read, queue: str,
                 note: Callable[[str], None]) -> list[tuple[str, str, float]]:
    """(job id, status, createdAt in seconds) of every service job of ``queue``."""
    found: list[tuple[str, str, float]] = []
    seen: set[str] = set()
    for status in STATUSES:
        # The runtime's one pagination (issue 14's read layer), with this command's own cap.
        listing = paginate(read, "ListServiceJobs", "jobSummaryList", max_pages=MAX_PAGES,
                           page_size=PAGE_SIZE, jobQueue=queue, jobStatus=status)
        for summary in listing.items:
            job_id = summary["jobId"]
            if job_id not in seen:  # a job can change status between two pages
                seen.add(job_id)
                found.append((job_id, status, float(summary.get("createdAt", 0)) / 1000.0))
        if not listing.complete:
            note(f"{status}: stopped after {MAX_PAGES} pages ({MAX_PAGES * PAGE_SIZE:,} "
                 "jobs); the rest of this status is not exported")
        note(f"listed {status}: {len(found):,} jobs so far")
    return found


def describe_job(detail: Mapping[str, Any], now: float) -> ExportedJob:
    """One DescribeServiceJob answer as a workload row (see the module docs)."""
    status = str(detail.get("status", ""))
    attempts = list(detail.get("attempts") or [])
    runs = [(a["startedAt"] / 1000.0, a.get("stoppedAt")) for a in attempts if a.get("startedAt")]
    if not runs and detail.get("startedAt"):
        runs = [(detail["startedAt"] / 1000.0, detail.get("stoppedAt"))]
    last_stop = (runs[-1][1] or detail.get("stoppedAt")) if runs else None
    if status == "SUCCEEDED" and runs and last_stop:
        duration, history = last_stop / 1000.0 - runs[-1][0], "finished"
    elif status == "FAILED":
        duration = sum((stop / 1000.0 if stop else now) - start for start, stop in runs)
        history = "failed" if runs else "never_ran"
    elif status in RUNNING_STATUSES and runs:
        duration, history = now - runs[-1][0], "running"
    else:
        duration, history = 0.0, "never_ran"
    unit, count = _capacity(detail)
    budget = (detail.get("preemptionConfiguration") or {}).get(
        "preemptionRetriesBeforeTermination")
    summary = detail.get("preemptionSummary") or {}
    return ExportedJob(
        job_id=str(detail["jobId"]), job_name=str(detail.get("jobName", "")),
        share=str(detail.get("quotaShareName") or ""),
        created_at=float(detail.get("createdAt", 0)) / 1000.0,
        duration=max(0.0, duration), instance_type=unit, instance_count=count,
        priority=int(detail.get("schedulingPriority") or 0),
        preemption_retries=None if budget is None else int(budget),
        status=status, history=history, attempts=len(runs),
        preemptions=int(summary.get("preemptedAttemptCount") or 0),
    )


def _capacity(detail: Mapping[str, Any]) -> tuple[str, int]:
    for usage in detail.get("capacityUsage") or []:
        if usage.get("capacityUnit"):
            return str(usage["capacityUnit"]), max(1, round(float(usage.get("quantity", 1))))
    try:
        config = json.loads(detail.get("serviceRequestPayload") or "{}").get("ResourceConfig", {})
        return str(config["InstanceType"]), int(config.get("InstanceCount", 1))
    except (ValueError, KeyError, TypeError, AttributeError):
        return "", 1


def export_history(
    read: Read,
    queue: str,
    out: Path,
    *,
    since: datetime | None = None,
    rate: float = DEFAULT_RATE,
    pacer: Pacer | None = None,
    note: Callable[[str], None] = lambda message: None,
    now: Callable[[], float] = time.time,
) -> list[ExportedJob]:
    """Write ``queue``'s jobs (created at or after ``since``) to ``out`` (CSV); return them.

    ``read`` is the live commands' read layer (``QueueReader.read``): retries and one-line
    errors come from there."""
    pace = pacer or Pacer(rate)
    listed = list_job_ids(read, queue, note)
    if since is not None:
        # The listing carries createdAt: older jobs are never described.
        listed = [item for item in listed if item[2] >= since.timestamp()]
    jobs: list[ExportedJob] = []
    cutoff = since.timestamp() if since else None
    for number, (job_id, _, _) in enumerate(listed, 1):
        pace.wait()
        detail = read("DescribeServiceJob", jobId=job_id)
        job = describe_job(detail, now())
        if cutoff is None or job.created_at >= cutoff:
            jobs.append(job)
        if number % 500 == 0 or number == len(listed):
            note(f"described {number:,} of {len(listed):,} jobs")
    jobs.sort(key=lambda j: (j.created_at, j.job_id))
    write_history(out, jobs)
    return jobs


def write_history(out: Path, jobs: Sequence[ExportedJob]) -> None:
    first = jobs[0].created_at if jobs else 0.0
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(COLUMNS)
        for job in jobs:
            writer.writerow([
                job.job_id, job.share, repr(job.created_at - first), repr(job.duration),
                job.instance_type, job.instance_count, job.priority,
                "" if job.preemption_retries is None else job.preemption_retries,
                datetime.fromtimestamp(job.created_at, UTC).isoformat(timespec="milliseconds"),
                job.job_name, job.status, job.history, job.attempts, job.preemptions,
            ])


def parser(prog: str = "quota-constructs history") -> argparse.ArgumentParser:
    p = command_line.parser(prog, "Export a queue's service jobs as a workload file for "
                            "'simulate --workload' and 'recommend'.")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--since", help="only jobs created at or after this ISO time "
                      "(e.g. 2026-11-24T00:00:00Z)")
    when.add_argument("--days", type=float, help="only jobs created in the last N days")
    p.add_argument("--out", type=Path, required=True, help="the .csv file to write")
    p.add_argument("--rate", type=float, default=DEFAULT_RATE,
                   help=f"DescribeServiceJob calls per second ({DEFAULT_RATE:g}; 0 = unpaced)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def main(argv: Sequence[str] | None = None, *, prog: str = "quota-constructs history",
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out_stream, err_stream = stdout or sys.stdout, stderr or sys.stderr
    options = parser(prog).parse_args(argv)

    def note(message: str) -> None:
        if not options.quiet:
            print(message, file=err_stream, flush=True)

    def command() -> int:
        since = _since(options.since, options.days)
        if options.rate < 0:
            raise LiveQueueError(f"--rate got {options.rate}; allowed: calls per second >= 0")
        reader = QueueReader.connect(profile=options.profile, region=options.region,
                                     progress=note)
        jobs = export_history(reader.read, options.queue, options.out, since=since,
                              rate=options.rate, note=note)
        flags: dict[str, int] = {}
        for job in jobs:
            flags[job.history] = flags.get(job.history, 0) + 1
        if options.json:
            print(json.dumps({"out": str(options.out), "jobs": len(jobs), "history": flags},
                             indent=2), file=out_stream)
        else:
            shown = ", ".join(f"{count:,} {name}" for name, count in sorted(flags.items()))
            print(f"wrote {options.out}: {len(jobs):,} jobs ({shown or 'none'})",
                  file=out_stream)
        return command_line.OK

    with contextlib.redirect_stderr(err_stream):
        try:
            return command_line.run(prog, command)
        except OSError as error:
            print(f"{prog}: error: {error}", file=err_stream)
            return command_line.ERROR


def _since(text: str | None, days: float | None) -> datetime | None:
    if days is not None:
        if days <= 0:
            raise LiveQueueError(f"--days got {days}; allowed: a number of days > 0")
        return datetime.now(UTC) - timedelta(days=days)
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise LiveQueueError(f"--since got {text!r}; allowed: an ISO time such as "
                             "2026-11-24T00:00:00Z") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
