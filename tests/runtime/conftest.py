"""Fixtures: the fake Batch endpoint on loopback, and the runtime pointed at it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from quota_constructs.runtime.batch_gateway import BatchConnection
from quota_constructs.runtime.clock import WALL_CLOCK, Clock
from quota_constructs.runtime.quota_share_handler import EntryPoints
from quota_constructs.runtime.retry import ClientTimeouts, RetryPolicy

from .cloudformation import STACK_ID
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
    connection: BatchConnection = field(default_factory=BatchConnection)
    """How the runtime under test reaches the fake: backoff recorded in ``sleeps``."""
    clock: Clock = WALL_CLOCK
    """The clock the entry points measure their wait budget by."""

    @property
    def handler(self) -> BatchEntryPoints:
        """The custom resource's entry points over :attr:`connection` as it is when called."""
        return BatchEntryPoints(self)

    def with_timeouts(self, connect: float, read: float) -> None:
        """Per-attempt client timeouts for what follows (tests of slow answers)."""
        self.connection = replace(self.connection, timeouts=ClientTimeouts(connect, read))


@dataclass(frozen=True)
class BatchEntryPoints:
    """``on_event`` and ``is_complete`` over the test's connection and clock (read at each
    call, so a resource deployed earlier in the test sees timeouts or a clock set later)."""

    batch: Batch

    def on_event(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        self._stack_exists(event)
        return EntryPoints(self.batch.connection, self.batch.clock).on_event(event, context)

    def is_complete(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        self._stack_exists(event)
        return EntryPoints(self.batch.connection, self.batch.clock).is_complete(event, context)

    def _stack_exists(self, event: Mapping[str, Any]) -> None:
        # CloudFormation creates a stack before it sends its resources' events: from then on
        # DescribeStacks finds it (``preview`` asks).
        if isinstance(event.get("StackId"), str):
            self.batch.state.cloudformation.add_stack(event["StackId"])


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
    # DescribeStacks (preview finds the deploying stack's id) is served on the same endpoint.
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDFORMATION", fake_batch_server.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    state = fake_batch_server.reset()
    # The harness's deploying stack (StackResource's default) exists from the start, so that
    # DescribeStacks of its name finds it whichever other stack of the same name a test makes.
    state.cloudformation.add_stack(STACK_ID)
    sleeps: list[float] = []
    connection = BatchConnection(
        # Backoff is recorded, not slept: the suite stays fast and tests can assert on it.
        policy=RetryPolicy(sleep=sleeps.append, jitter=lambda: 1.0),
        # Long enough that a loaded machine never turns a normal answer into a timeout; tests
        # of slow answers set a shorter one, with an answer far slower still.
        timeouts=ClientTimeouts(2, 10),
    )
    training = state.add_queue("training", {G5: 16, G5_2X: 8})
    research = state.add_queue("research", {G5: 8, G5_2X: 4})
    return Batch(state, training, research, sleeps, connection)
