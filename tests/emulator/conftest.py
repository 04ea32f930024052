"""An in-process emulator of the walkthrough's queue, with boto3 pointed at it the standard way
(``AWS_ENDPOINT_URL_BATCH``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from quota_constructs.emulator import Emulator

from .support import QUEUE, serving, training_payload
from .walkthrough_declaration import WALKTHROUGH


@pytest.fixture
def emu(monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    with serving(monkeypatch, WALKTHROUGH, QUEUE) as emulator:
        yield emulator


@pytest.fixture
def batch(emu: Emulator) -> Any:
    return boto3.client("batch")


def submit(batch: Any, name: str, share: str, priority: int = 1, **extra: Any) -> str:
    payload = extra.pop("payload", None) or training_payload(
        runtime=extra.pop("runtime", 300), count=extra.pop("count", 1),
        instance_type=extra.pop("instance_type", "ml.g5.xlarge"))
    return str(batch.submit_service_job(
        jobName=name, jobQueue=QUEUE, serviceJobType="SAGEMAKER_TRAINING",
        serviceRequestPayload=payload, quotaShareName=share, schedulingPriority=priority,
        **extra,
    )["jobId"])
