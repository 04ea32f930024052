"""Fixtures: the fake Batch and the fake SNS on loopback, and a monitor configured through the
environment exactly as the constructs configure the deployed functions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import pytest

from quota_constructs.model import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.runtime.batch_gateway import BatchConnection
from quota_constructs.runtime.job_events_handler import MEMORY
from quota_constructs.runtime.monitor_settings import load_declaration
from quota_constructs.runtime.retry import ClientTimeouts, RetryPolicy
from quota_constructs.wire.monitoring_contract import (
    ENFORCE_BUDGET_ENV,
    notification_variables,
    queue_variables,
)
from quota_constructs.wire.monitoring_declaration import monitoring_declaration_json
from quota_constructs.wire.share_codec import api_configuration

from .fake_service_jobs import MonitoringFakeBatch, MonitoringFakeBatchServer
from .fake_sns import FakeSns, FakeSnsServer

G5 = "ml.g5.xlarge"
NAMESPACE = "Test/QuotaShares"
DECLARATION_FILE = "quota_monitor_declaration.json"

VISION = ShareAgreement(owner="vision-team", purpose="nightly fine-tuning", recoverable=True,
                        interruption_budget=2)
NLP = ShareAgreement(owner="nlp-team", purpose="evaluation runs", interruption_budget=0)
RESEARCH = ShareAgreement(owner="research-team", purpose="experiments")


def reference_shares() -> list[QuotaShareSpec]:
    """The reference example, with owners: three shares of one ml.g5.xlarge each."""
    return [
        QuotaShareSpec(name="QS1", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200,
                       in_share_preemption=True, agreement=VISION),
        QuotaShareSpec(name="QS2", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND, agreement=NLP),
        QuotaShareSpec(name="QS3", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.RESERVE, agreement=RESEARCH),
    ]


def shares_with_a_wait_target() -> list[QuotaShareSpec]:
    """The reference shares, QS1 also promising that 95 % of its jobs start within 4 hours:
    QS1 declares a wait target and a budget (2), QS2 a budget (0) only, QS3 neither."""
    shares = reference_shares()
    assert shares[0].agreement is not None
    shares[0] = replace(shares[0], agreement=replace(
        shares[0].agreement, target_wait_p95=timedelta(hours=4)))
    return shares


@dataclass
class Monitor:
    """The fakes' state, the monitored queue, and the owners' topics."""

    batch: MonitoringFakeBatch
    sns: FakeSns
    training: str
    research: str
    topics: dict[str, str]
    shares: list[QuotaShareSpec]
    monkeypatch: pytest.MonkeyPatch
    directory: Path
    sleeps: list[float] = field(default_factory=list)
    connection: BatchConnection = field(default_factory=BatchConnection)
    """How the functions under test reach AWS: backoff recorded in ``sleeps``."""

    def create_shares(self, specs: list[QuotaShareSpec] | None = None,
                      queue: str | None = None) -> None:
        for spec in specs or self.shares:
            self.batch.handle("CreateQuotaShare", {
                "quotaShareName": spec.name, "jobQueue": queue or self.training, "tags": {},
                **api_configuration(spec),
            })
        for share in self.batch.shares.values():
            share.status = "VALID"

    def declare(self, specs: list[QuotaShareSpec]) -> None:
        self.shares = specs
        (self.directory / DECLARATION_FILE).write_text(monitoring_declaration_json(specs))
        load_declaration.cache_clear()

    def enforce(self, on: bool = True) -> None:
        self.monkeypatch.setenv(ENFORCE_BUDGET_ENV, "true" if on else "false")


def context(remaining_ms: int = 60_000) -> Any:
    return SimpleNamespace(get_remaining_time_in_millis=lambda: remaining_ms)


@pytest.fixture(scope="session")
def fake_batch_server() -> Iterator[MonitoringFakeBatchServer]:
    server = MonitoringFakeBatchServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fake_sns_server() -> Iterator[FakeSnsServer]:
    server = FakeSnsServer().start()
    yield server
    server.stop()


@pytest.fixture
def monitor(
    fake_batch_server: MonitoringFakeBatchServer,
    fake_sns_server: FakeSnsServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> Monitor:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "LAMBDA_TASK_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", fake_batch_server.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL_SNS", fake_sns_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", boto3.Session())
    sleeps: list[float] = []
    # Backoff is recorded, not slept.
    connection = BatchConnection(
        policy=RetryPolicy(sleep=sleeps.append, jitter=lambda: 1.0),
        # A read timeout no loaded machine reaches on loopback (a fake answering 30,000 jobs
        # takes seconds there); tests of slow answers set their own.
        timeouts=ClientTimeouts(2, 30),
    )
    MEMORY.use_directory(tmp_path / "job-events-memory")

    batch = fake_batch_server.reset()
    batch.page_size = 2
    sns = fake_sns_server.reset()
    training = batch.add_queue("training", {G5: 3})
    research = batch.add_queue("research", {G5: 3})
    topics = {owner: sns.add_topic(f"{owner}-quota") for owner in
              ("vision-team", "nlp-team", "research-team")}

    monkeypatch.setenv("LAMBDA_TASK_ROOT", str(tmp_path))
    # Written by the contract's own writers, as the constructs write them.
    for name, value in {
        **queue_variables(job_queue_arn=training, job_queue_name="training",
                          declaration_file=DECLARATION_FILE, namespace=NAMESPACE),
        **notification_variables(json.dumps(topics), enforce_budget=False),
    }.items():
        monkeypatch.setenv(name, value)
    state = Monitor(batch, sns, training, research, topics, [], monkeypatch, tmp_path, sleeps,
                    connection)
    state.declare(reference_shares())
    return state
