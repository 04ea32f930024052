"""The jobs a usage report measures: read from a ``quota-constructs history`` export (or the job
ledger's records), one column per field so a million jobs stay cheap to hold and to walk.

A job seen twice (exports joined, an export and the ledger, a ledger's preemption record and
its final record) is one job: its attempts are the union of both sightings' (one per start),
an attempt that stopped replaces the same attempt seen running, and the sighting that knows
the job finished (else the later one) gives its status; the larger preemption count is kept.
"""

from __future__ import annotations

import csv
import gc
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain, islice
from operator import itemgetter
from pathlib import Path
from typing import Any

from ..wire.history_export import (
    ATTEMPT_RUNS,
    ATTEMPTS_KEPT,
    EXPORTED_AT,
    EXPORTED_AT_KEY,
    SUBMITTED_AT_UTC,
    UNSEEN_PREEMPTIONS,
)
from ..wire.job_record import (
    FINISHED_STATUSES,
    PREEMPTED,
    RUNNING,
    JobRecord,
    RunFields,
    decode_run_column,
    decode_run_fields,
)

FORMATS = (".csv", ".json")
READ_COLUMNS = ("job_id", "share", "instance_type", "instance_count", "preemption_retries",
                "status", "preemptions", UNSEEN_PREEMPTIONS, SUBMITTED_AT_UTC, ATTEMPT_RUNS,
                EXPORTED_AT)
"""What usage reads of each exported job."""


class UsageInputError(ValueError):
    """An input usage cannot read: one line naming the file, where in it, and what is wrong."""


@dataclass
class JobTable:
    """Every job's fields, one list per field, in the order jobs were first seen."""

    job_ids: list[str] = field(default_factory=list)
    shares: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    created_ms: list[int] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    retries: list[int | None] = field(default_factory=list)
    preempted: list[int] = field(default_factory=list)
    """AWS's preemption count, never below the preempted attempts with times."""
    runs: list[list[RunFields]] = field(default_factory=list)
    """Per job, its attempts (start ms, stop ms or None while running, ending), by start."""
    seen_ms: list[int] = field(default_factory=list)
    """Per job, when it was read (its export's moment): an attempt still running then runs
    until that moment."""
    index: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.job_ids)

    @property
    def moment_ms(self) -> int | None:
        """The latest moment any job was read (None without jobs)."""
        return max(self.seen_ms) if self.seen_ms else None

    def unseen(self, job: int) -> int:
        """Preemptions AWS counted whose attempt's times no sighting of the job shows."""
        return max(0, self.preempted[job] - sum(run[2] == PREEMPTED for run in self.runs[job]))

    def add(self, job_id: str, share: str, instance_type: str, count: int, created_ms: int,
            status: str, retries: int | None, preempted: int, runs: list[RunFields],
            seen_ms: int, preempted_runs: int | None = None) -> None:
        """One sighting of a job (merged into an earlier one of the same id);
        ``preempted_runs``: how many of ``runs`` ended by preemption, when the caller knows."""
        if job_id in self.index:
            self._merge(self.index[job_id], share, instance_type, count, created_ms, status,
                        retries, preempted, runs, seen_ms)
            return
        if preempted_runs is None:
            preempted_runs = sum(run[2] == PREEMPTED for run in runs)
        self.index[job_id] = len(self.job_ids)
        self.job_ids.append(job_id)
        self.shares.append(share)
        self.types.append(instance_type)
        self.counts.append(count)
        self.created_ms.append(created_ms)
        self.statuses.append(status)
        self.retries.append(retries)
        self.preempted.append(preempted if preempted > preempted_runs else preempted_runs)
        self.runs.append(runs)
        self.seen_ms.append(seen_ms)

    def add_record(self, record: JobRecord, seen_ms: int) -> None:
        self.add(record.job_id, record.share, record.instance_type, record.instance_count,
                 record.created_ms, record.status, record.preemption_retries,
                 record.preempted_count,
                 [(run.started_ms, run.stopped_ms, run.ended) for run in record.runs], seen_ms)

    def _merge(self, job: int, share: str, instance_type: str, count: int, created_ms: int,
               status: str, retries: int | None, preempted: int, runs: list[RunFields],
               seen_ms: int) -> None:
        by_start = {run[0]: run for run in self.runs[job]}
        for run in runs:
            known = by_start.get(run[0])
            if known is None or (known[2] == RUNNING and run[2] != RUNNING):
                by_start[run[0]] = run
        self.runs[job] = sorted(by_start.values())
        newer = (status in FINISHED_STATUSES,
                 seen_ms) > (self.statuses[job] in FINISHED_STATUSES, self.seen_ms[job])
        if newer:
            self.shares[job], self.types[job], self.counts[job] = share, instance_type, count
            self.created_ms[job], self.statuses[job] = created_ms, status
            self.retries[job] = retries
        self.preempted[job] = max(self.preempted[job], preempted,
                                  sum(run[2] == PREEMPTED for run in self.runs[job]))
        self.seen_ms[job] = max(self.seen_ms[job], seen_ms)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a million jobs' lists and tuples are
    made: none of them forms a cycle, and every collection would walk the whole growing table
    again (it halves the time of reading an export). On the way out the objects alive are
    frozen (``gc.freeze``), so the collector resumes without walking them all once more; it
    only ever looks for cycles, which they do not form, and reference counting frees them as
    usual."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


def read_history(path: str | Path, table: JobTable | None = None) -> JobTable:
    """The jobs of a ``quota-constructs history`` export (``.csv`` or ``.json``), added to
    ``table`` when given. An export made before history kept attempts is refused, naming what
    it lacks."""
    path = Path(path)
    table = table if table is not None else JobTable()
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise UsageInputError(f"--history got {str(path)!r}; allowed: a quota-constructs "
                              "history export ending in .csv or .json")
    try:
        with path.open(newline="", encoding="utf-8") as stream, cyclic_gc_paused():
            if suffix == ".csv":
                _read_csv(stream, str(path), table)
            else:
                _read_json(stream.read(), str(path), table)
    except (FileNotFoundError, IsADirectoryError):
        raise UsageInputError(f"--history got {str(path)!r}; allowed: an existing file (a "
                              "quota-constructs history export)") from None
    except UnicodeDecodeError:
        raise UsageInputError(f"{path}: not UTF-8 text (a quota-constructs history export "
                              "is)") from None
    return table


def _refuse_older_export(source: str, present: Iterable[str]) -> None:
    """One line naming what an export lacks: the columns (keys) history writes since it keeps
    every attempt, or any column usage reads."""
    names = set(present)
    kept = [name for name in ATTEMPTS_KEPT if name not in names]
    if kept:
        raise UsageInputError(
            f"{source}: an export made before quota-constructs history kept every attempt: it "
            f"has no {' and no '.join(kept)}; export the queue again with quota-constructs "
            "history (an export keeps only the jobs AWS Batch still lists)")
    missing = [name for name in READ_COLUMNS if name not in names]
    if missing:
        raise UsageInputError(f"{source}: not a quota-constructs history export: it has no "
                              f"{', '.join(missing)}")


CHUNK = 50_000
"""Rows read and added at once when none needs the csv module or a row-by-row look."""


def _read_csv(stream: Iterable[str], source: str, table: JobTable) -> None:
    """Rows in chunks: a chunk of plain rows (no quote: every row the export writes but for
    a job name with a comma or a quote) is split on commas as one text and added column by
    column; a chunk that cannot be (a blank line, a row of another width, a duplicate job, a
    value to refuse) is read row by row, which says what is wrong and where; from the first
    quote on, rows go through the csv module."""
    lines = iter(stream)
    header = next(csv.reader([next(lines, "")]), [])
    _refuse_older_export(source, header)
    reader = _RowReader(source, table, header)
    number = 1
    while chunk := list(islice(lines, CHUNK)):
        if any('"' in line for line in chunk):
            for offset, row in _records(chain(chunk, lines)):
                reader.add(number + offset, row)
            return
        text = "".join(chunk).replace("\r\n", "\n")
        fields = (text[:-1] if text.endswith("\n") else text).replace("\n", ",").split(",")
        width = reader.width
        if len(fields) != width * len(chunk) or not reader.add_columns(
                [fields[position::width] for position in reader.positions]):
            for offset, line in enumerate(chunk, start=1):
                reader.add(number + offset, line.rstrip("\r\n").split(","))
        number += len(chunk)


def _records(lines: Iterator[str]) -> Iterator[tuple[int, list[str]]]:
    """(line offset from 1, fields) of every CSV record, a record spanning the lines its
    quoted fields run over."""
    number = 0
    for line in lines:
        number += 1
        first = number
        while line.count('"') % 2:  # a quoted field runs on to the next line
            more = next(lines, None)
            if more is None:
                break
            number += 1
            line += more
        yield first, next(csv.reader([line]), [])


class _RowReader:
    """Adds a history export's rows to a table: one at a time (:meth:`add`, with errors
    naming the line) or a chunk column by column (:meth:`add_columns`)."""

    def __init__(self, source: str, table: JobTable, header: list[str]) -> None:
        self.source, self.table, self.width = source, table, len(header)
        self.positions = [header.index(name) for name in READ_COLUMNS]
        self.pick = itemgetter(*self.positions)
        self.moments: dict[str, int] = {}

    def seen(self, exported: str) -> int:
        moment = self.moments.get(exported)
        if moment is None:
            moment = self.moments[exported] = _ms(exported, EXPORTED_AT)
        return moment

    def add(self, number: int, row: list[str]) -> None:
        if len(row) != self.width:
            if not row or (len(row) == 1 and not row[0].strip()):
                return
            raise UsageInputError(f"{self.source} line {number}: {len(row)} values; "
                                  f"allowed: {self.width}, one per header column")
        (job_id, share, unit, count, retries, status, preempted, _, submitted, runs,
         exported) = self.pick(row)
        try:
            instances, budget, counted = _counts(count, retries, preempted)
            self.table.add(job_id, share, unit, instances,
                           _ms(submitted, SUBMITTED_AT_UTC), status, budget,
                           counted, _runs(runs), self.seen(exported), runs.count(PREEMPTED))
        except ValueError as error:
            raise UsageInputError(f"{self.source} line {number}: {error}") from None

    @staticmethod
    def times(texts: Sequence[str]) -> list[int]:
        """:func:`_ms` of a column (``datetime.fromisoformat`` is C: a whole column at a
        time costs a fraction of a call per text)."""
        try:
            moments = list(map(datetime.fromisoformat, texts))
        except ValueError:
            return [_ms(text, SUBMITTED_AT_UTC) for text in texts]  # names the text
        if any(moment.tzinfo is None for moment in moments):
            return [_ms(text, SUBMITTED_AT_UTC) for text in texts]
        return [round(moment.timestamp() * 1000) for moment in moments]

    def add_columns(self, columns: list[list[str]]) -> bool:
        """Rows given as their columns (of :data:`READ_COLUMNS`, in order) added at once, as
        :meth:`add` would add them one by one; False, adding nothing, when any row needs
        :meth:`add` (to be refused, or merged)."""
        (ids, shares, units, counts, retries, statuses, preempted, _, submitted, runs,
         exported) = columns
        index = self.table.index
        if len(set(ids)) != len(ids) or not index.keys().isdisjoint(ids):
            return False
        try:
            instances = list(map(int, counts))
            budgets = [int(text) if text.strip() else None for text in retries]
            counted = [int(text) if text.strip() else 0 for text in preempted]
            if min(instances) < 1 or min(counted) < 0 or any(
                    budget is not None and budget < 0 for budget in budgets):
                return False
            created = self.times(submitted)
            decoded = decode_run_column(runs)
            seen = list(map(self.seen, exported))
        except ValueError:
            return False
        table = self.table
        index.update(zip(ids, range(len(table.job_ids), len(table.job_ids) + len(ids)),
                         strict=True))
        table.job_ids.extend(ids)
        table.shares.extend(shares)
        table.types.extend(units)
        table.counts.extend(instances)
        table.created_ms.extend(created)
        table.statuses.extend(statuses)
        table.retries.extend(budgets)
        table.preempted.extend(map(max, counted, (text.count(PREEMPTED) for text in runs)))
        table.runs.extend(decoded)
        table.seen_ms.extend(seen)
        return True


def _counts(count: str, retries: str, preempted: str) -> tuple[int, int | None, int]:
    """A CSV row's instance_count, preemption_retries (None when empty) and preemptions;
    ``ValueError`` naming the first that is not a whole number in range."""
    try:
        instances = int(count)
        budget = int(retries) if retries.strip() else None
        counted = int(preempted) if preempted.strip() else 0
        if instances >= 1 and (budget is None or budget >= 0) and counted >= 0:
            return instances, budget, counted
    except ValueError:
        pass
    return (_count(count, "instance_count", 1),
            _count(retries, "preemption_retries", 0) if retries.strip() else None,
            _count(preempted or "0", "preemptions", 0))


def _read_json(text: str, source: str, table: JobTable) -> None:
    try:
        document = json.loads(text)
    except ValueError as error:
        raise UsageInputError(f"{source}: not JSON ({error})") from None
    if not isinstance(document, Mapping) or not isinstance(document.get("jobs"), list):
        raise UsageInputError(f"{source}: not a quota-constructs history export "
                              '({"exported_at": ..., "jobs": [...]})')
    jobs: list[Any] = document["jobs"]
    first = jobs[0] if jobs and isinstance(jobs[0], Mapping) else None
    present = set(first) if first is not None else set(READ_COLUMNS) - {EXPORTED_AT}
    if EXPORTED_AT_KEY in document:
        present.add(EXPORTED_AT)  # the document's, not each job's
    _refuse_older_export(source, present)
    try:
        seen = _ms(str(document[EXPORTED_AT_KEY]), EXPORTED_AT_KEY)
    except ValueError as error:
        raise UsageInputError(f"{source}: {error}") from None
    for number, job in enumerate(jobs):
        try:
            if not isinstance(job, Mapping):
                raise ValueError("not an object")
            retries = job.get("preemption_retries")
            table.add(str(job["job_id"]), str(job["share"]), str(job["instance_type"]),
                      _count(job.get("instance_count", 1), "instance_count", 1),
                      _ms(str(job[SUBMITTED_AT_UTC]), SUBMITTED_AT_UTC), str(job["status"]),
                      None if retries is None else _count(retries, "preemption_retries", 0),
                      _count(job.get("preemptions") or 0, "preemptions", 0),
                      _runs(str(job.get(ATTEMPT_RUNS) or "")), seen)
        except KeyError as error:
            raise UsageInputError(f"{source} jobs[{number}]: no {error.args[0]}") from None
        except ValueError as error:
            raise UsageInputError(f"{source} jobs[{number}]: {error}") from None


def _runs(text: str) -> list[RunFields]:
    try:
        return decode_run_fields(text)
    except ValueError as error:
        raise ValueError(f"{ATTEMPT_RUNS}: {error}") from None


def _count(value: str | int, name: str, least: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = least - 1
    if number < least:
        raise ValueError(f"{name}: {value!r}; allowed: a whole number >= {least}")
    return number


def _ms(text: str, name: str) -> int:
    """An ISO 8601 time (a zone, or UTC) as epoch milliseconds."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name}: {text!r}; allowed: an ISO 8601 time such as "
                         "2026-11-24T09:15:00.000+00:00") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)




def merge_records(table: JobTable, records: Iterable[tuple[JobRecord, int]]) -> JobTable:
    """``records`` (each with the moment it was read, epoch ms) added to ``table``."""
    with cyclic_gc_paused():
        for record, seen_ms in records:
            table.add_record(record, seen_ms)
    return table
