"""Write the allocation agreement of every deployment (stack) of an app into its cloud assembly.

The agreement itself is rendered by the model (:mod:`quota_constructs.model.agreement_report`);
this module only collects, from the construct tree, what it needs: each queue's shares and
allocation (:func:`quota_constructs.summary.queue_allocations`, the walk the console summary
uses too), the grants made on each share, and whether a monitor enforces budgets.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from aws_cdk import Stack, Stage
from constructs import IConstruct

from ._share_ledger import ledger_of
from .model.agreement_json import allocation_agreement_json
from .model.agreement_report import (
    GrantLike,
    QueueAgreement,
    ShrinkGuard,
    allocation_agreement_markdown,
)
from .model.deployed_names import DeployedName, OutputRef, QueueNames
from .model.tokens import is_unresolved
from .quota_share import QuotaShare, ShareGrant, ShareProvisioning, _QuotaShareBase
from .summary import queue_allocations

AGREEMENTS_DIRECTORY: Final = "agreements"
_UNSAFE_FILE_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]")


def write_allocation_agreements(app: Stage, outdir: str | None = None) -> list[Path]:
    """Write ``<outdir>/agreements/<stack name>.md`` (and its JSON twin ``.json``, see
    :func:`agreement_json_path`) for every stack of ``app`` that holds a
    training job queue with declared shares; return the files written, in stack order.

    Call it after ``app.synth()`` (or at least after every stack is built): shares added from
    other stacks and grants made anywhere in the app are part of the agreement. A queue that
    stands in the app as several constructs (created and imported, or imported twice) has one
    agreement, in the stack of the first of them, as in :func:`allocation_summary`.
    ``outdir`` defaults to the app's cloud assembly directory (``cdk.out``).
    """
    from .monitoring import QuotaShareMonitoring

    # Keyed by the queue's one record of shares, so that a grant or a monitor made through
    # any construct standing for the queue counts.
    grants: dict[int, list[tuple[str, ShareGrant]]] = defaultdict(list)
    submission_tags: dict[int, dict[str, Mapping[str, str]]] = defaultdict(dict)
    shrink_guards: dict[int, dict[str, ShrinkGuard]] = defaultdict(dict)
    in_share_guards: dict[int, dict[str, ShrinkGuard]] = defaultdict(dict)
    enforced: dict[int, bool | None] = {}
    owner_topics: dict[int, dict[str, DeployedName]] = defaultdict(dict)
    for node in app.node.find_all():
        if isinstance(node, QuotaShare):
            shrink_guards[_identity(node.job_queue)][node.spec.name] = _shrink_guard(node)
            in_share_guards[_identity(node.job_queue)][node.spec.name] = _guard(
                node, node.lifecycle.allow_preemption_on_in_share_enable)
        if isinstance(node, _QuotaShareBase) and node.grants:
            queue = getattr(node, "job_queue", None)
            name = getattr(node, "quota_share_name", None)
            if queue is not None and isinstance(name, str):
                grants[_identity(queue)].extend((name, grant) for grant in node.grants)
                submission_tags[_identity(queue)][name] = node.submission_tags
        elif isinstance(node, QuotaShareMonitoring):
            # Two monitors of one queue: a job is terminated if either one enforces.
            key = _identity(node.job_queue)
            watched = [enforced.get(key), node.enforces_interruption_budget]
            known = [value for value in watched if value is not None]
            enforced[key] = any(known) if known else None
            owner_topics[key].update(node.owner_topic_names)
    by_stack: dict[str, tuple[Stack, list[QueueAgreement]]] = {}
    for item in queue_allocations(app):
        if not item.shares:
            continue
        key = _identity(item.queue)
        stack = Stack.of(item.queue)
        share_grants: dict[str, list[GrantLike]] = defaultdict(list)
        for name, grant in grants.get(key, []):
            share_grants[name].append(grant)
        entry = by_stack.setdefault(stack.node.path, (stack, []))
        entry[1].append(
            QueueAgreement(
                title=_queue_title(item.queue),
                shares=item.shares,
                allocation=item.allocation,
                grants=dict(share_grants),
                submission_tags=submission_tags.get(key, {}),
                shrink_guards=shrink_guards.get(key, {}),
                in_share_guards=in_share_guards.get(key, {}),
                budget_enforced=enforced.get(key),
                names=_queue_names(item.queue),
                owner_topics=owner_topics.get(key, {}),
            )
        )
    directory = Path(outdir if outdir is not None else app.outdir) / AGREEMENTS_DIRECTORY
    written: list[Path] = []
    for stack, agreements in by_stack.values():
        directory.mkdir(parents=True, exist_ok=True)
        stem = _UNSAFE_FILE_CHARACTERS.sub("-", stack.stack_name)
        path = directory / f"{stem}.md"
        text = allocation_agreement_markdown(title=stack.stack_name, queues=agreements)
        path.write_bytes(text.encode("utf-8"))
        # The machine-readable twin, beside it: same inputs, so the two agree.
        twin = allocation_agreement_json(title=stack.stack_name, queues=agreements)
        (directory / f"{stem}.json").write_bytes(twin.encode("utf-8"))
        written.append(path)
    return written


def agreement_json_path(markdown: Path) -> Path:
    """The JSON twin of an agreement file that :func:`write_allocation_agreements` returned."""
    return markdown.with_suffix(".json")


def _queue_names(queue: IConstruct) -> QueueNames:
    name = getattr(queue, "job_queue_name", None)
    arn = getattr(queue, "job_queue_arn", None)
    name_output = getattr(queue, "name_output", None)
    arn_output = getattr(queue, "arn_output", None)
    return QueueNames(
        path=queue.node.path,
        name=_named(name, name_output),
        arn=_named(arn, arn_output),
    )


def _named(value: object, output: OutputRef | None) -> DeployedName:
    literal = value if isinstance(value, str) and not is_unresolved(value) else None
    return DeployedName(value=literal, output=output)


def _shrink_guard(share: QuotaShare) -> ShrinkGuard:
    return _guard(share, share.lifecycle.allow_preemption_on_shrink)


def _guard(share: QuotaShare, waived: bool) -> ShrinkGuard:
    if share.provisioning is not ShareProvisioning.CUSTOM_RESOURCE:
        return "unguarded"
    return "waived" if waived else "guarded"


def _identity(queue: object) -> int:
    """One key per queue of the app, however many constructs stand for it."""
    return id(ledger_of(queue) or queue)


def _queue_title(queue: IConstruct) -> str:
    path = queue.node.path
    return f"`{path.split('/', 1)[1] if '/' in path else path}`"
