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
- ``attempt_runs``: every attempt, its start, its stop and how it ended (``SUCCEEDED``,
  ``FAILED``, ``PREEMPTED`` or ``RUNNING``), as :mod:`quota_constructs.wire.job_record` reads
  them from ``attempts`` and ``preemptionSummary.recentPreemptedAttempts`` (and encodes them:
  ``START/STOP/ENDING;...`` in epoch milliseconds); ``unseen_preemptions``: preemptions AWS
  counted whose attempt's times it no longer shows (its window of recent preempted attempts
  has no documented length); ``exported_at_utc``: the moment the export was taken (the last
  describe answered), until which an attempt still running is counted as running.
  ``quota-constructs usage`` reads these three columns; an export without them is refused.

What AWS keeps: the AWS Batch user guide keeps finished jobs listable for a limited time (at
least 7 days after they finish, per its job-states page); older jobs cannot be exported, so
export regularly to build a longer history.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from ..runtime.batch_gateway import BatchRequestError
from ..runtime.batch_reads import paginate
from ..runtime.retry import THROTTLING_CODES, RetryPolicy
from ..wire.history_export import EXPORTED_AT, EXPORTED_AT_KEY, HISTORY_COLUMNS
from ..wire.job_record import PREEMPTED, RUNNING, AttemptRun, encode_runs, job_record
from . import command_line
from .queue_reader import LiveQueueError, QueueReader, readable_error

STATUSES = ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING",
            "SUCCEEDED", "FAILED")
RUNNING_STATUSES = frozenset({"SCHEDULED", "STARTING", "RUNNING"})
PAGE_SIZE = 100
MAX_PAGES = 2000
"""Pages read per status at most (200,000 jobs), so a misbehaving listing cannot loop forever."""
DEFAULT_MAX_RATE = 40.0
"""DescribeServiceJob calls per second at most: AWS Batch documents 50 API transactions per
second per account; the rest is left to the teams submitting."""
DEFAULT_START_RATE = 20.0
DEFAULT_WORKERS = 8
"""Calls in flight at most: enough to keep the rate's pace whatever the answer's latency."""
DESCRIBE_ATTEMPTS = 10
"""Tries of one job's DescribeServiceJob before the export stops (throttles included)."""
DESCRIBE_RETRY = RetryPolicy(max_attempts=DESCRIBE_ATTEMPTS, base_delay=0.25, max_delay=8.0)
"""Module-level so tests (and only tests) can make the backoff instant."""
MAX_WORKERS = 32
PROGRESS_EVERY = 500
OUT_FORMATS = (".csv", ".json")
WORKLOAD_COLUMNS = (
    "job_id", "share", "submitted_at", "duration", "instance_type", "instance_count",
    "priority", "preemption_retries",
)
COLUMNS = (*WORKLOAD_COLUMNS, *HISTORY_COLUMNS)


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
    runs: tuple[AttemptRun, ...] = ()
    """Every attempt with its times and end (:mod:`quota_constructs.wire.job_record`)."""
    unseen_preemptions: int = 0
    created_ms: int = 0
    """``createdAt`` as AWS gives it (epoch milliseconds)."""


class AdaptiveRate:
    """A client-side token bucket whose rate follows the service's throttling.

    Calls are spaced ``1 / rate`` apart (``acquire``; thread-safe). The rate starts at
    ``start`` and moves with the share of recent answers (the last :attr:`WINDOW`) that were
    throttles: below :attr:`RAISE_BELOW` it grows by :attr:`STEP` per answer, up to
    ``ceiling``; above :attr:`CUT_ABOVE` it is cut by :attr:`CUT` (at most once per window of
    answers, never below ``floor``); in between it holds.

    Why a share and not every throttle: a service that refuses a fixed share of requests
    whatever the pace (as many fakes, and Batch under others' load, do) would otherwise drive
    the rate to its floor for nothing, while a service with a fixed rate answers a client
    above that rate with a share of throttles that grows with the excess, so the rate settles
    within a third of the service's (a throttled call is retried, so every job is described).
    ``clock`` and ``sleep`` are injectable (tests never wait).
    """

    WINDOW = 20
    RAISE_BELOW = 0.25
    CUT_ABOVE = 0.4
    STEP = 0.5
    CUT = 0.7

    def __init__(self, *, start: float = 20.0, ceiling: float = 50.0, floor: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.ceiling = ceiling if ceiling > 0 else math.inf
        self.floor = min(floor, self.ceiling)
        self.rate = min(max(start, self.floor), self.ceiling)
        self.clock, self.sleep = clock, sleep
        self.throttles = 0
        self._recent: deque[bool] = deque(maxlen=self.WINDOW)
        self._next_at: float | None = None
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Wait for this call's slot."""
        with self._lock:
            now = self.clock()
            slot = now if self._next_at is None else max(now, self._next_at)
            self._next_at = slot + (0.0 if math.isinf(self.rate) else 1.0 / self.rate)
        if slot > now:
            self.sleep(slot - now)

    def answered(self, *, throttled: bool) -> None:
        with self._lock:
            self._recent.append(throttled)
            self.throttles += throttled
            share = sum(self._recent) / len(self._recent)
            if len(self._recent) == self.WINDOW and share > self.CUT_ABOVE:
                self.rate = max(self.floor, self.rate * self.CUT)
                self._recent.clear()  # the next cut is judged on answers at the new rate
            elif share < self.RAISE_BELOW and not math.isinf(self.rate):
                self.rate = min(self.ceiling, self.rate + self.STEP)


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
    record = job_record(detail)
    runs = record.runs
    last = runs[-1] if runs else None
    if record.status == "SUCCEEDED" and last is not None and last.stopped_ms is not None:
        duration, history = (last.stopped_ms - last.started_ms) / 1000.0, "finished"
    elif record.status == "FAILED":
        duration = sum(_ran(run, now) for run in runs)
        history = "failed" if runs else "never_ran"
    elif last is not None and last.ended == RUNNING:
        duration, history = now - last.started_ms / 1000.0, "running"
    else:
        duration, history = 0.0, "never_ran"
    return ExportedJob(
        job_id=record.job_id, job_name=record.job_name, share=record.share,
        created_at=record.created_ms / 1000.0, duration=max(0.0, duration),
        instance_type=record.instance_type, instance_count=record.instance_count,
        priority=record.priority, preemption_retries=record.preemption_retries,
        status=record.status, history=history, attempts=len(runs),
        preemptions=max(record.preempted_count, sum(r.ended == PREEMPTED for r in runs)),
        runs=runs, unseen_preemptions=record.unseen_preemptions,
        created_ms=record.created_ms,
    )


def _ran(run: AttemptRun, now: float) -> float:
    stop = now if run.stopped_ms is None else run.stopped_ms / 1000.0
    return stop - run.started_ms / 1000.0


Attempt = Callable[..., dict[str, Any]]
"""``attempt(operation, **params)``: one Batch call without retries (``QueueReader.attempt``),
raising :class:`~quota_constructs.runtime.batch_gateway.BatchRequestError`."""


@dataclass(frozen=True)
class Pace:
    """How ``DescribeServiceJob`` calls are paced (see :class:`AdaptiveRate`)."""

    max_rate: float = DEFAULT_MAX_RATE
    """Calls per second at most (0: no ceiling; throttles still slow the export down)."""
    workers: int = DEFAULT_WORKERS
    """Calls in flight at most."""
    retry: RetryPolicy = field(default_factory=lambda: DESCRIBE_RETRY)
    """Backoff of one job's throttled or failed call."""


def describe_jobs(
    attempt: Attempt,
    job_ids: Sequence[str],
    *,
    pace: Pace | None = None,
    rate: AdaptiveRate | None = None,
    note: Callable[[str], None] = lambda message: None,
) -> list[dict[str, Any]]:
    """DescribeServiceJob of every id, ``pace.workers`` at a time, at ``rate`` (which follows
    throttling); a throttled or transient failure is retried with backoff. Returns the answers
    in the order of ``job_ids``; the first job that keeps failing stops the export."""
    pace = pace or Pace()
    rate = rate or AdaptiveRate(start=min(DEFAULT_START_RATE, pace.max_rate or math.inf),
                                ceiling=pace.max_rate)
    answers: list[dict[str, Any] | None] = [None] * len(job_ids)
    stop = threading.Event()
    done = [0]
    lock = threading.Lock()

    def describe(index: int) -> None:
        for number in range(1, pace.retry.max_attempts + 1):
            if stop.is_set():
                return
            rate.acquire()
            try:
                answers[index] = attempt("DescribeServiceJob", jobId=job_ids[index])
            except BatchRequestError as error:
                throttled = _is_throttle(error)
                if throttled:
                    rate.answered(throttled=True)
                if not (throttled or error.ambiguous) or number == pace.retry.max_attempts:
                    stop.set()  # the other workers return at their next call
                    raise
                pace.retry.sleep(pace.retry.delay(number))
                continue
            rate.answered(throttled=False)
            with lock:
                done[0] += 1
                count = done[0]
            if count % PROGRESS_EVERY == 0 or count == len(job_ids):
                note(f"described {count:,} of {len(job_ids):,} jobs ({rate.rate:.0f} calls/s "
                     f"now; {rate.throttles:,} throttled and retried)")
            return

    with ThreadPoolExecutor(max_workers=max(1, pace.workers)) as pool:
        futures = [pool.submit(describe, index) for index in range(len(job_ids))]
        try:
            for future in futures:
                future.result()
        except BaseException:
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
    return [answer for answer in answers if answer is not None]


def _is_throttle(error: BatchRequestError) -> bool:
    detail = error.detail.lower()
    return (error.code in THROTTLING_CODES or "too many requests" in detail
            or "rate exceeded" in detail)


def export_history(
    reader: QueueReader | Read,
    queue: str,
    out: Path,
    *,
    since: datetime | None = None,
    pace: Pace | None = None,
    rate: AdaptiveRate | float | None = None,
    note: Callable[[str], None] = lambda message: None,
    now: Callable[[], float] = time.time,
) -> list[ExportedJob]:
    """Write ``queue``'s jobs (created at or after ``since``) to ``out`` (``.csv`` or
    ``.json``, see :func:`write_history`); return them.

    Listing goes through the live commands' read layer (``reader.read``: its retries); the
    describes through :func:`describe_jobs` (``reader.attempt``). Failures are one-line
    :class:`LiveQueueError`. Given a bare ``read`` function (the earlier signature), it
    describes through it too, and a number ``rate`` is the ceiling of calls per second."""
    check_out(out)
    read: Read = reader.read if isinstance(reader, QueueReader) else reader
    attempt: Attempt = reader.attempt if isinstance(reader, QueueReader) else reader
    if isinstance(rate, (int, float)):
        pace, rate = replace(pace or Pace(), max_rate=float(rate)), None
    listed = list_job_ids(read, queue, note)
    if since is not None:
        # The listing carries createdAt: older jobs are never described.
        listed = [item for item in listed if item[2] >= since.timestamp()]
    try:
        details = describe_jobs(attempt, [job_id for job_id, _, _ in listed],
                                pace=pace, rate=rate, note=note)
    except BatchRequestError as error:
        raise readable_error(error) from error
    cutoff = since.timestamp() if since else None
    moment = now()  # the export's moment: the last describe has answered
    jobs = [job for job in (describe_job(detail, moment) for detail in details)
            if cutoff is None or job.created_at >= cutoff]
    jobs.sort(key=lambda j: (j.created_at, j.job_id))
    write_history(out, jobs, exported_at=moment)
    return jobs


def check_out(out: Path) -> None:
    """``--out`` names a ``.csv`` or ``.json`` file (checked before anything is read)."""
    if out.suffix.lower() not in OUT_FORMATS:
        raise LiveQueueError(f"--out got {str(out)!r}; allowed: a file ending in "
                             f"{' or '.join(OUT_FORMATS)} (the workload formats)")


def write_history(out: Path, jobs: Sequence[ExportedJob], *,
                  exported_at: float | None = None) -> None:
    """CSV (the workload columns and ``HISTORY_COLUMNS``) or JSON (``{"exported_at": ...,
    "jobs": [...]}``), by suffix, as :mod:`quota_constructs.wire.history_export` describes.
    ``exported_at``: the export's moment, seconds since the epoch (default: now)."""
    check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    moment = _utc(time.time() if exported_at is None else exported_at)
    if out.suffix.lower() == ".json":
        first = jobs[0].created_at if jobs else 0.0
        out.write_text(json.dumps({EXPORTED_AT_KEY: moment,
                                   "jobs": [_record(job, first) for job in jobs]}, indent=1)
                       + "\n", encoding="utf-8")
        return
    _write_csv(out, jobs, moment)


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


PER_JOB_COLUMNS = tuple(name for name in HISTORY_COLUMNS if name != EXPORTED_AT)


def _people(job: ExportedJob) -> list[Any]:
    """The values of :data:`PER_JOB_COLUMNS`, in order (the export's moment is written once per
    file in JSON, on every row in CSV)."""
    return [_utc(job.created_at), job.job_name, job.status, job.history, job.attempts,
            job.preemptions, job.unseen_preemptions, encode_runs(job.runs)]


def _record(job: ExportedJob, first: float) -> dict[str, Any]:
    return {
        "job_id": job.job_id, "share": job.share,
        "submitted_at": job.created_at - first, "duration": job.duration,
        "instance_type": job.instance_type, "instance_count": job.instance_count,
        "priority": job.priority, "preemption_retries": job.preemption_retries,
        **dict(zip(PER_JOB_COLUMNS, _people(job), strict=True)),
    }


def _write_csv(out: Path, jobs: Sequence[ExportedJob], moment: str) -> None:
    first = jobs[0].created_at if jobs else 0.0
    with out.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(COLUMNS)
        for job in jobs:
            writer.writerow([
                job.job_id, job.share, repr(job.created_at - first), repr(job.duration),
                job.instance_type, job.instance_count, job.priority,
                "" if job.preemption_retries is None else job.preemption_retries,
                *_people(job), moment,
            ])


def parser(prog: str = "quota-constructs history") -> argparse.ArgumentParser:
    p = command_line.parser(prog, "Export a queue's service jobs as a workload file for "
                            "'simulate --workload' and 'recommend'.")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--since", help="only jobs created at or after this ISO time "
                      "(e.g. 2026-11-24T00:00:00Z)")
    when.add_argument("--days", type=float, help="only jobs created in the last N days")
    p.add_argument("--out", type=Path, required=True,
                   help="the workload file to write: .csv (with columns for people) or .json")
    p.add_argument("--max-rate", "--rate", dest="max_rate", type=float,
                   default=DEFAULT_MAX_RATE,
                   help=f"DescribeServiceJob calls per second at most ({DEFAULT_MAX_RATE:g}; "
                   "0 = no ceiling); below it the pace follows the service's throttling")
    p.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                   help=f"DescribeServiceJob calls in flight at most ({DEFAULT_WORKERS})")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def main(argv: Sequence[str] | None = None, *, prog: str = "quota-constructs history",
         stdout: TextIO | None = None, stderr: TextIO | None = None,
         read_retry: RetryPolicy | None = None, describe_retry: RetryPolicy | None = None,
         ) -> int:
    """The command; ``read_retry`` (listings) and ``describe_retry`` (one job's describe) are
    the backoff policies, the defaults unless a caller (a test) passes its own."""
    out_stream, err_stream = stdout or sys.stdout, stderr or sys.stderr
    options = parser(prog).parse_args(argv)

    def note(message: str) -> None:
        if not options.quiet:
            print(message, file=err_stream, flush=True)

    def command() -> int:
        since = _since(options.since, options.days)
        if options.max_rate < 0:
            raise LiveQueueError(f"--max-rate got {options.max_rate:g}; allowed: calls per "
                                 "second >= 0 (0 = no ceiling)")
        if not 1 <= options.workers <= MAX_WORKERS:
            raise LiveQueueError(f"--workers got {options.workers}; allowed: 1 to "
                                 f"{MAX_WORKERS} calls in flight")
        check_out(options.out)
        reader = QueueReader.connect(profile=options.profile, region=options.region,
                                     progress=note, policy=read_retry)
        pace = Pace(options.max_rate, options.workers, describe_retry or DESCRIBE_RETRY)
        jobs = export_history(reader, options.queue, options.out, since=since, pace=pace,
                              note=note)
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
