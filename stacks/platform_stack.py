"""A platform team's stack that owns the shared training queue but not the teams' shares.

Teams add their own quota shares from their own stacks (see ``team_share_stack.py``), so the
platform team reviews capacity while each team owns its allocation's lifecycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aws_cdk import Stack
from constructs import Construct

from quota_constructs import (
    CapacityLimit,
    QuotaShareSchedulingPolicy,
    TrainingJobQueue,
    TrainingServiceEnvironment,
)


class TrainingPlatformStack(Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        capacity_limits: Sequence[CapacityLimit],
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.scheduling_policy = QuotaShareSchedulingPolicy(self, "SchedulingPolicy")
        self.service_environment = TrainingServiceEnvironment(
            self, "ServiceEnvironment", capacity_limits=capacity_limits
        )
        self.job_queue = TrainingJobQueue(
            self,
            "JobQueue",
            service_environment=self.service_environment,
            scheduling_policy=self.scheduling_policy,
        )
