"""Simulator throughput: a million jobs over 20 shares and four (or ``--types``) instance types.

Builds a seeded synthetic workload (every strategy, borrow limits, in-share preemption,
priority changes, checkpoints and retry budgets, a load near the environment's capacity so
queues, borrowing and both kinds of preemption all happen), then times ``simulate`` on growing
prefixes of it and prints jobs per second (wall clock, and CPU time, which a busy shared
machine disturbs less), the machine's load average around each run (others' work slows the
wall-clock figure), peak memory and the CPU-time ratios between sizes (about 2.0 per doubling
when cost grows linearly). Not a test: the figures vary by machine.

    .venv/bin/python benchmarks/simulator_throughput.py            # 250k, 500k, 1M jobs
    .venv/bin/python benchmarks/simulator_throughput.py --types 3 --load 0.9
    .venv/bin/python benchmarks/simulator_throughput.py --jobs 100000 --profile
    .venv/bin/python benchmarks/simulator_throughput.py --jobs 200000 --head-of-line PER_SHARE
    QUOTA_CONSTRUCTS_PURE_PYTHON=1 python3 dev.py bench-sim --types 3   # the pure-Python engine
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import pstats
import random
import time
import tracemalloc

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import (
    HeadOfLine,
    PriorityChange,
    RequeuePlace,
    SimJob,
    SimulationOptions,
    simulate,
)
from quota_constructs.simulation._native import PURE_PYTHON, build

ENVIRONMENT = {"ml.g5.xlarge": 400, "ml.g5.12xlarge": 200, "ml.p4d.24xlarge": 100,
               "ml.p5.48xlarge": 60}
N_SHARES = 20
DEFAULT_OPTIONS = SimulationOptions()
MEAN_DURATION = 3600.0
LOAD = 0.95


def environment_of(types: int) -> dict[str, int]:
    """The first ``types`` instance types of :data:`ENVIRONMENT` and their capacity."""
    if not 1 <= types <= len(ENVIRONMENT):
        raise SystemExit(f"--types must be between 1 and {len(ENVIRONMENT)}, not {types}")
    return dict(list(ENVIRONMENT.items())[:types])


def declaration(
    environment: dict[str, int] = ENVIRONMENT,
) -> tuple[list[CapacityLimit], list[QuotaShareSpec]]:
    limits = [CapacityLimit(unit, count) for unit, count in environment.items()]
    strategies = (
        SharingStrategy.LEND_AND_BORROW,
        SharingStrategy.LEND,
        SharingStrategy.LEND_AND_BORROW,
        SharingStrategy.RESERVE,
    )
    shares: list[QuotaShareSpec] = []
    for i in range(N_SHARES):
        strategy = strategies[i % len(strategies)]
        # Each share gets a twentieth of each unit (a little less, so some is unowned).
        own = [
            CapacityLimit(unit, max(1, count * 9 // (10 * N_SHARES)))
            for unit, count in environment.items()
        ]
        borrow = None
        if strategy is SharingStrategy.LEND_AND_BORROW:
            borrow = (None, 200, 0, 50)[i % 4]
        shares.append(
            QuotaShareSpec(
                name=f"team-{i:02d}",
                capacity_limits=own,
                strategy=strategy,
                borrow_limit_percent=borrow,
                in_share_preemption=i % 3 == 0,
            )
        )
    return limits, shares


def workload(
    n_jobs: int, seed: int = 7, environment: dict[str, int] = ENVIRONMENT, load: float = LOAD,
) -> tuple[list[SimJob], list[PriorityChange]]:
    """Poisson arrivals at ``load`` of capacity, skewed across shares so some borrow and lend."""
    rng = random.Random(seed)
    capacity = sum(environment.values())
    units = list(environment)
    weights = [1.0 + 3.0 * (i % 5 == 0) for i in range(N_SHARES)]
    mean_count = 1.5
    rate = load * capacity / (MEAN_DURATION * mean_count)  # jobs per second
    jobs: list[SimJob] = []
    changes: list[PriorityChange] = []
    t = 0.0
    shares = rng.choices(range(N_SHARES), weights=weights, k=n_jobs)
    job_units = rng.choices(units, weights=[environment[u] for u in units], k=n_jobs)
    for index in range(n_jobs):
        t += rng.expovariate(rate)
        job_id = f"job-{index}"
        priority = rng.randrange(10)
        jobs.append(
            SimJob(
                job_id=job_id,
                share=f"team-{shares[index]:02d}",
                submitted_at=t,
                duration=rng.expovariate(1.0 / MEAN_DURATION),
                instance_type=job_units[index],
                instance_count=1 if rng.random() < 0.7 else 2,
                priority=priority,
                checkpoint_interval=900.0 if rng.random() < 0.5 else None,
                preemption_retries=None if rng.random() < 0.8 else rng.randrange(3),
            )
        )
        if rng.random() < 0.01:
            changes.append(
                PriorityChange(at=t + rng.uniform(0, 1800), job_id=job_id,
                               priority=rng.randrange(10))
            )
    return jobs, changes


def load_average() -> str:
    """The machine's 1-minute load average: on a shared machine, others' work slows the wall
    clock (and a little the CPU time) of what is measured."""
    return f"{os.getloadavg()[0]:.2f}"


def measure(
    n_jobs: int,
    jobs: list[SimJob],
    changes: list[PriorityChange],
    options: SimulationOptions = DEFAULT_OPTIONS,
    environment: dict[str, int] = ENVIRONMENT,
) -> float:
    limits, shares = declaration(environment)
    subset = jobs[:n_jobs]
    ids = {job.job_id for job in subset}
    subset_changes = [c for c in changes if c.job_id in ids]
    gc.collect()
    load_before = load_average()
    began = time.perf_counter()
    cpu_began = time.process_time()
    result = simulate(
        capacity_limits=limits, shares=shares, jobs=subset, priority_changes=subset_changes,
        options=options,
    )
    elapsed = time.perf_counter() - began
    cpu = time.process_time() - cpu_began
    preemptions = sum(
        f.cross_share_preemptions + f.in_share_preemptions for f in result.shares.values()
    )
    borrowed = sum(f.borrowed_capacity_hours for f in result.shares.values())
    print(
        f"{n_jobs:>9,} jobs  {elapsed:7.2f} s  {n_jobs / elapsed:>9,.0f} jobs/s  "
        f"(CPU {cpu:.2f} s: {n_jobs / cpu:,.0f} jobs/s)  "
        f"preemptions {preemptions:,}  borrowed {borrowed:,.0f} instance-h  "
        f"load {load_before} -> {load_average()} on {os.cpu_count()} CPUs",
        flush=True,
    )
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1_000_000, help="largest run (default 1M)")
    parser.add_argument("--types", type=int, default=len(ENVIRONMENT),
                        help=f"instance types, the first of {', '.join(ENVIRONMENT)} "
                             f"(default {len(ENVIRONMENT)})")
    parser.add_argument("--load", type=float, default=LOAD,
                        help=f"arrivals as a fraction of the capacity (default {LOAD})")
    parser.add_argument("--profile", action="store_true", help="cProfile the largest run")
    parser.add_argument("--memory", action="store_true",
                        help="also trace peak memory of the largest run (tracemalloc makes "
                             "that run about ten times slower)")
    parser.add_argument("--head-of-line", choices=[h.value for h in HeadOfLine],
                        default=HeadOfLine.PER_SHARE_AND_TYPE.value,
                        help="the simulator's head-of-line option (default PER_SHARE_AND_TYPE)")
    parser.add_argument("--requeue", choices=[r.value for r in RequeuePlace],
                        default=RequeuePlace.ORIGINAL.value,
                        help="where preempted jobs wait again (default ORIGINAL)")
    args = parser.parse_args()
    options = SimulationOptions(head_of_line=HeadOfLine(args.head_of_line),
                                requeue_place=RequeuePlace(args.requeue))
    environment = environment_of(args.types)

    began = time.perf_counter()
    jobs, changes = workload(args.jobs, environment=environment, load=args.load)
    print(f"built {len(jobs):,} jobs and {len(changes):,} priority changes over {N_SHARES} "
          f"shares and {len(environment)} instance types at {args.load:.0%} load in "
          f"{time.perf_counter() - began:.1f} s; the simulator runs {build()} "
          f"({PURE_PYTHON}=1 for pure Python)", flush=True)
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        measure(args.jobs, jobs, changes, options, environment)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        return

    sizes = [args.jobs // 4, args.jobs // 2, args.jobs]
    times = [measure(n, jobs, changes, options, environment) for n in sizes]
    print(f"linearity: x2 jobs -> x{times[1] / times[0]:.2f} CPU time, "
          f"x2 again -> x{times[2] / times[1]:.2f} (2.00 = linear)")
    if args.memory:
        tracemalloc.start()
        measure(args.jobs, jobs, changes, options, environment)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"peak memory of the simulation: {peak / 2**20:,.0f} MiB (tracemalloc)")
    else:
        import resource

        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f"peak resident memory of this process (workload included): "
              f"{peak_kib / 1024:,.0f} MiB")


if __name__ == "__main__":
    main()
