"""``preview`` of turning in-share preemption on agrees with the handler (issue 26, item 3), and
without ``--stack-id`` never takes a managed share for this deployment's own (item 7)."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.cli.declarations import read_declaration
from quota_constructs.live.preview import (
    ADOPT,
    DELETE,
    DeclaredShare,
    declared_from_declaration,
    preview,
)
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.runtime.share_request import GuardOptIns

from ..runtime.cloudformation import STACK_ID, StackResource, share_properties
from ..runtime.conftest import G5, Batch
from ..runtime.declarations import share_spec

OTHER_STACK = STACK_ID.replace("/platform/", "/team-vision/")


@dataclass(frozen=True)
class Situation:
    strategy: str
    """LEND, or LEND_AND_BORROW beside a lender with ``lender_busy`` of its 4 in use."""
    lender_busy: int
    running: tuple[int, ...]
    """Priorities of the share's running jobs (one instance each)."""
    waiting: tuple[tuple[int, int], ...]
    """(priority, instances) of its RUNNABLE jobs."""
    opt_in: bool

    def __str__(self) -> str:
        waiting = "_".join(f"{p}x{n}" for p, n in self.waiting)
        return (f"{self.strategy}-lent{self.lender_busy}-run{'_'.join(map(str, self.running))}"
                f"-wait{waiting}-{'opt' if self.opt_in else 'no'}")

    def spec(self, *, in_share: bool) -> QuotaShareSpec:
        strategy = SharingStrategy(self.strategy)
        return share_spec(limits={G5: 3}, strategy=strategy, borrow=100,
                          in_share_preemption=in_share)


def _situations() -> list[Situation]:
    running = [(), (1,), (1, 1, 1), (1, 5, 9)]
    waiting = [(), ((5, 1),), ((5, 2),), ((10, 1), (0, 1)), ((5, 9),)]
    setups = [("LEND", 0), ("LEND_AND_BORROW", 1), ("LEND_AND_BORROW", 4)]
    return [Situation(strategy, busy, run, wait, opt)
            for (strategy, busy), run, wait, opt in itertools.product(
                setups, running, waiting, (False, True))]


@pytest.mark.slow  # 120 situations; the quick subset keeps the waiting-state cases below
@pytest.mark.parametrize("situation", _situations(), ids=str)
def test_preview_of_turning_in_share_preemption_on_agrees_with_the_handler(
    batch: Batch, situation: Situation,
) -> None:
    state = batch.state
    lender = state.add_share(batch.training, "lender", {G5: 4}, "LEND")
    for _ in range(situation.lender_busy):
        state.add_job(lender, "RUNNING", {G5: 1})
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(situation.spec(in_share=False), batch.training)).ok
    arn = resource.physical_id
    assert arn is not None
    for priority in situation.running:
        state.add_job(arn, "RUNNING", {G5: 1}, priority=priority)
    for priority, size in situation.waiting:
        state.add_job(arn, "RUNNABLE", {G5: size}, priority=priority)
    opt_ins = GuardOptIns(allow_preemption_on_in_share_enable=situation.opt_in)
    declared = [DeclaredShare.of_spec(situation.spec(in_share=True), batch.training,
                                      opt_ins=opt_ins, logical_id="TeamShare")]
    state.calls.clear()

    (change,) = preview("training", declared, reader=QueueReader.connect(),
                        stack_id=STACK_ID).changes
    assert state.mutations() == [], "preview changed the live queue"
    outcome = resource.update(share_properties(
        situation.spec(in_share=True), batch.training,
        allow_preemption_on_in_share_enable=situation.opt_in))

    assert change.refused == (not outcome.ok), (change, outcome.reason)
    if change.refused:
        assert change.reason is not None and change.reason in outcome.reason
        assert state.preempted_jobs == []
    else:
        # What AWS Batch (the fake) preempts is among what preview named, never beyond it.
        assert set(state.preempted_jobs) <= set(change.preemptible_jobs)
        assert situation.opt_in or not change.preemptible_jobs


def _deployed_elsewhere(batch: Batch, name: str = "vision") -> StackResource:
    other = StackResource(logical_id="TeamShare", stack_id=OTHER_STACK, handler=batch.handler)
    assert other.create(share_properties(share_spec(name=name), batch.training)).ok
    return other


def test_without_the_stack_another_stacks_share_cannot_be_told_never_refused(
    batch: Batch,
) -> None:
    # Issue 30, item 9: were it this stack's share, the handler would apply the change; were
    # it another's, refuse it. Without the stack's id or name preview cannot know which.
    _deployed_elsewhere(batch)
    declared = [DeclaredShare.of_spec(share_spec(name="vision"), batch.training,
                                      logical_id="TeamShare")]

    result = preview("training", declared, reader=QueueReader.connect())
    deployment = StackResource(logical_id="TeamShare", handler=batch.handler).create(
        share_properties(share_spec(name="vision"), batch.training))

    (change,) = result.changes
    assert not deployment.ok and "does not manage it" in deployment.reason
    assert (change.refused, change.cannot_tell) == (False, True)
    assert (result.refused, result.cannot_tell) == (False, True)
    assert change.reason is not None and "--stack-id" in change.reason
    assert "as another stack's: ADOPT refused: quota share 'vision' already exists" in (
        change.reason)


def test_with_the_stacks_name_another_stacks_share_is_refused_as_the_handler_refuses_it(
    batch: Batch,
) -> None:
    _deployed_elsewhere(batch)
    batch.state.cloudformation.add_stack(STACK_ID)  # the deploying stack exists
    declared = [DeclaredShare.of_spec(share_spec(name="vision"), batch.training,
                                      logical_id="TeamShare")]

    result = preview("training", declared, reader=QueueReader.connect(), stack_name="platform")
    deployment = StackResource(logical_id="TeamShare", handler=batch.handler).create(
        share_properties(share_spec(name="vision"), batch.training))

    (change,) = result.changes
    assert result.stack.stack_id == STACK_ID
    assert (change.action, change.refused) == (ADOPT, True)
    assert change.reason is not None and change.reason in deployment.reason


def test_with_the_stack_id_the_same_share_is_told_apart_from_this_stacks_own(batch: Batch) -> None:
    _deployed_elsewhere(batch)
    own = StackResource(logical_id="Own", handler=batch.handler)
    assert own.create(share_properties(share_spec(name="nlp"), batch.training)).ok
    declared = [
        DeclaredShare.of_spec(share_spec(name="vision"), batch.training, logical_id="TeamShare"),
        DeclaredShare.of_spec(share_spec(name="nlp"), batch.training, logical_id="Own"),
    ]

    result = preview("training", declared, reader=QueueReader.connect(), stack_id=STACK_ID)

    assert [(c.share, c.action, c.refused) for c in result.changes] == [
        ("vision", ADOPT, True), ("nlp", "NONE", False)]


def test_without_the_stack_a_change_refused_either_way_is_refused(batch: Batch) -> None:
    other = _deployed_elsewhere(batch)
    assert other.physical_id is not None
    batch.state.add_job(other.physical_id, "RUNNING", {G5: 4})
    opt_ins = GuardOptIns(adopt_existing=True)
    shrunk = share_spec(name="vision", limits={G5: 2})
    declared = [DeclaredShare.of_spec(shrunk, batch.training, opt_ins=opt_ins,
                                      logical_id="TeamShare")]

    (change,) = preview("training", declared, reader=QueueReader.connect()).changes
    deployment = StackResource(logical_id="TeamShare", handler=batch.handler).create(
        share_properties(shrunk, batch.training, adopt_existing=True))

    # This stack's or another's, lowering the limit below the 4 in use is refused.
    assert change.refused and not change.cannot_tell and not deployment.ok
    assert change.reason is not None and "refused whether or not it is this stack's" in (
        change.reason)
    refusal = deployment.reason.split(" Nothing was changed.")[0]
    assert refusal in change.reason


def test_without_the_stack_a_delete_of_a_share_another_stack_may_own_says_so(
    batch: Batch,
) -> None:
    _deployed_elsewhere(batch)

    (change,) = preview("training", [], reader=QueueReader.connect()).changes

    assert change.action == DELETE and change.reason is not None and not change.refused
    assert "cannot tell whether share 'vision' is this stack's" in change.reason
    assert "--stack-id" in change.reason


def test_without_the_stack_a_refused_delete_of_a_share_another_stack_may_own_cannot_be_told(
    batch: Batch,
) -> None:
    other = _deployed_elsewhere(batch)
    assert other.physical_id is not None
    busy = batch.state.add_job(other.physical_id, "RUNNING", {G5: 1})

    (change,) = preview("training", [], reader=QueueReader.connect()).changes

    assert (change.action, change.refused, change.cannot_tell) == (DELETE, False, True)
    assert change.terminated_jobs == (busy,)
    assert change.reason is not None and "if it is another stack's, this deployment leaves " \
        "it alone" in change.reason


def _template_file(tmp_path: Path, name: str) -> Path:
    properties: dict[str, Any] = share_properties(share_spec(name="vision"), "training")
    template = {"Resources": {"TeamShare": {"Type": "Custom::BatchQuotaShare",
                                            "Properties": properties}}}
    path = tmp_path / f"{name}.template.json"
    path.write_text(json.dumps(template))
    return path


def test_the_command_finds_the_stack_by_the_templates_file_name(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _deployed_elsewhere(batch)
    batch.state.cloudformation.add_stack(STACK_ID)

    status = cli(["preview", "--queue", "training", "--template",
                  str(_template_file(tmp_path, "platform")), "--json"])

    result = json.loads(capsys.readouterr().out)
    assert status == 1 and result["refused"] is True and result["cannot_tell"] is False
    assert result["stack"]["id"] == STACK_ID
    (change,) = result["changes"]
    assert change["action"] == ADOPT and "this stack does not manage it" in change["reason"]


def test_the_command_exits_3_when_the_stack_is_not_found(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    _deployed_elsewhere(batch)

    status = cli(["preview", "--queue", "training", "--template",
                  str(_template_file(tmp_path, "Team")), "--json"])

    result = json.loads(capsys.readouterr().out)
    assert status == 3 and result["refused"] is False and result["cannot_tell"] is True
    assert "CloudFormation has no stack name 'Team'" in result["stack"]["cannot_tell_why"]
    (change,) = result["changes"]
    assert change["cannot_tell"] is True and "--stack-id" in change["reason"]
    # Told the stack, the same template is judged exactly.
    batch.state.cloudformation.add_stack(STACK_ID)
    assert cli(["preview", "--queue", "training", "--template",
                str(_template_file(tmp_path, "Team")), "--stack", "platform"]) == 1
    assert "as the deployment of stack " + STACK_ID in capsys.readouterr().out


@pytest.mark.parametrize("opt_in", [False, True])
def test_a_declaration_objects_in_share_switch_is_judged_as_the_handler_judges_it(
    batch: Batch, opt_in: bool,
) -> None:
    resource = StackResource(handler=batch.handler)
    lend = share_spec(limits={G5: 2}, strategy=SharingStrategy.LEND)
    assert resource.create(share_properties(lend, batch.training)).ok
    assert resource.physical_id is not None
    low = batch.state.add_job(resource.physical_id, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(resource.physical_id, "RUNNABLE", {G5: 1}, priority=9)
    turned_on = share_spec(limits={G5: 2}, strategy=SharingStrategy.LEND,
                           in_share_preemption=True)
    declaration = read_declaration({
        "capacity_limits": [CapacityLimit(G5, 16)], "shares": [turned_on],
        "lifecycle_by_share": {"team-a": {"allow_preemption_on_in_share_enable": opt_in}},
    }, "d", command="preview")

    (change,) = preview("training", declared_from_declaration(declaration, "training"),
                        reader=QueueReader.connect(), stack_id=STACK_ID).changes
    outcome = resource.update(share_properties(
        turned_on, batch.training, allow_preemption_on_in_share_enable=opt_in))

    assert change.refused is not opt_in and outcome.ok is opt_in
    assert change.preemptible_jobs == (low,)


@pytest.mark.parametrize("opt_in", [False, True])
@pytest.mark.parametrize("status", ["SUBMITTED", "PENDING", "RUNNABLE"])
@pytest.mark.parametrize("waiting", [((50, 1),), ((50, 2), (0, 1)), ((1, 1),)],
                         ids=["outranks", "outranks-with-low", "outranked"])
def test_jobs_in_every_waiting_state_are_judged_as_the_handler_judges_them(
    batch: Batch, status: str, opt_in: bool, waiting: tuple[tuple[int, int], ...],
) -> None:
    # Issue 30, item 6: a SUBMITTED or PENDING job becomes RUNNABLE by itself and then
    # preempts; preview counts it exactly as the handler's guard does.
    resource = StackResource(handler=batch.handler)
    lend = share_spec(limits={G5: 3}, strategy=SharingStrategy.LEND)
    assert resource.create(share_properties(lend, batch.training)).ok
    arn = resource.physical_id
    assert arn is not None
    low = batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(arn, "RUNNING", {G5: 1}, priority=9)
    for priority, size in waiting:
        batch.state.add_job(arn, status, {G5: size}, priority=priority)
    turned_on = share_spec(limits={G5: 3}, strategy=SharingStrategy.LEND,
                           in_share_preemption=True)
    declared = [DeclaredShare.of_spec(
        turned_on, batch.training, logical_id="TeamShare",
        opt_ins=GuardOptIns(allow_preemption_on_in_share_enable=opt_in))]

    (change,) = preview("training", declared, reader=QueueReader.connect(),
                        stack_id=STACK_ID).changes
    outcome = resource.update(share_properties(
        turned_on, batch.training, allow_preemption_on_in_share_enable=opt_in))
    batch.state.waiting_jobs_become_runnable()

    outranks = waiting[0][0] > 1
    assert change.refused == (outranks and not opt_in) == (not outcome.ok)
    assert (low in change.preemptible_jobs) is outranks
    if change.refused:
        assert change.reason is not None and change.reason in outcome.reason
    # What AWS Batch (the fake) preempts once the jobs are RUNNABLE, preview named.
    assert set(batch.state.preempted_jobs) <= set(change.preemptible_jobs)
    assert bool(batch.state.preempted_jobs) is (outranks and opt_in)


def test_a_stack_not_created_yet_owns_no_share_and_deletes_none(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    # --new-stack: none of the live shares is the stack's, so a same-named one is another
    # stack's (refused unless adopt_existing, as the handler refuses it) and a busy share the
    # template does not declare is left alone: judged exactly, without CloudFormation.
    _deployed_elsewhere(batch)
    busy = _deployed_elsewhere(batch, name="nlp")
    assert busy.physical_id is not None
    batch.state.add_job(busy.physical_id, "RUNNING", {G5: 1})

    status = cli(["preview", "--queue", "training", "--template",
                  str(_template_file(tmp_path, "Team")), "--new-stack", "--json"])

    result = json.loads(capsys.readouterr().out)
    assert status == 1 and result["cannot_tell"] is False
    assert result["stack"]["new"] is True and result["stack"]["id"] is None
    assert [(c["share"], c["action"], c["refused"]) for c in result["changes"]] == [
        ("vision", ADOPT, True)]
    assert batch.state.cloudformation.calls == []
    deployment = StackResource(logical_id="TeamShare", stack_id=STACK_ID + "-new",
                               handler=batch.handler).create(
        share_properties(share_spec(name="vision"), batch.training))
    assert not deployment.ok and "this stack does not manage it" in deployment.reason
    assert "this stack does not manage it" in result["changes"][0]["reason"]
