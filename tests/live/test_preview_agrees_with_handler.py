"""``preview`` predicts the custom resource exactly: run it, then apply the same change through
the real handler (CloudFormation harness) against the same fake state, and compare."""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass

import pytest

from quota_constructs.live.preview import DeclaredShare, Preview, preview
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.model import SharingStrategy
from quota_constructs.runtime.share_request import GuardOptIns

from ..runtime.cloudformation import STACK_ID, Outcome, StackResource, share_properties
from ..runtime.conftest import G5, Batch
from ..runtime.declarations import share_spec

JOB_ID = re.compile(r"job-\d{4}")
CHANGES = ("shrink", "lower-borrow", "grow", "none", "rename", "delete", "adopt",
           "adopt-owned-elsewhere")


@dataclass(frozen=True)
class Situation:
    change: str
    running: int
    runnable: int
    deployed_opt_ins: GuardOptIns
    new_opt_ins: GuardOptIns
    new_limit: int

    def __str__(self) -> str:
        def flags(o: GuardOptIns) -> str:
            letters = zip("APTID", vars(o).values(), strict=True)
            return "".join(letter for letter, on in letters if on) or "-"
        return (f"{self.change}-run{self.running}-wait{self.runnable}-"
                f"{flags(self.deployed_opt_ins)}-{flags(self.new_opt_ins)}-to{self.new_limit}")


def _situations() -> list[Situation]:
    opt_ins = [GuardOptIns(adopt_existing=a, allow_preemption_on_shrink=p,
                           terminate_active_jobs_on_delete=t)
               for a, p, t in itertools.product((False, True), repeat=3)]
    sample = random.Random(19).sample
    # The same number of situations for every kind of change, drawn from all the others.
    return [situation for change in CHANGES for situation in sample([
        Situation(change, run, wait, old, new, limit)
        for run, wait, old, new, limit in itertools.product(
            (0, 1, 3, 6), (0, 2), opt_ins, opt_ins, (1, 3))
    ], 12)]


def _judged(result: Preview, name: str) -> tuple[bool, set[str]]:
    refused = [c for c in result.changes if c.refused]
    jobs = {j for c in refused for j in (*c.preemptible_jobs, *c.terminated_jobs)}
    return bool(refused), jobs


def _named_jobs(*outcomes: Outcome | None) -> tuple[bool, set[str]]:
    failed = [o for o in outcomes if o is not None and not o.ok]
    return bool(failed), {j for o in failed for j in JOB_ID.findall(o.reason)}


@pytest.mark.parametrize("situation", _situations(), ids=str)
def test_preview_refuses_exactly_when_the_handler_does(batch: Batch, situation: Situation) -> None:
    state = batch.state
    old = share_spec(limits={G5: 4}, borrow=100)
    resource = StackResource(handler=batch.handler)
    deployed = resource.create(share_properties(old, batch.training,
                                                **vars(situation.deployed_opt_ins)))
    assert deployed.ok, deployed.reason
    arn = resource.physical_id
    assert arn is not None
    if situation.change == "adopt-owned-elsewhere":
        # The share of the declared name belongs to another stack's resource.
        other = StackResource(
            logical_id="Elsewhere", stack_id=STACK_ID + "-other", handler=batch.handler,
        )
        assert other.create(share_properties(share_spec(name="team-b"), batch.training)).ok
        arn = other.physical_id
        assert arn is not None
    if situation.change == "adopt":
        arn = state.add_share(batch.training, "by-hand", {G5: 4}, "LEND_AND_BORROW", 100)
    for _ in range(situation.running):
        state.add_job(arn, "RUNNING", {G5: 1})
    for _ in range(situation.runnable):
        state.add_job(arn, "RUNNABLE", {G5: 1})

    new_opts = vars(situation.new_opt_ins)
    change = situation.change
    new = {
        "shrink": share_spec(limits={G5: situation.new_limit}, borrow=100),
        "lower-borrow": share_spec(limits={G5: 4}, borrow=0),
        "grow": share_spec(limits={G5: 6}, borrow=100),
        "none": old,
        "rename": share_spec(name="team-a-renamed", limits={G5: 4}, borrow=100),
        "delete": None,
        "adopt": share_spec(name="by-hand", limits={G5: situation.new_limit}, borrow=100,
                            strategy=SharingStrategy.LEND_AND_BORROW),
        "adopt-owned-elsewhere": share_spec(name="team-b", limits={G5: situation.new_limit}),
    }[change]
    declared = [] if new is None else [DeclaredShare.of_spec(
        new, batch.training, opt_ins=situation.new_opt_ins,
        logical_id="Adopter" if change.startswith("adopt") else "TeamShare")]
    if change.startswith("adopt"):
        declared.append(DeclaredShare.of_spec(old, batch.training, logical_id="TeamShare",
                                              opt_ins=situation.deployed_opt_ins))
    state.calls.clear()

    predicted = preview("training", declared, reader=QueueReader.connect(), stack_id=STACK_ID)

    assert state.mutations() == [], "preview changed the live queue"
    if change == "delete":
        outcomes: tuple[Outcome | None, ...] = (resource.delete(),)
    elif change.startswith("adopt"):
        assert new is not None
        outcomes = (StackResource(logical_id="Adopter", handler=batch.handler).create(
            share_properties(new, batch.training, **new_opts)),)
    else:
        assert new is not None
        outcome = resource.update(share_properties(new, batch.training, **new_opts))
        outcomes = (outcome, outcome.cleanup)
    handler_refused, handler_jobs = _named_jobs(*outcomes)
    preview_refused, preview_jobs = _judged(predicted, "team-a")
    assert preview_refused == handler_refused, (predicted, [o and o.reason for o in outcomes])
    assert preview_jobs == handler_jobs
    assert predicted.refused == handler_refused
    if not handler_refused:
        terminated = {j for c in predicted.changes for j in c.terminated_jobs}
        preemptible = {j for c in predicted.changes for j in c.preemptible_jobs}
        assert terminated == set(state.terminated_jobs) or change == "rename"
        assert set(state.preempted_jobs) <= preemptible


def test_a_rename_and_a_delete_are_named_as_such(batch: Batch) -> None:
    kept = StackResource(logical_id="Kept", handler=batch.handler)
    gone = StackResource(logical_id="Gone", handler=batch.handler)
    assert kept.create(share_properties(share_spec(name="vision"), batch.training)).ok
    assert gone.create(share_properties(share_spec(name="old-team"), batch.training,
                                        terminate_active_jobs_on_delete=True)).ok
    assert gone.physical_id is not None and kept.physical_id is not None
    doomed = batch.state.add_job(gone.physical_id, "RUNNABLE", {G5: 1})
    declared = [DeclaredShare.of_spec(share_spec(name="vision-2"), batch.training,
                                      logical_id="Kept")]

    result = preview("training", declared, reader=QueueReader.connect(), stack_id=STACK_ID)

    assert [(c.action, c.share, c.refused) for c in result.changes] == [
        ("RENAME", "vision-2", False), ("DELETE", "old-team", False)]
    assert result.changes[0].renamed_from == "vision"
    assert result.changes[1].terminated_jobs == (doomed,)
