"""``preview`` predicts the custom resource exactly: run it, then apply the same change through
the real handler (CloudFormation harness) against the same fake state, and compare."""

from __future__ import annotations

import itertools
import json
import random
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live.preview import DeclaredShare, Preview, preview
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy
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


@pytest.mark.parametrize(
    ("situation", "how"),
    # Every other situation names the stack by its name (DescribeStacks gives the id).
    [(s, "stack-name" if i % 2 else "stack-id") for i, s in enumerate(_situations())],
    ids=lambda value: str(value))
def test_preview_refuses_exactly_when_the_handler_does(batch: Batch, situation: Situation,
                                                       how: str) -> None:
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

    # By its id, or by its name (DescribeStacks gives the id): the same judgement.
    by_id = how == "stack-id"
    predicted = preview("training", declared, reader=QueueReader.connect(),
                        stack_id=STACK_ID if by_id else None,
                        stack_name=None if by_id else "platform")
    assert predicted.stack.stack_id == STACK_ID and not predicted.cannot_tell

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


# -- a stack's own template, with and without --stack-id (issue 30, item 9) ----------------------
#
# Preview finds the deploying stack itself: from --stack-id, else from the stack's name (the
# cloud assembly's manifest beside the template, or --stack) and CloudFormation's DescribeStacks.
# Each change below is previewed one way or another, then deployed through the real handler as
# CloudFormation deploys a template (creates and updates, then the cleanup's deletes), and the
# two must agree: refused exactly when the handler refuses, naming the same jobs, and never
# "cannot tell" once the stack is found.


@dataclass(frozen=True)
class Resource:
    logical_id: str
    spec: QuotaShareSpec
    opt_ins: GuardOptIns = field(default_factory=GuardOptIns)

    def properties(self, queue: str) -> dict[str, Any]:
        return share_properties(self.spec, queue, **vars(self.opt_ins))


VISION = Resource("VisionShare", share_spec("vision", limits={G5: 4}, tags={"team": "vision"}))
SPEECH = Resource("SpeechShare", share_spec("speech", limits={G5: 2},
                                            strategy=SharingStrategy.LEND,
                                            tags={"team": "speech"}))
BASE = (VISION, SPEECH)


def _with(resource: Resource, **spec: Any) -> Resource:
    opt_ins = spec.pop("opt_ins", resource.opt_ins)
    return Resource(resource.logical_id, replace(resource.spec, **spec), opt_ins)


@dataclass(frozen=True)
class Deployment:
    """One change to the stack's template: what it declares, what runs before, what preview
    must call it."""

    name: str
    declared: tuple[Resource, ...]
    action: tuple[str, str]
    """(share, action) preview must report for the change."""
    jobs: tuple[tuple[str, str, int, int], ...] = ()
    """(share, status, instances, priority) placed before the deployment."""
    hand_made: bool = False
    """A share 'legacy' made outside the stack is on the queue."""


LEGACY = Resource("LegacyShare", share_spec("legacy", limits={G5: 2},
                                            strategy=SharingStrategy.LEND, tags={}))
BUSY_VISION = (("vision", "RUNNING", 1, 1),) * 3
DEPLOYMENTS = (
    Deployment("unchanged", BASE, ("vision", "NONE")),
    Deployment("create", (*BASE, Resource("NlpShare", share_spec("nlp", limits={G5: 2}))),
               ("nlp", "CREATE")),
    Deployment("update", (_with(VISION, capacity_limits=[CapacityLimit(G5, 6)]), SPEECH),
               ("vision", "UPDATE")),
    Deployment("retag", (_with(VISION, tags={"team": "vision", "cost": "ml"}), SPEECH),
               ("vision", "UPDATE")),
    Deployment("shrink-busy", (_with(VISION, capacity_limits=[CapacityLimit(G5, 1)]), SPEECH),
               ("vision", "UPDATE"), BUSY_VISION),
    Deployment("shrink-opted-in", (_with(
        VISION, capacity_limits=[CapacityLimit(G5, 1)],
        opt_ins=GuardOptIns(allow_preemption_on_shrink=True)), SPEECH),
        ("vision", "UPDATE"), BUSY_VISION),
    Deployment("rename", (_with(VISION, name="vision-2"), SPEECH), ("vision-2", "RENAME")),
    Deployment("rename-busy", (_with(VISION, name="vision-2"), SPEECH), ("vision-2", "RENAME"),
               (("vision", "RUNNABLE", 1, 1),)),
    Deployment("delete", (VISION,), ("speech", "DELETE")),
    Deployment("delete-busy", (VISION,), ("speech", "DELETE"), (("speech", "RUNNING", 1, 1),)),
    Deployment("adopt", (*BASE, _with(LEGACY, opt_ins=GuardOptIns(adopt_existing=True))),
               ("legacy", "ADOPT"), hand_made=True),
    Deployment("adopt-unasked", (*BASE, LEGACY), ("legacy", "ADOPT"), hand_made=True),
    Deployment("in-share-on", (VISION, _with(SPEECH, in_share_preemption=True)),
               ("speech", "UPDATE"), (("speech", "RUNNING", 2, 1), ("speech", "SUBMITTED", 1, 9))),
    Deployment("in-share-on-opted-in", (VISION, _with(
        SPEECH, in_share_preemption=True,
        opt_ins=GuardOptIns(allow_preemption_on_in_share_enable=True))),
        ("speech", "UPDATE"), (("speech", "RUNNING", 2, 1), ("speech", "PENDING", 1, 9))),
    Deployment("disable", (VISION, _with(SPEECH, enabled=False)), ("speech", "UPDATE")),
)
WAYS = ("stack-id", "manifest", "stack-name")
"""--stack-id; the cloud assembly's manifest (stack name 'platform' for PlatformStack's
template); --stack platform for a template whose file name says nothing."""


def _template(declared: tuple[Resource, ...], queue: str) -> dict[str, Any]:
    return {"Resources": {r.logical_id: {"Type": "Custom::BatchQuotaShare",
                                         "Properties": r.properties(queue)} for r in declared}}


def _cloud_assembly(tmp_path: Path, template: dict[str, Any], way: str) -> tuple[Path, list[str]]:
    """The template where ``cdk synth`` writes it, and the options that tell the stack."""
    out = tmp_path / "cdk.out"
    out.mkdir()
    path = out / "PlatformStack.template.json"
    path.write_text(json.dumps(template))
    if way == "stack-id":
        return path, ["--stack-id", STACK_ID]
    if way == "stack-name":
        return path, ["--stack", "platform"]
    # The stack's construct id differs from its name: the manifest says which is which.
    (out / "manifest.json").write_text(json.dumps({"version": "36.0.0", "artifacts": {
        "PlatformStack": {"type": "aws:cloudformation:stack", "properties": {
            "templateFile": "PlatformStack.template.json", "stackName": "platform"}}}}))
    return path, []


def _as_cloudformation_deploys(batch: Batch, resources: dict[str, StackResource],
                               declared: tuple[Resource, ...]) -> list[Outcome | None]:
    """Creates and updates, then the cleanup's deletes of what the template no longer has."""
    outcomes: list[Outcome | None] = []
    wanted = {r.logical_id: r.properties(batch.training) for r in declared}
    for logical_id, properties in wanted.items():
        resource = resources.get(logical_id)
        if resource is None:
            resource = resources[logical_id] = StackResource(logical_id, handler=batch.handler)
            outcomes.append(resource.create(properties))
        elif properties != resource.properties:
            outcome = resource.update(properties)
            outcomes += [outcome, outcome.cleanup]
    for logical_id in sorted(set(resources) - set(wanted)):
        outcomes.append(resources[logical_id].delete())
    return outcomes


def _before(batch: Batch, deployment: Deployment) -> dict[str, StackResource]:
    """The stack's shares as its last deployment left them, the jobs running and waiting."""
    resources = {r.logical_id: StackResource(r.logical_id, handler=batch.handler) for r in BASE}
    for resource in BASE:
        assert resources[resource.logical_id].create(resource.properties(batch.training)).ok
    if deployment.hand_made:
        batch.state.add_share(batch.training, "legacy", {G5: 2}, "LEND", tags={"made": "hand"})
    arns = {share.name: share.arn for share in batch.state.shares.values()}
    for share, status, size, priority in deployment.jobs:
        batch.state.add_job(arns[share], status, {G5: size}, priority=priority)
    return resources


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=lambda d: d.name)
def test_preview_finds_its_stack_and_agrees_with_the_handler(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    deployment: Deployment, way: str,
) -> None:
    resources = _before(batch, deployment)
    path, stack_options = _cloud_assembly(
        tmp_path, _template(deployment.declared, batch.training), way)
    batch.state.calls.clear()

    code = cli(["preview", "--queue", "training", "--template", str(path), "--json",
                *stack_options])

    result = json.loads(capsys.readouterr().out)
    assert batch.state.mutations() == [], "preview changed the live queue"
    assert result["stack"]["id"] == STACK_ID and result["cannot_tell"] is False
    assert deployment.action in [(c["share"], c["action"]) for c in result["changes"]]
    outcomes = _as_cloudformation_deploys(batch, resources, deployment.declared)
    handler_refused, handler_jobs = _named_jobs(*outcomes)
    refused = [c for c in result["changes"] if c["refused"]]
    assert result["refused"] is handler_refused, (result, [o and o.reason for o in outcomes])
    assert code == (1 if handler_refused else 0)
    # The same jobs named (the reason is the handler's own message), the ones at stake listed.
    assert {j for c in refused for j in JOB_ID.findall(c["reason"])} == handler_jobs
    assert {j for c in refused for j in (*c["preemptible_jobs"], *c["terminated_jobs"])} <= (
        handler_jobs)


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=lambda d: d.name)
def test_without_its_stack_preview_never_refuses_what_the_handler_applies(
    batch: Batch, tmp_path: Path, capsys: pytest.CaptureFixture[str], deployment: Deployment,
) -> None:
    # The template's file name names no stack CloudFormation knows, and nothing else does:
    # what depends on whose the shares are is "cannot tell" (exit status 3), never "refused"
    # for a change the handler applies, and never "ok" for one it refuses.
    resources = _before(batch, deployment)
    path = tmp_path / "Unrelated.template.json"
    path.write_text(json.dumps(_template(deployment.declared, batch.training)))

    code = cli(["preview", "--queue", "training", "--template", str(path), "--json"])

    result = json.loads(capsys.readouterr().out)
    assert result["stack"]["id"] is None and "Unrelated" in result["stack"]["cannot_tell_why"]
    outcomes = _as_cloudformation_deploys(batch, resources, deployment.declared)
    handler_refused, _ = _named_jobs(*outcomes)
    assert not result["refused"] or handler_refused, result
    assert result["refused"] or result["cannot_tell"] or not handler_refused, result
    assert code == (1 if result["refused"] else 3 if result["cannot_tell"] else 0)
