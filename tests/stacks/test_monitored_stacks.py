"""The deployable stacks declare owners and contracts, are monitored, and have an agreement."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk import App, Stack

from quota_constructs import QuotaShareMonitoring, write_allocation_agreements
from stacks.environments import ENVIRONMENTS

MONITORED = [env.stack_name for env in ENVIRONMENTS.values()] + ["QuotaReference"]


def monitoring_of(stack: Stack) -> QuotaShareMonitoring:
    found = [node for node in stack.node.find_all() if isinstance(node, QuotaShareMonitoring)]
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("stack_name", MONITORED)
def test_every_share_has_an_owner_with_a_topic(
    all_stacks: dict[str, Stack], stack_name: str
) -> None:
    monitoring = monitoring_of(all_stacks[stack_name])
    owners = set()
    for spec in monitoring.shares:
        assert spec.agreement is not None, spec.name
        assert spec.agreement.purpose
        assert spec.agreement.interruption_budget is not None
        owners.add(spec.agreement.owner)
    assert set(monitoring.owner_topics) == owners
    # Budgets are reported, never enforced, unless a stack opts in.
    assert monitoring.enforces_interruption_budget is False


def test_agreements_are_written_per_deployment(the_app: App, tmp_path: Path) -> None:
    written = {path.name for path in write_allocation_agreements(the_app, str(tmp_path))}
    assert {f"{name}.md" for name in MONITORED} <= written
    prod = (tmp_path / "agreements" / "TrainingQuotas-prod.md").read_text()
    assert "### research — research" in prod
    assert "at most 5 preemptions per job" in prod
    assert "reported to the owner (not terminated" in prod
