"""Write the allocation agreement of every deployment (stack) of an app into its cloud assembly.

The agreement itself is rendered by the model (:mod:`quota_constructs.model.agreement_report`);
this module only collects, from the construct tree, what it needs: each queue's shares and
allocation (:func:`quota_constructs.summary.queue_allocations`, the walk the console summary
uses too), the stacks declaring them, the queue's account and region, the grants made on each
share (with the execution roles they let pass), whether a monitor enforces budgets, and where
each owner's alerts are delivered.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from aws_cdk import Stack, Stage
from constructs import IConstruct

from ._share_ledger import ledger_of
from .model import QuotaAllocation, QuotaShareSpec
from .model.agreement_json import AGREEMENT_FORMAT, allocation_agreement_json
from .model.agreement_report import (
    MARKDOWN_HEADING,
    GrantLike,
    QueueAgreement,
    ShrinkGuard,
    allocation_agreement_markdown,
)
from .model.agreement_team import AlertEndpoint, QueuePlace, literal_queue_arn
from .model.deployed_names import DeployedName, OutputRef, QueueNames
from .model.tokens import is_unresolved
from .quota_share import QuotaShare, QuotaShareBase, ShareGrant, ShareProvisioning
from .summary import queue_allocations

if TYPE_CHECKING:
    from .monitoring import QuotaShareMonitoring

AGREEMENTS_DIRECTORY: Final = "agreements"
_UNSAFE_FILE_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]")


def write_allocation_agreements(app: Stage, outdir: str | None = None) -> list[Path]:
    """Write ``<outdir>/agreements/<stack name>.md`` (and its JSON twin ``.json``, see
    :func:`agreement_json_path`) for every stack of ``app`` that holds a training job queue
    with declared shares, or declares shares itself; return the files written, in stack order.

    The stack holding a queue (where it is created, or its first import in the app) lists
    every share of the queue, for the platform team's review; every other stack that declares
    shares on it (a team's stack) gets an agreement of its own naming only its shares, their
    figures computed with all the queue's shares. Agreement files left in the directory by
    earlier runs, of stacks not synthesized now, are removed (other files are left alone).

    Call it after ``app.synth()`` (or at least after every stack is built): shares added from
    other stacks and grants made anywhere in the app are part of the agreement.
    ``outdir`` defaults to the app's cloud assembly directory (``cdk.out``).
    """
    facts = _collect(app)
    by_stack: dict[str, list[QueueAgreement]] = defaultdict(list)
    for item in queue_allocations(app):
        if not item.shares:
            continue
        key = _identity(item.queue)
        home = Stack.of(item.queue)
        full = facts.agreement(item.queue, key, item.shares, item.allocation)
        by_stack[home.node.path].append(full)
        # Each other stack declaring shares on the queue: its own shares, the others named.
        for stack_path, names in facts.declared.get(key, {}).items():
            if stack_path == home.node.path:
                continue
            mine = tuple(spec for spec in item.shares if spec.name in names)
            others = tuple(spec.name for spec in item.shares if spec.name not in names)
            by_stack[stack_path].append(replace(full, shares=mine, other_shares=others))
    directory = Path(outdir if outdir is not None else app.outdir) / AGREEMENTS_DIRECTORY
    written: list[Path] = []
    for stack in _stacks(app):
        agreements = by_stack.get(stack.node.path)
        if not agreements:
            continue
        directory.mkdir(parents=True, exist_ok=True)
        stem = _UNSAFE_FILE_CHARACTERS.sub("-", stack.stack_name)
        path = directory / f"{stem}.md"
        text = allocation_agreement_markdown(title=stack.stack_name, queues=agreements)
        path.write_bytes(text.encode("utf-8"))
        # The machine-readable twin, beside it: same inputs, so the two agree.
        twin = allocation_agreement_json(title=stack.stack_name, queues=agreements)
        agreement_json_path(path).write_bytes(twin.encode("utf-8"))
        written.append(path)
    _remove_stale(directory, keep={*written, *map(agreement_json_path, written)})
    return written


@dataclass
class _AppFacts:
    """What the tree says about each queue (keyed by :func:`_identity`) beyond its shares."""

    grants: dict[int, list[tuple[str, ShareGrant]]] = field(
        default_factory=lambda: defaultdict(list))
    submission_tags: dict[int, dict[str, Mapping[str, str]]] = field(
        default_factory=lambda: defaultdict(dict))
    shrink_guards: dict[int, dict[str, ShrinkGuard]] = field(
        default_factory=lambda: defaultdict(dict))
    in_share_guards: dict[int, dict[str, ShrinkGuard]] = field(
        default_factory=lambda: defaultdict(dict))
    enforced: dict[int, bool | None] = field(default_factory=dict)
    monitors: dict[int, list[QuotaShareMonitoring]] = field(
        default_factory=lambda: defaultdict(list))
    declared: dict[int, dict[str, set[str]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    """By queue, the stacks (by path) declaring shares on it, with the shares' names."""

    def agreement(
        self, queue: IConstruct, key: int, shares: tuple[QuotaShareSpec, ...],
        allocation: QuotaAllocation | None,
    ) -> QueueAgreement:
        share_grants: dict[str, list[GrantLike]] = defaultdict(list)
        for name, grant in self.grants.get(key, []):
            share_grants[name].append(grant)
        monitors = self.monitors.get(key, [])
        owner_topics: dict[str, DeployedName] = {}
        endpoints: dict[str, list[AlertEndpoint]] = defaultdict(list)
        given: set[str] = set()
        for monitor in monitors:
            owner_topics.update(monitor.owner_topic_names)
            for owner, found in monitor.owner_endpoints.items():
                endpoints[owner].extend(found)
            given |= monitor.given_topic_owners
        return QueueAgreement(
            title=_queue_title(queue),
            shares=shares,
            allocation=allocation,
            grants=dict(share_grants),
            submission_tags=self.submission_tags.get(key, {}),
            shrink_guards=self.shrink_guards.get(key, {}),
            in_share_guards=self.in_share_guards.get(key, {}),
            budget_enforced=self.enforced.get(key),
            names=_queue_names(queue, _place(queue)),
            owner_topics=owner_topics,
            place=_place(queue),
            monitored=bool(monitors),
            owner_endpoints=dict(endpoints),
            topics_given=frozenset(given),
        )


def _collect(app: Stage) -> _AppFacts:
    from .monitoring import QuotaShareMonitoring

    # Keyed by the queue's one record of shares, so that a grant or a monitor made through
    # any construct standing for the queue counts.
    facts = _AppFacts()
    for node in app.node.find_all():
        if isinstance(node, QuotaShare):
            key = _identity(node.job_queue)
            facts.shrink_guards[key][node.spec.name] = _shrink_guard(node)
            facts.in_share_guards[key][node.spec.name] = _guard(
                node, node.lifecycle.allow_preemption_on_in_share_enable)
            facts.declared[key][Stack.of(node).node.path].add(node.spec.name)
        if isinstance(node, QuotaShareBase) and node.grants:
            queue = getattr(node, "job_queue", None)
            name = getattr(node, "quota_share_name", None)
            if queue is not None and isinstance(name, str):
                facts.grants[_identity(queue)].extend((name, grant) for grant in node.grants)
                facts.submission_tags[_identity(queue)][name] = node.submission_tags
        elif isinstance(node, QuotaShareMonitoring):
            # Two monitors of one queue: a job is terminated if either one enforces.
            key = _identity(node.job_queue)
            watched = [facts.enforced.get(key), node.enforces_interruption_budget]
            known = [value for value in watched if value is not None]
            facts.enforced[key] = any(known) if known else None
            facts.monitors[key].append(node)
    return facts


def _stacks(app: Stage) -> list[Stack]:
    return [node for node in app.node.find_all() if isinstance(node, Stack)]


def _remove_stale(directory: Path, *, keep: set[Path]) -> None:
    """Remove agreements an earlier run wrote for stacks this run did not synthesize: a file
    is one only if it says so (the twin's format marker, the Markdown's first line)."""
    if not directory.is_dir():
        return
    for path in directory.iterdir():
        if path in keep or not path.is_file() or not _is_agreement(path):
            continue
        path.unlink()


def _is_agreement(path: Path) -> bool:
    try:
        if path.suffix == ".json":
            document = json.loads(path.read_text(encoding="utf-8"))
            return isinstance(document, dict) and document.get("format") == AGREEMENT_FORMAT
        if path.suffix == ".md":
            with path.open(encoding="utf-8") as text:
                return text.readline().startswith(MARKDOWN_HEADING)
    except (OSError, ValueError):
        return False
    return False


def agreement_json_path(markdown: Path) -> Path:
    """The JSON twin of an agreement file that :func:`write_allocation_agreements` returned."""
    return markdown.with_suffix(".json")


def _place(queue: IConstruct) -> QueuePlace:
    """The queue's account and region where literal (a pinned stack, an imported ARN)."""
    env = getattr(queue, "env", None)
    account = getattr(env, "account", None)
    region = getattr(env, "region", None)
    return QueuePlace(
        account=account if isinstance(account, str) and not is_unresolved(account) else None,
        region=region if isinstance(region, str) and not is_unresolved(region) else None,
    )


def _queue_names(queue: IConstruct, place: QueuePlace) -> QueueNames:
    name = getattr(queue, "job_queue_name", None)
    arn = getattr(queue, "job_queue_arn", None)
    name_output = getattr(queue, "name_output", None)
    arn_output = getattr(queue, "arn_output", None)
    named = _named(name, name_output)
    arn_named = _named(arn, arn_output)
    if arn_named.value is None:
        # A named queue of a pinned stack: only the partition token kept its ARN from being
        # literal, and the region gives the partition.
        arn_named = DeployedName(value=literal_queue_arn(named.value, place), output=arn_output)
    return QueueNames(path=queue.node.path, name=named, arn=arn_named)


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
