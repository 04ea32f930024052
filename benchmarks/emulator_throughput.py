"""Emulator throughput: 10,000 jobs over 20 shares submitted, scheduled, listed and
snapshotted through boto3, as a team's CI would drive it.

Runs the emulator in this process on a free port (manual clock) and a boto3 ``batch`` client
against it over loopback HTTP. Phases: submit every job (a scheduling pass every 500
submissions), list each share's jobs per status with pagination, describe and re-prioritise
a sample, snapshot the queue, then run the clock until every job ended. Prints API calls per
second per phase and overall (the target: at least 500 a second). Not a test: the figures vary
by machine. ``--profile`` profiles the server side alone (the same calls, no HTTP).

    .venv/bin/python benchmarks/emulator_throughput.py
    .venv/bin/python benchmarks/emulator_throughput.py --jobs 2000 --profile
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import random
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import boto3

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.emulator import Emulator

QUEUE = "bench-queue"
UNITS = {"ml.g5.xlarge": 60, "ml.p4d.24xlarge": 20}
N_SHARES = 20
TARGET = 500.0
PASS_EVERY = 500


def declaration() -> tuple[list[CapacityLimit], list[QuotaShareSpec]]:
    strategies = (SharingStrategy.LEND_AND_BORROW, SharingStrategy.LEND,
                  SharingStrategy.LEND_AND_BORROW, SharingStrategy.RESERVE)
    shares = []
    for i in range(N_SHARES):
        strategy = strategies[i % len(strategies)]
        shares.append(QuotaShareSpec(
            name=f"team-{i:02d}",
            capacity_limits=[CapacityLimit(unit, max(1, count // N_SHARES))
                             for unit, count in UNITS.items()],
            strategy=strategy,
            borrow_limit_percent=100 if strategy is SharingStrategy.LEND_AND_BORROW else None,
            in_share_preemption=i % 3 == 0,
        ))
    return [CapacityLimit(unit, count) for unit, count in UNITS.items()], shares


def payload(rng: random.Random) -> str:
    # Every job fits what its share can reach (one p4d: some shares own just one).
    unit = "ml.g5.xlarge" if rng.random() < 0.8 else "ml.p4d.24xlarge"
    count = rng.choice((1, 1, 1, 2)) if unit == "ml.g5.xlarge" else 1
    return json.dumps({
        "TrainingJobName": "bench", "RoleArn": "arn:aws:iam::123456789012:role/bench",
        "ResourceConfig": {"InstanceType": unit, "InstanceCount": count,
                           "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": rng.randint(600, 7200)},
    })


class Calls:
    """Counts calls and times phases."""

    def __init__(self) -> None:
        self.count = 0
        self.phases: list[tuple[str, int, float]] = []

    def phase(self, name: str, body: Callable[[], None]) -> None:
        before, started = self.count, time.perf_counter()
        body()
        self.phases.append((name, self.count - before, time.perf_counter() - started))


def run(call: Callable[..., dict[str, Any]], advance: Callable[[float], object], jobs: int,
        calls: Calls, seed: int = 7) -> None:
    """The benchmark's calls, through ``call(operation, **params)``."""
    rng = random.Random(seed)
    shares = [f"team-{i:02d}" for i in range(N_SHARES)]
    ids: list[str] = []

    def counted(operation: str, **params: Any) -> dict[str, Any]:
        calls.count += 1
        return call(operation, **params)

    def submit_all() -> None:
        for n in range(jobs):
            answer = counted("SubmitServiceJob", jobName=f"job-{n}", jobQueue=QUEUE,
                             serviceJobType="SAGEMAKER_TRAINING",
                             serviceRequestPayload=payload(rng),
                             quotaShareName=shares[n % N_SHARES],
                             schedulingPriority=rng.randint(0, 100))
            ids.append(answer["jobId"])
            if (n + 1) % PASS_EVERY == 0:
                advance(30)

    def list_all() -> None:
        for share in shares:
            for status in ("RUNNABLE", "RUNNING"):
                params: dict[str, Any] = {
                    "jobQueue": QUEUE, "jobStatus": status, "maxResults": 100,
                    "filters": [{"name": "QUOTA_SHARE_NAME", "values": [share]}],
                }
                while True:
                    page = counted("ListServiceJobs", **params)
                    if not page.get("nextToken"):
                        break
                    params["nextToken"] = page["nextToken"]

    def describe_and_update() -> None:
        for job in rng.sample(ids, min(len(ids), 1000)):
            counted("DescribeServiceJob", jobId=job)
        for job in rng.sample(ids, min(len(ids), 500)):
            # A job that already ended is refused, as AWS would.
            with contextlib.suppress(Exception):
                counted("UpdateServiceJob", jobId=job, schedulingPriority=rng.randint(0, 9999))

    def snapshot() -> None:
        for _ in range(200):
            counted("GetJobQueueSnapshot", jobQueue=QUEUE)

    def drain() -> None:
        # Until the snapshot shows nothing waiting and nothing in use (how `status` reads it).
        for _ in range(2000):
            advance(3600)
            calls.count += 1
            snapshot = counted("GetJobQueueSnapshot", jobQueue=QUEUE)
            in_use = sum(u["quantity"] for u in snapshot["queueUtilization"]["totalCapacityUsage"])
            if not snapshot["frontOfQueue"]["jobs"] and not in_use:
                break

    calls.phase("submit (+ a pass every 500)", submit_all)
    calls.phase("list per share and status", list_all)
    calls.phase("describe 1000, update 500", describe_and_update)
    calls.phase("snapshot x200", snapshot)
    calls.phase("run to the end (advance + snapshot)", drain)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--profile", action="store_true",
                        help="profile the server side alone (no HTTP, no boto3)")
    parser.add_argument("--sort", default="cumulative", help="profile order (pstats key)")
    args = parser.parse_args()
    capacity_limits, shares = declaration()
    calls = Calls()
    with Emulator(capacity_limits=capacity_limits, shares=shares, queue_name=QUEUE) as emu:
        if args.profile:
            service = emu.service
            profiler = cProfile.Profile()
            profiler.enable()
            run(lambda operation, **params: service.handle(operation, params),
                service.advance, args.jobs, calls)
            profiler.disable()
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(25)
        else:
            client = boto3.client("batch", endpoint_url=emu.endpoint_url,
                                  region_name="us-east-1", aws_access_key_id="bench",
                                  aws_secret_access_key="bench")
            methods = {name: getattr(client, _snake(name)) for name in (
                "SubmitServiceJob", "ListServiceJobs", "DescribeServiceJob", "UpdateServiceJob",
                "GetJobQueueSnapshot")}
            run(lambda operation, **params: methods[operation](**params),
                lambda seconds: _post(emu.endpoint_url + "/_emulator/advance",
                                      {"seconds": seconds}),
                args.jobs, calls)
        ended = sum(emu.service.jobs.count(s.spec.name, ("SUCCEEDED", "FAILED"))
                    for s in emu.service.shares.values())
    total_calls = sum(n for _, n, _ in calls.phases)
    total_time = sum(t for _, _, t in calls.phases)
    via = "server only (no HTTP)" if args.profile else "boto3 over loopback HTTP"
    print(f"emulator throughput, {args.jobs:,} jobs over {N_SHARES} shares, {via}:")
    for name, n, seconds in calls.phases:
        print(f"  {name:<34} {n:>7,} calls {seconds:8.2f} s {n / seconds:9,.0f} calls/s")
    rate = total_calls / total_time
    print(f"  {'all':<34} {total_calls:>7,} calls {total_time:8.2f} s {rate:9,.0f} calls/s"
          f"  ({'meets' if rate >= TARGET else 'BELOW'} the {TARGET:,.0f} calls/s target)")
    print(f"  jobs ended: {ended:,} of {args.jobs:,}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs (boto3, the server and other processes share them)")


def _post(url: str, body: dict[str, Any]) -> object:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


if __name__ == "__main__":
    main()
