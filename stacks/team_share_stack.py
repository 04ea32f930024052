"""A team's stack: its own quota share on the platform's queue, and who may submit into it."""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from quota_constructs import ITrainingJobQueue, QuotaShare, QuotaShareSpec


class TeamShareStack(Stack):
    """``job_queue`` may come from another stack (a cross-stack reference) or an import."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        job_queue: ITrainingJobQueue,
        share: QuotaShareSpec,
        max_priority: int,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.share = QuotaShare(self, "QuotaShare", job_queue=job_queue, spec=share)
        self.execution_role = iam.Role(
            self,
            "TrainingExecutionRole",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description=f"SageMaker execution role for {share.name} training jobs",
        )
        self.submitter_role = iam.Role(
            self,
            "SubmitterRole",
            assumed_by=iam.AccountRootPrincipal(),
            description=f"Submits and reprioritises {share.name} training jobs",
        )
        # The team submits only into its own share, only up to its priority ceiling, and can
        # pass only its own execution role to SageMaker.
        self.share.grant_submit(
            self.submitter_role, max_priority=max_priority, execution_roles=[self.execution_role]
        )
        self.share.grant_update_priority(self.submitter_role, max_priority=max_priority)
        job_queue.grant_observe(self.submitter_role)
