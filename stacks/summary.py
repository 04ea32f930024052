"""What app.py prints after a synth: how each queue's capacity is divided."""

from __future__ import annotations

from aws_cdk import App, Stack
from constructs import Construct

from quota_constructs import TrainingJobQueue
from quota_constructs.model import allocation_summary


def queue_summaries(app: App) -> list[str]:
    lines: list[str] = []
    for node in app.node.find_all():
        if isinstance(node, TrainingJobQueue) and node.allocation is not None:
            lines.extend(allocation_summary(node.allocation, title=_title(node)))
    return lines


def _title(queue: Construct) -> str:
    return f"{Stack.of(queue).stack_name}/{queue.node.path.split('/', 1)[1]}"
