"""Synth time of the reference queue: through quota_constructs against raw ``aws_batch.Cfn*``.

Each variant builds the policy, environment, queue and three shares of the reference example
and synthesizes them, in a fresh Python process per run, the way ``cdk synth`` runs an app:
interpreter and jsii start-up, imports, construction and synthesis all count. The variants run
alternately (rotating the order every round) and the script prints each median and the ratio of
each library variant to raw ``Cfn*``. Not a test: the figures vary by machine.

The custom-resource default is also compared with its floor, ``raw-provider``: the same raw
``Cfn*`` policy, environment and queue, and the three shares as ``CustomResource``s of one bare
``custom_resources.Provider`` (two Python functions from a small code asset). Both templates
hold about the same resources; the ratio between them is what the library's own work costs.

It also prints the in-process figures (construction + synth only, after a warm-up in the same
process): these leave out the fixed start-up and so show the library's own cost at its largest.

    python3 dev.py bench [--rounds N]
"""

from __future__ import annotations

import argparse
import atexit
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from aws_cdk import App, CustomResource, Stack
from aws_cdk import aws_batch as batch

VARIANTS = ("raw", "raw-provider", "library-custom-resource", "library-cloudformation")
FLOOR_OF = {"library-custom-resource": "raw-provider"}
"""Library variant -> the raw variant that declares about the same resources."""
G5 = "ml.g5.xlarge"
REFERENCE_SHARES = (
    ("QS1", "LEND_AND_BORROW", 200, "ENABLED"),
    ("QS2", "LEND", None, "DISABLED"),
    ("QS3", "RESERVE", None, "DISABLED"),
)


def library_app(provisioning_name: str) -> Callable[[App], None]:
    # Imported here so that the raw variant's process never loads the library.
    from quota_constructs import (
        CapacityLimit,
        CapacityUnit,
        QuotaManagedTrainingQueue,
        QuotaShareSpec,
        ShareProvisioning,
        SharingStrategy,
    )

    provisioning = ShareProvisioning[provisioning_name]
    g5 = CapacityUnit.ML_G5_XLARGE

    def build(app: App) -> None:
        stack = Stack(app, "Reference")
        QuotaManagedTrainingQueue(
            stack,
            "TrainingQueue",
            capacity_limits=[CapacityLimit(g5, 3)],
            shares=[
                QuotaShareSpec(
                    name=name,
                    capacity_limits=[CapacityLimit(g5, 1)],
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
    raw_resources(Stack(app, "Reference"), custom_shares=False)


def raw_provider_app(app: App) -> None:
    raw_resources(Stack(app, "Reference"), custom_shares=True)


BARE_HANDLER = (
    "def on_event(event, context):\n    return {}\n\n\n"
    "def is_complete(event, context):\n    return {'IsComplete': True}\n"
)


def bare_provider(stack: Stack) -> str:
    """One ``custom_resources.Provider`` with nothing added: its service token."""
    from aws_cdk import aws_lambda, custom_resources

    code_dir = Path(tempfile.mkdtemp(prefix="bare-provider-"))
    atexit.register(shutil.rmtree, code_dir, ignore_errors=True)
    (code_dir / "handler.py").write_text(BARE_HANDLER)
    code = aws_lambda.Code.from_asset(str(code_dir))
    functions = [
        aws_lambda.Function(
            stack, name, code=code, handler=f"handler.{entry}",
            runtime=aws_lambda.Runtime.PYTHON_3_13,
        )
        for name, entry in (("OnEvent", "on_event"), ("IsComplete", "is_complete"))
    ]
    provider = custom_resources.Provider(
        stack, "Provider", on_event_handler=functions[0], is_complete_handler=functions[1]
    )
    return provider.service_token


def raw_resources(stack: Stack, *, custom_shares: bool) -> None:
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
            batch.CfnServiceEnvironment.CapacityLimitProperty(capacity_unit=G5, max_capacity=3)
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
    service_token = bare_provider(stack) if custom_shares else ""
    for name, strategy, borrow, preemption in REFERENCE_SHARES:
        if custom_shares:
            sharing: dict[str, object] = {"Strategy": strategy}
            if borrow is not None:
                sharing["BorrowLimit"] = borrow
            CustomResource(
                stack, name, service_token=service_token, resource_type="Custom::BatchQuotaShare",
                properties={
                    "QuotaShareName": name,
                    "JobQueue": queue.attr_job_queue_arn,
                    "CapacityLimits": [{"CapacityUnit": G5, "MaxCapacity": 1}],
                    "ResourceSharingConfiguration": sharing,
                    "PreemptionConfiguration": {"InSharePreemption": preemption},
                },
            )
            continue
        batch.CfnQuotaShare(
            stack,
            name,
            quota_share_name=name,
            job_queue=queue.ref,
            capacity_limits=[
                batch.CfnQuotaShare.QuotaShareCapacityLimitProperty(
                    capacity_unit=G5, max_capacity=1
                )
            ],
            resource_sharing_configuration=batch.CfnQuotaShare.QuotaShareResourceSharingConfigurationProperty(
                strategy=strategy, borrow_limit=borrow
            ),
            preemption_configuration=batch.CfnQuotaShare.QuotaSharePreemptionConfigurationProperty(
                in_share_preemption=preemption
            ),
        )


def builder(variant: str) -> Callable[[App], None]:
    if variant == "raw":
        return raw_app
    if variant == "raw-provider":
        return raw_provider_app
    return library_app(variant.removeprefix("library-").replace("-", "_").upper())


def synth_seconds(build: Callable[[App], None]) -> float:
    with tempfile.TemporaryDirectory() as outdir:
        start = time.perf_counter()
        app = App(outdir=outdir)
        build(app)
        app.synth()
        return time.perf_counter() - start


CHILD_ENVIRONMENT: dict[str, str] = dict(os.environ)
"""Where the timed processes run: see :func:`use_bytecode`."""


def use_bytecode() -> None:
    """Let the timed processes import the library from bytecode, as an installed wheel does.

    ``dev.py`` runs everything with ``PYTHONDONTWRITEBYTECODE`` (no ``__pycache__`` in the
    checkout), so the library would be compiled from source in every timed process while
    aws-cdk-lib, installed by pip, loads from bytecode: a cost no user pays. Bytecode goes to
    a temporary ``PYTHONPYCACHEPREFIX`` instead, written by an untimed warm-up run.
    """
    cache = tempfile.mkdtemp(prefix="synth-bench-pycache-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    CHILD_ENVIRONMENT.pop("PYTHONDONTWRITEBYTECODE", None)
    CHILD_ENVIRONMENT["PYTHONPYCACHEPREFIX"] = cache
    for variant in VARIANTS:
        process_seconds(variant)


def process_seconds(variant: str) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--synth-once", variant],
        check=True, env=CHILD_ENVIRONMENT,
    )
    return time.perf_counter() - start


def report(title: str, times: dict[str, list[float]]) -> None:
    medians = {variant: statistics.median(values) for variant, values in times.items()}
    print(title)
    for variant in VARIANTS:
        print(f"  {variant:<25} median {medians[variant] * 1000:8.1f} ms")
    for variant in VARIANTS[1:]:
        print(f"  ratio {variant}/raw: {medians[variant] / medians['raw']:.3f}")
    for variant, floor in FLOOR_OF.items():
        print(f"  ratio {variant}/{floor} (its floor): "
              f"{medians[variant] / medians[floor]:.3f}")


def process_cpu_seconds(variant: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the Python process and its node child) of one run.

    On a machine others are loading, wall time mostly measures the others; CPU time measures
    the work, though it misses time spent waiting on the disk.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = process_seconds(variant)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def floor_pairs(rounds: int) -> None:
    """Only the custom-resource default and its floor, in pairs whose order alternates."""
    for variant, floor in FLOOR_OF.items():
        wall: dict[str, list[float]] = {variant: [], floor: []}
        cpu: dict[str, list[float]] = {variant: [], floor: []}
        wall_ratios, cpu_ratios = [], []
        for round_number in range(rounds):
            order = (variant, floor) if round_number % 2 == 0 else (floor, variant)
            pair = {name: process_cpu_seconds(name) for name in order}
            for name, (wall_seconds, cpu_seconds) in pair.items():
                wall[name].append(wall_seconds)
                cpu[name].append(cpu_seconds)
            wall_ratios.append(pair[variant][0] / pair[floor][0])
            cpu_ratios.append(pair[variant][1] / pair[floor][1])
        print(f"end-to-end synth, {rounds} alternating pairs, one process per run:")
        for name in (variant, floor):
            print(f"  {name:<25} median wall {statistics.median(wall[name]) * 1000:8.1f} ms, "
                  f"CPU {statistics.median(cpu[name]) * 1000:8.1f} ms")
        print(f"  ratio {variant}/{floor} (its floor), median of the pairs' ratios: "
              f"wall {statistics.median(wall_ratios):.3f}, CPU {statistics.median(cpu_ratios):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--floor-pairs", action="store_true",
        help="only the custom-resource default against its floor, in alternating pairs",
    )
    parser.add_argument(
        "--from-source", action="store_true",
        help="compile the library from source in every timed process (PYTHONDONTWRITEBYTECODE "
        "as dev.py sets it) instead of loading it from bytecode as an installed wheel does",
    )
    parser.add_argument("--synth-once", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.synth_once:
        synth_seconds(builder(args.synth_once))
        return
    if not args.from_source:
        use_bytecode()
    if args.floor_pairs:
        floor_pairs(args.rounds)
        return

    process_times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    for round_number in range(args.rounds):
        shift = round_number % len(VARIANTS)
        for variant in VARIANTS[shift:] + VARIANTS[:shift]:
            process_times[variant].append(process_seconds(variant))
    report(
        f"end-to-end synth, one process per run ({args.rounds} rounds, order rotating):",
        process_times,
    )

    builders = {variant: builder(variant) for variant in VARIANTS}
    for build in builders.values():
        synth_seconds(build)
    in_process: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    for _ in range(args.rounds):
        for variant, build in builders.items():
            in_process[variant].append(synth_seconds(build))
    report("in-process construction + synth, after a warm-up (start-up excluded):", in_process)


if __name__ == "__main__":
    main()
