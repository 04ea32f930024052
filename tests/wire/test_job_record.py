"""A service job's attempts read from DescribeServiceJob (wire/job_record.py), case by case."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota_constructs.wire.job_record import (
    ENDINGS,
    FAILED,
    PREEMPTED,
    RUNNING,
    SUCCEEDED,
    AttemptRun,
    JobRecord,
    decode_run_column,
    decode_run_fields,
    decode_runs,
    encode_runs,
    job_record,
)

CROSS = "PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim borrowed capacity"


def attempt(start: int, stop: int | None, name: str | None = None,
            reason: str = "") -> dict[str, Any]:
    item: dict[str, Any] = {"startedAt": start}
    if stop is not None:
        item["stoppedAt"] = stop
    if name:
        item["serviceResourceId"] = {"name": "TrainingJobArn", "value": name}
    if reason:
        item["statusReason"] = reason
    return item


def described(status: str, attempts: list[dict[str, Any]] | None = None,
              preempted: list[dict[str, Any]] | None = None, count: int | None = None,
              **extra: Any) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "jobId": "j1", "jobName": "train", "quotaShareName": "vision", "status": status,
        "createdAt": 1000, "capacityUsage": [{"capacityUnit": "ml.g5.xlarge", "quantity": 2.0}],
        **extra,
    }
    if attempts is not None:
        detail["attempts"] = attempts
    if preempted is not None or count is not None:
        detail["preemptionSummary"] = {
            "preemptedAttemptCount": len(preempted or []) if count is None else count,
            "recentPreemptedAttempts": preempted or []}
    return detail


def ends(record: JobRecord) -> list[tuple[int, int | None, str]]:
    return [(run.started_ms, run.stopped_ms, run.ended) for run in record.runs]


def test_preempted_attempts_are_matched_by_training_job_and_the_last_ends_as_the_job() -> None:
    record = job_record(described(
        SUCCEEDED,
        attempts=[attempt(10, 20, "t1"), attempt(30, 40, "t2"), attempt(50, 90, "t3")],
        preempted=[attempt(30, 40, "t2", CROSS), attempt(10, 20, "t1", CROSS)],
    ))
    assert ends(record) == [(10, 20, PREEMPTED), (30, 40, PREEMPTED), (50, 90, SUCCEEDED)]
    assert (record.preempted_count, record.unseen_preemptions) == (2, 0)
    assert (record.instance_type, record.instance_count) == ("ml.g5.xlarge", 2)


def test_preempted_attempts_absent_from_attempts_are_taken_from_the_summary() -> None:
    record = job_record(described(
        RUNNING, attempts=[attempt(50, None, "t3")],
        preempted=[attempt(10, 20, "t1"), attempt(30, 40, "t2")],
    ))
    assert ends(record) == [(10, 20, PREEMPTED), (30, 40, PREEMPTED), (50, None, RUNNING)]


def test_beyond_the_recent_window_the_earliest_stopped_attempts_were_the_preempted_ones() -> None:
    # AWS counted 3 preemptions and shows the latest 1; attempts lists all four.
    record = job_record(described(
        SUCCEEDED,
        attempts=[attempt(10, 20), attempt(30, 40), attempt(50, 60), attempt(70, 99)],
        preempted=[attempt(50, 60)], count=3,
    ))
    assert [run.ended for run in record.runs] == [PREEMPTED, PREEMPTED, PREEMPTED, SUCCEEDED]
    assert record.unseen_preemptions == 0


def test_preemptions_whose_times_aws_no_longer_shows_are_counted_as_unseen() -> None:
    record = job_record(described(
        SUCCEEDED, attempts=[attempt(70, 99)], preempted=[attempt(50, 60)], count=4,
    ))
    assert ends(record) == [(50, 60, PREEMPTED), (70, 99, SUCCEEDED)]
    assert (record.preempted_count, record.unseen_preemptions) == (4, 3)


def test_a_job_failed_by_its_budget_ended_its_last_attempt_by_preemption() -> None:
    record = job_record(described(
        FAILED, attempts=[attempt(10, 20), attempt(30, 40)],
        preempted=[attempt(10, 20), attempt(30, 40)],
        preemptionConfiguration={"preemptionRetriesBeforeTermination": 1}, stoppedAt=40,
    ))
    assert [run.ended for run in record.runs] == [PREEMPTED, PREEMPTED]
    assert record.preemption_retries == 1


def test_an_attempt_retried_by_the_retry_strategy_ended_failed() -> None:
    record = job_record(described(SUCCEEDED, attempts=[attempt(10, 20), attempt(30, 40)]))
    assert [run.ended for run in record.runs] == [FAILED, SUCCEEDED]


def test_the_last_attempt_of_a_finished_job_takes_the_jobs_stop_when_it_has_none() -> None:
    record = job_record(described(FAILED, attempts=[attempt(10, None)], stoppedAt=25))
    assert ends(record) == [(10, 25, FAILED)]


def test_without_attempts_the_jobs_own_start_and_stop_are_its_one_attempt() -> None:
    assert ends(job_record(described(SUCCEEDED, startedAt=5, stoppedAt=9))) == [(5, 9, SUCCEEDED)]
    assert ends(job_record(described("STARTING", startedAt=5))) == [(5, None, RUNNING)]


def test_a_job_that_never_started_has_no_attempt() -> None:
    for status in ("SUBMITTED", "RUNNABLE", FAILED):
        record = job_record(described(status))
        assert record.runs == () and record.preempted_count == 0


def test_a_requeued_job_ran_no_attempt_now() -> None:
    record = job_record(described("RUNNABLE", attempts=[attempt(10, 20)], count=1))
    assert ends(record) == [(10, 20, PREEMPTED)]


def test_the_runs_text_round_trips_and_refuses_what_it_cannot_read() -> None:
    runs = (AttemptRun(1, 2, PREEMPTED), AttemptRun(3, None, RUNNING))
    assert encode_runs(runs) == "1/2/PREEMPTED;3//RUNNING"
    assert decode_runs(encode_runs(runs)) == runs
    assert decode_runs("") == ()
    for bad in ("1/2", "1/2/DONE", "x/2/FAILED", "5/2/FAILED", "1//FAILED", "1/2/RUNNING"):
        with pytest.raises(ValueError):
            decode_runs(bad)


def test_the_ledger_document_round_trips() -> None:
    record = job_record(described(SUCCEEDED, attempts=[attempt(10, 20), attempt(30, 40)],
                                  preempted=[attempt(10, 20)], count=2))
    assert JobRecord.of_json(record.as_json()) == record
    with pytest.raises(ValueError, match="instance_count"):
        JobRecord.of_json({**record.as_json(), "instance_count": "2"})


@given(st.lists(st.one_of(
    st.just(""),
    st.builds(lambda a, b, e: f"{a}/{b}/{e}", st.integers(-5, 50), st.one_of(
        st.just(""), st.integers(-5, 50).map(str), st.just("x")),
        st.sampled_from([*ENDINGS, "DONE"])),
    st.builds(lambda a, b: f"{a};{b}", st.just("1/2/PREEMPTED"), st.just("3//RUNNING")),
), max_size=8))
def test_a_column_decodes_as_each_of_its_texts_does(texts: list[str]) -> None:
    def one(text: str) -> object:
        try:
            return decode_run_fields(text)
        except ValueError:
            return ValueError
    expected = [one(text) for text in texts]
    if ValueError in expected:
        with pytest.raises(ValueError):
            decode_run_column(texts)
    else:
        assert decode_run_column(texts) == expected


def test_without_an_attempts_list_a_later_started_at_is_the_last_attempt() -> None:
    later = job_record(described(SUCCEEDED, attempts=[], preempted=[attempt(10, 20)],
                                 startedAt=30, stoppedAt=50))
    assert ends(later) == [(10, 20, PREEMPTED), (30, 50, SUCCEEDED)]
    # A startedAt that is the first start says nothing of the last attempt: left out.
    first = job_record(described(SUCCEEDED, attempts=[], preempted=[attempt(10, 20)],
                                 startedAt=10, stoppedAt=50))
    assert ends(first) == [(10, 20, PREEMPTED)]
