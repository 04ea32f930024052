"""The job-events handler against the fake Batch and the fake SNS, fed AWS's documented events."""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs.runtime import job_events_handler
from quota_constructs.runtime.batch_gateway import BatchConnection, BatchRequestError
from quota_constructs.wire.monitoring_contract import (
    BLOCKED_JOBS,
    JOBS_OVER_BUDGET,
    JOBS_TERMINATED_OVER_BUDGET,
    OWNER_TOPICS_ENV,
    PREEMPTIONS,
)
from tests.monitoring.sample_events import QUEUE_BLOCKED, STATE_CHANGE, on_queue

from .conftest import G5, Monitor, context
from .emf_lines import DataPoint, data_points, values
from .events import preemption_completed, preemption_started, queue_blocked, state_change
from .fake_service_jobs import FakeServiceJob


def deliver(event: dict[str, Any], *, connection: BatchConnection) -> dict[str, Any]:
    return job_events_handler.handler(event, context(), connection)


def preempt_and_deliver(monitor: Monitor, job: FakeServiceJob, reason: str | None = None,
                        started_reason: str | None = None) -> list[dict[str, Any]]:
    """What AWS does: Started while the job still runs, then Completed once it was stopped."""
    outcomes = [deliver(preemption_started(job, **(
        {"reason": started_reason} if started_reason else {})), connection=monitor.connection)]
    if reason is None:
        monitor.batch.preempt(job.job_id)
    else:
        monitor.batch.preempt(job.job_id, reason)
    outcomes.append(deliver(preemption_completed(job), connection=monitor.connection))
    return outcomes


def running_job(monitor: Monitor, share: str = "QS1", **kwargs: Any) -> FakeServiceJob:
    monitor.create_shares()
    return monitor.batch.add_service_job(monitor.training, share, "RUNNING", {G5: 1},
                                         name=f"{share.lower()}-finetune", **kwargs)


def emitted(capsys: pytest.CaptureFixture[str]) -> list[DataPoint]:
    return data_points(capsys.readouterr().out)


def test_a_cross_share_preemption_reaches_its_owner_once_in_plain_words(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    job = running_job(monitor)

    started, completed = preempt_and_deliver(monitor, job)

    assert started["outcome"] == "logged"
    assert completed["outcome"] == "reported"
    [message] = monitor.sns.published
    assert message.topic_arn == monitor.topics["vision-team"]
    assert message.subject == "Job qs1-finetune preempted in quota share QS1 (preemption 1)"
    body = message.message
    assert f"Job: qs1-finetune ({job.arn})" in body
    assert "Quota share: QS1 on job queue training" in body
    assert "Kind of preemption: cross-share" in body
    assert "Attempt: preemption 1 of a budget of 2" in body
    assert "Time lost: 2 min 21 s of run time" in body
    assert "checkpoint" in body  # QS1 declares its workloads recoverable
    assert message.attributes == {"QuotaShare": "QS1", "JobQueue": "training",
                                  "Notice": "PREEMPTION", "PreemptionKind": "CROSS_SHARE"}
    points = emitted(capsys)
    assert values(points, PREEMPTIONS, QuotaShare="QS1", PreemptionKind="CROSS_SHARE") == [1]
    [counted] = [p for p in points if p.name == PREEMPTIONS]
    assert counted.sets == (("JobQueue", "QuotaShare"),
                            ("JobQueue", "QuotaShare", "PreemptionKind"))
    assert values(points, JOBS_OVER_BUDGET, QuotaShare="QS1") == [0]
    assert monitor.batch.count("TerminateServiceJob") == 0


def test_duplicate_deliveries_are_harmless(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    job = running_job(monitor)
    preempt_and_deliver(monitor, job)
    capsys.readouterr()

    connection = monitor.connection
    again = [deliver(preemption_completed(job), connection=connection),
             deliver(preemption_started(job), connection=connection),
             deliver(preemption_completed(job, event_id="another-delivery-id"),
                     connection=connection)]

    assert [o["outcome"] for o in again] == ["duplicate", "logged", "duplicate"]
    assert len(monitor.sns.published) == 1
    assert values(emitted(capsys), PREEMPTIONS) == []


def test_each_preemption_is_reported_with_its_attempt_number(monitor: Monitor) -> None:
    job = running_job(monitor, share="QS3")  # research-team, no budget
    for _ in range(3):
        preempt_and_deliver(monitor, job)
        monitor.batch.service_job(job.job_id).status = "RUNNING"

    messages = monitor.sns.to(monitor.topics["research-team"])
    assert [m.subject.rsplit(" (", 1)[1] for m in messages] == [
        "preemption 1)", "preemption 2)", "preemption 3)"]
    assert "no budget" in messages[0].message
    assert monitor.sns.published == messages  # nobody else was told


def test_owners_hear_only_about_their_own_shares(monitor: Monitor) -> None:
    qs1 = running_job(monitor, "QS1")
    qs3 = monitor.batch.add_service_job(monitor.training, "QS3", "RUNNING", {G5: 1})
    preempt_and_deliver(monitor, qs1)
    preempt_and_deliver(monitor, qs3)

    assert [qs1.arn in m.message for m in monitor.sns.to(monitor.topics["vision-team"])] == [
        True]
    assert [qs3.arn in m.message for m in monitor.sns.to(monitor.topics["research-team"])] == [
        True]
    assert monitor.sns.to(monitor.topics["nlp-team"]) == []


def test_another_queues_job_is_ignored(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares()
    monitor.create_shares(monitor.shares, queue=monitor.research)
    job = monitor.batch.add_service_job(monitor.research, "QS2", "RUNNING", {G5: 1})

    outcomes = preempt_and_deliver(monitor, job)
    blocked = deliver(queue_blocked(job, "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"),
        connection=monitor.connection)
    failed = deliver(state_change(job, "FAILED", "preempted too often"),
        connection=monitor.connection)

    assert outcomes[1]["outcome"] == "ignored: another job queue"
    assert blocked["outcome"] == "ignored: another job queue"
    assert failed["outcome"] == "ignored: another job queue"
    assert monitor.sns.published == []
    assert values(emitted(capsys), PREEMPTIONS) == []
    assert monitor.batch.count("TerminateServiceJob") == 0
    # The blocked and state-change events name their queue: no lookup was needed to ignore them.
    assert monitor.batch.count("DescribeServiceJob") == 1


@pytest.mark.parametrize(
    ("reason", "kind", "words"),
    [
        ("In-share preemption triggered by a higher priority job", "IN_SHARE", "in-share"),
        ("Preempted by job with higher scheduling priority", "IN_SHARE", "in-share"),
        ("Preempted", "UNKNOWN", "not stated by AWS Batch"),
    ],
)
def test_the_kind_comes_from_the_reason_never_a_guess(
    monitor: Monitor, capsys: pytest.CaptureFixture[str], reason: str, kind: str, words: str
) -> None:
    job = running_job(monitor)
    preempt_and_deliver(monitor, job, reason=reason)

    [message] = monitor.sns.published
    assert f"Kind of preemption: {words}" in message.message
    assert values(emitted(capsys), PREEMPTIONS, PreemptionKind=kind) == [1]


def test_over_budget_the_owner_is_told_and_nothing_terminated_without_the_opt_in(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    job = running_job(monitor, "QS2")  # nlp-team, budget 0

    _, completed = preempt_and_deliver(monitor, job)

    assert completed["outcome"] == "reported" and completed["over_budget"] is True
    assert monitor.batch.count("TerminateServiceJob") == 0
    assert monitor.batch.service_job(job.job_id).status == "RUNNABLE"
    [message] = monitor.sns.to(monitor.topics["nlp-team"])
    assert message.subject == "Job qs2-finetune over the interruption budget of quota share QS2"
    assert "It was not terminated" in message.message
    assert "preemption 1 of a budget of 0" in message.message
    points = emitted(capsys)
    assert values(points, JOBS_OVER_BUDGET, QuotaShare="QS2") == [1]
    assert values(points, JOBS_TERMINATED_OVER_BUDGET, QuotaShare="QS2") == [0]


def test_over_budget_with_the_opt_in_the_job_is_terminated_once(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.enforce()
    job = running_job(monitor, "QS2")

    _, completed = preempt_and_deliver(monitor, job)
    duplicate = deliver(preemption_completed(job), connection=monitor.connection)
    failed = deliver(state_change(job, "FAILED", job.status_reason,
                                  event_id="d0e1f2a3-0000-4000-8000-000000000001"),
                                      connection=monitor.connection)

    assert completed["outcome"] == "terminated"
    assert duplicate["outcome"] == "duplicate"
    assert failed["outcome"].startswith("ignored: terminated by this monitor")
    assert [params["jobId"] for name, params in monitor.batch.calls
            if name == "TerminateServiceJob"] == [job.job_id]
    [terminate] = [p for n, p in monitor.batch.calls if n == "TerminateServiceJob"]
    assert "interruption budget" in terminate["reason"] and "QS2" in terminate["reason"]
    assert monitor.batch.service_job(job.job_id).status == "FAILED"
    [message] = monitor.sns.published
    assert message.subject.startswith("Job qs2-finetune terminated")
    assert "so it was terminated" in message.message
    points = emitted(capsys)
    assert values(points, JOBS_TERMINATED_OVER_BUDGET, QuotaShare="QS2") == [1]


def test_within_budget_the_opt_in_terminates_nothing(monitor: Monitor) -> None:
    monitor.enforce()
    job = running_job(monitor, "QS1")  # budget 2
    preempt_and_deliver(monitor, job)
    monitor.batch.service_job(job.job_id).status = "RUNNING"
    preempt_and_deliver(monitor, job)
    assert monitor.batch.count("TerminateServiceJob") == 0
    monitor.batch.service_job(job.job_id).status = "RUNNING"
    preempt_and_deliver(monitor, job)  # the third: over a budget of two
    assert monitor.batch.count("TerminateServiceJob") == 1
    assert len(monitor.sns.published) == 3


def test_a_failed_notification_is_retried_without_terminating_twice(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.enforce()
    job = running_job(monitor, "QS2")
    monitor.batch.preempt(job.job_id)
    monitor.sns.fail_next(50, code="InternalError", status=500)

    with pytest.raises(Exception) as caught:
        deliver(preemption_completed(job), connection=monitor.connection)
    assert "InternalError" in str(caught.value)
    assert monitor.sns.published == []
    assert values(emitted(capsys), PREEMPTIONS) == []  # counted when the event is done

    monitor.sns.faults.clear()
    retried = deliver(preemption_completed(job),
        connection=monitor.connection)  # Lambda's asynchronous retry

    assert retried["outcome"] == "reported"
    assert monitor.batch.count("TerminateServiceJob") == 1
    assert len(monitor.sns.published) == 1
    assert "already ended" in monitor.sns.published[0].message
    assert values(emitted(capsys), PREEMPTIONS) == [1]


def test_throttled_calls_are_retried(monitor: Monitor) -> None:
    job = running_job(monitor)
    monitor.batch.fail_next("DescribeServiceJob", 2)
    monitor.sns.fail_next(2)

    preempt_and_deliver(monitor, job)

    assert len(monitor.sns.published) == 1
    assert len(monitor.sleeps) == 4


def test_batch_failing_raises_for_lambdas_retries_and_dead_letter_queue(
    monitor: Monitor
) -> None:
    job = running_job(monitor)
    monitor.batch.preempt(job.job_id)
    monitor.batch.fail_next("DescribeServiceJob", 50, code="ServerException", status=500)
    with pytest.raises(BatchRequestError):
        deliver(preemption_completed(job), connection=monitor.connection)
    assert monitor.sns.published == []


def test_an_unknown_job_is_ignored(monitor: Monitor) -> None:
    job = running_job(monitor)
    monitor.batch.preempt(job.job_id)
    event = preemption_completed(job)
    monitor.batch.jobs.clear()
    assert deliver(event,
        connection=monitor.connection)["outcome"] == "ignored: AWS Batch does not know the job"


def test_a_share_without_a_topic_is_counted_but_nobody_told(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.monkeypatch.setenv(OWNER_TOPICS_ENV, "{}")
    job = running_job(monitor)
    preempt_and_deliver(monitor, job)
    assert monitor.sns.published == []
    assert values(emitted(capsys), PREEMPTIONS, QuotaShare="QS1") == [1]


@pytest.mark.parametrize(
    "reason",
    ["MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED",
     "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"],
)
def test_a_job_blocking_the_queue_is_reported_to_its_owner_once(
    monitor: Monitor, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares()
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", {G5: 4},
                                        name="too-big")
    capsys.readouterr()

    # AWS may report the blocked queue again (another event id, a later time): one notice.
    outcomes = [deliver(queue_blocked(job, reason), connection=monitor.connection),
                deliver(queue_blocked(job, reason, event_id="other", time="2022-01-12T00:00:00Z"),
                    connection=monitor.connection)]

    assert [o["outcome"] for o in outcomes] == ["reported", "duplicate"]
    [message] = monitor.sns.to(monitor.topics["nlp-team"])
    assert message.subject == "Job too-big cannot start in quota share QS2"
    assert reason in message.message
    points = emitted(capsys)
    assert values(points, BLOCKED_JOBS, QuotaShare="QS2") == [1]
    assert values(points, BLOCKED_JOBS, QuotaShare="QS1") == []


def test_two_blocking_jobs_are_two_notices_and_counted_per_share(
    monitor: Monitor, capsys: pytest.CaptureFixture[str]
) -> None:
    monitor.create_shares()
    first = monitor.batch.add_service_job(monitor.training, "QS1", "RUNNABLE", {G5: 9})
    second = monitor.batch.add_service_job(monitor.training, "QS1", "RUNNABLE", {G5: 9})
    capsys.readouterr()
    for job in (first, second):
        deliver(queue_blocked(job, "MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX_RESOURCE"),
            connection=monitor.connection)
    assert len(monitor.sns.to(monitor.topics["vision-team"])) == 2
    assert values(emitted(capsys), BLOCKED_JOBS, QuotaShare="QS1") == [1, 1]


def test_a_runnable_state_change_notifies_nobody(monitor: Monitor) -> None:
    # The rule no longer delivers it; were it delivered, it must not double the blocked notice.
    monitor.create_shares()
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", {G5: 4})
    outcome = deliver(state_change(job, "RUNNABLE",
                                   "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED"),
                                       connection=monitor.connection)
    assert outcome["outcome"] == "ignored: nothing for an owner"
    assert monitor.sns.published == []


def test_a_job_failed_after_its_preemption_retries_is_reported(monitor: Monitor) -> None:
    job = running_job(monitor, "QS3", retries_before_termination=0)
    monitor.batch.preempt(job.job_id)
    assert monitor.batch.service_job(job.job_id).status == "FAILED"

    outcome = deliver(state_change(job, "FAILED", "Job failed: preemption retries exhausted"),
        connection=monitor.connection)

    assert outcome["outcome"] == "reported"
    [message] = monitor.sns.to(monitor.topics["research-team"])
    assert message.subject == "Job qs3-finetune failed after 1 preemptions in quota share QS3"
    assert "preemption retries" in message.message


@pytest.mark.parametrize(("status", "reason"), [
    ("RUNNING", "Received status from SageMaker: Training job started"),
    ("SUCCEEDED", "Received status from SageMaker: Training job completed"),
    ("FAILED", "Received status from SageMaker: AlgorithmError"),
    ("RUNNABLE", ""),
])
def test_other_state_changes_are_not_for_owners(
    monitor: Monitor, status: str, reason: str
) -> None:
    job = running_job(monitor)
    outcome = deliver(state_change(job, status, reason), connection=monitor.connection)
    assert outcome["outcome"].startswith("ignored")
    assert monitor.sns.published == []


def test_non_batch_events_are_ignored(monitor: Monitor) -> None:
    outcome = deliver({"detail-type": "Scheduled Event", "source": "aws.events", "detail": {}},
        connection=monitor.connection)
    assert outcome["outcome"].startswith("ignored")
    assert monitor.batch.calls == []


# -- AWS's own sample events: detail.jobId differs from the id in detail.jobArn ------------------


def documented(sample: dict[str, Any], monitor: Monitor, **detail: Any) -> dict[str, Any]:
    """An AWS Batch user guide sample, only its queue made the monitored one (and ``detail``
    fields changed where a test says)."""
    event = on_queue(sample, monitor.training)
    event["detail"].update(detail)
    return event


def described_ids(monitor: Monitor) -> list[str]:
    return [params["jobId"] for name, params in monitor.batch.calls
            if name == "DescribeServiceJob"]


def sample_ids(sample: dict[str, Any]) -> tuple[str, str]:
    """The sample's ``detail.jobId`` and the id ending its ``detail.jobArn`` (they differ)."""
    detail = sample["detail"]
    from_arn = detail["jobArn"].rsplit("/", 1)[-1]
    assert detail["jobId"] != from_arn  # what the samples really say
    return detail["jobId"], from_arn


def blocked_job_with_id(monitor: Monitor, job_id: str) -> FakeServiceJob:
    monitor.create_shares()
    job = monitor.batch.add_service_job(monitor.training, "QS2", "RUNNABLE", {G5: 4},
                                        name="event-test")
    job.job_id = job_id
    return job


@pytest.mark.parametrize("found_by", ["detail.jobId", "detail.jobArn"])
def test_the_documented_queue_blocked_sample_finds_its_job_by_either_id(
    monitor: Monitor, found_by: str, capsys: pytest.CaptureFixture[str]
) -> None:
    given_id, arn_id = sample_ids(QUEUE_BLOCKED)
    job = blocked_job_with_id(monitor, given_id if found_by == "detail.jobId" else arn_id)
    capsys.readouterr()

    outcome = deliver(documented(QUEUE_BLOCKED, monitor), connection=monitor.connection)

    assert outcome["outcome"] == "reported"
    # Looked up by job id, never by ARN: the event's jobId first, then the ARN's.
    expected = [given_id] if found_by == "detail.jobId" else [given_id, arn_id]
    assert described_ids(monitor) == expected
    [message] = monitor.sns.to(monitor.topics["nlp-team"])
    assert job.arn in message.message  # the job as AWS Batch describes it
    assert values(emitted(capsys), BLOCKED_JOBS, QuotaShare="QS2") == [1]
    # The same job reported again under its other id is the same job: one notice.
    again = documented(QUEUE_BLOCKED, monitor, jobId=job.job_id, jobArn=job.arn)
    again["id"] = "another-delivery"
    assert deliver(again, connection=monitor.connection)["outcome"] == "duplicate"


@pytest.mark.parametrize("found_by", ["detail.jobId", "detail.jobArn"])
def test_the_documented_state_change_sample_finds_its_job_by_either_id(
    monitor: Monitor, found_by: str
) -> None:
    given_id, arn_id = sample_ids(STATE_CHANGE)
    monitor.create_shares()
    job = monitor.batch.add_service_job(monitor.training, "QS3", "RUNNING", {G5: 1},
                                        name="event-test", retries_before_termination=0)
    job.job_id = given_id if found_by == "detail.jobId" else arn_id
    monitor.batch.preempt(job.job_id)

    outcome = deliver(documented(STATE_CHANGE, monitor, status="FAILED",
                                 statusReason="Job failed: preemption retries exhausted"),
                                     connection=monitor.connection)

    assert outcome["outcome"] == "reported"
    assert all(not job_id.startswith("arn:") for job_id in described_ids(monitor))
    [message] = monitor.sns.to(monitor.topics["research-team"])
    assert job.arn in message.message


def test_a_sample_whose_ids_aws_batch_knows_neither_of_is_ignored(monitor: Monitor) -> None:
    monitor.create_shares()
    outcome = deliver(documented(QUEUE_BLOCKED, monitor), connection=monitor.connection)
    assert outcome["outcome"] == "ignored: AWS Batch does not know the job"
    assert outcome["job_ids"] == list(sample_ids(QUEUE_BLOCKED))
    assert monitor.sns.published == []
