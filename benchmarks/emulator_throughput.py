"""Emulator throughput: 10,000 jobs over 20 shares submitted, scheduled, listed and
snapshotted through boto3, as a team's CI would drive it.

Starts ``quota-constructs emulate --port 0 --clock manual`` as its own process, as CI would,
and drives it with boto3 ``batch`` clients over loopback HTTP (``--clients`` processes, one
boto3 client each, so the clients are not what is measured). Phases: submit every job (a
scheduling pass every 500 submissions), list each share's jobs per status with pagination,
describe and re-prioritise a sample, snapshot the queue, then run the clock until every job
ended. Prints API calls per second per phase and overall (the target: at least 500 a second)
and the machine's load. Not a test: the figures vary by machine. ``--in-process`` makes the
same calls on the server side alone (no HTTP, no boto3); ``--profile`` does so under cProfile.

    .venv/bin/python benchmarks/emulator_throughput.py
    .venv/bin/python benchmarks/emulator_throughput.py --jobs 2000 --profile --sort tottime
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
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
    """The environment (both types) and 20 shares of every strategy."""
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


_LIMITS, _SHARES = declaration()
DECLARATION = {"capacity_limits": _LIMITS, "shares": _SHARES}
"""What ``quota-constructs emulate --declaration`` serves."""


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


_CALL: Callable[..., dict[str, Any]] | None = None
"""How this process calls the emulator (set per process: a boto3 client, or the service)."""


def _use(call: Callable[..., dict[str, Any]]) -> None:
    global _CALL
    _CALL = call


def _boto3_call(endpoint: str) -> Callable[..., dict[str, Any]]:
    client = boto3.session.Session().client(
        "batch", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="bench", aws_secret_access_key="bench")
    return lambda operation, **params: dict(getattr(client, _snake(operation))(**params))


def _client_process(endpoint: str) -> None:
    _use(_boto3_call(endpoint))


def _send(request: tuple[str, dict[str, Any]]) -> Any:
    """One call; a refused one (UpdateServiceJob of a job that ended, as in AWS) is None."""
    assert _CALL is not None
    try:
        return _CALL(request[0], **request[1])
    except Exception:
        return None


def _pages(share_status: tuple[str, str]) -> int:
    """Every page of one share's jobs in one status; how many calls that took."""
    assert _CALL is not None
    share, status = share_status
    params: dict[str, Any] = {
        "jobQueue": QUEUE, "jobStatus": status, "maxResults": 100,
        "filters": [{"name": "QUOTA_SHARE_NAME", "values": [share]}],
    }
    calls = 0
    while True:
        calls += 1
        page = _CALL("ListServiceJobs", **params)
        if not page.get("nextToken"):
            return calls
        params["nextToken"] = page["nextToken"]


class Calls:
    """Counts calls and times phases; independent calls go out from client processes (each
    with its own boto3 client and interpreter), or from this process alone."""

    def __init__(self, pool: ProcessPoolExecutor | None) -> None:
        self.pool = pool
        self.count = 0
        self.phases: list[tuple[str, int, float]] = []

    def one(self, operation: str, **params: Any) -> dict[str, Any]:
        self.count += 1
        return dict(_send((operation, params)))

    def fan(self, requests: Sequence[tuple[str, dict[str, Any]]]) -> list[Any]:
        """Each ``(operation, params)``, answers in order."""
        self.count += len(requests)
        if self.pool is None:
            return [_send(request) for request in requests]
        return list(self.pool.map(_send, requests, chunksize=25))

    def pages(self, work: Sequence[tuple[str, str]]) -> None:
        done = map(_pages, work) if self.pool is None else self.pool.map(_pages, work)
        self.count += sum(done)

    def phase(self, name: str, body: Callable[[], None]) -> None:
        before, started = self.count, time.perf_counter()
        body()
        self.phases.append((name, self.count - before, time.perf_counter() - started))


def run(calls: Calls, advance: Callable[[float], object], jobs: int, seed: int = 7) -> None:
    """The benchmark's calls; every request is built first, from one seeded generator."""
    rng = random.Random(seed)
    shares = [f"team-{i:02d}" for i in range(N_SHARES)]
    ids: list[str] = []

    def submit_all() -> None:
        for first in range(0, jobs, PASS_EVERY):
            answers = calls.fan([("SubmitServiceJob", {
                "jobName": f"job-{n}", "jobQueue": QUEUE, "serviceJobType": "SAGEMAKER_TRAINING",
                "serviceRequestPayload": payload(rng), "quotaShareName": shares[n % N_SHARES],
                "schedulingPriority": rng.randint(0, 100),
            }) for n in range(first, min(jobs, first + PASS_EVERY))])
            ids.extend(answer["jobId"] for answer in answers)
            advance(30)
            calls.count += 1

    def list_all() -> None:
        calls.pages([(share, status) for share in shares for status in ("RUNNABLE", "RUNNING")])

    def describe_and_update() -> None:
        calls.fan([("DescribeServiceJob", {"jobId": job})
                   for job in rng.sample(ids, min(len(ids), 1000))])
        calls.fan([("UpdateServiceJob", {"jobId": job, "schedulingPriority": rng.randint(0, 9999)})
                   for job in rng.sample(ids, min(len(ids), 500))])

    def snapshot() -> None:
        calls.fan([("GetJobQueueSnapshot", {"jobQueue": QUEUE})] * 200)

    def drain() -> None:
        # Until the snapshot shows nothing waiting and nothing in use (how `status` reads it).
        for _ in range(2000):
            advance(3600)
            calls.count += 1
            snapshot = calls.one("GetJobQueueSnapshot", jobQueue=QUEUE)
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
    parser.add_argument("--clients", type=int, default=2,
                        help="client processes (default 2), each with its own boto3 client")
    parser.add_argument("--in-process", action="store_true",
                        help="the server side alone: the same calls, no HTTP, no boto3")
    parser.add_argument("--profile", action="store_true",
                        help="--in-process under cProfile")
    parser.add_argument("--sort", default="cumulative", help="profile order (pstats key)")
    args = parser.parse_args()
    if args.profile or args.in_process:
        capacity_limits, shares = declaration()
        with Emulator(capacity_limits=capacity_limits, shares=shares, queue_name=QUEUE) as emu:
            service = emu.service
            _use(lambda operation, **params: service.handle(operation, params))
            calls = Calls(None)
            profiler = cProfile.Profile() if args.profile else None
            if profiler is not None:
                profiler.enable()
            run(calls, service.advance, args.jobs)
            if profiler is not None:
                profiler.disable()
                pstats.Stats(profiler).sort_stats(args.sort).print_stats(25)
        via = "server side alone (no HTTP)" + (", profiled" if profiler is not None else "")
    else:
        # The emulator as CI runs it: its own process (and interpreter lock), found by the
        # first line it prints.
        server = subprocess.Popen(
            [sys.executable, "-m", "quota_constructs", "emulate", "--declaration",
             f"{Path(__file__).resolve()}:DECLARATION", "--queue-name", QUEUE, "--port", "0",
             "--clock", "manual"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        assert server.stdout is not None
        endpoint = server.stdout.readline().strip()
        try:
            _use(_boto3_call(endpoint))
            with ProcessPoolExecutor(args.clients, initializer=_client_process,
                                     initargs=(endpoint,)) as pool:
                calls = Calls(pool if args.clients > 1 else None)
                run(calls, lambda seconds: _post(endpoint + "/_emulator/advance",
                                                 {"seconds": seconds}), args.jobs)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(30)
        via = (f"boto3 over loopback HTTP, {args.clients} client process(es), the emulator "
               "in its own process")
    total_calls = sum(n for _, n, _ in calls.phases)
    total_time = sum(t for _, _, t in calls.phases)
    print(f"emulator throughput, {args.jobs:,} jobs over {N_SHARES} shares, {via}:")
    for name, n, seconds in calls.phases:
        print(f"  {name:<36} {n:>7,} calls {seconds:8.2f} s {n / seconds:9,.0f} calls/s")
    rate = total_calls / total_time
    print(f"  {'all':<36} {total_calls:>7,} calls {total_time:8.2f} s {rate:9,.0f} calls/s"
          f"  ({'meets' if rate >= TARGET else 'BELOW'} the {TARGET:,.0f} calls/s target)")
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (the clients, the "
          "emulator and every other process share them)")


def _post(url: str, body: dict[str, Any]) -> object:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


if __name__ == "__main__":
    main()
