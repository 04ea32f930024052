"""Starting ``quota-constructs emulate`` as a process, and talking to it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import boto3
import pytest

from quota_constructs.emulator import Emulator
from stacks.launch import PROJECT_ROOT

QUEUE = "my-sm-training-qm-jq"
DECLARATION = "tests.emulator.walkthrough_declaration:WALKTHROUGH"
G5 = "ml.g5.xlarge"
START_TIMEOUT = 60.0


class EmulatorProcess:
    """``quota-constructs emulate ... --port 0`` in a child process; its URL is the first
    line it prints."""

    def __init__(self, *extra: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "quota_constructs", "emulate", "--declaration", DECLARATION,
             "--queue-name", QUEUE, "--port", "0", "--clock", "manual", *extra],
            cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )
        self.url = self._first_line()

    def _first_line(self) -> str:
        assert self.process.stdout is not None
        found: list[str] = []
        reader = threading.Thread(
            target=lambda: found.append(self.process.stdout.readline()),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        reader.join(START_TIMEOUT)
        if not found or not found[0].startswith("http://127.0.0.1:"):
            self.kill()
            raise AssertionError(f"the emulator printed no endpoint first: {found!r}")
        return found[0].strip()

    def control(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            self.url + path, method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def advance(self, seconds: float) -> Any:
        return self.control("POST", "/_emulator/advance", {"seconds": seconds})

    def terminate(self, timeout: float = 30.0) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def training_payload(runtime: int = 300, instance_type: str = G5, count: int = 1,
                     padding: int = 0) -> str:
    """A CreateTrainingJob request as SubmitServiceJob carries it."""
    request: dict[str, Any] = {
        "TrainingJobName": "job",
        "RoleArn": "arn:aws:iam::123456789012:role/training",
        "AlgorithmSpecification": {"TrainingImage": "image:latest", "TrainingInputMode": "File"},
        "ResourceConfig": {"InstanceType": instance_type, "InstanceCount": count,
                           "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": runtime},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/output"},
    }
    if padding:
        request["HyperParameters"] = {"padding": "x" * padding}
    return json.dumps(request)


def statuses(batch: Any, job_ids: dict[str, str]) -> dict[str, str]:
    return {name: batch.describe_service_job(jobId=job)["status"]
            for name, job in job_ids.items()}


def names(summaries: Sequence[dict[str, Any]]) -> set[str]:
    return {summary["jobName"] for summary in summaries}


@contextmanager
def serving(monkeypatch: pytest.MonkeyPatch, declaration: Any, queue: str) -> Iterator[Emulator]:
    """``declaration`` emulated as job queue ``queue``, every boto3 client pointed at it."""
    with Emulator(declaration, queue_name=queue) as emulator:
        point_boto3_at(monkeypatch, emulator.endpoint_url)
        yield emulator


def point_boto3_at(monkeypatch: pytest.MonkeyPatch, endpoint_url: str) -> None:
    """Every boto3 client of the test talks to the emulator at ``endpoint_url``, whatever the
    machine's own AWS configuration (unlike ``Emulator(set_environment=True)``, which keeps
    variables a user already set)."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", endpoint_url)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
