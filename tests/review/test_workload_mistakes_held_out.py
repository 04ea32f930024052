"""Reviewer's held-out check of issue 17: a workload file with many mistakes, several on one
line, gets every one reported with its line (or record), in one error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation.workloads.files import WorkloadProblems, read_workload

SHARES = [
    QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit("ml.g5.xlarge", 2)],
                   strategy=SharingStrategy.LEND),
    QuotaShareSpec(name="speech", capacity_limits=[CapacityLimit("ml.g6.xlarge", 2)],
                   strategy=SharingStrategy.RESERVE),
]
ENVIRONMENT = [CapacityLimit("ml.g5.xlarge", 2), CapacityLimit("ml.g6.xlarge", 2)]

CSV = """job_id,share,submitted_at,duration,instance_type,instance_count,priority
a,vision,2026-05-01T08:00:00+02:00,60,ml.g5.xlarge,1,0
b,audio,2026-05-01T08:01:00Z,60,ml.g5.xlarge,1,0
c,speech,2026-05-01T08:02:00Z,60,ml.g5.xlarge,1,0
d,vision,2026-05-01T08:03:00,60,ml.g5.xlarge,1,0
e,vision,2026-05-01T08:04:00,-1,ml.g5.xlarge,0,99999
a,vision,2026-05-01T08:05:00Z,60,ml.g5.xlarge,1,0
f,speech,2026-05-01T08:06:00Z,sixty,ml.g6.xlarge,1,0
g,speech,2026-05-01T08:07:00Z,60,ml.g6.xlarge,1,0
"""

EXPECTED = {
    ("line 3", "share"), ("line 4", "instance_type"),
    ("line 5", "submitted_at"),
    ("line 6", "duration"), ("line 6", "instance_count"), ("line 6", "priority"),
    ("line 6", "submitted_at"),
    ("line 7", "job_id"), ("line 8", "duration"),
}


def problems_of(path: Path) -> set[tuple[str, str]]:
    with pytest.raises(WorkloadProblems) as raised:
        read_workload(path, shares=SHARES, capacity_limits=ENVIRONMENT)
    found = {(problem.where, problem.field) for problem in raised.value.problems}
    assert raised.value.total == len(raised.value.problems)
    for where, _ in found:
        assert f"{where}:" in str(raised.value)
    return found


def test_every_mistake_of_a_csv_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(CSV)
    assert problems_of(path) == EXPECTED


def test_every_mistake_of_a_json_file_is_reported_with_its_record(tmp_path: Path) -> None:
    rows = [line.split(",") for line in CSV.splitlines()]
    header, body = rows[0], rows[1:]
    jobs = []
    for row in body:
        record: dict[str, object] = dict(zip(header, row, strict=True))
        for key in ("duration", "instance_count", "priority"):
            text = str(record[key])
            record[key] = int(text) if text.lstrip("-").isdigit() else text
        jobs.append(record)
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"jobs": jobs}))
    found = problems_of(path)
    as_records = {(f"record jobs[{int(where.split()[1]) - 2}]", field)
                  for where, field in EXPECTED}
    assert found == as_records


def test_a_priority_change_of_a_row_with_a_mistake_is_not_a_second_mistake(
    tmp_path: Path,
) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text(
        "kind,job_id,share,submitted_at,duration,instance_type,priority,at\n"
        ",a,vision,0,-3,ml.g5.xlarge,1,\n"
        "priority_change,a,,,,,5,10\n"
        "priority_change,nobody,,,,,5,10\n"
        ",b,vision,0,60,ml.g5.xlarge,1,\n"
    )
    assert problems_of(path) == {("line 2", "duration"), ("line 4", "job_id")}
