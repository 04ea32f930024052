"""The README's "Try it locally" section, run: its reference module, its SDK submission as
written (with IAM and STS unreachable: the block needs neither), and the status, explain and
preview it suggests."""

from __future__ import annotations

import json
import re
import shlex
import sys
import types
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest

from quota_constructs.cli import main as console
from quota_constructs.emulator import Emulator
from tests.documentation import documentation_text

from .support import point_boto3_at

SECTION = documentation_text().split(
    "## Try it locally: `quota-constructs emulate`", 1)[1].split("\n## ", 1)[0]
"""The emulator's section, wherever the documentation keeps it (the operator's guide)."""


def block(marker: str) -> str:
    (found,) = [b for b in re.findall(r"```py\n(.*?)```", SECTION, flags=re.DOTALL)
                if marker in b]
    return str(found)


def bash_commands() -> list[str]:
    """The section's shell commands, one per line, continuations joined, comments dropped."""
    lines: list[str] = []
    for found in re.findall(r"```bash\n(.*?)```", SECTION, flags=re.DOTALL):
        for line in found.replace("\\\n", " ").splitlines():
            command = line.split("  #", 1)[0].strip()
            if command:
                lines.append(" ".join(command.split()))
    return lines


@pytest.fixture
def reference_quotas(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    module = types.ModuleType("reference_quotas")
    exec(block("NO_BORROWING"), module.__dict__)
    monkeypatch.setitem(sys.modules, "reference_quotas", module)
    yield module


UNREACHABLE = "http://127.0.0.1:9"
"""The discard port: nothing listens, so any call sent there fails at once."""


@pytest.fixture
def local(reference_quotas: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    # Offline as the guide promises: an IAM or STS call would fail here, never reach AWS.
    monkeypatch.setenv("AWS_ENDPOINT_URL_IAM", UNREACHABLE)
    monkeypatch.setenv("AWS_ENDPOINT_URL_STS", UNREACHABLE)
    # The block sets the SDK's switch itself; whatever it sets is undone after the test.
    monkeypatch.setenv("SAGEMAKER_VALIDATE_ROLE", "true")
    with Emulator(reference_quotas.REFERENCE, queue_name="gpu-prod") as emu:
        point_boto3_at(monkeypatch, emu.endpoint_url)
        yield emu


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    capsys.readouterr()
    status = console([*argv, "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_the_sections_sdk_submission_status_explain_and_preview(
    local: Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    names: dict[str, Any] = {}
    exec(block("TrainingQueue("), names)
    local.advance(1)
    batch = boto3.client("batch")
    high = batch.describe_service_job(jobId=names["high"].job_arn)
    low = batch.describe_service_job(jobId=names["low"].job_arn)
    assert (high["status"], low["status"]) == ("RUNNING", "RUNNING")

    code, status = run_json(capsys, "status", "--queue", "gpu-prod")
    (qs1,) = [s for s in status["shares"] if s["name"] == "QS1"]
    assert code == 0 and qs1["units"][0]["borrowed"] == 1

    code, explained = run_json(capsys, "explain", "--queue", "gpu-prod", "--share", "QS1")
    assert code == 0 and explained["share"] == "QS1"

    # The section's estimate: a QS1 job submitted now starts once high or low is over (their
    # MaxRuntimeInSeconds, an hour), or sooner.
    (command,) = [line for line in bash_commands() if line.startswith("quota-constructs estimate")]
    code, estimated = run_json(capsys, *shlex.split(command)[1:])
    assert code == 0 and estimated["latest"] is not None
    waited = datetime.fromisoformat(estimated["latest"]) - datetime.fromisoformat(
        estimated["earliest"])
    assert waited == timedelta(seconds=3600 - 1)

    # Stopping QS1's borrowing would leave low's borrowed instance open to preemption: the
    # shrink guard refuses, naming it, as it would against the live queue.
    # The section's own preview command, as a user pastes it.
    (command,) = [line for line in bash_commands() if line.startswith("quota-constructs preview")]
    assert local.service.stack_id in command
    code, previewed = run_json(capsys, *shlex.split(command)[1:])
    (change,) = [c for c in previewed["changes"] if c["share"] == "QS1"]
    assert (code, change["action"], change["refused"]) == (1, "UPDATE", True)
    assert low["jobId"] in change["preemptible_jobs"]


def test_the_sdk_block_needs_its_role_switch_offline(local: Emulator) -> None:
    """Without the block's one emulator-only line, the SDK asks IAM about the role: that is
    the call the line avoids (and here it fails, as there is no IAM to ask)."""
    from botocore.exceptions import EndpointConnectionError

    sdk = block("TrainingQueue(")
    line = 'os.environ["SAGEMAKER_VALIDATE_ROLE"] = "false"'
    assert line in sdk
    with pytest.raises(EndpointConnectionError, match=r"127\.0\.0\.1:9"):
        exec(sdk.replace(line, ""), {})
    assert boto3.client("batch").list_service_jobs(
        jobQueue="gpu-prod", jobStatus="SUBMITTED")["jobSummaryList"] == []
