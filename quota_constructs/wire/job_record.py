"""One service job as AWS Batch describes it, with every attempt it ran and how each ended.

``quota-constructs history`` writes these records into its export and the monitoring's job
ledger writes them into its bucket; ``quota-constructs usage`` reads them back. Both sides use
this module, so an attempt is read from ``DescribeServiceJob`` and encoded in one way.

What AWS gives (botocore's batch model, ``DescribeServiceJob``)
--------------------------------------------------------------
- ``attempts``: "A list of job attempts associated with the service job", each with
  ``startedAt``/``stoppedAt`` (epoch milliseconds), ``serviceResourceId`` (the SageMaker
  training job) and ``statusReason``; nothing says how an attempt ended.
- ``preemptionSummary``: ``preemptedAttemptCount`` ("the total number of times the service job
  has been preempted") and ``recentPreemptedAttempts`` ("a list of the most recent preemption
  attempts"; the user guide's Preemption page: "a sliding window of recent preemption attempts
  is stored on the job"). Neither page gives the window's length: **no cap is documented**
  (the emulator keeps five, its own assumption).
- ``status``, ``startedAt``, ``stoppedAt`` of the job.

How an attempt's end is read (AWS says nothing more; stated here once)
---------------------------------------------------------------------
1. The attempts are ``attempts`` and ``recentPreemptedAttempts`` together, one per start time
   (an attempt in both lists, matched by training job or start time, is one attempt). When
   ``attempts`` lists none, a job's ``startedAt`` later than every preempted attempt's start
   is its last attempt's start (to its ``stoppedAt``); a ``startedAt`` no later than that
   (the first start, if that is what AWS means by it) says nothing of the last attempt, which
   is then left out.
2. An attempt in ``recentPreemptedAttempts`` ended ``PREEMPTED``.
3. The last attempt of a SUCCEEDED or FAILED job ended as the job did (a FAILED job whose last
   attempt was preempted failed by preemption: ``PREEMPTED``); its missing ``stoppedAt`` is the
   job's. The last attempt of a job still SCHEDULED, STARTING or RUNNING, without a
   ``stoppedAt``, is ``RUNNING``.
4. Any other attempt that stopped was preempted while ``preemptedAttemptCount`` says more
   preemptions happened than rule 2 found — the earliest first, since the window keeps the most
   recent — and otherwise ended ``FAILED`` (retried by the job's retry strategy).
5. An attempt without a start, or one that is neither running nor stopped, has no times and is
   left out.

When ``preemptedAttemptCount`` exceeds the preempted attempts with times (the window was
exceeded and ``attempts`` does not list them), the record keeps AWS's count
(:attr:`JobRecord.preempted_count`) and the difference (:attr:`JobRecord.unseen_preemptions`):
those attempts' run time is unknown and counted nowhere, and a report says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SUCCEEDED, FAILED, PREEMPTED, RUNNING = "SUCCEEDED", "FAILED", "PREEMPTED", "RUNNING"
ENDINGS = (SUCCEEDED, FAILED, PREEMPTED, RUNNING)
"""How an attempt ended; ``RUNNING``: it had not ended when the job was read."""
FINISHED_STATUSES = frozenset({SUCCEEDED, FAILED})
DISPATCHED_STATUSES = frozenset({"SCHEDULED", "STARTING", "RUNNING"})

RUN_SEPARATOR, FIELD_SEPARATOR = ";", "/"
RUNS_SYNTAX = ("attempts as START/STOP/ENDING separated by ';' (epoch milliseconds; STOP empty "
               f"while running; ENDING one of {', '.join(ENDINGS)})")


@dataclass(frozen=True, slots=True)
class AttemptRun:
    """One attempt that ran: epoch milliseconds, and how it ended."""

    started_ms: int
    stopped_ms: int | None
    """None while it runs."""
    ended: str
    """One of :data:`ENDINGS`."""


@dataclass(frozen=True)
class JobRecord:
    """A service job with its attempts (module docs)."""

    job_id: str
    share: str
    created_ms: int
    instance_type: str
    instance_count: int
    status: str
    runs: tuple[AttemptRun, ...] = ()
    preempted_count: int = 0
    """AWS's ``preemptedAttemptCount``, never below the preempted runs."""
    preemption_retries: int | None = None
    priority: int = 0
    job_name: str = ""

    @property
    def unseen_preemptions(self) -> int:
        """Preemptions AWS counted whose attempt's times it no longer shows."""
        return max(0, self.preempted_count - sum(run.ended == PREEMPTED for run in self.runs))

    def as_json(self) -> dict[str, Any]:
        """The ledger's document of the record (:meth:`of_json` reads it back)."""
        return {
            "job_id": self.job_id, "job_name": self.job_name, "share": self.share,
            "created_ms": self.created_ms, "instance_type": self.instance_type,
            "instance_count": self.instance_count, "status": self.status,
            "priority": self.priority, "preemption_retries": self.preemption_retries,
            "preempted_count": self.preempted_count, "runs": encode_runs(self.runs),
        }

    @classmethod
    def of_json(cls, document: Mapping[str, Any]) -> JobRecord:
        """A record from :meth:`as_json`'s document; ``ValueError`` naming the field when one
        is missing or malformed."""
        def field(name: str, kind: type) -> Any:
            value = document.get(name)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f"{name}: {value!r} is not a {kind.__name__}")
            return value

        retries = document.get("preemption_retries")
        if retries is not None and (not isinstance(retries, int) or isinstance(retries, bool)):
            raise ValueError(f"preemption_retries: {retries!r} is not an int or null")
        runs = decode_runs(field("runs", str))
        return cls(
            job_id=field("job_id", str), share=field("share", str),
            created_ms=field("created_ms", int), instance_type=field("instance_type", str),
            instance_count=field("instance_count", int), status=field("status", str),
            runs=runs, preempted_count=max(field("preempted_count", int),
                                           sum(r.ended == PREEMPTED for r in runs)),
            preemption_retries=retries, priority=field("priority", int),
            job_name=str(document.get("job_name") or ""),
        )


def job_record(detail: Mapping[str, Any]) -> JobRecord:
    """A ``DescribeServiceJob`` answer (or an event detail shaped like one) as a record."""
    status = str(detail.get("status") or "")
    summary = detail.get("preemptionSummary") or {}
    runs = attempt_runs(detail)
    counted = _int(summary.get("preemptedAttemptCount")) or 0
    budget = (detail.get("preemptionConfiguration") or {}).get(
        "preemptionRetriesBeforeTermination")
    unit, count = capacity_of(detail)
    return JobRecord(
        job_id=str(detail["jobId"]), job_name=str(detail.get("jobName") or ""),
        share=str(detail.get("quotaShareName") or ""),
        created_ms=_int(detail.get("createdAt")) or 0, instance_type=unit,
        instance_count=count, status=status, runs=runs,
        preempted_count=max(counted, sum(run.ended == PREEMPTED for run in runs)),
        preemption_retries=_int(budget), priority=_int(detail.get("schedulingPriority")) or 0,
    )


def attempt_runs(detail: Mapping[str, Any]) -> tuple[AttemptRun, ...]:
    """Every attempt of the job with its start, stop and end, oldest first (module docs)."""
    status = str(detail.get("status") or "")
    summary = detail.get("preemptionSummary") or {}
    listed = _attempts(detail.get("attempts"))
    preempted = _attempts(summary.get("recentPreemptedAttempts"))
    merged, preempted_starts = _merged(listed, preempted)
    started = _int(detail.get("startedAt"))
    if not listed and started is not None and all(started > start for start, _, _ in merged):
        merged.append((started, _int(detail.get("stoppedAt")), None))
    merged.sort(key=lambda attempt: attempt[0])
    owed = max(0, (_int(summary.get("preemptedAttemptCount")) or 0) - len(preempted_starts))
    runs: list[AttemptRun] = []
    for index, (start, stop, _) in enumerate(merged):
        last = index == len(merged) - 1
        if start in preempted_starts:
            if stop is None:
                continue  # rule 5: a preemption without its stop has no times
            runs.append(AttemptRun(start, stop, PREEMPTED))
            continue
        if last and status in FINISHED_STATUSES:
            runs.append(AttemptRun(start, stop or _int(detail.get("stoppedAt")), status))
        elif stop is None:
            if last and status in DISPATCHED_STATUSES:
                runs.append(AttemptRun(start, None, RUNNING))
        elif owed > 0:
            owed -= 1
            runs.append(AttemptRun(start, stop, PREEMPTED))
        else:
            runs.append(AttemptRun(start, stop, FAILED))
    return tuple(run for run in runs if run.stopped_ms is not None or run.ended == RUNNING)


Attempt = tuple[int, int | None, str | None]
"""(startedAt, stoppedAt, training job) of one listed attempt."""


def _attempts(items: object) -> list[Attempt]:
    found: list[Attempt] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        start = _int(item.get("startedAt"))
        if start is None:
            continue
        resource = item.get("serviceResourceId") or {}
        value = resource.get("value") if isinstance(resource, Mapping) else None
        found.append((start, _int(item.get("stoppedAt")), str(value) if value else None))
    return found


def _merged(listed: Sequence[Attempt], preempted: Sequence[Attempt]
            ) -> tuple[list[Attempt], set[int]]:
    """Both lists as one, one attempt per start (rule 1), and the starts of the preempted ones."""
    by_start: dict[int, Attempt] = {}
    for start, stop, resource in listed:
        known = by_start.get(start)
        by_start[start] = (start, stop if stop is not None else (known[1] if known else None),
                           resource or (known[2] if known else None))
    by_resource = {resource: start for start, _, resource in by_start.values() if resource}
    preempted_starts: set[int] = set()
    for start, stop, resource in preempted:
        same = by_resource.get(resource) if resource else None
        key = same if same is not None else start
        known = by_start.get(key)
        by_start[key] = (key, stop if stop is not None else (known[1] if known else None),
                         resource or (known[2] if known else None))
        preempted_starts.add(key)
    return list(by_start.values()), preempted_starts


def capacity_of(detail: Mapping[str, Any]) -> tuple[str, int]:
    """The job's instance type and count: its ``capacityUsage`` (first unit), else its
    SageMaker request's ``ResourceConfig`` (a job that never held capacity); ("", 1) when
    neither says."""
    for usage in detail.get("capacityUsage") or []:
        if isinstance(usage, Mapping) and usage.get("capacityUnit"):
            return str(usage["capacityUnit"]), max(1, round(float(usage.get("quantity", 1))))
    try:
        config = json.loads(detail.get("serviceRequestPayload") or "{}").get("ResourceConfig", {})
        return str(config["InstanceType"]), int(config.get("InstanceCount", 1))
    except (ValueError, KeyError, TypeError, AttributeError):
        return "", 1


def encode_runs(runs: Iterable[AttemptRun]) -> str:
    """``START/STOP/ENDING;...`` (:data:`RUNS_SYNTAX`): one text for a CSV cell and a JSON
    string alike."""
    return RUN_SEPARATOR.join(
        f"{run.started_ms}{FIELD_SEPARATOR}"
        f"{'' if run.stopped_ms is None else run.stopped_ms}{FIELD_SEPARATOR}{run.ended}"
        for run in runs
    )


def decode_runs(text: str) -> tuple[AttemptRun, ...]:
    """:func:`encode_runs`' text back; ``ValueError`` naming the part that is malformed."""
    return tuple(AttemptRun(*fields) for fields in decode_run_fields(text))


RunFields = tuple[int, int | None, str]
"""(started_ms, stopped_ms or None while running, ending): one decoded attempt."""


def decode_run_fields(text: str) -> list[RunFields]:
    """:func:`encode_runs`' text as plain tuples (what a reader of a million jobs wants); the
    one parser of the text, :func:`decode_runs` builds on it. ``ValueError`` naming the part
    that is malformed."""
    if not text:
        return []
    runs: list[RunFields] = []
    for part in text.split(RUN_SEPARATOR):
        fields = part.split(FIELD_SEPARATOR)
        if len(fields) != 3 or fields[2] not in _ENDING_SET:
            raise ValueError(f"{part!r} is not {RUNS_SYNTAX}")
        start_text, stop_text, ended = fields
        try:
            start = int(start_text)
            stop = int(stop_text) if stop_text else None
        except ValueError:
            raise ValueError(f"{part!r} is not {RUNS_SYNTAX}") from None
        if stop is None:
            if ended != RUNNING:
                raise ValueError(f"{part!r}: a stopped attempt without its stop")
        elif stop < start or ended == RUNNING:
            raise ValueError(f"{part!r}: a stop before its start, or a running attempt with "
                             "a stop")
        runs.append((start, stop, ended))
    return runs


def decode_run_column(texts: Sequence[str]) -> list[list[RunFields]]:
    """:func:`decode_run_fields` of every text of a column, the same answer (the tests check
    it) without a call per text where a text is one attempt (most jobs')."""
    runs: list[list[RunFields]] = []
    add = runs.append
    for text in texts:
        parts = text.split(FIELD_SEPARATOR)
        if len(parts) != 3 or RUN_SEPARATOR in text:
            add(decode_run_fields(text))
            continue
        start_text, stop_text, ended = parts
        try:
            start = int(start_text)
            stop = int(stop_text) if stop_text else None
        except ValueError:
            add(decode_run_fields(text))  # raises, naming the part
            continue
        if ended not in _ENDING_SET or (stop is None) != (ended == RUNNING) or (
                stop is not None and stop < start):
            add(decode_run_fields(text))  # raises, naming the part
            continue
        add([(start, stop, ended)])
    return runs


_ENDING_SET = frozenset(ENDINGS)


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)
