"""Workload files: the jobs (and priority changes) a simulation replays, as CSV or JSON.

Times are seconds from the start of the simulation, or ISO-8601 timestamps
(``2026-03-02T09:15:00Z``) counted from the earliest job's submission; a file uses one form
for all its times. Surrounding spaces are ignored; an empty value (CSV) or a missing or
``null`` value (JSON) takes the default.

====================  ========  ============================================================
field                 default   meaning
====================  ========  ============================================================
job_id                required  unique name of the job
share                 required  the quota share the job is submitted to
submitted_at          required  seconds, >= 0, or an ISO-8601 timestamp
duration              required  seconds of run time the job needs, >= 0 (a trace's 0 is kept)
instance_type         required  SageMaker training instance type, e.g. ``ml.g5.xlarge``
instance_count        1         instances of that type the job needs, >= 1
priority              0         0–9999, higher runs first
checkpoint_interval   none      seconds between checkpoints (> 0); none = never checkpoints
preemption_retries    none      preemptions survived before the job fails (>= 0);
                                none = requeued without limit
====================  ========  ============================================================

**CSV**: a header row, then one row per job. Priority changes are rows too: add the columns
``kind`` and ``at``; a row of kind ``priority_change`` gives ``job_id``, ``at`` (seconds) and the
new ``priority`` and leaves every other column empty; ``kind`` empty or ``job`` is a job::

    kind,job_id,share,submitted_at,duration,instance_type,priority,at
    ,qs1-high,QS1,0,3600,ml.g5.xlarge,3,
    priority_change,qs1-high,,,,,4,900

**JSON**: an object with a list ``jobs`` of job records and an optional list
``priority_changes`` of ``{"at": …, "job_id": …, "priority": …}``. Numbers are JSON numbers
(integers where an integer is asked for), never strings.

Parsing is strict: an unknown column or key, a malformed or out-of-range value, a duplicate
job id or a priority change of a job the file does not list is a :class:`WorkloadError` naming
the file, the line (CSV) or record (JSON), the field and the value. Given the declaration
(``shares=``, ``capacity_limits=``), a job of a share it does not declare, or of an instance
type its share (or the environment) lacks, is one too. Every problem of a file is reported at
once (:class:`WorkloadProblems`, the first :data:`MAX_REPORTED_PROBLEMS` with the count of the
rest), so a file with several mistakes is fixed in one go.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from ...model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from ...wire import history_export
from ..inputs import PriorityChange, SimJob

JOB_FIELDS = (
    "job_id",
    "share",
    "submitted_at",
    "duration",
    "instance_type",
    "instance_count",
    "priority",
    "checkpoint_interval",
    "preemption_retries",
)
REQUIRED_JOB_FIELDS = frozenset(JOB_FIELDS[:5])
CHANGE_FIELDS = ("at", "job_id", "priority")
CSV_COLUMNS = ("kind", *JOB_FIELDS, "at")
HISTORY_COLUMNS = history_export.HISTORY_COLUMNS
"""Columns ``quota-constructs history`` adds for people and for ``usage`` (the absolute
submission time, the job's status, whether it finished, ran or never ran, its attempts, the
export's moment): a CSV may carry them, a JSON job record their keys, and the simulator ignores
them (as it ignores a JSON document's ``exported_at``)."""
_TEXT_FIELDS = frozenset({"job_id", "share", "instance_type"})
MAX_PRIORITY = 9999
MAX_REPORTED_PROBLEMS = 50


class WorkloadError(QuotaConfigError):
    """A workload file that cannot be replayed; says where (file and line or record)."""

    def __init__(self, source: str, where: str, field: str, value: Any, allowed: str) -> None:
        self.source = source
        self.where = where
        super().__init__(f"workload {source!r} {where}", field, value, allowed)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.source, self.where, self.field, self.value, self.allowed))


class WorkloadProblems(WorkloadError):
    """Several problems in one workload file: ``problems`` holds the first
    :data:`MAX_REPORTED_PROBLEMS` (in file order), ``total`` counts them all. Its attributes
    other than those are the first problem's."""

    def __init__(self, problems: Sequence[WorkloadError], total: int) -> None:
        first = problems[0]
        super().__init__(first.source, first.where, first.field, first.value, first.allowed)
        self.problems = tuple(problems)
        self.total = total
        lines = [f"workload {first.source!r}: {total} problems"]
        lines += [f"  {problem}" for problem in problems]
        if total > len(problems):
            lines.append(f"  ... and {total - len(problems)} more")
        self.args = ("\n".join(lines),)

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.problems, self.total))


@dataclass(frozen=True)
class Workload:
    """Jobs in submission order and the priority changes to apply while they wait or run."""

    jobs: Sequence[SimJob]
    priority_changes: Sequence[PriorityChange] = ()


def read_workload(
    path: str | Path,
    *,
    shares: Sequence[QuotaShareSpec] | None = None,
    capacity_limits: Sequence[CapacityLimit] | None = None,
) -> Workload:
    """The workload in ``path``; ``.csv`` or ``.json`` by the file's suffix. With ``shares``
    (and ``capacity_limits``), jobs are checked against that declaration too."""
    path = Path(path)
    source = str(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise WorkloadError(source, "(file name)", "suffix", path.suffix, "'.csv' or '.json'")
    try:
        with path.open(newline="", encoding="utf-8") as stream:
            if suffix == ".csv":
                return parse_csv(stream, source=source, shares=shares,
                                 capacity_limits=capacity_limits)
            return parse_json(stream.read(), source=source, shares=shares,
                              capacity_limits=capacity_limits)
    except (FileNotFoundError, IsADirectoryError):
        raise WorkloadError(source, "(file)", "path", source, "an existing file") from None
    except UnicodeDecodeError as error:
        raise WorkloadError(
            source, f"byte {error.start}", "encoding", error.object[error.start : error.end],
            "UTF-8 text",
        ) from None


def write_workload(path: str | Path, workload: Workload) -> None:
    """Write ``workload`` as ``.csv`` or ``.json`` (by suffix) in the format read back above."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        document = {
            "jobs": [_job_record(job) for job in workload.jobs],
            "priority_changes": [
                {"at": c.at, "job_id": c.job_id, "priority": c.priority}
                for c in workload.priority_changes
            ],
        }
        path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        return
    if path.suffix.lower() != ".csv":
        raise WorkloadError(str(path), "(file name)", "suffix", path.suffix, "'.csv' or '.json'")
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for job in workload.jobs:
            record = _job_record(job)
            writer.writerow(["", *(_cell(record[name]) for name in JOB_FIELDS), ""])
        blank = [""] * len(JOB_FIELDS)
        for change in workload.priority_changes:
            row = ["priority_change", *blank, _cell(change.at)]
            row[1 + JOB_FIELDS.index("job_id")] = change.job_id
            row[1 + JOB_FIELDS.index("priority")] = str(change.priority)
            writer.writerow(row)


def parse_csv(
    stream: Iterable[str],
    *,
    source: str = "<csv>",
    shares: Sequence[QuotaShareSpec] | None = None,
    capacity_limits: Sequence[CapacityLimit] | None = None,
) -> Workload:
    reader = csv.reader(stream, skipinitialspace=True)
    header = next(reader, None)
    if header is None:
        raise WorkloadError(source, "line 1", "header", "", _columns_allowed())
    columns = [name.strip() for name in header]
    for name in columns:
        if name not in CSV_COLUMNS and name not in HISTORY_COLUMNS:
            raise WorkloadError(source, "line 1", "header", name, _columns_allowed())
        if columns.count(name) > 1:
            raise WorkloadError(source, "line 1", "header", name, "each column once")
    missing = [name for name in JOB_FIELDS if name in REQUIRED_JOB_FIELDS and name not in columns]
    if missing:
        raise WorkloadError(
            source, "line 1", "header", ",".join(columns), f"also the columns {', '.join(missing)}"
        )
    builder = _Builder(source, declaration=_Declaration.of(shares, capacity_limits))
    width = len(columns)
    for row in reader:
        where = f"line {reader.line_num}"
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        try:
            _csv_row(builder, source, where, columns, row, width)
        except WorkloadError as problem:
            builder.report(problem)
    return builder.workload()


def _csv_row(
    builder: _Builder, source: str, where: str, columns: Sequence[str], row: Sequence[str],
    width: int,
) -> None:
    """One data row: a job or a priority change (raises the row's first problem)."""
    if len(row) != width:
        raise WorkloadError(
            source, where, "row", ",".join(row), f"{width} values, one per header column"
        )
    record = {name: value.strip() for name, value in zip(columns, row, strict=True)
              if name not in HISTORY_COLUMNS}
    kind = record.pop("kind", "") or "job"
    if kind == "job":
        at = record.pop("at", "")
        if at:
            raise WorkloadError(
                source, where, "at", at, "empty on a job row (only for kind priority_change)"
            )
        job = _fast_job(record)
        if job is None:
            builder.add_job(where, {k: v for k, v in record.items() if v != ""})
        else:
            builder.add_fast(where, job)
    elif kind == "priority_change":
        extra = [k for k in JOB_FIELDS if k not in CHANGE_FIELDS and record.get(k)]
        if extra:
            raise WorkloadError(
                source, where, extra[0], record[extra[0]],
                "empty on a priority_change row (only job_id, at and priority)",
            )
        builder.add_change(where, {k: v for k, v in record.items() if v != ""})
    else:
        raise WorkloadError(source, where, "kind", kind, "empty, 'job' or 'priority_change'")


def parse_json(
    text: str,
    *,
    source: str = "<json>",
    shares: Sequence[QuotaShareSpec] | None = None,
    capacity_limits: Sequence[CapacityLimit] | None = None,
) -> Workload:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise WorkloadError(
            source, f"line {error.lineno} column {error.colno}", "JSON", error.msg,
            "a JSON document",
        ) from None
    if not isinstance(document, dict):
        raise WorkloadError(
            source, "(document)", "document", _short(document),
            'an object {"jobs": [...], "priority_changes": [...]}',
        )
    for key in document:
        if key not in ("jobs", "priority_changes", history_export.EXPORTED_AT_KEY):
            raise WorkloadError(source, "(document)", key, _short(document[key]),
                                "only the keys jobs and priority_changes (and a history "
                                "export's exported_at)")
    builder = _Builder(source, numbers_as_text=False,
                       declaration=_Declaration.of(shares, capacity_limits))
    for section, add in (("jobs", builder.add_job), ("priority_changes", builder.add_change)):
        records = document.get(section, [] if section == "priority_changes" else None)
        if not isinstance(records, list):
            raise WorkloadError(source, "(document)", section, _short(records), "a list of objects")
        for index, record in enumerate(records):
            where = f"record {section}[{index}]"
            try:
                if not isinstance(record, dict):
                    raise WorkloadError(source, where, section, _short(record), "an object")
                add(where, {k: v for k, v in record.items()
                            if v is not None and k not in HISTORY_COLUMNS})
            except WorkloadError as problem:
                builder.report(problem)
    return builder.workload()


@dataclass(frozen=True)
class _Declaration:
    """What jobs are checked against when the caller gives the declaration."""

    shares: Mapping[str, frozenset[str]]
    environment: frozenset[str] | None

    @staticmethod
    def of(
        shares: Sequence[QuotaShareSpec] | None, capacity_limits: Sequence[CapacityLimit] | None
    ) -> _Declaration | None:
        if shares is None:
            return None
        return _Declaration(
            shares={spec.name: frozenset(spec.units) for spec in shares},
            environment=None if capacity_limits is None
            else frozenset(limit.capacity_unit for limit in capacity_limits),
        )

    def check(self, source: str, where: str, job: SimJob) -> None:
        self.check_names(source, where, job.share, job.instance_type)

    def check_names(
        self, source: str, where: str, share: str, instance_type: str | None
    ) -> None:
        """The share, and the instance type when it could be read, against the declaration."""
        units = self.shares.get(share)
        if units is None:
            raise WorkloadError(
                source, where, "share", share,
                f"a share of the declaration: {', '.join(sorted(self.shares))}",
            )
        if instance_type is None:
            return
        if instance_type not in units:
            raise WorkloadError(
                source, where, "instance_type", instance_type,
                f"an instance type of share {share!r}: {', '.join(sorted(units))}",
            )
        if self.environment is not None and instance_type not in self.environment:
            raise WorkloadError(
                source, where, "instance_type", instance_type,
                f"an instance type of the environment: {', '.join(sorted(self.environment))}",
            )


class _Builder:
    """Collects parsed records and every problem; checks what needs the whole file (ids,
    references, the origin of timestamps)."""

    def __init__(
        self, source: str, *, numbers_as_text: bool = True,
        declaration: _Declaration | None = None,
    ) -> None:
        self.source = source
        self.numbers_as_text = numbers_as_text
        self.declaration = declaration
        self.jobs: list[SimJob] = []
        self.changes: list[PriorityChange] = []
        self.seen: dict[str, str] = {}
        """Each job id read, valid row or not, and where it was first."""
        self.change_refs: list[tuple[str, str]] = []
        self.problems: list[WorkloadError] = []
        self.problem_count = 0
        # ISO-8601 times, resolved against the earliest submission once all are read.
        self.job_times: list[tuple[int, str, datetime]] = []
        self.change_times: list[tuple[int, str, datetime]] = []
        self.time_form: tuple[str, str] | None = None  # ("seconds" | "timestamps", where)
        # Every job timestamp read, rows with other problems included, for the zone check.
        self.zone_forms: list[tuple[str, str, datetime]] = []  # (where, field, time)

    def report(self, problem: WorkloadError) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_REPORTED_PROBLEMS:
            self.problems.append(problem)

    def add_job(self, where: str, record: Mapping[str, object]) -> None:
        """Every problem of the record is reported, not only its first: a row with a bad
        count and a bad priority is fixed in one go. The last one is raised (the caller
        reports it), so the record is skipped."""
        found: list[WorkloadError] = []
        for key in record:
            if key not in JOB_FIELDS:
                found.append(WorkloadError(self.source, where, str(key), record[key],
                                           f"only the fields {', '.join(JOB_FIELDS)}"))
        parsed: dict[str, Any] = {}
        parsers = _job_field_parsers()
        for name in JOB_FIELDS:
            if name in REQUIRED_JOB_FIELDS and name not in record:
                found.append(WorkloadError(self.source, where, name, None, "a value (required)"))
                continue
            parse, default = parsers[name]
            try:
                parsed[name] = self._value(where, record, name, parse, default)
            except WorkloadError as problem:
                found.append(problem)
        submitted = parsed.get("submitted_at")
        if isinstance(submitted, datetime):
            # Its time zone is checked against the file's others even when the row is skipped.
            self.zone_forms.append((where, "submitted_at", submitted))
        if "job_id" in parsed:
            if parsed["job_id"] in self.seen:
                found.append(WorkloadError(
                    self.source, where, "job_id", parsed["job_id"],
                    f"an id not used before (already on {self.seen[parsed['job_id']]})",
                ))
            else:
                # The first row of an id holds it even when the row itself is invalid: a
                # second row with the same id is a duplicate whichever of them is fixed.
                self.seen[parsed["job_id"]] = where
        if self.declaration is not None and "share" in parsed:
            try:
                self.declaration.check_names(self.source, where, parsed["share"],
                                             parsed.get("instance_type"))
            except WorkloadError as problem:
                found.append(problem)
        if submitted is not None:
            try:
                parsed["submitted_at"] = self._seconds_or_later(where, submitted)
            except WorkloadError as problem:
                found.append(problem)
        if found:
            for earlier in found[:-1]:
                self.report(earlier)
            raise found[-1]
        self.jobs.append(SimJob(**parsed))
        if isinstance(submitted, datetime):
            self.job_times.append((len(self.jobs) - 1, where, submitted))

    def add_parsed(self, where: str, job: SimJob) -> None:
        if job.job_id in self.seen:
            raise WorkloadError(
                self.source, where, "job_id", job.job_id,
                f"an id not used before (already on {self.seen[job.job_id]})",
            )
        self.seen[job.job_id] = where  # held even when the declaration refuses the row
        if self.declaration is not None:
            self.declaration.check(self.source, where, job)
        self.jobs.append(job)

    def add_fast(self, where: str, job: SimJob) -> None:
        """A job the fast CSV path read (its times are seconds)."""
        self._seconds_or_later(where, job.submitted_at)
        self.add_parsed(where, job)

    def add_change(self, where: str, record: Mapping[str, object]) -> None:
        self._check_keys(where, record, CHANGE_FIELDS)
        for name in CHANGE_FIELDS:
            if name not in record:
                raise WorkloadError(self.source, where, name, None, "a value (required)")
        at = self._value(where, record, "at", _time)
        change = PriorityChange(
            at=self._seconds_or_later(where, at, field="at"),
            job_id=self._value(where, record, "job_id", _text),
            priority=self._value(where, record, "priority", _integer(0, MAX_PRIORITY)),
        )
        self.changes.append(change)
        self.change_refs.append((where, change.job_id))
        if isinstance(at, datetime):
            self.change_times.append((len(self.changes) - 1, where, at))

    def workload(self) -> Workload:
        for where, job_id in self.change_refs:
            # Ids of rows skipped for other problems are in seen too: their priority changes
            # refer to a job that is there, only mistyped.
            if job_id not in self.seen:
                self.report(WorkloadError(
                    self.source, where, "job_id", job_id, "the id of a job in this workload"
                ))
        self._resolve_timestamps()
        if self.problem_count == 1:
            raise self.problems[0]
        if self.problems:
            # In file order: line and record numbers as read, whole-file checks last.
            raise WorkloadProblems(self.problems, self.problem_count)
        self.jobs.sort(key=lambda job: job.submitted_at)
        self.changes.sort(key=lambda change: change.at)
        return Workload(jobs=self.jobs, priority_changes=self.changes)

    def _seconds_or_later(
        self, where: str, value: float | datetime, field: str = "submitted_at"
    ) -> float:
        """Seconds as they are; a timestamp becomes 0.0 until the origin is known. One form
        per file: mixing them would make "seconds from the start" ambiguous."""
        form = "timestamps" if isinstance(value, datetime) else "seconds"
        if self.time_form is None:
            self.time_form = (form, where)
        elif self.time_form[0] != form:
            raise WorkloadError(
                self.source, where, field, _shown(value) if isinstance(value, datetime)
                else value,
                f"a time in the file's one form: {self.time_form[0]} (as on "
                f"{self.time_form[1]})",
            )
        return 0.0 if isinstance(value, datetime) else value

    def _resolve_timestamps(self) -> None:
        if not self.zone_forms:
            for _, where, at in self.change_times:
                self.report(WorkloadError(
                    self.source, where, "at", _shown(at),
                    "seconds, as the jobs' times are",
                ))
            return
        # Every timestamp whose zone form differs from the first job's is reported, rows
        # skipped for other problems included, so mixed forms are fixed in one go.
        times = [*self.zone_forms, *((where, "at", at) for _, where, at in self.change_times)]
        first_where, _, first = times[0]
        mixed = [(where, field, time) for where, field, time in times
                 if (time.tzinfo is not None) != (first.tzinfo is not None)]
        for where, field, time in mixed:
            self.report(WorkloadError(
                self.source, where, field, _shown(time),
                f"timestamps all with a time zone (Z, +01:00) or all without (as on {first_where})",
            ))
        if mixed or not self.job_times:
            return  # not replayable anyway: every timestamped job had a problem of its own
        origin = min(time for _, _, time in self.job_times)
        for index, _, time in self.job_times:
            self.jobs[index] = replace(
                self.jobs[index], submitted_at=(time - origin).total_seconds()
            )
        for index, where, time in self.change_times:
            seconds = (time - origin).total_seconds()
            if seconds < 0:
                self.report(WorkloadError(
                    self.source, where, "at", _shown(time),
                    f"not before the first submission ({_shown(origin)})",
                ))
                continue
            self.changes[index] = replace(self.changes[index], at=seconds)

    def _check_keys(self, where: str, record: Mapping[str, object], known: Sequence[str]) -> None:
        for key in record:
            if key not in known:
                raise WorkloadError(
                    self.source, where, str(key), record[key], f"only the fields {', '.join(known)}"
                )

    def _value(
        self,
        where: str,
        record: Mapping[str, object],
        name: str,
        parse: Callable[[object], Any],
        default: Any = None,
    ) -> Any:
        if name not in record:
            return default
        raw = record[name]
        timestamp = parse is _time and isinstance(raw, str) and not _is_number_text(raw)
        if (not self.numbers_as_text and name not in _TEXT_FIELDS and isinstance(raw, str)
                and not timestamp):
            raise WorkloadError(self.source, where, name, raw, "a JSON number, not a string")
        try:
            return parse(raw)
        except _Invalid as invalid:
            raise WorkloadError(self.source, where, name, raw, invalid.allowed) from None


def _fast_job(record: Mapping[str, str]) -> SimJob | None:
    """A well-formed CSV job row in one pass (a million rows take seconds); None sends the row
    through the field-by-field checks, which name what is wrong."""
    try:
        job_id, share = record["job_id"], record["share"]
        instance_type = record["instance_type"]
        submitted_at, duration = float(record["submitted_at"]), float(record["duration"])
        count = int(record.get("instance_count") or 1)
        priority = int(record.get("priority") or 0)
        interval_text = record.get("checkpoint_interval")
        interval = float(interval_text) if interval_text else None
        retries_text = record.get("preemption_retries")
        retries = int(retries_text) if retries_text else None
    except (KeyError, ValueError):
        return None
    # NaN fails every comparison, so it falls through to the precise checks too.
    if not (
        job_id and share and instance_type
        and 0.0 <= submitted_at < math.inf
        and 0.0 <= duration < math.inf
        and count >= 1
        and 0 <= priority <= MAX_PRIORITY
        and (interval is None or 0.0 < interval < math.inf)
        and (retries is None or retries >= 0)
    ):
        return None
    return SimJob(
        job_id=job_id, share=share, submitted_at=submitted_at, duration=duration,
        instance_type=instance_type, instance_count=count, priority=priority,
        checkpoint_interval=interval, preemption_retries=retries,
    )


class _Invalid(Exception):
    def __init__(self, allowed: str) -> None:
        self.allowed = allowed


def _text(raw: object) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _Invalid("a non-empty string")
    return raw.strip()


def _number(raw: object) -> float:
    # bool is an int to Python, never a number in a workload.
    if isinstance(raw, bool):
        raise _Invalid("a number")
    if isinstance(raw, (int, float)):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw)
        except ValueError:
            pass
    raise _Invalid("a number")


_TIME_ALLOWED = "a finite number of seconds >= 0, or an ISO-8601 timestamp (2026-03-02T09:15:00Z)"


def _is_number_text(raw: str) -> bool:
    try:
        float(raw)
    except ValueError:
        return False
    return True


class _Written(datetime):
    """A timestamp that remembers how the file wrote it, so that a message echoes
    ``2026-03-02T09:15:00Z`` as written, not as ``2026-03-02T09:15:00+00:00``."""

    written: str

    @classmethod
    def read(cls, text: str) -> _Written:
        time = cls.fromisoformat(text)
        time.written = text
        return time


def _shown(time: datetime) -> str:
    """``time`` as the file wrote it (ISO 8601 for one it did not)."""
    return time.written if isinstance(time, _Written) else time.isoformat()


def _time(raw: object) -> float | datetime:
    """Seconds from the start, or an ISO-8601 timestamp (resolved by the builder)."""
    if isinstance(raw, str) and not _is_number_text(raw):
        try:
            # Python 3.11's fromisoformat reads ISO 8601 (a trailing Z included).
            return _Written.read(raw.strip())
        except ValueError:
            raise _Invalid(_TIME_ALLOWED) from None
    try:
        return _seconds(minimum=0.0)(raw)
    except _Invalid:
        raise _Invalid(_TIME_ALLOWED) from None


def _seconds(*, minimum: float = 0.0, positive: bool = False) -> Callable[[object], float]:
    allowed = "a finite number of seconds " + ("> 0" if positive else f">= {minimum:g}")

    def parse(raw: object) -> float:
        try:
            value = _number(raw)
        except _Invalid:
            raise _Invalid(allowed) from None
        if not math.isfinite(value) or value < minimum or (positive and value <= 0):
            raise _Invalid(allowed)
        return value

    return parse


def _integer(minimum: int, maximum: int | None = None) -> Callable[[object], int]:
    span = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
    allowed = f"an integer {span}"

    def parse(raw: object) -> int:
        if isinstance(raw, bool):
            raise _Invalid(allowed)
        if isinstance(raw, int):
            value = raw
        elif isinstance(raw, str):
            try:
                value = int(raw)
            except ValueError:
                raise _Invalid(allowed) from None
        else:
            raise _Invalid(allowed)
        if value < minimum or (maximum is not None and value > maximum):
            raise _Invalid(allowed)
        return value

    return parse


@cache
def _job_field_parsers() -> dict[str, tuple[Callable[[object], Any], Any]]:
    """Each job field's parser and default (built once)."""
    return {
        "job_id": (_text, None), "share": (_text, None), "submitted_at": (_time, None),
        "duration": (_seconds(minimum=0.0), None), "instance_type": (_text, None),
        "instance_count": (_integer(1), 1), "priority": (_integer(0, MAX_PRIORITY), 0),
        "checkpoint_interval": (_seconds(positive=True), None),
        "preemption_retries": (_integer(0), None),
    }


def _columns_allowed() -> str:
    return "columns from " + ", ".join(CSV_COLUMNS) + " (job_id, share, submitted_at, " \
        "duration and instance_type required)"


def _job_record(job: SimJob) -> dict[str, object]:
    return {name: getattr(job, name) for name in JOB_FIELDS}


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _short(value: object) -> object:
    text = repr(value)
    return value if len(text) <= 60 else text[:57] + "..."

