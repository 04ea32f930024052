"""Where the training quotas are deployed, and how big each deployment is.

One typed declaration per deployment environment. ``cdk synth`` builds them all;
``cdk synth -c env=prod`` builds one. Account and region are optional: without them the stacks
are environment-agnostic and synthesize offline; set them to pin a deployment to an account.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aws_cdk import Environment

from quota_constructs import (
    CapacityLimit,
    CapacityUnit,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
    deployments,
)
from quota_constructs.deployments import UnknownEnvironmentError

__all__ = ["ENVIRONMENTS", "DeploymentEnvironment", "UnknownEnvironmentError",
           "select_environments"]

G5 = CapacityUnit.ML_G5_XLARGE
G5_12 = CapacityUnit.ML_G5_12XLARGE


@dataclass(frozen=True, kw_only=True)
class DeploymentEnvironment:
    """One deployment of the training quotas (dev, staging, prod …)."""

    name: str
    capacity_limits: tuple[CapacityLimit, ...]
    shares: tuple[QuotaShareSpec, ...]
    account: str | None = None
    region: str | None = None
    queue_priority: int = 1

    @property
    def stack_name(self) -> str:
        return f"TrainingQuotas-{self.name}"

    @property
    def cdk_environment(self) -> Environment | None:
        if self.account is None and self.region is None:
            return None
        return Environment(account=self.account, region=self.region)


def _team_shares(
    *,
    research: list[CapacityLimit],
    product: list[CapacityLimit],
    evaluation: list[CapacityLimit],
    research_borrow_percent: int,
) -> tuple[QuotaShareSpec, ...]:
    """The same three-team layout everywhere, so behaviour in dev predicts behaviour in prod."""
    return (
        # Checkpointed background training: borrows idle capacity, tolerates preemption.
        QuotaShareSpec(
            name="research",
            capacity_limits=research,
            strategy=SharingStrategy.LEND_AND_BORROW,
            borrow_limit_percent=research_borrow_percent,
            in_share_preemption=True,
            tags={"team": "research"},
            agreement=ShareAgreement(
                owner="research",
                purpose="Checkpointed experiments and sweeps on idle capacity",
                recoverable=True,
                interruption_budget=5,
            ),
        ),
        # Product models: lends idle capacity, would rather wait than be preempted.
        QuotaShareSpec(
            name="product",
            capacity_limits=product,
            strategy=SharingStrategy.LEND,
            tags={"team": "product"},
            agreement=ShareAgreement(
                owner="product",
                purpose="Retraining of the models in production",
                interruption_budget=2,
            ),
        ),
        # Release evaluations: must start at once and never be preempted.
        QuotaShareSpec(
            name="evaluation",
            capacity_limits=evaluation,
            strategy=SharingStrategy.RESERVE,
            tags={"team": "evaluation"},
            agreement=ShareAgreement(
                owner="evaluation",
                purpose="Release evaluations that must start at once",
                interruption_budget=0,
            ),
        ),
    )


ENVIRONMENTS: Mapping[str, DeploymentEnvironment] = {
    env.name: env
    for env in (
        DeploymentEnvironment(
            name="dev",
            capacity_limits=(CapacityLimit(G5, 3),),
            shares=_team_shares(
                research=[CapacityLimit(G5, 1)],
                product=[CapacityLimit(G5, 1)],
                evaluation=[CapacityLimit(G5, 1)],
                research_borrow_percent=200,
            ),
        ),
        DeploymentEnvironment(
            name="staging",
            capacity_limits=(CapacityLimit(G5, 6),),
            shares=_team_shares(
                research=[CapacityLimit(G5, 2)],
                product=[CapacityLimit(G5, 2)],
                evaluation=[CapacityLimit(G5, 2)],
                research_borrow_percent=100,
            ),
        ),
        DeploymentEnvironment(
            name="prod",
            capacity_limits=(CapacityLimit(G5, 8), CapacityLimit(G5_12, 4)),
            shares=_team_shares(
                research=[CapacityLimit(G5, 4), CapacityLimit(G5_12, 2)],
                product=[CapacityLimit(G5, 2), CapacityLimit(G5_12, 1)],
                evaluation=[CapacityLimit(G5, 2), CapacityLimit(G5_12, 1)],
                research_borrow_percent=50,
            ),
            queue_priority=10,
        ),
    )
}


def select_environments(name: str | None) -> list[DeploymentEnvironment]:
    """Every environment when ``name`` is None, else exactly the one named (the library's
    :func:`quota_constructs.deployments.select_environments` over :data:`ENVIRONMENTS`)."""
    return deployments.select_environments(ENVIRONMENTS, name)
