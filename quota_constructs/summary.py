"""What a person reads after a synth: how each queue's capacity is divided, and its warnings.

The allocation warnings (over-allocation, capacity no share owns) are CDK annotations, which only
the CDK CLI prints; an app run as ``python app.py`` shows them only if it prints this summary.

``queue_allocations`` is the one walk over the tree: other renderings of the same facts (such as
a Markdown allocation agreement written into the cloud assembly) build on it, and the summary is
where a person would be pointed to them.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Stack
from constructs import IConstruct

from ._share_ledger import ShareLedger, ledger_of
from .job_queue import ITrainingJobQueue, TrainingJobQueueBase
from .model import QuotaAllocation, QuotaShareSpec
from .model import allocation_summary as summarize_allocation
from .model.queue import share_warnings


@dataclass(frozen=True)
class QueueAllocation:
    """One queue of the construct tree and what this app declares on it."""

    title: str
    """``<stack name>/<path of the queue in its stack>``."""
    queue: ITrainingJobQueue
    shares: tuple[QuotaShareSpec, ...]
    allocation: QuotaAllocation | None
    """None when this app does not know the capacity of the queue's environment."""


def queue_allocations(scope: IConstruct) -> list[QueueAllocation]:
    """Every job queue in ``scope``'s tree (created or imported) that knows its capacity or
    has shares declared on it, in construct-tree order. A queue that stands in the app as
    several constructs (created here and imported, or imported twice) shares one record of its
    shares and is listed once, under the first of them."""
    found: list[QueueAllocation] = []
    seen: list[ShareLedger] = []
    for node in scope.node.find_all():
        if not isinstance(node, TrainingJobQueueBase):
            continue
        ledger = ledger_of(node)
        if ledger is not None:
            if any(ledger is known for known in seen):
                continue
            seen.append(ledger)
        allocation = node.allocation
        shares = node.quota_share_specs
        if allocation is None and not shares:
            continue
        found.append(QueueAllocation(_title(node), node, shares, allocation))
    return found


def allocation_summary(scope: IConstruct) -> list[str]:
    """Lines describing each queue in ``scope``'s tree (an ``App``, a ``Stack``, a queue):
    the environment's capacity, then per share its limit, strategy, borrow limit, in-share
    preemption, state and the most capacity it can ever reach, then the allocation's warnings.

    Call it after every share is declared (typically right after ``app.synth()``) and print it
    to stderr: under the CDK CLI, stdout carries the CLI's own output (templates, stack lists).
    """
    lines: list[str] = []
    for item in queue_allocations(scope):
        if item.allocation is not None:
            lines.extend(summarize_allocation(item.allocation, title=item.title))
        else:
            names = ", ".join(spec.name for spec in item.shares)
            lines.append(
                f"{item.title}: capacity of the service environment unknown to this app "
                f"(imported without capacity_limits); shares declared here: {names}"
            )
            lines.extend(
                f"  warning: {warning}"
                for spec in item.shares for warning in share_warnings(spec)
            )
    return lines


def _title(queue: IConstruct) -> str:
    stack = Stack.of(queue)
    within = queue.node.path.removeprefix(stack.node.path).lstrip("/")
    return f"{stack.stack_name}/{within}" if within else stack.stack_name
