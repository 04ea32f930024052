"""``preview`` from the command line: a synthesized template or a module:ATTRIBUTE declaration,
and an exit status a pipeline can gate on."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live.preview import declared_from_template
from quota_constructs.model import QuotaConfigError

from ..runtime.cloudformation import STACK_ID, StackResource, stringify
from ..runtime.conftest import G5, Batch

SNAPSHOTS = Path(__file__).parents[1] / "stacks" / "__snapshots__" / "test_stack_snapshots"
REFERENCE = SNAPSHOTS / "test_template_matches_snapshot[QuotaReference].json"


def reference_template() -> dict[str, Any]:
    template: dict[str, Any] = json.loads(REFERENCE.read_text())
    return template


def deploy(batch: Batch, template: dict[str, Any]) -> dict[str, StackResource]:
    """The template's shares as CloudFormation would have created them on 'training'."""
    batch.state.queues[batch.training].environment = {G5: 3}
    deployed = {}
    for share in declared_from_template(template, "training"):
        resource = StackResource(logical_id=share.logical_id, handler=batch.handler)
        properties = stringify({**share.properties, "JobQueue": batch.training})
        assert resource.create(properties).ok
        deployed[str(share.properties["QuotaShareName"])] = resource
    return deployed


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = cli(["preview", "--queue", "training", "--json", "--stack-id", STACK_ID, *args])
    return status, json.loads(capsys.readouterr().out)


def test_an_unchanged_template_changes_nothing(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = reference_template()
    deploy(batch, template)
    path = tmp_path / "QuotaReference.template.json"
    path.write_text(json.dumps(template))

    status, result = run(["--template", str(path)], capsys)

    assert status == 0 and result["refused"] is False
    assert [(c["share"], c["action"]) for c in result["changes"]] == [
        ("QS1", "NONE"), ("QS2", "NONE"), ("QS3", "NONE")]


def test_removing_a_busy_share_is_refused_with_exit_status_1(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = reference_template()
    shares = deploy(batch, template)
    qs3 = shares["QS3"].physical_id
    assert qs3 is not None
    busy = batch.state.add_job(qs3, "RUNNING", {G5: 1})
    changed = copy.deepcopy(template)
    del changed["Resources"]["TrainingQueueQS3AFE7768F"]
    path = tmp_path / "QuotaReference.template.json"
    path.write_text(json.dumps(changed))

    status, result = run(["--template", str(path)], capsys)

    assert status == 1 and result["refused"] is True
    delete = next(c for c in result["changes"] if c["share"] == "QS3")
    assert delete["action"] == "DELETE" and delete["refused"] is True
    assert delete["terminated_jobs"] == [busy]
    assert busy in delete["reason"]
    assert status == cli(["preview", "--queue", "training", "--template", str(path),
                          "--stack-id", STACK_ID])
    assert "REFUSED" in capsys.readouterr().out


def test_a_declaration_attribute_is_previewed(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The object simulate and recommend take: capacity limits and shares.
    (tmp_path / "my_shares.py").write_text(
        "from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy\n"
        "PLATFORM = {'capacity_limits': [CapacityLimit('ml.g5.xlarge', 4)],\n"
        "            'shares': [QuotaShareSpec(name='vision', strategy=SharingStrategy.LEND,\n"
        "                       capacity_limits=[CapacityLimit('ml.g5.xlarge', 2)])]}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_shares", raising=False)

    status, result = run(["--declaration", "my_shares:PLATFORM"], capsys)

    assert status == 0
    assert result["changes"] == [{"share": "vision", "action": "CREATE", "refused": False,
                                  "reason": None, "preemptible_jobs": [],
                                  "terminated_jobs": []}]
    assert cli(["preview", "--queue", "training", "--declaration", "my_shares:NOPE"]) == 2
    assert "'NOPE' not found" in capsys.readouterr().err


def test_a_template_with_several_unnamed_queues_needs_one_chosen() -> None:
    share = {"Type": "Custom::BatchQuotaShare", "Properties": {"JobQueue": {"Ref": "A"}}}
    other = {"Type": "Custom::BatchQuotaShare", "Properties": {"JobQueue": {"Ref": "B"}}}
    template = {"Resources": {"S1": share, "S2": other}}
    with pytest.raises(QuotaConfigError, match="--queue-resource"):
        declared_from_template(template, "training")
    chosen = declared_from_template(template, "training", queue_resource="B")
    assert [d.logical_id for d in chosen] == ["S2"]


def test_a_stack_id_that_is_not_a_stack_arn_is_one_line_before_any_call(
    batch: Batch, capsys: pytest.CaptureFixture[str],
) -> None:
    batch.state.calls.clear()

    status = cli(["preview", "--queue", "training", "--template", "t.json",
                  "--stack-id", "platform"])

    err = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in err
    assert ("--stack-id got 'platform'; allowed: a CloudFormation stack ARN "
            "(arn:<partition>:cloudformation:<region>:<account>:stack/<name>/<id>)") in err
    assert batch.state.calls == [] and batch.state.cloudformation.calls == []
