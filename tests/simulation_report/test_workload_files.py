"""Workload files: what parses, and errors that say exactly where and what is wrong."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from quota_constructs import QuotaConfigError
from quota_constructs.simulation import PriorityChange, SimJob
from quota_constructs.simulation.workloads import (
    Workload,
    WorkloadError,
    parse_csv,
    parse_json,
    read_workload,
    write_workload,
)
from stacks.launch import PROJECT_ROOT

EXAMPLES = PROJECT_ROOT / "examples" / "workloads"
HEADER = "job_id,share,submitted_at,duration,instance_type"


def csv_of(text: str) -> Workload:
    return parse_csv(io.StringIO(text, newline=""), source="w.csv")


def error_of(text: str) -> WorkloadError:
    with pytest.raises(WorkloadError) as caught:
        csv_of(text)
    return caught.value


def test_minimal_columns_take_the_documented_defaults() -> None:
    workload = csv_of(f"{HEADER}\n a , QS1 , 0 , 3600 , ml.g5.xlarge \n")
    assert workload == Workload(
        jobs=[SimJob(job_id="a", share="QS1", submitted_at=0.0, duration=3600.0,
                     instance_type="ml.g5.xlarge", instance_count=1, priority=0,
                     checkpoint_interval=None, preemption_retries=None)],
        priority_changes=[],
    )


def test_zero_durations_from_a_trace_are_kept_as_simulate_takes_them() -> None:
    # Public cluster traces carry jobs that ended at once; simulate() accepts them, and so do
    # both formats.
    from_csv = csv_of(f"{HEADER}\na,QS1,0,0,ml.g5.xlarge\n")
    from_json = parse_json(
        '{"jobs": [{"job_id": "a", "share": "QS1", "submitted_at": 0, "duration": 0, '
        '"instance_type": "ml.g5.xlarge"}]}'
    )
    assert from_csv.jobs[0].duration == from_json.jobs[0].duration == 0.0


def test_empty_optional_values_take_defaults_and_blank_lines_are_skipped() -> None:
    text = (
        f"{HEADER},instance_count,priority,checkpoint_interval,preemption_retries\n"
        "a,QS1,5,60,ml.g5.xlarge,,,,\n\n"
        "b,QS1,1,60,ml.g5.xlarge,2,9999,30,0\n"
    )
    a, b = csv_of(text).jobs[1], csv_of(text).jobs[0]
    assert (a.job_id, a.instance_count, a.priority, a.checkpoint_interval) == ("a", 1, 0, None)
    assert (b.job_id, b.instance_count, b.priority, b.checkpoint_interval,
            b.preemption_retries) == ("b", 2, 9999, 30.0, 0)


def test_jobs_come_back_in_submission_order_and_changes_in_time_order() -> None:
    text = (
        f"kind,{HEADER},priority,at\n"
        ",late,QS1,100,60,ml.g5.xlarge,1,\n"
        "priority_change,late,,,,,7,150\n"
        ",early,QS1,10,60,ml.g5.xlarge,1,\n"
        "priority_change,early,,,,,5,20\n"
    )
    workload = csv_of(text)
    assert [job.job_id for job in workload.jobs] == ["early", "late"]
    assert list(workload.priority_changes) == [
        PriorityChange(at=20.0, job_id="early", priority=5),
        PriorityChange(at=150.0, job_id="late", priority=7),
    ]


@pytest.mark.parametrize(
    ("row", "field", "value", "allowed"),
    [
        ("a,QS1,-1,60,ml.g5.xlarge", "submitted_at", "-1", "seconds >= 0"),
        ("a,QS1,0,-1,ml.g5.xlarge", "duration", "-1", "seconds >= 0"),
        ("a,QS1,0,soon,ml.g5.xlarge", "duration", "soon", "seconds >= 0"),
        ("a,QS1,nan,60,ml.g5.xlarge", "submitted_at", "nan", "finite"),
        ("a,QS1,0,inf,ml.g5.xlarge", "duration", "inf", "finite"),
        ("a,QS1,0,60,ml.g5.xlarge,0", "instance_count", "0", "integer >= 1"),
        ("a,QS1,0,60,ml.g5.xlarge,1.5", "instance_count", "1.5", "integer >= 1"),
        ("a,QS1,0,60,ml.g5.xlarge,1,10000", "priority", "10000", "between 0 and 9999"),
        ("a,QS1,0,60,ml.g5.xlarge,1,1,-5", "checkpoint_interval", "-5", "seconds > 0"),
        ("a,QS1,0,60,ml.g5.xlarge,1,1,5,-1", "preemption_retries", "-1", "integer >= 0"),
        (",QS1,0,60,ml.g5.xlarge,1,1,5,1", "job_id", None, "required"),
    ],
)
def test_a_bad_value_names_file_line_field_and_value(
    row: str, field: str, value: str | None, allowed: str
) -> None:
    header = f"{HEADER},instance_count,priority,checkpoint_interval,preemption_retries"
    padded = row + "," * (header.count(",") - row.count(","))
    error = error_of(f"{header}\nok,QS1,0,60,ml.g5.xlarge,,,,\n{padded}\n")
    assert isinstance(error, QuotaConfigError)
    assert (error.source, error.where) == ("w.csv", "line 3")
    assert (error.field, error.value) == (field, value)
    assert allowed in error.allowed
    assert str(error).startswith(f"workload 'w.csv' line 3: {field} got {value!r}; allowed:")


def test_unknown_and_missing_columns_are_header_errors() -> None:
    unknown = error_of(f"{HEADER},gpus\n")
    assert (unknown.where, unknown.field, unknown.value) == ("line 1", "header", "gpus")
    missing = error_of("job_id,share,submitted_at,duration\n")
    assert missing.where == "line 1"
    assert "instance_type" in missing.allowed
    assert "header" in error_of("").field


def test_duplicate_ids_name_both_lines() -> None:
    error = error_of(f"{HEADER}\na,QS1,0,60,ml.g5.xlarge\nb,QS1,0,60,ml.g5.xlarge\n"
                     "a,QS2,0,60,ml.g5.xlarge\n")
    assert (error.where, error.field, error.value) == ("line 4", "job_id", "a")
    assert "line 2" in error.allowed


def test_a_row_of_the_wrong_width_is_named() -> None:
    error = error_of(f"{HEADER}\na,QS1,0,60\n")
    assert (error.where, error.field) == ("line 2", "row")


def test_priority_change_rows_are_checked() -> None:
    head = f"kind,{HEADER},priority,at\n,a,QS1,0,60,ml.g5.xlarge,1,\n"
    unknown_job = error_of(head + "priority_change,zz,,,,,4,10\n")
    assert (unknown_job.where, unknown_job.field, unknown_job.value) == ("line 3", "job_id", "zz")
    extra = error_of(head + "priority_change,a,QS1,,,,4,10\n")
    assert (extra.field, extra.value) == ("share", "QS1")
    no_time = error_of(head + "priority_change,a,,,,,4,\n")
    assert (no_time.field, no_time.value) == ("at", None)
    at_on_job = error_of(f"kind,{HEADER},at\n,a,QS1,0,60,ml.g5.xlarge,5\n")
    assert (at_on_job.field, at_on_job.value) == ("at", "5")
    kind = error_of(f"kind,{HEADER}\nchange,a,QS1,0,60,ml.g5.xlarge\n")
    assert (kind.field, kind.value) == ("kind", "change")


def test_json_records_are_named_by_section_and_index() -> None:
    job = {"job_id": "a", "share": "QS1", "submitted_at": 0, "duration": 60,
           "instance_type": "ml.g5.xlarge"}
    good = parse_json(
        '{"jobs": [{"job_id": "a", "share": "QS1", "submitted_at": 0, "duration": 60, '
        '"instance_type": "ml.g5.xlarge", "checkpoint_interval": null}]}'
    )
    assert good.jobs[0].checkpoint_interval is None

    def json_error(text: str) -> WorkloadError:
        with pytest.raises(WorkloadError) as caught:
            parse_json(text, source="w.json")
        return caught.value

    text_number = json_error(json.dumps({"jobs": [job, {**job, "job_id": "b", "duration": "60"}]}))
    assert (text_number.where, text_number.field, text_number.value) == (
        "record jobs[1]", "duration", "60")
    assert "not a string" in text_number.allowed
    float_count = json_error(json.dumps({"jobs": [{**job, "instance_count": 2.0}]}))
    assert (float_count.field, float_count.value) == ("instance_count", 2.0)
    boolean = json_error(json.dumps({"jobs": [{**job, "priority": True}]}))
    assert boolean.field == "priority"
    unknown = json_error(json.dumps({"jobs": [{**job, "gpu": 1}]}))
    assert (unknown.where, unknown.field) == ("record jobs[0]", "gpu")
    change = json_error(json.dumps(
        {"jobs": [job], "priority_changes": [{"at": 5, "job_id": "a", "priority": -1}]}
    ))
    assert (change.where, change.field, change.value) == (
        "record priority_changes[0]", "priority", -1)
    broken = json_error('{"jobs": [')
    assert broken.where.startswith("line 1 column")
    assert json_error('[]').field == "document"
    assert json_error('{"jobs": {}}').field == "jobs"
    assert json_error('{"job": []}').field == "job"


def test_files_are_read_by_suffix_and_missing_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError) as suffix:
        read_workload(tmp_path / "jobs.txt")
    assert suffix.value.field == "suffix"
    with pytest.raises(WorkloadError) as missing:
        read_workload(tmp_path / "nope.csv")
    assert missing.value.field == "path"
    bad = tmp_path / "bad.csv"
    bad.write_bytes(HEADER.encode() + b"\n\xff,QS1,0,60,ml.g5.xlarge\n")
    with pytest.raises(WorkloadError) as encoding:
        read_workload(bad)
    assert encoding.value.field == "encoding"


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_written_workloads_read_back_identically(tmp_path: Path, suffix: str) -> None:
    workload = Workload(
        jobs=[
            SimJob(job_id="a", share="QS1", submitted_at=0.25, duration=3600.5,
                   instance_type="ml.g5.xlarge", instance_count=2, priority=7,
                   checkpoint_interval=600.0, preemption_retries=3),
            SimJob(job_id="b,with comma", share="QS2", submitted_at=10.0, duration=1.0,
                   instance_type="ml.g5.12xlarge"),
        ],
        priority_changes=[PriorityChange(at=5.0, job_id="a", priority=9)],
    )
    path = tmp_path / f"w{suffix}"
    write_workload(path, workload)
    assert read_workload(path) == workload


def test_the_example_files_hold_the_walkthrough_in_both_formats() -> None:
    from_csv = read_workload(EXAMPLES / "walkthrough.csv")
    assert from_csv == read_workload(EXAMPLES / "walkthrough.json")
    priorities = {job.job_id: job.priority for job in from_csv.jobs if job.share == "research"}
    assert priorities == {"research-high": 3, "research-med": 2, "research-low": 1}
    assert list(from_csv.priority_changes) == [
        PriorityChange(at=900.0, job_id="research-low", priority=4)
    ]


# -- every problem at once, declarations, timestamps -------------------------------------------

SEVERAL_MISTAKES = """job_id,share,submitted_at,duration,instance_type,priority
ok-1,research,0,3600,ml.g5.xlarge,1
bad-duration,research,10,-1,ml.g5.xlarge,1
bad-priority,product,20,60,ml.g5.xlarge,10000
ghost,marketing,30,60,ml.g5.xlarge,1
wrong-type,product,40,60,ml.p4d.24xlarge,1
ok-1,product,50,60,ml.g5.xlarge,1
"""


def declared() -> dict[str, object]:
    from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy

    return {
        "shares": [
            QuotaShareSpec(name=name, capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)],
                           strategy=SharingStrategy.LEND)
            for name in ("research", "product")
        ],
        "capacity_limits": [CapacityLimit("ml.g5.xlarge", 2)],
    }


def test_every_mistake_is_reported_with_its_line() -> None:
    from quota_constructs.simulation.workloads import WorkloadProblems

    with pytest.raises(WorkloadProblems) as caught:
        parse_csv(io.StringIO(SEVERAL_MISTAKES), source="jobs.csv", **declared())  # type: ignore[arg-type]
    problems = caught.value.problems
    assert caught.value.total == 5
    assert [(p.where, p.field) for p in problems] == [
        ("line 3", "duration"), ("line 4", "priority"), ("line 5", "share"),
        ("line 6", "instance_type"), ("line 7", "job_id"),
    ]
    text = str(caught.value)
    assert text.splitlines()[0] == "workload 'jobs.csv': 5 problems"
    assert "line 5: share got 'marketing'; allowed: a share of the declaration: product, " \
        "research" in text
    assert "line 6: instance_type got 'ml.p4d.24xlarge'; allowed: an instance type of share " \
        "'product': ml.g5.xlarge" in text
    assert "already on line 2" in text


def test_without_a_declaration_shares_and_types_are_not_judged() -> None:
    text = "job_id,share,submitted_at,duration,instance_type\nx,marketing,0,1,ml.p4d.24xlarge\n"
    assert parse_csv(io.StringIO(text)).jobs[0].share == "marketing"


def test_the_report_is_bounded() -> None:
    from quota_constructs.simulation.workloads import MAX_REPORTED_PROBLEMS, WorkloadProblems

    rows = "".join(f"j{i},research,{i},-1,ml.g5.xlarge\n" for i in range(120))
    with pytest.raises(WorkloadProblems) as caught:
        parse_csv(io.StringIO("job_id,share,submitted_at,duration,instance_type\n" + rows))
    assert caught.value.total == 120
    assert len(caught.value.problems) == MAX_REPORTED_PROBLEMS
    assert str(caught.value).splitlines()[-1] == f"  ... and {120 - MAX_REPORTED_PROBLEMS} more"


def test_json_problems_name_their_records() -> None:
    from quota_constructs.simulation.workloads import WorkloadProblems

    document = {"jobs": [
        {"job_id": "a", "share": "research", "submitted_at": 0, "duration": 1,
         "instance_type": "ml.g5.xlarge"},
        {"job_id": "b", "share": "research", "submitted_at": "soon", "duration": 1,
         "instance_type": "ml.g5.xlarge"},
        {"job_id": "c", "share": "research", "submitted_at": 1, "duration": 1},
    ], "priority_changes": [{"at": 5, "job_id": "nobody", "priority": 1}]}
    with pytest.raises(WorkloadProblems) as caught:
        parse_json(json.dumps(document), source="jobs.json")
    assert [(p.where, p.field) for p in caught.value.problems] == [
        ("record jobs[1]", "submitted_at"), ("record jobs[2]", "instance_type"),
        ("record priority_changes[0]", "job_id"),
    ]


def test_iso_timestamps_count_from_the_earliest_submission() -> None:
    text = (
        "kind,job_id,share,submitted_at,duration,instance_type,priority,at\n"
        ",late,research,2026-03-02T10:00:00Z,60,ml.g5.xlarge,1,\n"
        ",early,research,2026-03-02T09:15:00Z,60,ml.g5.xlarge,1,\n"
        "priority_change,late,,,,,5,2026-03-02T10:30:00+00:00\n"
    )
    workload = parse_csv(io.StringIO(text))
    assert [(job.job_id, job.submitted_at) for job in workload.jobs] == [
        ("early", 0.0), ("late", 2700.0)]
    assert workload.priority_changes[0].at == 4500.0
    document = {"jobs": [{"job_id": "a", "share": "research", "duration": 1,
                          "submitted_at": "2026-03-02T09:00:00", "instance_type": "g"},
                         {"job_id": "b", "share": "research", "duration": 1,
                          "submitted_at": "2026-03-02T09:00:30", "instance_type": "g"}]}
    assert [job.submitted_at for job in parse_json(json.dumps(document)).jobs] == [0.0, 30.0]


def test_times_in_one_form_per_file() -> None:
    text = ("job_id,share,submitted_at,duration,instance_type\n"
            "a,research,2026-03-02T09:15:00Z,60,ml.g5.xlarge\n"
            "b,research,30,60,ml.g5.xlarge\n")
    error = error_of(text)
    assert (error.where, error.field) == ("line 3", "submitted_at")
    assert "timestamps (as on line 2)" in str(error)
    with pytest.raises(WorkloadError, match="all with a time zone"):
        parse_csv(io.StringIO(
            "job_id,share,submitted_at,duration,instance_type\n"
            "a,research,2026-03-02T09:15:00Z,60,g\nb,research,2026-03-02T09:16:00,60,g\n"))


def test_a_duplicate_id_is_caught_even_when_its_first_row_was_invalid() -> None:
    from quota_constructs.simulation.workloads import WorkloadProblems

    with pytest.raises(WorkloadProblems) as caught:
        csv_of(f"{HEADER}\na,QS1,0,-5,ml.g5.xlarge\nb,QS1,0,60,ml.g5.xlarge\n"
               "a,QS1,10,60,ml.g5.xlarge\n")
    found = [(p.where, p.field, p.value) for p in caught.value.problems]
    assert found == [("line 2", "duration", "-5"), ("line 4", "job_id", "a")]
    assert "already on line 2" in caught.value.problems[1].allowed


def test_a_duplicate_id_is_caught_when_the_first_row_names_an_undeclared_share() -> None:
    from quota_constructs.simulation.workloads import WorkloadProblems

    # Both rows are well formed (the fast path reads them); the declaration refuses the first.
    text = f"{HEADER}\na,marketing,0,60,ml.g5.xlarge\na,product,10,60,ml.g5.xlarge\n"
    with pytest.raises(WorkloadProblems) as caught:
        parse_csv(io.StringIO(text), source="jobs.csv", **declared())  # type: ignore[arg-type]
    assert [(p.where, p.field) for p in caught.value.problems] == [
        ("line 2", "share"), ("line 3", "job_id")]


def test_times_written_with_z_are_echoed_with_z() -> None:
    head = f"kind,{HEADER},priority,at\n"
    mixed = error_of(f"{HEADER}\na,QS1,2026-03-02T09:15:00Z,60,ml.g5.xlarge\n"
                     "b,QS1,2026-03-02T09:20:00,60,ml.g5.xlarge\n")
    assert (mixed.where, mixed.value) == ("line 3", "2026-03-02T09:20:00")
    early = error_of(head + ",a,QS1,2026-03-02T09:15:00Z,60,ml.g5.xlarge,1,\n"
                     "priority_change,a,,,,,4,2026-03-02T09:00:00Z\n")
    assert early.value == "2026-03-02T09:00:00Z"
    assert "(2026-03-02T09:15:00Z)" in early.allowed
    assert "+00:00" not in str(early)
    # Written with an offset, echoed with that offset.
    offset = error_of(head + ",a,QS1,2026-03-02T09:15:00+01:00,60,ml.g5.xlarge,1,\n"
                      "priority_change,a,,,,,4,2026-03-02T09:00:00+01:00\n")
    assert offset.value == "2026-03-02T09:00:00+01:00"
