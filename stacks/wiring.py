"""Which stacks the app builds, for all deployment environments or the one selected."""

from __future__ import annotations

from aws_cdk import App, Stack

from quota_constructs import CapacityLimit, CapacityUnit, QuotaShareSpec, SharingStrategy
from quota_constructs.deployments import ENVIRONMENT_CONTEXT_KEY, environments_from_context

from .environments import ENVIRONMENTS
from .platform_stack import TrainingPlatformStack
from .reference_quota_stack import ReferenceQuotaStack
from .team_share_stack import TeamShareStack
from .training_quota_stack import TrainingQuotaStack


def add_stacks(app: App) -> list[Stack]:
    """The deployment environments' stacks; the examples too when no environment is selected."""
    selected = app.node.try_get_context(ENVIRONMENT_CONTEXT_KEY)
    stacks: list[Stack] = [
        TrainingQuotaStack(app, deployment.stack_name, deployment=deployment)
        for deployment in environments_from_context(app, ENVIRONMENTS).values()
    ]
    if selected is None:
        stacks.extend(add_examples(app))
    return stacks


def add_examples(app: App) -> list[Stack]:
    reference = ReferenceQuotaStack(app, "QuotaReference")
    platform = TrainingPlatformStack(
        app, "QuotaPlatformExample", capacity_limits=[CapacityLimit(CapacityUnit.ML_G5_XLARGE, 2)]
    )
    team = TeamShareStack(
        app,
        "QuotaTeamVisionExample",
        job_queue=platform.job_queue,
        share=QuotaShareSpec(
            name="vision",
            capacity_limits=[CapacityLimit(CapacityUnit.ML_G5_XLARGE, 2)],
            # Alone on the platform's queue there is nobody to borrow from (LEND_AND_BORROW
            # would draw the synth's "can borrow nothing" warning): it lends until a second
            # team's share joins the queue.
            strategy=SharingStrategy.LEND,
        ),
        max_priority=50,
    )
    return [reference, platform, team]
