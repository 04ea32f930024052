"""A team's stack: its own quota share on the platform's queue, and who may submit into it."""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from quota_constructs import ITrainingJobQueue, QuotaShare, QuotaShareSpec
from quota_constructs.nag_acknowledgments import acknowledge_grant_wildcards

INHERENT_WILDCARDS = {
    "submit": "Service jobs get their ARN only when submitted, so SubmitServiceJob and the "
    "TagResource of its tags must allow service-job/*; the queue, the team's own share, the "
    "share's tag on the job and the priority ceiling bound it.",
    "reprioritise": "UpdateServiceJob acts on service jobs that exist only at run time; the "
    "share's tag on the job limits it to the team's own jobs and the batch:SchedulingPriority "
    "ceiling bounds what the team can set.",
    "observe": "Read-only: ListServiceJobs and DescribeServiceJob accept no resource type, and "
    "the team may read every quota share of its queue to see who holds capacity.",
}


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
        grants = {
            "submit": self.share.grant_submit(
                self.submitter_role,
                max_priority=max_priority,
                execution_roles=[self.execution_role],
            ),
            "reprioritise": self.share.grant_update_priority(
                self.submitter_role, max_priority=max_priority
            ),
            "observe": job_queue.grant_observe(self.submitter_role),
        }
        for purpose, grant in grants.items():
            acknowledge_grant_wildcards(
                self.submitter_role,
                grant,
                reason=INHERENT_WILDCARDS[purpose],
            )
