"""Fixtures: the fake Batch endpoint on loopback, and the runtime pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from quota_constructs.runtime import batch_gateway
from quota_constructs.runtime.retry import RetryPolicy

from .fake_batch import FakeBatch, FakeBatchServer

G5 = "ml.g5.xlarge"
G5_2X = "ml.g5.2xlarge"
P4D = "ml.p4d.24xlarge"


@dataclass
class Batch:
    """The fake's state plus what a test needs to arrange and inspect it."""

    state: FakeBatch
    training: str
    research: str
    sleeps: list[float] = field(default_factory=list)


@pytest.fixture(scope="session")
def fake_batch_server() -> Iterator[FakeBatchServer]:
    server = FakeBatchServer().start()
    yield server
    server.stop()


@pytest.fixture
def batch(
    fake_batch_server: FakeBatchServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Batch:
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", fake_batch_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    state = fake_batch_server.reset()
    sleeps: list[float] = []
    # Backoff is recorded, not slept: the suite stays fast and tests can assert on it.
    monkeypatch.setattr(
        batch_gateway, "RETRY_POLICY", RetryPolicy(sleep=sleeps.append, jitter=lambda: 1.0)
    )
    # Long enough that a loaded machine never turns a normal answer into a timeout; tests of
    # slow answers set a shorter one, with an answer far slower still.
    monkeypatch.setattr(batch_gateway, "CLIENT_TIMEOUTS", batch_gateway.ClientTimeouts(2, 10))
    training = state.add_queue("training", {G5: 16, G5_2X: 8})
    research = state.add_queue("research", {G5: 8, G5_2X: 4})
    return Batch(state, training, research, sleeps)
