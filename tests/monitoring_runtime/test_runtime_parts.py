"""The monitoring runtime's pure parts: settings from the environment, preemption summaries,
the kind of a preemption, SNS subjects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quota_constructs.runtime.batch_gateway import create_batch_client
from quota_constructs.runtime.monitor_settings import (
    MonitorConfigurationError,
    MonitoredQueue,
    MonitorSettings,
    load_declaration,
)
from quota_constructs.runtime.notifier import ascii_subject, create_sns_client
from quota_constructs.runtime.preemption import Preemption, describe_duration, preemption_kind
from quota_constructs.wire.monitoring_contract import (
    CROSS_SHARE,
    DECLARATION_FILE_ENV,
    DEFAULT_METRIC_NAMESPACE,
    ENFORCE_BUDGET_ENV,
    IN_SHARE,
    JOB_QUEUE_ARN_ENV,
    JOB_QUEUE_NAME_ENV,
    OWNER_TOPICS_ENV,
    UNKNOWN_KIND,
    notification_variables,
    queue_variables,
)
from quota_constructs.wire.monitoring_declaration import monitoring_declaration_json

from .conftest import reference_shares

QUEUE = "arn:aws:batch:us-east-1:123456789012:job-queue/training"


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    (tmp_path / "declaration.json").write_text(monitoring_declaration_json(reference_shares()))
    load_declaration.cache_clear()
    return {JOB_QUEUE_ARN_ENV: QUEUE, DECLARATION_FILE_ENV: "declaration.json",
            "LAMBDA_TASK_ROOT": str(tmp_path), **extra}


def test_settings_come_from_the_environment_and_the_declaration(tmp_path: Path) -> None:
    settings = MonitorSettings.from_environment(environment(
        tmp_path, **{OWNER_TOPICS_ENV: json.dumps({"nlp-team": "arn:topic"}),
                     ENFORCE_BUDGET_ENV: "TRUE"}))
    assert settings.queue == MonitoredQueue(QUEUE, "training")
    assert [s.name for s in settings.shares] == ["QS1", "QS2", "QS3"]
    assert settings.namespace == DEFAULT_METRIC_NAMESPACE
    assert settings.enforce_budget is True
    assert settings.topic_of(settings.agreement_of("QS2")) == "arn:topic"
    assert settings.topic_of(settings.agreement_of("QS1")) is None
    assert settings.agreement_of("nope") is None


@pytest.mark.parametrize("enforce", [True, False])
def test_what_the_contract_writes_the_settings_read_back(tmp_path: Path, enforce: bool) -> None:
    written = {
        **queue_variables(job_queue_arn=QUEUE, job_queue_name="training",
                          declaration_file="declaration.json", namespace="Teams/Batch"),
        **notification_variables(json.dumps({"nlp-team": "arn:topic"}), enforce_budget=enforce),
    }
    settings = MonitorSettings.from_environment({**environment(tmp_path), **written})
    assert settings.queue == MonitoredQueue(QUEUE, "training")
    assert [s.name for s in settings.shares] == ["QS1", "QS2", "QS3"]
    assert settings.namespace == "Teams/Batch"
    assert settings.owner_topics == {"nlp-team": "arn:topic"}
    assert settings.enforce_budget is enforce


@pytest.mark.parametrize("value", ["", "false", "yes", "1"])
def test_only_true_enforces(tmp_path: Path, value: str) -> None:
    settings = MonitorSettings.from_environment(
        environment(tmp_path, **{ENFORCE_BUDGET_ENV: value}))
    assert settings.enforce_budget is False


def test_unreadable_owner_topics_lose_notifications_not_metrics(tmp_path: Path) -> None:
    settings = MonitorSettings.from_environment(
        environment(tmp_path, **{OWNER_TOPICS_ENV: "{not json"}))
    assert settings.owner_topics == {}


def test_a_missing_queue_or_declaration_is_a_clear_error(tmp_path: Path) -> None:
    env = environment(tmp_path)
    del env[JOB_QUEUE_ARN_ENV]
    with pytest.raises(MonitorConfigurationError, match=JOB_QUEUE_NAME_ENV):
        MonitorSettings.from_environment(env)
    with pytest.raises(MonitorConfigurationError, match="is not in"):
        MonitorSettings.from_environment(
            environment(tmp_path, **{DECLARATION_FILE_ENV: "elsewhere.json"}))
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(MonitorConfigurationError, match="cannot read"):
        MonitorSettings.from_environment(
            environment(tmp_path, **{DECLARATION_FILE_ENV: "broken.json"}))


@pytest.mark.parametrize(
    ("job_queue", "holds"),
    [(QUEUE, True), ("training", True), ("arn:aws:batch:us-east-1:123456789012:job-queue/other",
                                         False),
     ("arn:aws:batch:eu-west-1:123456789012:job-queue/training", False), ("", False),
     (None, False)],
)
def test_the_monitored_queue_by_arn_or_name(job_queue: object, holds: bool) -> None:
    assert MonitoredQueue.of(QUEUE, "").holds(job_queue) is holds


def test_a_queue_known_by_name_only() -> None:
    queue = MonitoredQueue.of("", "training")
    assert queue.reference == "training"
    assert queue.holds(QUEUE) and not queue.holds("research")


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("Cross-share preemption triggered to reclaim borrowed capacity", CROSS_SHARE),
        ("PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim borrowed capacity",
         CROSS_SHARE),
        ("In-share preemption by a higher priority job", IN_SHARE),
        ("preempted by a job with a higher schedulingPriority", IN_SHARE),
        ("Preempted", UNKNOWN_KIND),
        ("", UNKNOWN_KIND),
        (None, UNKNOWN_KIND),
        ("Job was sharing nothing", UNKNOWN_KIND),
    ],
)
def test_the_kind_of_a_preemption(reason: object, kind: str) -> None:
    assert preemption_kind(reason) == kind


def test_the_latest_attempt_of_a_summary_is_the_preemption() -> None:
    summary = {
        "preemptedAttemptCount": 2,
        "recentPreemptedAttempts": [
            {"startedAt": 5_000, "stoppedAt": 65_000, "statusReason": "In-share preemption"},
            {"startedAt": 1_000, "stoppedAt": 4_000, "statusReason": "Cross-share preemption",
             "serviceResourceId": {"name": "TrainingJobArn", "value": "arn:tj"}},
        ],
    }
    preemption = Preemption.from_summary(summary)
    assert preemption is not None
    assert (preemption.attempt_count, preemption.kind, preemption.lost_seconds) == (
        2, IN_SHARE, 60.0)
    assert preemption.training_job is None


def test_a_summary_without_a_count_or_times() -> None:
    preemption = Preemption.from_summary({"recentPreemptedAttempts": [{"statusReason": "x"}]})
    assert preemption is not None
    assert (preemption.attempt_count, preemption.kind, preemption.lost_seconds) == (
        1, UNKNOWN_KIND, None)
    assert Preemption.from_summary({}) is None
    assert Preemption.from_summary({"preemptedAttemptCount": 0}) is None


@pytest.mark.parametrize(("seconds", "text"), [(45.4, "45 s"), (200, "3 min 20 s"),
                                               (7500, "2 h 5 min")])
def test_durations_read_like_a_person_writes_them(seconds: float, text: str) -> None:
    assert describe_duration(seconds) == text


def test_subjects_are_what_sns_accepts() -> None:
    assert ascii_subject("Job été\npreempted") == "Job ?t? preempted"
    long = ascii_subject("x" * 300)
    assert len(long) == 99 and long.endswith("...")
    assert ascii_subject("   ") == "Quota share notice"


def test_the_sns_and_batch_clients_read_models_through_the_one_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The session whose data path leads with the models the asset carries; boto3's default
    # session would not look there.
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    sns, batch = create_sns_client(), create_batch_client()
    assert sns._loader is batch._loader
