"""Reviewer's probes of DESIGN §9's contracts on the real command lines: JSON shapes of status,
explain and preview, exit statuses (0 answered, 1 refused preview, 2 error), errors as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quota_constructs.cli import main as cli

from ..runtime.cloudformation import StackResource, share_properties
from ..runtime.conftest import G5, G5_2X, P4D, Batch
from ..runtime.declarations import share_spec


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert captured.out == ""
    assert len(err) == 1 and "Traceback" not in err[0], captured.err
    return err[0]


def test_status_json_has_the_contract_shape_with_several_types(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    q = batch.state.add_queue("mixed", {G5: 4, G5_2X: 2, P4D: 1})
    vision = batch.state.add_share(q, "vision", {G5: 1, P4D: 1}, "LEND_AND_BORROW")
    research = batch.state.add_share(q, "research", {G5: 3, G5_2X: 2}, "LEND")
    batch.state.add_job(vision, "RUNNING", {G5: 2})  # one job on 2 instances: 1 borrowed
    batch.state.add_job(vision, "SCHEDULED", {P4D: 1})
    batch.state.add_job(research, "STARTING", {G5_2X: 2})
    head = batch.state.add_job(research, "RUNNABLE", {G5: 2}, front_since=1_000)

    assert cli(["status", "--queue", "mixed", "--json"]) == 0

    status = json.loads(capsys.readouterr().out)
    assert status["queue"] == "mixed"
    for share in status["shares"]:
        assert {"name", "state", "runnable", "runnable_capped", "head_job", "units"} <= set(share)
        for unit in share["units"]:
            assert set(unit) >= {"instance_type", "limit", "in_use", "borrowed", "lent",
                                 "idle_own"}
    by_name = {s["name"]: {u["instance_type"]: u for u in s["units"]} for s in status["shares"]}
    assert by_name["vision"][G5] == {"instance_type": G5, "limit": 1, "in_use": 2,
                                     "borrowed": 1, "lent": 0, "idle_own": 0}
    assert by_name["vision"][P4D] == {"instance_type": P4D, "limit": 1, "in_use": 1,
                                      "borrowed": 0, "lent": 0, "idle_own": 0}
    assert by_name["research"][G5] == {"instance_type": G5, "limit": 3, "in_use": 0,
                                       "borrowed": 0, "lent": 1, "idle_own": 3}
    assert by_name["research"][G5_2X] == {"instance_type": G5_2X, "limit": 2, "in_use": 2,
                                          "borrowed": 0, "lent": 0, "idle_own": 0}
    research = next(s for s in status["shares"] if s["name"] == "research")
    assert research["head_job"]["job_id"] == head
    assert isinstance(research["head_job"]["waiting_seconds"], (int, float))
    assert (research["runnable"], research["runnable_capped"]) == (1, False)


def test_explain_json_has_the_contract_shape(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    share = batch.state.add_share(batch.training, "vision", {G5: 1}, "RESERVE")
    job = batch.state.add_job(share, "RUNNING", {G5: 1})
    assert cli(["explain", "--queue", "training", "--job", job, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert {"job_id", "share", "status", "reason_code", "reason", "inferred"} <= set(answer)
    assert (answer["job_id"], answer["share"], answer["status"]) == (job, "vision", "RUNNING")
    assert isinstance(answer["inferred"], bool)


@pytest.mark.parametrize("busy", [False, True])
def test_preview_json_shape_and_exit_status_follow_refused(
    batch: Batch, capsys: pytest.CaptureFixture[str], tmp_path: Path, busy: bool
) -> None:
    resource = StackResource(logical_id="TeamShare", handler=batch.handler)
    assert resource.create(share_properties(share_spec(), batch.training)).ok
    assert resource.physical_id is not None
    if busy:
        batch.state.add_job(resource.physical_id, "RUNNING", {G5: 1})
    # The template of the stack that deployed the share ('platform'): its file name names it,
    # and DescribeStacks gives its id.
    template = tmp_path / "platform.template.json"
    template.write_text(json.dumps({"Resources": {}}))

    code = cli(["preview", "--queue", "training", "--template", str(template), "--json"])

    result = json.loads(capsys.readouterr().out)
    assert code == (1 if result["refused"] else 3 if result["cannot_tell"] else 0)
    assert result["refused"] is busy and result["cannot_tell"] is False
    (change,) = result["changes"]
    assert set(change) >= {"share", "action", "refused", "reason", "preemptible_jobs",
                           "terminated_jobs"}
    assert change["action"] == "DELETE" and change["refused"] is busy


@pytest.mark.parametrize(
    "argv",
    [
        ["status", "--queue", "training", "--profile", "no-such-profile"],
        ["explain", "--queue", "training", "--job", "job-1", "--profile", "no-such-profile"],
        ["preview", "--queue", "training", "--template", "/nonexistent/x.template.json"],
        ["preview", "--queue", "training", "--declaration", "no_such_module_here:SHARES"],
        ["preview", "--queue", "training", "--declaration", "missing-colon"],
    ],
    ids=["status-profile", "explain-profile", "template-missing", "module-missing",
         "declaration-form"],
)
def test_errors_are_one_line_with_exit_status_2(
    batch: Batch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert cli(argv) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"quota-constructs {argv[0]}: error:")


def test_an_unreachable_endpoint_is_one_line(
    batch: Batch, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    assert cli(["status", "--queue", "training"]) == 2
    assert "error:" in _one_error_line(capsys)
