"""The documented three-project example, as a deployable stack.

An environment of three ml.g5.xlarge shared by three projects of one instance each:
QS1 runs checkpointed background jobs, borrows up to 200 % and lets its own higher-priority jobs
preempt lower ones; QS2 lends its idle instance but never borrows; QS3 reserves its instance so its
jobs start fast and are never preempted while its limit stays the same.

Each share carries its agreement (owner, purpose, interruption contract; QS3 also promises that
95 % of its jobs start within 15 minutes) and the queue is monitored: per-share metrics, owners
told about preemptions, one dashboard, alarms per share, the promises watched live.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from aws_cdk import Stack
from constructs import Construct

from quota_constructs import (
    CapacityLimit,
    CapacityUnit,
    QuotaManagedTrainingQueue,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)

G5 = CapacityUnit.ML_G5_XLARGE


class ReferenceQuotaStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.training_queue = QuotaManagedTrainingQueue(
            self,
            "TrainingQueue",
            capacity_limits=[CapacityLimit(G5, 3)],
            shares=[
                QuotaShareSpec(
                    name="QS1",
                    capacity_limits=[CapacityLimit(G5, 1)],
                    strategy=SharingStrategy.LEND_AND_BORROW,
                    borrow_limit_percent=200,
                    in_share_preemption=True,
                    agreement=ShareAgreement(
                        owner="project-1",
                        purpose="Background training that checkpoints and can wait",
                        recoverable=True,
                        interruption_budget=5,
                    ),
                ),
                QuotaShareSpec(
                    name="QS2",
                    capacity_limits=[CapacityLimit(G5, 1)],
                    strategy=SharingStrategy.LEND,
                    agreement=ShareAgreement(
                        owner="project-2",
                        purpose="Scheduled retraining; lends its instance while idle",
                        interruption_budget=2,
                    ),
                ),
                QuotaShareSpec(
                    name="QS3",
                    capacity_limits=[CapacityLimit(G5, 1)],
                    strategy=SharingStrategy.RESERVE,
                    agreement=ShareAgreement(
                        owner="project-3",
                        purpose="Evaluations that must start at once",
                        interruption_budget=0,
                        target_wait_p95=timedelta(minutes=15),
                    ),
                ),
            ],
        )
        self.monitoring = self.training_queue.add_monitoring()
