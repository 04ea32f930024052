"""``quota-constructs usage`` on a million-job history: how long reading, measuring and writing
the report take.

Writes a seeded history export (``quota-constructs history``'s CSV, through its own writer) of
``--jobs`` jobs over 20 shares (every strategy) and 4 instance types, about three months at
about 90 % of the environment: a fifth of the jobs preempted once to three times, some
failed by their budget, some still running at the export, some never started. Then runs the
command's steps as ``quota-constructs usage --history ... --prices ... --half-life 7d`` does
(read the export, measure, write usage.json, usage.csv and report.html) and prints each step's
wall and CPU time, the total and the process's peak memory. Not a test: the figures vary by
machine.

    python3 dev.py bench-usage                    # 1,000,000 jobs
    python3 dev.py bench-usage --jobs 200000 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

# The simulator benchmark's environment and declaration: 20 shares of every strategy (RESERVE,
# LEND, LEND_AND_BORROW with unlimited, 200 %, 0 and 50 % borrowing) over four types.
from simulator_throughput import ENVIRONMENT, N_SHARES, declaration

from quota_constructs.live.history import ExportedJob, write_history
from quota_constructs.usage import (
    UsageResult,
    default_window,
    measure,
    read_history,
    write_usage,
)
from quota_constructs.wire.job_record import FAILED, PREEMPTED, RUNNING, SUCCEEDED, AttemptRun

PRICES = {"ml.g5.xlarge": 1.41, "ml.g5.12xlarge": 7.09, "ml.p4d.24xlarge": 37.69,
          "ml.p5.48xlarge": 98.32}
HOUR_MS = 3_600_000
START_MS = 1_780_000_000_000
T = TypeVar("T")


def history(n_jobs: int, seed: int = 7) -> tuple[list[ExportedJob], float]:
    """The jobs and the export's moment (seconds since the epoch)."""
    rng = random.Random(seed)
    units = list(ENVIRONMENT)
    weights = [size / (1.5 * HOUR_MS) for size in ENVIRONMENT.values()]
    rate = 0.9 * sum(weights)  # jobs per millisecond at 90 % of the environment
    jobs = []
    created = START_MS
    for number in range(n_jobs):
        created += int(rng.expovariate(rate))
        share = f"team-{rng.randrange(N_SHARES):02d}"
        unit = rng.choices(units, weights)[0]
        count = rng.choice((1, 1, 1, 2, 2, 3))
        budget = rng.choice((None, None, 0, 1, 2))
        start = created + int(rng.expovariate(1 / (10 * 60_000)))
        runs = []
        for _ in range(rng.choices((0, 1, 2, 3), (80, 12, 5, 3))[0]):
            stop = start + int(rng.expovariate(1 / (20 * 60_000))) + 1
            runs.append(AttemptRun(start, stop, PREEMPTED))
            start = stop + int(rng.expovariate(1 / (5 * 60_000)))
        status = SUCCEEDED
        if budget is not None and len(runs) > budget:
            runs, status = runs[:budget + 1], FAILED
        elif rng.random() < 0.01:
            runs, status = [], "RUNNABLE"
        else:
            runs.append(AttemptRun(start, start + int(rng.expovariate(1 / HOUR_MS)) + 1,
                                   SUCCEEDED))
        jobs.append(ExportedJob(
            job_id=f"job-{number:07d}", job_name="train", share=share,
            created_at=created / 1000, duration=0.0, instance_type=unit, instance_count=count,
            priority=0, preemption_retries=budget, status=status, history="finished",
            attempts=len(runs), preemptions=sum(r.ended == PREEMPTED for r in runs),
            runs=tuple(runs), created_ms=created))
    moment = created + HOUR_MS // 2
    # The last hundred jobs still run at the export.
    for index in range(max(0, n_jobs - 100), n_jobs):
        job = jobs[index]
        if job.runs and job.status == SUCCEEDED:
            last = job.runs[-1]
            jobs[index] = ExportedJob(**{**job.__dict__, "status": "RUNNING",
                                         "runs": (*job.runs[:-1],
                                                  AttemptRun(last.started_ms, None, RUNNING))})
    return jobs, moment / 1000


def timed(label: str, step: Callable[[], T]) -> tuple[T, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = step()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  {label:<34} {wall:7.2f} s wall {cpu:7.2f} s CPU", flush=True)
    return result, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--profile", action="store_true", help="cProfile the measuring step")
    options = parser.parse_args()
    capacity_limits, shares = declaration()
    with tempfile.TemporaryDirectory() as where:
        export = Path(where) / "jobs.csv"
        print(f"writing a history export of {options.jobs:,} jobs (not timed)...", flush=True)
        jobs, moment = history(options.jobs)
        attempts = sum(len(job.runs) for job in jobs)
        write_history(export, jobs, exported_at=moment)
        size = export.stat().st_size
        del jobs
        print(f"{options.jobs:,} jobs, {attempts:,} attempts, {size / 2**20:,.0f} MiB; "
              "quota-constructs usage's steps:", flush=True)
        table, read_wall, read_cpu = timed("read the export", lambda: read_history(export))
        window = default_window(table)

        def measured() -> UsageResult:
            return measure(table, capacity_limits=capacity_limits, shares=shares,
                           window=window, half_life_hours=168.0, prices=PRICES)

        if options.profile:
            profiler = cProfile.Profile()
            profiler.enable()
        result, measure_wall, measure_cpu = timed("measure (sweep per instance type)",
                                                  measured)
        if options.profile:
            profiler.disable()
            pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(15)
        _, write_wall, write_cpu = timed(
            "write usage.json, usage.csv, report.html",
            lambda: write_usage(Path(where) / "out", result, capacity_limits=capacity_limits,
                                shares=shares))
    wall = read_wall + measure_wall + write_wall
    cpu = read_cpu + measure_cpu + write_cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"total: {options.jobs:,} jobs in {wall:.1f} s wall ({cpu:.1f} s CPU, "
          f"{options.jobs / wall:,.0f} jobs/s); window {window.hours:,.0f} hours; "
          f"peak memory {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
