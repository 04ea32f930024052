"""The monitoring's stack outputs: the dashboard's name and each owner topic's ARN, under the
documented keys of :mod:`quota_constructs.stack_outputs`."""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Stack
from aws_cdk import aws_sns as sns
from constructs import Construct

from ..model.deployed_names import DeployedName
from ..model.tokens import is_unresolved
from ..stack_outputs import add_output, deployed_name, key_part
from .dashboard import QuotaShareDashboard


def add_monitoring_outputs(
    monitoring: Construct,
    dashboard: QuotaShareDashboard | None,
    owner_topics: Mapping[str, sns.ITopic],
) -> dict[str, DeployedName]:
    """``<path>DashboardName`` (on the dashboard construct) and, per owner,
    ``<monitoring path>OwnerTopic<Owner>Arn``; returns each owner topic's ARN as the agreement
    names it. A topic passed in from another stack gets no output here (it belongs to that
    stack, and one here would add a cross-stack export)."""
    if dashboard is not None:
        add_output(
            dashboard, "Name", dashboard.resource.dashboard_name,
            "Name of the quota-share dashboard (CloudWatch)",
        )
    stack = Stack.of(monitoring)
    used: set[str] = set()
    names: dict[str, DeployedName] = {}
    for owner, topic in sorted(owner_topics.items()):
        if is_unresolved(topic.topic_arn) and Stack.of(topic) is not stack:
            continue
        # Owners that differ only in punctuation ("a-b", "a_b"): numbered in name order.
        part, number = key_part(owner), 1
        while f"{part}{'' if number == 1 else number}" in used:
            number += 1
        part = f"{part}{'' if number == 1 else number}"
        used.add(part)
        output = add_output(
            monitoring, f"OwnerTopic{part}Arn", topic.topic_arn,
            f"ARN of the SNS topic that notifies {owner}"[:1000],
        )
        names[owner] = deployed_name(topic.topic_arn, output)
    return names
