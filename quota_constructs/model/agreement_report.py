"""The allocation agreement as people read it: one Markdown document per deployment.

For each queue and share it states what the declaration means: who owns the share and why,
what capacity is its own and what it can reach at most, whom it lends to and borrows from,
what its jobs accept when they run on borrowed capacity (the interruption contract), and who
may submit into it at which priorities. A pure renderer of model objects: the constructs
collect the inputs (:func:`quota_constructs.write_allocation_agreements`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from .agreement_submission import SubmissionTerms, how_to_submit_markdown, strictest_ceiling
from .borrow_limit import borrow_allowance
from .borrowing import UNOWNED
from .capacity import CapacityLimit
from .deployed_names import DeployedName, PrincipalNames, QueueNames
from .queue import QuotaAllocation
from .report import describe_borrow_limit
from .share import QuotaShareSpec, SharingStrategy


class GrantLike(Protocol):
    """What the agreement needs of a grant (``quota_constructs.ShareGrant``)."""

    @property
    def principal(self) -> str: ...

    @property
    def permission(self) -> str: ...

    @property
    def max_priority(self) -> int | None: ...


ShrinkGuard = Literal["guarded", "waived", "unguarded"]
"""What a deployment lowering a share's limits below its live usage does: the custom resource
refuses it (``guarded``), lets it through by the share's opt-in (``waived``), or CloudFormation
provisioning has no guard (``unguarded``)."""


@dataclass(frozen=True)
class QueueAgreement:
    """One queue's part of the agreement.

    ``allocation`` is None when the app does not know the environment's capacity (an imported
    queue); ``grants`` lists, by share name, what was granted on each share;
    ``submission_tags``, by share name, the tags a submission under those grants must carry;
    ``shrink_guards``, by share name, what a shrinking deployment does (unknown: not listed);
    ``budget_enforced`` is True when a monitor terminates jobs past their budget, False when it
    only tells the owner, None when the queue is not monitored in this app.
    """

    title: str
    shares: tuple[QuotaShareSpec, ...]
    allocation: QuotaAllocation | None = None
    grants: Mapping[str, Sequence[GrantLike]] = field(default_factory=dict)
    submission_tags: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    shrink_guards: Mapping[str, ShrinkGuard] = field(default_factory=dict)
    budget_enforced: bool | None = None
    names: QueueNames | None = None
    """The queue's physical name and ARN, or the stack outputs that hold them."""
    owner_topics: Mapping[str, DeployedName] = field(default_factory=dict)
    """By owner: the SNS topic that tells the owner (its ARN, or the output holding it)."""


def queue_names_of(queue: QueueAgreement) -> QueueNames:
    """The queue's names; only its title when the collector gave none."""
    return queue.names or QueueNames(path=queue.title.strip("`"), name=DeployedName(),
                                     arn=DeployedName())


def submission_terms(queue: QueueAgreement, spec: QuotaShareSpec) -> SubmissionTerms:
    """What a submission into ``spec`` must carry: the strictest submit ceiling granted (one
    every submitter may use) and the share's interruption budget."""
    submits = [g for g in queue.grants.get(spec.name, ()) if g.permission == "submit"]
    return SubmissionTerms(
        share=spec.name,
        queue=queue_names_of(queue).name,
        max_priority=strictest_ceiling([grant.max_priority for grant in submits]),
        budget=spec.agreement.interruption_budget if spec.agreement else None,
    )


_STRATEGY = {
    SharingStrategy.RESERVE: "keeps its idle capacity to itself; never lends, never borrows",
    SharingStrategy.LEND: "lends its idle capacity to borrowing shares; never borrows",
    SharingStrategy.LEND_AND_BORROW: "lends its idle capacity and borrows others' idle capacity",
}
_SHRINK: dict[ShrinkGuard | None, str] = {
    None: "Lowering its limits makes its own jobs above the new limit preemptible.",
    "guarded": "A deployment that lowers its limits below what its jobs use is refused, and "
    "nothing changes (the custom resource's guard; `ShareLifecycle(allow_preemption_on_shrink="
    "True)` waives it).",
    "waived": "A deployment may lower its limits below what its jobs use "
    "(`ShareLifecycle(allow_preemption_on_shrink=True)`): its jobs above the new limit become "
    "preemptible.",
    "unguarded": "Lowering its limits makes its own jobs above the new limit preemptible at "
    "once (CloudFormation provisioning has no guard).",
}
_PERMISSION = {
    "submit": "submit jobs",
    "update_priority": "change the priorities of this share's jobs",
}


def allocation_agreement_markdown(*, title: str, queues: Sequence[QueueAgreement]) -> str:
    """The whole document for one deployment (a stack), ending with a newline."""
    lines = [
        f"# Allocation agreement: {title}",
        "",
        "What each quota share is for, what capacity it is sure of, what it can reach, and what "
        "its jobs accept. Generated from the typed declaration at synth time; change the "
        "declaration, not this file.",
    ]
    if not queues:
        lines += ["", "This deployment declares no quota shares."]
    for queue in queues:
        lines += ["", *_queue_section(queue)]
    return "\n".join(lines).rstrip("\n") + "\n"


def _queue_section(queue: QueueAgreement) -> list[str]:
    allocation = queue.allocation
    names = queue_names_of(queue)
    heading = f"`{names.name.value}`" if names.name.value is not None else queue.title
    lines = [f"## Job queue {heading}", ""]
    if queue.names is not None:
        lines += [
            f"- Construct: `{names.path}`",
            f"- Name: {names.name.describe()}",
            f"- ARN: {names.arn.describe()}",
            "",
        ]
    if allocation is not None:
        lines.append(f"Service environment: {_limits(allocation.environment_limits)}.")
    else:
        lines.append(
            "Service environment: capacity not declared in this app, so what a share can "
            "reach is not computed."
        )
    lines += [
        "",
        "| Share | Owner | Strategy | Own limit | Can reach | Interruption budget |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for spec in queue.shares:
        agreement = spec.agreement
        lines.append(
            "| "
            + " | ".join(
                _cell(value)
                for value in (
                    spec.name,
                    agreement.owner if agreement else "not declared",
                    spec.strategy.value,
                    _limits(spec.capacity_limits),
                    _reach(allocation, spec),
                    agreement.describe_budget() if agreement else "not declared",
                )
            )
            + " |"
        )
    for spec in queue.shares:
        lines += ["", *_share_section(queue, spec)]
    if allocation is not None and allocation.all_warnings:
        lines += ["", "Warnings:", ""]
        lines += [f"- {warning}" for warning in allocation.all_warnings]
    return lines


def _share_section(queue: QueueAgreement, spec: QuotaShareSpec) -> list[str]:
    agreement = spec.agreement
    heading = f"### {spec.name}" + (f" — {agreement.owner}" if agreement else "")
    lines = [heading, ""]
    if agreement is None:
        lines.append(
            "- **Owner:** not declared (give the spec an `agreement=ShareAgreement(owner=...)`)."
        )
    else:
        lines.append(f"- **Owner:** {agreement.owner}")
        lines.append(f"- **Purpose:** {agreement.purpose or 'not stated'}")
        topic = queue.owner_topics.get(agreement.owner)
        if topic is not None:
            lines.append(
                f"- **Notifications:** SNS topic {topic.describe()} (preemptions, starvation, "
                "drift; subscribe with `QuotaShareMonitoring.subscribe_owner`)"
            )
    state = "" if spec.enabled else " The share is DISABLED: it accepts no new jobs."
    # Unknown capacity: who can borrow from whom is unknown, so the strategy's own words stand.
    lends_out = (
        bool(queue.allocation.rules.borrowers(spec.name)) if queue.allocation is not None
        else spec.strategy.lends
    )
    borrows = (
        queue.allocation.rules.borrows(spec.name) if queue.allocation is not None
        else spec.strategy.borrows
    )
    lines.append(
        f"- **Strategy:** {spec.strategy.value} — {_strategy_text(spec, lends_out, borrows)}."
        f"{state}"
    )
    if spec.strategy.borrows:
        lines.append(f"- **Borrow limit:** {_borrow_text(spec)}")
    lines.append(f"- **Guaranteed capacity:** {_guarantee(spec, lends_out)}")
    lines.append(f"- **Most it can ever reach:** {_reach(queue.allocation, spec)}")
    lines.append(f"- **Lends to:** {_lends_to(queue.allocation, spec)}")
    if spec.strategy.borrows:
        lines.append(f"- **Borrows from:** {_borrows_from(queue.allocation, spec)}")
    lines.append("- **Interruption contract:**")
    lines += [
        f"  - {item}"
        for item in _contract(
            spec, queue.budget_enforced, lends_out, borrows, queue.shrink_guards.get(spec.name)
        )
    ]
    lines += _targets(spec)
    lines.append("- **Who may submit:**")
    grants = queue.grants.get(spec.name, ())
    lines += [f"  - {item}" for item in _grants(grants)]
    lines += [
        f"  - {item}"
        for item in _what_to_send(spec.name, grants, queue.submission_tags.get(spec.name, {}))
    ]
    lines += how_to_submit_markdown(submission_terms(queue, spec))
    return lines


def _contract(
    spec: QuotaShareSpec,
    enforced: bool | None,
    lends_out: bool,
    borrows: bool,
    shrink: ShrinkGuard | None,
) -> list[str]:
    agreement = spec.agreement
    items: list[str] = []
    if agreement is None:
        items.append("Interruption budget: not declared (AWS's default: a preempted job is "
                     "requeued without limit).")
    else:
        budget = agreement.describe_budget()
        items.append(f"Interruption budget: {budget}.")
        if agreement.interruption_budget is not None:
            if enforced is True:
                items.append("A job preempted more often is terminated by the monitoring, and "
                             "the owner is told.")
            elif enforced is False:
                items.append("A job preempted more often is reported to the owner (not "
                             "terminated: enforcement is off).")
            else:
                items.append("Not watched in this app: nobody is told when a job exceeds it.")
        items.append(
            "Workloads are recoverable (they checkpoint; a preemption costs the work since the "
            "last checkpoint)." if agreement.recoverable else
            "Workloads are not declared recoverable: a preemption loses the work of the attempt."
        )
    if borrows:
        items.append("Jobs running on borrowed capacity accept cross-share preemption: when a "
                     "lender's own jobs arrive, Batch preempts borrowing jobs to give the "
                     "capacity back.")
    if lends_out:
        items.append("Its own jobs reclaim lent capacity through cross-share preemption of the "
                     "borrowers.")
    items.append(
        "In-share preemption is on: a higher-priority RUNNABLE job of this share preempts its "
        "lower-priority jobs." if spec.in_share_preemption else
        "In-share preemption is off: its own jobs never preempt each other."
    )
    items.append(_SHRINK[shrink])
    return items


def _targets(spec: QuotaShareSpec) -> list[str]:
    """The share's service targets (``ShareAgreement.target_wait_p95``/``max_budget_failures``),
    which ``quota-constructs recommend`` checks an allocation against."""
    agreement = spec.agreement
    if agreement is None or not agreement.has_targets:
        return []
    return [f"- **Service targets:** {agreement.describe_targets()} (checked by replaying a "
            "workload: `quota-constructs recommend`)."]


def _grants(grants: Sequence[GrantLike]) -> list[str]:
    if not grants:
        return ["No grants declared in this app (whoever IAM already allows)."]
    items = []
    for grant in grants:
        ceiling = (
            "any priority" if grant.max_priority is None
            else f"priority at most {grant.max_priority}"
        )
        what = _PERMISSION.get(grant.permission, grant.permission)
        items.append(
            f"{_principal_text(grant.principal, getattr(grant, 'names', None))} may {what} "
            f"({ceiling})."
        )
    return items


def _principal_text(label: str, names: PrincipalNames | None) -> str:
    """The role's real name or ARN where known, else the output that will hold its ARN; the
    construct path stays beside it, for the reader who knows the code."""
    if names is None or names.kind == "principal":
        return f"`{label}`"
    if names.name.value is not None:
        real = f"{names.kind} `{names.name.value}`"
    elif names.arn.value is not None:
        real = f"{names.kind} `{names.arn.value}`"
    elif names.arn.output is not None:
        real = f"{names.kind} whose ARN is {names.arn.output.describe()}"
    else:
        return f"`{label}`"
    return real if f"`{label}`" in real else f"{real} (`{label}`)"


def _what_to_send(
    name: str, grants: Sequence[GrantLike], tags: Mapping[str, str]
) -> list[str]:
    """What a submission must carry for the grants to allow it: without it, it is denied."""
    submits = [grant for grant in grants if grant.permission == "submit"]
    if not submits:
        return []
    tag_text = ", ".join(f'"{key}": "{value}"' for key, value in sorted(tags.items()))
    items = [
        f'Every submission names the share (`quotaShareName="{name}"`)'
        + (f" and carries its tag (`tags={{{tag_text}}}`)" if tags else "")
        + "; a request without it is denied."
        + (" Only jobs carrying the tag can have their priority changed." if tags else "")
    ]
    if any(grant.max_priority is not None for grant in submits):
        items.append(
            "Under a priority ceiling a submission must carry a `schedulingPriority` no higher "
            "than it; one without a priority is denied. The SageMaker Python SDK drops a "
            "priority of 0 from the request: submit with at least 1."
        )
    return items


def _strategy_text(spec: QuotaShareSpec, lends_out: bool, borrows: bool) -> str:
    """The strategy in words, saying only what the rules let it do in this queue."""
    if spec.strategy is SharingStrategy.RESERVE:
        return _STRATEGY[spec.strategy]
    lending = ("lends its idle capacity to borrowing shares" if lends_out
               else "would lend its idle capacity, but no share of this queue can borrow it")
    if spec.strategy is SharingStrategy.LEND:
        return f"{lending}; never borrows"
    borrowing = ("borrows others' idle capacity" if borrows
                 else "can borrow nothing here (see Borrows from)")
    return f"{lending}; {borrowing}"


def _guarantee(spec: QuotaShareSpec, lends_out: bool) -> str:
    limits = _limits(spec.capacity_limits)
    if spec.strategy is SharingStrategy.RESERVE:
        return f"{limits}, held for it even when idle."
    if not lends_out:
        return f"{limits}; no share of this queue can borrow it, so it stays its own."
    return (f"{limits}; lent out while idle and taken back by preempting borrowers when its jobs "
            "arrive.")


def _reach(allocation: QuotaAllocation | None, spec: QuotaShareSpec) -> str:
    if allocation is None:
        return "unknown (environment capacity not declared)"
    reach = allocation.rules.reach(spec.name)
    return ", ".join(f"{count} × {unit}" for unit, count in reach.items())


def _lends_to(allocation: QuotaAllocation | None, spec: QuotaShareSpec) -> str:
    if not spec.strategy.lends:
        return "nobody (RESERVE)."
    if allocation is None:
        return "not computed (environment capacity not declared in this app)."
    parts = [
        f"{', '.join(rule.borrowers)} ({rule.unit})"
        for rule in allocation.rules.units_of(spec.name) if rule.borrowers
    ]
    if not parts:
        return "nobody: no share of this queue can borrow its capacity."
    return "; ".join(parts) + "."


def _borrows_from(allocation: QuotaAllocation | None, spec: QuotaShareSpec) -> str:
    if allocation is None:
        return "not computed (environment capacity not declared in this app)."
    parts: list[str] = []
    for rule in allocation.rules.units_of(spec.name):
        if not rule.borrows:
            continue
        sources = list(rule.lenders)
        if rule.borrows_unowned:
            sources.append(UNOWNED)
        parts.append(f"{', '.join(sources)}: up to {rule.borrowable} × {rule.unit}")
    if not parts:
        return ("nobody: its borrow limit (rounded down to whole instances) or what the other "
                "shares lend leaves it nothing to borrow, so it runs within its own limit.")
    return "; ".join(parts) + " (only what is left idle)."


def _borrow_text(spec: QuotaShareSpec) -> str:
    limit = describe_borrow_limit(spec)
    if limit == "unlimited":
        return "unlimited (whatever lenders leave idle)."
    if spec.borrow_limit_percent == 0:
        return "0% (never borrows)."
    return (f"{limit} of its own limit per instance type, rounded down to whole instances "
            f"({_allowances(spec)}).")


def _allowances(spec: QuotaShareSpec) -> str:
    return ", ".join(
        f"{borrow_allowance(limit.max_capacity, spec.borrow_limit):g} × {limit.capacity_unit}"
        for limit in spec.capacity_limits
    )


def _limits(limits: Sequence[CapacityLimit]) -> str:
    return ", ".join(f"{limit.max_capacity} × {limit.capacity_unit}" for limit in limits)


def _cell(value: str) -> str:
    # A pipe would end the table cell.
    return value.replace("|", "\\|").replace("\n", " ")
