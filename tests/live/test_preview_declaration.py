"""``preview --declaration FILE.py:ATTR``: the declaration object simulate and recommend take
(capacity limits, shares, per-share lifecycle, queue name), judged with each share's own
switches, refusing exactly what the custom resource's handler then refuses."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.cli import main as cli

from ..runtime.cloudformation import STACK_ID, StackResource, share_properties
from ..runtime.conftest import G5, Batch
from ..runtime.declarations import share_spec

DECLARATION = textwrap.dedent("""\
    from __future__ import annotations

    from dataclasses import dataclass, field

    from quota_constructs import ShareLifecycle
    from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy


    @dataclass(frozen=True)
    class Platform:
        capacity_limits: list[CapacityLimit]
        shares: list[QuotaShareSpec]
        queue_name: str | None = None
        lifecycle_by_share: dict[str, ShareLifecycle] = field(default_factory=dict)
        stack_name: str | None = None


    SHRUNK = QuotaShareSpec(
        name="team-a", capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)],
        strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100, tags={"team": "a"})
    GUARDED = Platform([CapacityLimit("ml.g5.xlarge", 4)], [SHRUNK], "training")
    WAIVED = Platform([CapacityLimit("ml.g5.xlarge", 4)], [SHRUNK], "training",
                      {"team-a": ShareLifecycle(allow_preemption_on_shrink=True)})
    NAMED = Platform([CapacityLimit("ml.g5.xlarge", 4)], [SHRUNK], "training",
                     {"team-a": ShareLifecycle(allow_preemption_on_shrink=True)}, "platform")
    OTHER_QUEUE = Platform([CapacityLimit("ml.g5.xlarge", 4)], [SHRUNK], "elsewhere")
    TOO_BIG = Platform([CapacityLimit("ml.g5.xlarge", 4)], [QuotaShareSpec(
        name="team-a", capacity_limits=[CapacityLimit("ml.g5.xlarge", 9)],
        strategy=SharingStrategy.RESERVE)], "training")
""")


@pytest.fixture
def declaration_file(tmp_path: Path) -> Path:
    path = tmp_path / "platform.py"
    path.write_text(DECLARATION)
    return path


@pytest.mark.parametrize("attribute, refused", [("GUARDED", True), ("WAIVED", False)])
def test_each_share_is_judged_with_its_own_lifecycle_as_the_handler_judges_it(
    batch: Batch, declaration_file: Path, capsys: pytest.CaptureFixture[str],
    attribute: str, refused: bool,
) -> None:
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(share_spec(limits={G5: 4}), batch.training)).ok
    assert resource.physical_id is not None
    running = [batch.state.add_job(resource.physical_id, "RUNNING", {G5: 1}) for _ in range(3)]

    # No --queue: the declaration's queue_name names it. --stack-id: the lifecycle record then
    # tells this stack's share (a declaration object has no logical ids).
    code = cli(["preview", "--declaration", f"{declaration_file}:{attribute}", "--json",
                "--stack-id", STACK_ID])

    result = json.loads(capsys.readouterr().out)
    (change,) = result["changes"]
    assert (change["action"], change["refused"]) == ("UPDATE", refused)
    assert code == (1 if refused else 0)
    assert set(change["preemptible_jobs"]) <= set(running) and change["preemptible_jobs"]
    # The same change through the real handler, with the switches the construct would send.
    outcome = resource.update(share_properties(
        share_spec(limits={G5: 1}), batch.training,
        allow_preemption_on_shrink=attribute == "WAIVED"))
    assert outcome.ok is not refused


def test_a_queue_other_than_the_declarations_is_one_line(
    batch: Batch, declaration_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["preview", "--queue", "training", "--declaration",
                f"{declaration_file}:OTHER_QUEUE"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "--queue got 'training'; allowed: the declaration's queue_name 'elsewhere'" in err


def test_a_declaration_the_synth_refuses_is_an_error_before_any_call(
    batch: Batch, declaration_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch.state.calls.clear()
    assert cli(["preview", "--declaration", f"{declaration_file}:TOO_BIG"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("quota-constructs preview: error:")
    assert "team-a" in err
    assert batch.state.calls == []


def test_without_queue_or_queue_name_says_which_option(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bare.py"
    path.write_text("from quota_constructs.model import CapacityLimit\n"
                    "D = {'capacity_limits': [CapacityLimit('ml.g5.xlarge', 1)], 'shares': []}\n")
    assert cli(["preview", "--declaration", f"{path}:D"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--queue got None; allowed: the job queue's name or ARN" in err


def create_stacks_own_share(batch: Batch) -> None:
    """``team-a`` with 4 g5, created by the stack STACK_ID's custom resource (its owner marker)."""
    resource = StackResource(
        logical_id="TrainingQueueteamaABC123", stack_id=STACK_ID, handler=batch.handler,
    )
    assert resource.create(share_properties(share_spec(limits={G5: 4}), batch.training)).ok


def previewed(capsys: pytest.CaptureFixture[str], *argv: str
              ) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """``preview --json ARGV``: its exit status, its result and its one change."""
    code = cli(["preview", *argv, "--json"])
    result = json.loads(capsys.readouterr().out)
    (change,) = result["changes"]
    return code, result, change


def test_with_the_stack_id_a_declarations_own_share_is_an_update_not_an_adoption(
    batch: Batch, declaration_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A declaration object carries no logical ids: the stack's own share of the declared name
    # is still its own, as without --stack-id.
    create_stacks_own_share(batch)

    code, _, change = previewed(capsys, "--declaration", f"{declaration_file}:WAIVED",
                                "--stack-id", STACK_ID)
    assert (change["action"], change["refused"], code) == ("UPDATE", False, 0)


def test_without_the_stacks_id_a_managed_share_of_the_declared_name_cannot_be_told(
    batch: Batch, declaration_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Were it another stack's, the handler would refuse the deployment (issue 26, item 7); were
    # it this stack's, it would apply it: preview cannot tell, and says so, never "refused"
    # (issue 30, item 9). The declaration names no stack, so nothing can be asked.
    create_stacks_own_share(batch)

    code, result, change = previewed(capsys, "--declaration", f"{declaration_file}:WAIVED")
    assert (change["action"], change["refused"], change["cannot_tell"]) == (
        "UPDATE", False, True)
    assert (result["refused"], result["cannot_tell"], code) == (False, True, 3)
    assert "--stack-id" in change["reason"] and "as another stack's: ADOPT refused" in (
        change["reason"])
    assert result["stack"]["id"] is None


def test_the_declarations_stack_name_finds_the_stack_and_judges_exactly(
    batch: Batch, declaration_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create_stacks_own_share(batch)

    code, result, change = previewed(capsys, "--declaration", f"{declaration_file}:NAMED")
    assert (change["action"], change["refused"], code) == ("UPDATE", False, 0)
    assert "cannot_tell" not in change
    assert result["stack"]["id"] == STACK_ID
    assert "the declaration's stack_name" in result["stack"]["found_by"]


def test_with_the_stack_id_another_stacks_share_of_the_declared_name_is_refused(
    batch: Batch, declaration_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = StackResource(
        logical_id="TrainingQueueteamaABC123", stack_id=STACK_ID + "-other", handler=batch.handler,
    )
    assert other.create(share_properties(share_spec(limits={G5: 4}), batch.training)).ok

    code, _, change = previewed(capsys, "--declaration", f"{declaration_file}:WAIVED",
                                "--stack-id", STACK_ID)

    assert (change["action"], change["refused"], code) == ("ADOPT", True, 1)
    assert "this stack does not manage it" in change["reason"]
