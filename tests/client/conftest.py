"""The team fake Batch on loopback, with two shares on one queue, and boto3 pointed at it the
standard way (``AWS_ENDPOINT_URL_BATCH``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from .fake_submissions import TeamFakeBatch, TeamFakeBatchServer

G5 = "ml.g5.xlarge"


@dataclass
class Queue:
    state: TeamFakeBatch
    name: str
    arn: str


@pytest.fixture(scope="session")
def team_batch_server() -> Iterator[TeamFakeBatchServer]:
    server = TeamFakeBatchServer().start()
    yield server
    server.stop()


@pytest.fixture
def queue(team_batch_server: TeamFakeBatchServer, monkeypatch: pytest.MonkeyPatch) -> Queue:
    state = team_batch_server.reset()
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", team_batch_server.endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    arn = state.add_queue("gpu-prod", {G5: 4})
    for name in ("vision", "speech"):
        state.handle("CreateQuotaShare", {
            "quotaShareName": name, "jobQueue": arn,
            "capacityLimits": [{"capacityUnit": G5, "maxCapacity": 2}],
            "resourceSharingConfiguration": {"strategy": "LEND"},
            "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
        })
    return Queue(state, "gpu-prod", arn)
