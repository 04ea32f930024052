"""Reading history exports and ledger records into one table (usage/jobs.py): the fast path
and the csv module's agree, a job seen twice is one job."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from quota_constructs.usage import JobTable, UsageInputError, read_history
from quota_constructs.usage.jobs import CHUNK
from quota_constructs.wire.job_record import AttemptRun, JobRecord

from .exports import Row, at, write_export


def columns(table: JobTable) -> list[tuple[object, ...]]:
    return list(zip(table.job_ids, table.shares, table.types, table.counts, table.created_ms,
                    table.statuses, table.retries, table.preempted, table.runs, table.seen_ms,
                    strict=True))


ROWS = [
    Row("a", "vision", 0.0, "SUCCEEDED", ((0.0, 1.0, "PREEMPTED"), (2.0, 3.0, "SUCCEEDED")),
        count=2, retries=3),
    Row("b", "nlp", 0.5, "RUNNING", ((1.0, None, "RUNNING"),)),
    Row("c", "nlp", 1.5, "RUNNABLE"),
    Row("d", "vision", 2.0, "FAILED", ((2.5, 2.75, "PREEMPTED"),), retries=0, preemptions=3),
]


def test_plain_rows_quoted_rows_crlf_and_blank_lines_read_alike(tmp_path: Path) -> None:
    plain = read_history(write_export(tmp_path / "plain.csv", ROWS, exported_h=4.0))
    assert columns(plain)[3] == ("d", "vision", "ml.g5.xlarge", 1, at(2.0), "FAILED", 0, 3,
                                 [(at(2.5), at(2.75), "PREEMPTED")], at(4.0))
    assert plain.unseen(3) == 2
    # The same rows through the csv module: a job name with a comma, quoted.
    lines = (tmp_path / "plain.csv").read_text().splitlines()
    quoted = tmp_path / "quoted.csv"
    with quoted.open("w", newline="") as stream:
        writer = csv.writer(stream, lineterminator="\r\n")
        for number, row in enumerate(csv.reader(lines)):
            if number == 2:
                row[9] = 'train, "big"\nrun'
            writer.writerow(row)
        stream.write("\r\n")
    assert columns(read_history(quoted)) == columns(plain)


def test_more_rows_than_a_chunk_and_a_bad_value_named_by_its_line(tmp_path: Path) -> None:
    rows = [Row(f"j{n}", "vision", n / 1000, "SUCCEEDED", ((n / 1000, n / 1000 + 1, "SUCCEEDED"),))
            for n in range(CHUNK + 10)]
    export = write_export(tmp_path / "many.csv", rows, exported_h=100.0)
    assert len(read_history(export)) == CHUNK + 10
    text = export.read_text().splitlines()
    text[CHUNK + 5] = text[CHUNK + 5].replace("/SUCCEEDED", "/FINISHED")
    export.write_text("\n".join(text) + "\n")
    with pytest.raises(UsageInputError, match=f"line {CHUNK + 6}: attempt_runs"):
        read_history(export)


def test_a_job_in_two_exports_is_one_job_with_every_attempt(tmp_path: Path) -> None:
    early = write_export(tmp_path / "early.csv", [
        Row("a", "vision", 0.0, "RUNNING", ((0.0, 1.0, "PREEMPTED"), (2.0, None, "RUNNING")),
            preemptions=1)], exported_h=3.0)
    late = write_export(tmp_path / "late.csv", [
        Row("a", "vision", 0.0, "SUCCEEDED", ((2.0, 5.0, "SUCCEEDED"),), preemptions=1)],
        exported_h=6.0)
    table = read_history(late, read_history(early))
    assert len(table) == 1
    assert table.runs[0] == [(at(0.0), at(1.0), "PREEMPTED"), (at(2.0), at(5.0), "SUCCEEDED")]
    assert (table.statuses[0], table.preempted[0], table.seen_ms[0]) == ("SUCCEEDED", 1, at(6.0))


def test_ledger_records_merge_into_an_export(tmp_path: Path) -> None:
    table = read_history(write_export(tmp_path / "jobs.csv", ROWS, exported_h=4.0))
    record = JobRecord(job_id="b", share="nlp", created_ms=at(0.5),
                       instance_type="ml.g5.xlarge", instance_count=1, status="SUCCEEDED",
                       runs=(AttemptRun(at(1.0), at(4.5), "SUCCEEDED"),))
    table.add_record(record, at(5.0))
    assert len(table) == 4
    assert table.runs[1] == [(at(1.0), at(4.5), "SUCCEEDED")]  # the running one, now ended
    assert table.statuses[1] == "SUCCEEDED"
