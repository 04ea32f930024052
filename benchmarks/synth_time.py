#!/usr/bin/env python3
"""Synth time of the reference queue: through quota_constructs against raw ``aws_batch.Cfn*``.

Both variants build the same policy, environment, queue and three shares of the reference
example and synthesize a fresh App into a temporary directory. They run alternately in one
process (after one warm-up each, so jsii start-up is not charged to either) and the script prints
the median wall time of each and their ratio (library / raw). Not a test: figures vary by machine.

    python3 dev.py bench [--rounds N] [--provisioning custom-resource|cloudformation]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable

from aws_cdk import App, Stack
from aws_cdk import aws_batch as batch

from quota_constructs import (
    CapacityLimit,
    CapacityUnit,
    QuotaManagedTrainingQueue,
    QuotaShareSpec,
    ShareProvisioning,
    SharingStrategy,
)

G5 = CapacityUnit.ML_G5_XLARGE
REFERENCE_SHARES = (
    ("QS1", "LEND_AND_BORROW", 200, "ENABLED"),
    ("QS2", "LEND", None, "DISABLED"),
    ("QS3", "RESERVE", None, "DISABLED"),
)


def library_app(provisioning: ShareProvisioning) -> Callable[[App], None]:
    def build(app: App) -> None:
        stack = Stack(app, "Reference")
        QuotaManagedTrainingQueue(
            stack,
            "TrainingQueue",
            capacity_limits=[CapacityLimit(G5, 3)],
            shares=[
                QuotaShareSpec(
                    name=name,
                    capacity_limits=[CapacityLimit(G5, 1)],
                    strategy=SharingStrategy(strategy),
                    borrow_limit_percent=borrow,
                    in_share_preemption=preemption == "ENABLED",
                )
                for name, strategy, borrow, preemption in REFERENCE_SHARES
            ],
            provisioning=provisioning,
        )

    return build


def raw_app(app: App) -> None:
    stack = Stack(app, "Reference")
    policy = batch.CfnSchedulingPolicy(
        stack,
        "Policy",
        quota_share_policy=batch.CfnSchedulingPolicy.QuotaSharePolicyProperty(
            idle_resource_assignment_strategy="FIFO"
        ),
    )
    environment = batch.CfnServiceEnvironment(
        stack,
        "Environment",
        service_environment_type="SAGEMAKER_TRAINING",
        capacity_limits=[
            batch.CfnServiceEnvironment.CapacityLimitProperty(capacity_unit=str(G5), max_capacity=3)
        ],
    )
    queue = batch.CfnJobQueue(
        stack,
        "Queue",
        priority=1,
        job_queue_type="SAGEMAKER_TRAINING",
        scheduling_policy_arn=policy.attr_arn,
        service_environment_order=[
            batch.CfnJobQueue.ServiceEnvironmentOrderProperty(
                order=1, service_environment=environment.attr_service_environment_arn
            )
        ],
    )
    for name, strategy, borrow, preemption in REFERENCE_SHARES:
        batch.CfnQuotaShare(
            stack,
            name,
            quota_share_name=name,
            job_queue=queue.ref,
            capacity_limits=[
                batch.CfnQuotaShare.QuotaShareCapacityLimitProperty(
                    capacity_unit=str(G5), max_capacity=1
                )
            ],
            resource_sharing_configuration=batch.CfnQuotaShare.QuotaShareResourceSharingConfigurationProperty(
                strategy=strategy, borrow_limit=borrow
            ),
            preemption_configuration=batch.CfnQuotaShare.QuotaSharePreemptionConfigurationProperty(
                in_share_preemption=preemption
            ),
        )


def synth_seconds(build: Callable[[App], None]) -> float:
    with tempfile.TemporaryDirectory() as outdir:
        start = time.perf_counter()
        app = App(outdir=outdir)
        build(app)
        app.synth()
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--provisioning",
        choices=["custom-resource", "cloudformation"],
        default="custom-resource",
    )
    args = parser.parse_args()
    provisioning = ShareProvisioning[args.provisioning.upper().replace("-", "_")]
    library = library_app(provisioning)
    synth_seconds(library)
    synth_seconds(raw_app)
    library_times, raw_times = [], []
    for _ in range(args.rounds):
        library_times.append(synth_seconds(library))
        raw_times.append(synth_seconds(raw_app))
    library_median = statistics.median(library_times)
    raw_median = statistics.median(raw_times)
    print(f"rounds: {args.rounds} (alternating, after one warm-up each)")
    print(f"library ({args.provisioning}) median synth: {library_median * 1000:.1f} ms")
    print(f"raw Cfn* median synth: {raw_median * 1000:.1f} ms")
    print(f"ratio library/raw: {library_median / raw_median:.3f}")


if __name__ == "__main__":
    main()
