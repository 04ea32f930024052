"""The training quota queue of one deployment environment."""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack, Tags
from constructs import Construct

from quota_constructs import QuotaManagedTrainingQueue

from .environments import DeploymentEnvironment


class TrainingQuotaStack(Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        deployment: DeploymentEnvironment,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            env=deployment.cdk_environment,
            description=f"AWS Batch quota shares for SageMaker Training ({deployment.name})",
            **kwargs,
        )
        Tags.of(self).add("environment", deployment.name)
        self.training_queue = QuotaManagedTrainingQueue(
            self,
            "TrainingQueue",
            capacity_limits=deployment.capacity_limits,
            shares=deployment.shares,
            priority=deployment.queue_priority,
        )
        # Owners hear about their shares; a job past its budget is reported, not terminated.
        self.monitoring = self.training_queue.add_monitoring()
