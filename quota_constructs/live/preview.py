"""``quota-constructs preview``: what deploying a declaration would do to the live queue.

Each declared share is parsed exactly as the custom resource parses its event
(:class:`~quota_constructs.runtime.share_request.ShareEvent` → ``ShareDeclaration``, through the
model's wire format), and judged by the functions the custom resource's handler runs:
:func:`~quota_constructs.runtime.provisioning.adoption_refusal` for a share of that name already
on the queue, :func:`~quota_constructs.runtime.guards.assess_shrink` and
:func:`~quota_constructs.runtime.guards.assess_in_share_enable` for an update (in that order,
as the handler checks them), and
:func:`~quota_constructs.runtime.guards.assess_delete` with
:func:`~quota_constructs.runtime.ownership.release_on_delete` for a share the deployment removes
— against the same live reads (GetJobQueueSnapshot, ListServiceJobs per share).

Actions, per share:

- ``CREATE``: no share of that name, and none of the same resource under another name.
- ``RENAME``: no share of that name, but a live share carries the same resource's owner marker
  (the stack's id + the template's logical id): CloudFormation creates the new share, then
  deletes the old one through the delete guard — judged by the *old* share's lifecycle record.
- ``UPDATE`` / ``NONE``: the resource's own share, changed or not.
- ``ADOPT``: a share of that name this resource does not own (refused unless
  ``adopt_existing``).
- ``DELETE``: a live share managed by a quota-constructs custom resource (it carries an owner
  marker) that the declaration no longer accounts for. A delete is judged by the opt-ins of the
  share's *last deployment*, which the custom resource records on the share
  (``quota-constructs:lifecycle``); a share without the record is judged with the guards on.

Which live shares are the deploying stack's own is told by the stack's id
(:mod:`.deploying_stack`: ``--stack-id``, else the id CloudFormation's DescribeStacks gives for
the stack's name, which ``--stack``, the template's cloud assembly or the declaration's
``stack_name`` tells). The owner marker hashes the stack id and the resource's logical id, so it
is recomputed when both are known (a template); a declaration object has no logical ids, and a
same-named share is then the stack's when its lifecycle record names the stack, another stack's
when it names another. With the stack's id, a managed share the declaration omits is reported as
deleted only when its lifecycle record names this stack (or names none: deployed by a version
that did not record the stack); the shares other stacks deploy on the same queue are left out.

Where whose a share is cannot be told (no stack id; or a same-named share whose record names no
stack, judged without logical ids), a change is judged both ways — as the stack's own share and
as another stack's — and reported by what both say: refused when both refuse, applied when both
apply, and otherwise ``cannot_tell`` (never refused): the command then exits with status 3, its
own. The same holds for the tags an update may drop: the custom resource removes the tags the
previous deployment declared, which preview does not know, so an update whose tags fit only if
some of the share's undeclared tags go is ``cannot_tell``.

Assumptions, stated once: the declaration is the stack's complete set of custom-resource shares.
Renames and deletes happen in CloudFormation's cleanup phase, where a refusal leaves the old
share in place instead of rolling the stack back; preview still reports them refused (exit
status 1), because the custom resource's delete fails and the share with its jobs stays.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from quota_constructs.cli.declarations import CLOUDFORMATION, Declaration, declaration_of
from quota_constructs.model import (
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
)
from quota_constructs.runtime.adoption import FIELD_NAMES
from quota_constructs.runtime.guards import (
    InShareAssessment,
    ShareUpdate,
    ShrinkAssessment,
    assess_delete,
    assess_in_share_enable,
    assess_shrink,
)
from quota_constructs.runtime.ownership import is_owned, owner_of, release_on_delete, stack_marker
from quota_constructs.runtime.provisioning import (
    adoption_refusal,
    deleting_refusal,
    tag_budget_refusal,
)
from quota_constructs.runtime.share_request import (
    GuardOptIns,
    ShareDeclaration,
    ShareEvent,
    recorded_stack,
)
from quota_constructs.wire.custom_resource import (
    CUSTOM_RESOURCE_TYPE,
    NATIVE_RESOURCE_TYPE,
    RUNTIME_TAG_KEYS,
    guard_properties,
)
from quota_constructs.wire.lifecycle_record import restore_pending
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn, is_job_queue_arn
from quota_constructs.wire.share_codec import resource_properties
from quota_constructs.wire.share_config import ShareConfig

from . import command_line
from .deploying_stack import DeployingStack, deploying_stack, stack_name_of_template
from .queue_reader import QueueReader

CREATE, UPDATE, RENAME, DELETE, ADOPT, NONE = (
    "CREATE", "UPDATE", "RENAME", "DELETE", "ADOPT", "NONE"
)
UNKNOWN_STACK = "quota-constructs-preview:unknown-stack"


@dataclass(frozen=True)
class DeclaredShare:
    """One share as a deployment declares it: the resource's properties (wire format)."""

    properties: Mapping[str, Any]
    logical_id: str = ""
    guarded: bool = True
    """False for a plain ``AWS::Batch::QuotaShare`` (CloudFormation applies no guard)."""

    @classmethod
    def of_spec(cls, spec: QuotaShareSpec, job_queue: str, *,
                opt_ins: GuardOptIns | None = None, logical_id: str = "") -> DeclaredShare:
        # As the construct renders them (the later switches only when set).
        chosen = asdict(opt_ins or GuardOptIns())
        return cls({**resource_properties(spec, job_queue), **guard_properties(chosen)},
                   logical_id)


@dataclass(frozen=True)
class Change:
    share: str
    action: str
    refused: bool = False
    reason: str | None = None
    preemptible_jobs: tuple[str, ...] = ()
    """Dispatched jobs that become eligible for preemption (when refused: the ones the guard
    names)."""
    terminated_jobs: tuple[str, ...] = ()
    """Active jobs that deleting a share would terminate (when refused: the ones the guard
    names)."""
    renamed_from: str | None = None
    cannot_tell: bool = False
    """Whether the handler refuses this change depends on what preview cannot know (whose the
    share is, which tags the previous deployment declared); ``refused`` is then False and the
    reason gives both outcomes."""

    def to_json(self) -> dict[str, Any]:
        data = command_line.json_of(self, when_set={"renamed_from"})
        if not self.cannot_tell:
            # Only where it applies: the contract's fields stay as they were.
            del data["cannot_tell"]
        return data


@dataclass(frozen=True)
class Preview:
    queue: str
    changes: tuple[Change, ...] = field(default_factory=tuple)
    stack: DeployingStack = field(default_factory=DeployingStack)

    @property
    def refused(self) -> bool:
        return any(change.refused for change in self.changes)

    @property
    def cannot_tell(self) -> bool:
        """Nothing is refused for certain, but some change may be: whether the deployment
        would be refused cannot be told."""
        return not self.refused and any(change.cannot_tell for change in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {"queue": self.queue, "refused": self.refused, "cannot_tell": self.cannot_tell,
                "stack": self.stack.to_json(),
                "changes": [change.to_json() for change in self.changes]}


def preview(
    queue: str,
    declared: Sequence[DeclaredShare],
    *,
    reader: QueueReader | None = None,
    stack_id: str | None = None,
    stack_name: str | None = None,
    stack: DeployingStack | None = None,
) -> Preview:
    """Judge deploying ``declared`` against the live ``queue`` (see the module docstring), as
    the deployment of the stack ``stack_id`` (its ARN), else of the stack called ``stack_name``
    (its id asked of CloudFormation), else of ``stack`` as found by the caller; with none of
    them, the changes that depend on which shares are the stack's are ``cannot_tell``."""
    reader = reader or QueueReader.connect()
    facts = reader.queue(queue)
    deploying = stack or deploying_stack(stack_id, stack_name, "stack_name")
    live = {share.name: share for share in reader.shares(facts.arn, with_tags=True)}
    accounted: set[str] = set()
    changes: list[Change] = []
    for item in declared:
        declaration = _declaration(item, facts.arn, deploying.stack_id)
        if not _same_queue(declaration.job_queue, facts.name, facts.arn):
            continue
        changes.append(_judge(reader, item, declaration, live, accounted, deploying))
    this_stack = stack_marker(deploying.stack_id) if deploying.stack_id is not None else None
    for name, share in sorted(live.items()):
        if name in accounted or owner_of(share.tags) is None or deploying.new:
            continue  # (a stack not created yet has no share to delete)
        deployed_by = recorded_stack(share.tags)
        if this_stack is not None and deployed_by is not None and deployed_by != this_stack:
            continue  # another stack's share on the same queue: this deployment leaves it
        deletion = _judge_delete(reader, share, DELETE, share.name)
        if this_stack is None:
            deletion = _perhaps_another_stacks(deletion, share)
        changes.append(deletion)
    return Preview(facts.name, tuple(changes), deploying)


def _judge(
    reader: QueueReader,
    item: DeclaredShare,
    declaration: ShareDeclaration,
    live: Mapping[str, LiveShare],
    accounted: set[str],
    stack: DeployingStack,
) -> Change:
    name = declaration.name
    existing = live.get(name)
    # The owner marker hashes stack id and logical id: recomputed only when both are known.
    owner_known = stack.stack_id is not None and (bool(item.logical_id) or stack.new)
    if existing is not None:
        accounted.add(name)
        if not item.guarded:
            return _judge_update(reader, declaration, existing, UPDATE, guarded=False)
        marker = owner_of(existing.tags)
        if marker is None or owner_known:
            return _judge_existing(reader, declaration, existing)
        # A declaration object has no logical ids: with the stack id, the lifecycle record
        # tells whether this stack deployed the share (a name is unique on the queue).
        deployed_by = recorded_stack(existing.tags)
        if stack.stack_id is not None and deployed_by is not None:
            if deployed_by == stack_marker(stack.stack_id):
                declaration = _with_owner(declaration, marker)
            return _judge_existing(reader, declaration, existing)
        return _either_owner(reader, declaration, existing, marker, stack)
    source = next(
        (share for share in live.values()
         if owner_known and item.guarded and owner_of(share.tags) == declaration.owner
         and share.name not in accounted),
        None,
    )
    if source is None:
        return Change(name, CREATE, reason=None)
    accounted.add(source.name)
    deletion = _judge_delete(reader, source, RENAME, name, owner=declaration.owner)
    return Change(name, RENAME, deletion.refused, deletion.reason, (),
                  deletion.terminated_jobs, source.name)


def _judge_existing(reader: QueueReader, declaration: ShareDeclaration,
                    share: LiveShare) -> Change:
    """A same-named share, judged as the handler's Create or Update judges it."""
    owned = is_owned(share.tags, declaration.owner)
    action = UPDATE if owned else ADOPT
    refusal = adoption_refusal(share, declaration)
    if refusal is not None:
        return Change(declaration.name, action, True, refusal)
    return _judge_update(reader, declaration, share, action)


def _either_owner(reader: QueueReader, declaration: ShareDeclaration, share: LiveShare,
                  marker: str, stack: DeployingStack) -> Change:
    """A same-named managed share that may or may not be this stack's: judged both ways."""
    as_own = _judge_existing(reader, _with_owner(declaration, marker), share)
    as_other = _judge_existing(reader, declaration, share)
    why = _unconfirmed_owner(share, stack)
    preemptible = tuple(dict.fromkeys((*as_own.preemptible_jobs, *as_other.preemptible_jobs)))
    terminated = tuple(dict.fromkeys((*as_own.terminated_jobs, *as_other.terminated_jobs)))
    both = f"as this stack's: {_verdict(as_own)}; as another stack's: {_verdict(as_other)}"
    if as_own.refused and as_other.refused:
        return Change(declaration.name, as_own.action, True,
                      f"refused whether or not it is this stack's share ({why}): {both}",
                      preemptible, terminated)
    if as_own.refused or as_other.refused or as_own.cannot_tell or as_other.cannot_tell:
        return Change(declaration.name, as_own.action, False,
                      f"preview cannot tell whether the deployment is refused: {why}; {both}",
                      preemptible, terminated, cannot_tell=True)
    reason = "; ".join(part for part in (
        as_own.reason, f"were it another stack's share ({why}), this deployment adopts it: "
        f"{_verdict(as_other)}") if part)
    return Change(declaration.name, as_own.action, False, reason, preemptible, terminated)


def _verdict(change: Change) -> str:
    if change.cannot_tell:
        return f"cannot tell ({change.reason})"
    if change.refused:
        return f"{change.action} refused: {change.reason}"
    return f"{change.action} applied" + (f" ({change.reason})" if change.reason else "")


def _judge_update(
    reader: QueueReader, declaration: ShareDeclaration, share: LiveShare, action: str, *,
    guarded: bool = True,
) -> Change:
    name = declaration.name
    arn = QuotaShareArn.parse(share.arn)
    if arn is None:
        return Change(name, action, True, f"unexpected quota share ARN {share.arn!r}")
    if share.status == "DELETING":
        return Change(name, action, True, deleting_refusal(name, declaration.job_queue))
    # In the handler's order: the tag budget, the shrink guard, then the in-share preemption
    # guard; the first that refuses is the deployment's failure.
    tags_refused, tags_unsure = _tag_budget(share, declaration, action) if guarded else ("", "")
    if tags_refused:
        return Change(name, action, True, tags_refused)
    target = ShareConfig.declared(declaration.spec)
    fields = share.config.update_fields(target)
    tags = declaration.kept_tags if guarded else declaration.declared_tags
    retagged = any(share.tags.get(key) != value for key, value in tags.items())
    if not fields:
        if tags_unsure:
            return Change(name, action, False, tags_unsure, cannot_tell=True)
        return Change(name, action if action == ADOPT or retagged else NONE)
    opt_ins = declaration.opt_ins
    update = ShareUpdate(arn, share.config, target)
    shrink = assess_shrink(reader, update, read_when_waived=True,
                           allow_preemption=opt_ins.allow_preemption_on_shrink or not guarded)
    shrink_jobs = tuple(job.job_id for job in shrink.at_risk)
    if shrink.refused:
        return Change(name, action, True, str(shrink.error(arn)), shrink_jobs)
    in_share = assess_in_share_enable(
        reader, update, read_when_waived=True,
        allow_preemption=opt_ins.allow_preemption_on_in_share_enable or not guarded)
    in_share_jobs = tuple(ranked.job.job_id for ranked in in_share.at_risk)
    if in_share.refused:
        return Change(name, action, True, str(in_share.error(arn)), in_share_jobs)
    notes = _update_notes(share, shrink, in_share, guarded=guarded)
    jobs = tuple(dict.fromkeys((*shrink_jobs, *in_share_jobs)))
    if tags_unsure:
        return Change(name, action, False, "; ".join([tags_unsure, *notes]), jobs,
                      cannot_tell=True)
    return Change(name, action, False, "; ".join(notes) or None, jobs)


def _update_notes(share: LiveShare, shrink: ShrinkAssessment, in_share: InShareAssessment, *,
                  guarded: bool) -> list[str]:
    """What an update the guards let through does to the share's jobs, and what else to know."""
    notes = []
    if shrink.at_risk:
        units = ", ".join(lowered.unit for lowered, _ in shrink.exceeded)
        waiver = "allow_preemption_on_shrink is set" if guarded else "no guard (CloudFormation)"
        notes.append(f"lowers {units} below what the share uses; {waiver}: these jobs become "
                     "eligible for preemption")
    if in_share.at_risk:
        waiver = ("allow_preemption_on_in_share_enable is set" if guarded
                  else "no guard (CloudFormation)")
        notes.append(f"turns in-share preemption on while higher-priority jobs wait; {waiver}: "
                     f"AWS Batch may preempt these jobs at once: {in_share.victims()}")
    pending = restore_pending(share.tags)
    if pending:
        notes.append(
            "a rolled-back adoption left the share's "
            + ", ".join(FIELD_NAMES[name] for name in pending)
            + " as they were (restoring them would have preempted jobs): this deployment "
            "restores them, but CloudFormation sends the share's resource an update only when "
            "its properties change")
    if not notes and not share.settled:
        notes.append(f"the share is {share.status}; the deployment waits until Batch settles it")
    return notes


def _tag_budget(share: LiveShare, declaration: ShareDeclaration, action: str) -> tuple[str, str]:
    """``(refusal, doubt)``: why the handler refuses the tags for certain, or why it may (an
    update drops the tags the previous deployment declared, which preview does not know)."""
    if action == ADOPT:  # a Create: no previous declaration, nothing dropped
        return tag_budget_refusal(share, declaration, adopting=True) or "", ""
    most = tag_budget_refusal(share, declaration, adopting=False)
    if most is None:
        return "", ""
    undeclared = [key for key in share.tags
                  if key not in declaration.kept_tags and key not in RUNTIME_TAG_KEYS]
    least = tag_budget_refusal(share, declaration, adopting=False, dropped=undeclared)
    if least is not None:
        return least, ""
    return "", (f"preview cannot tell whether the tags fit: {most} Unless the previous "
                "deployment declared enough of the tags the share carries that this declaration "
                "does not set (the custom resource removes those), it is refused")


def _judge_delete(
    reader: QueueReader, share: LiveShare, action: str, declared_name: str, *,
    owner: str | None = None,
) -> Change:
    arn = QuotaShareArn.parse(share.arn)
    if arn is None:
        return Change(declared_name, action, True, f"unexpected quota share ARN {share.arn!r}")
    deleting_owner = owner or owner_of(share.tags) or ""
    release = release_on_delete(share.tags, deleting_owner)
    if share.status == "DELETING" or release is not None:
        why = "already being deleted" if release is None else f"released: {release.reason}"
        return Change(declared_name, action, reason=f"share {share.name!r} {why}")
    recorded = GuardOptIns.from_tags(share.tags)
    opt_ins = recorded or GuardOptIns()
    assessment = assess_delete(reader, arn, read_when_waived=True,
                               terminate_active_jobs=opt_ins.terminate_active_jobs_on_delete)
    jobs = tuple(job.job_id for job in assessment.active)
    if assessment.refused:
        return Change(declared_name, action, True, str(assessment.error(arn)), (), jobs)
    note = None
    if jobs:
        note = (f"share {share.name!r}'s last deployment set terminate_active_jobs_on_delete: "
                "deleting it terminates these jobs")
    elif recorded is None:
        note = (f"share {share.name!r} carries no lifecycle record (deployed by an older "
                "version): judged with the guards on")
    return Change(declared_name, action, False, note, (), jobs)


def _perhaps_another_stacks(deletion: Change, share: LiveShare) -> Change:
    """A managed share the declaration omits, while the deploying stack is unknown: deleted if
    it is this stack's, left alone if it is another's."""
    recorded = recorded_stack(share.tags)
    named = f"its lifecycle record names stack marker {recorded}; " if recorded else ""
    whose = (f"preview cannot tell whether share {share.name!r} is this stack's ({named}the "
             "deploying stack's id is unknown: pass --stack-id with its ARN, or --stack NAME)")
    if deletion.refused:
        return replace(deletion, refused=False, cannot_tell=True, reason=(
            f"{whose}: if it is, the deployment deletes it and is refused: {deletion.reason}; "
            "if it is another stack's, this deployment leaves it alone"))
    return replace(deletion, reason="; ".join(part for part in (
        deletion.reason, f"{whose}: if it is another stack's, this deployment leaves it alone")
        if part))


def _declaration(item: DeclaredShare, queue_arn: str, stack_id: str | None) -> ShareDeclaration:
    properties = dict(item.properties)
    if not isinstance(properties.get("JobQueue"), str):
        # A template refers to its queue with Ref / Fn::GetAtt: it is the queue previewed.
        properties["JobQueue"] = queue_arn
    tags = properties.get("Tags")
    if isinstance(tags, Mapping):
        properties["Tags"] = {k: v for k, v in tags.items() if isinstance(v, str)}
    elif isinstance(tags, list):
        # AWS::Batch::QuotaShare may carry CloudFormation's [{Key, Value}] form.
        properties["Tags"] = {t.get("Key"): t.get("Value") for t in tags
                              if isinstance(t, Mapping) and isinstance(t.get("Value"), str)}
    event = {
        "RequestType": "Create",
        "StackId": stack_id or UNKNOWN_STACK,
        "LogicalResourceId": item.logical_id,
        "ResourceProperties": properties,
    }
    return ShareEvent.parse(event).declaration()


def _unconfirmed_owner(share: LiveShare, stack: DeployingStack) -> str:
    """Why preview cannot match a same-named managed share to the deploying resource."""
    recorded = recorded_stack(share.tags)
    deployed_by = f", last deployed by stack marker {recorded}" if recorded else ""
    if stack.stack_id is not None:
        missing = ("the declaration carries no logical ids and the share's lifecycle record "
                   "names no stack (deployed by an older version): preview the synthesized "
                   "template (--template) to judge it exactly")
    else:
        missing = ("the deploying stack's id is unknown (the result's stack says why); pass "
                   "--stack-id with its ARN, or --stack NAME")
    return (f"share {share.name!r} is managed by a quota-constructs resource (owner marker "
            f"{owner_of(share.tags)}{deployed_by}) that preview cannot match to this "
            f"deployment: {missing}")


def _with_owner(declaration: ShareDeclaration, owner: str) -> ShareDeclaration:
    return ShareDeclaration(declaration.spec, declaration.job_queue, declaration.opt_ins, owner,
                            declaration.previously_declared_tag_keys, declaration.stack)


def _same_queue(reference: str, name: str, arn: str) -> bool:
    return reference == arn if is_job_queue_arn(reference) else reference == name


# -- reading declarations ---------------------------------------------------------------------


def declared_from_template(
    template: Mapping[str, Any], queue: str, *, queue_resource: str | None = None
) -> list[DeclaredShare]:
    """The quota shares a synthesized template (``cdk.out/STACK.template.json``) declares on
    ``queue`` (a name or ARN).

    A share's ``JobQueue`` is a literal, or refers to the template's own ``AWS::Batch::JobQueue``
    (``Ref`` / ``Fn::GetAtt``), or to another stack's (``Fn::ImportValue``). A literal, or a
    template queue with a literal ``JobQueueName``, is compared with ``queue``; a queue the
    template does not name is taken to be ``queue`` when it is the template's only one, or when
    ``queue_resource`` (its logical id) says so.
    """
    resources = template.get("Resources") or {}
    shares = [
        (logical_id, resource) for logical_id, resource in sorted(resources.items())
        if isinstance(resource, Mapping)
        and resource.get("Type") in (CUSTOM_RESOURCE_TYPE, NATIVE_RESOURCE_TYPE)
    ]
    unnamed: dict[str, bool] = {}
    chosen: list[tuple[str, Mapping[str, Any]]] = []
    for logical_id, resource in shares:
        reference = (resource.get("Properties") or {}).get("JobQueue")
        if isinstance(reference, str):
            if _name_of(reference) == _name_of(queue):
                chosen.append((logical_id, resource))
            continue
        target = _referenced_resource(reference)
        queue_name = ((resources.get(target) or {}).get("Properties") or {}).get("JobQueueName")
        if isinstance(queue_name, str):
            if queue_name == _name_of(queue):
                chosen.append((logical_id, resource))
            continue
        key = target or json.dumps(reference, sort_keys=True)
        if queue_resource is None or key == queue_resource:
            unnamed[key] = True
            chosen.append((logical_id, resource))
    if len(unnamed) > 1:
        raise QuotaConfigError(
            "preview", "--template", f"shares on {len(unnamed)} job queues the template does "
            f"not name ({', '.join(sorted(unnamed))})",
            "--queue-resource LOGICAL_ID naming the template's resource for --queue",
        )
    return [DeclaredShare(resource.get("Properties") or {}, logical_id,
                          guarded=resource.get("Type") == CUSTOM_RESOURCE_TYPE)
            for logical_id, resource in chosen]


def _referenced_resource(reference: object) -> str | None:
    if isinstance(reference, Mapping):
        if isinstance(reference.get("Ref"), str):
            return str(reference["Ref"])
        attribute = reference.get("Fn::GetAtt")
        if isinstance(attribute, list) and attribute and isinstance(attribute[0], str):
            return attribute[0]
    return None


def _name_of(queue: str) -> str:
    return queue.rsplit("job-queue/", 1)[-1]


def declared_from_declaration(declaration: Declaration, job_queue: str) -> list[DeclaredShare]:
    """The shares of ``declaration`` (the one shape every command reads, see
    :mod:`quota_constructs.cli.declarations`) as the resources a deployment of it declares on
    ``job_queue``: each share with its own lifecycle switches (``lifecycle`` /
    ``lifecycle_by_share``), guarded unless ``provisioning`` is CLOUDFORMATION.

    The declaration is checked as the synth checks it first (``QuotaAllocation.check``): a
    deployment of an allocation the synth refuses never reaches the custom resource."""
    QuotaAllocation.check(environment_limits=declaration.capacity_limits,
                          shares=declaration.shares, queue_name=declaration.queue_name)
    if declaration.provisioning == CLOUDFORMATION:
        return [DeclaredShare(resource_properties(spec, job_queue), guarded=False)
                for spec in declaration.shares]
    return [
        DeclaredShare.of_spec(spec, job_queue, opt_ins=declaration.lifecycle_of(spec.name))
        for spec in declaration.shares
    ]


def queue_of(option: str | None, declaration: Declaration | None) -> str:
    """``--queue``, or the declaration's ``queue_name``; they must agree when both are given."""
    named = None if declaration is None else declaration.queue_name
    if option is None:
        if named is None:
            raise QuotaConfigError("preview", "--queue", None, "the job queue's name or ARN "
                                   "(required unless the declaration has a queue_name)")
        return named
    if named is not None and _name_of(option) != named:
        raise QuotaConfigError("preview", "--queue", option,
                               f"the declaration's queue_name {named!r} (or leave --queue out)")
    return option


# -- command line -----------------------------------------------------------------------------


def render_text(result: Preview) -> str:
    lines = [f"preview against job queue {result.queue}, {_judged_as(result.stack)}:"]
    for change in result.changes:
        verdict = "REFUSED" if change.refused else "CANNOT TELL" if change.cannot_tell else "ok"
        source = f" (from {change.renamed_from})" if change.renamed_from else ""
        lines.append(f"  {change.action:<6} {change.share}{source}: {verdict}")
        if change.reason:
            lines.append(f"         {change.reason}")
        if change.preemptible_jobs:
            lines.append(f"         preemptible: {', '.join(change.preemptible_jobs)}")
        if change.terminated_jobs:
            lines.append(f"         terminated: {', '.join(change.terminated_jobs)}")
    if result.refused:
        lines.append("the deployment would be REFUSED")
    elif result.cannot_tell:
        lines.append("preview CANNOT TELL whether the deployment would be refused (see above)")
    else:
        lines.append("the guards would let this deployment through")
    return "\n".join(lines)


def _judged_as(stack: DeployingStack) -> str:
    if stack.new:
        return "as the first deployment of a stack not created yet (--new-stack)"
    if stack.stack_id is not None:
        return f"as the deployment of stack {stack.stack_id} ({stack.found_by})"
    return f"without the deploying stack's id ({stack.unknown})"


STACK_ID_FORM = "arn:<partition>:cloudformation:<region>:<account>:stack/<name>/<id>"


def main(argv: Sequence[str] | None = None, prog: str = "quota-constructs preview") -> int:
    parser = command_line.parser(
        prog, "What deploying a declaration would do to the live queue, judged by the custom "
              "resource's own guards. Exit status 1 when the deployment would be refused, 3 "
              "when whether it would be refused cannot be told (the deploying stack is not "
              "found, say), 2 on an error.",
        queue_required=False)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--declaration", metavar="FILE.py:ATTR|MODULE:ATTR",
                        help="the declaration simulate and recommend read: capacity_limits, "
                        "shares, optionally queue_name, stack_name, lifecycle, "
                        "lifecycle_by_share, provisioning")
    source.add_argument("--template", type=Path, help="cdk.out/STACK.template.json")
    parser.add_argument("--queue-resource", help="with --template: the logical id of the "
                        "AWS::Batch::JobQueue (or the reference) that --queue is, when the "
                        "template has several unnamed queues")
    stack = parser.add_mutually_exclusive_group()
    stack.add_argument("--stack-id", help="the deploying stack's id (its ARN): recognises the "
                                          "stack's own shares, and renames, without asking "
                                          "CloudFormation")
    stack.add_argument("--new-stack", action="store_true",
                       help="the deploying stack is not created yet: none of the live shares "
                            "is its own")
    stack.add_argument("--stack", metavar="NAME",
                       help="the deploying stack's name, whose id CloudFormation's "
                            "DescribeStacks gives (default: the stackName the template's "
                            "cdk.out/manifest.json records, else the template's file name; "
                            "the declaration's stack_name)")
    options = parser.parse_args(argv)

    def command() -> int:
        # The declaration is read (and refused) before anything is asked of AWS.
        if options.stack_id is not None and DeployingStack.given(options.stack_id).name is None:
            raise QuotaConfigError("preview", "--stack-id", options.stack_id,
                                   f"a CloudFormation stack ARN ({STACK_ID_FORM})")
        named: tuple[str, str] | None = None
        if options.template is not None:
            queue = queue_of(options.queue, None)
            try:
                template = json.loads(options.template.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise QuotaConfigError("preview", "--template", str(options.template),
                                       f"a readable CloudFormation JSON template ({error})"
                                       ) from error
            declared = declared_from_template(template, queue,
                                              queue_resource=options.queue_resource)
            named = stack_name_of_template(options.template)
        else:
            declaration = declaration_of(options.declaration, options.declaration,
                                         command="preview")
            queue = queue_of(options.queue, declaration)
            declared = declared_from_declaration(declaration, queue)
            if declaration.stack_name is not None:
                named = declaration.stack_name, "the declaration's stack_name"
        if options.stack is not None:
            named = options.stack, "--stack"
        reader = command_line.connect(options)
        name, name_from = named or (None, "")
        deploying = deploying_stack(
            options.stack_id, name, name_from, new=options.new_stack, profile=options.profile,
            region=options.region,
            missing="neither --stack-id, --stack, the template's file name nor the "
                    "declaration's stack_name names the deploying stack")
        result = preview(queue, declared, reader=reader, stack=deploying)
        print(json.dumps(result.to_json(), indent=2) if options.json else render_text(result))
        if result.refused:
            return command_line.REFUSED
        return command_line.CANNOT_TELL if result.cannot_tell else command_line.OK

    return command_line.run(prog, command)
