"""A plausible synthetic workload for a declaration, when nobody has described their traffic.

The assumptions, each a parameter of :func:`default_traffic`:

- **Demand follows the strategy.** A share that may borrow (``LEND_AND_BORROW``) is declared so
  because it has more work than its allocation: it offers ``borrower_demand`` (1.5) times its own
  capacity. ``LEND`` shares offer ``lender_demand`` (0.7) and ``RESERVE`` shares
  ``reserver_demand`` (0.5) of theirs: they lend idle time or keep room to start at once.
  ``load`` scales all three (default 0.7: the borrower then asks about 1.05 times its own
  capacity, which it can only serve by borrowing).
- **Job sizes** are drawn from the share's own instance types, weighted by its allocation of
  each; most jobs take one instance, some two or four where the share's allocation has room.
- **Durations** are log-normal (sigma 1: a long tail), with the mean chosen so that the share
  offers its demand over ``hours`` with its share of ``jobs``.
- **Priorities** 100, 500 and 900 with weights 6:3:1; ``priority_change_fraction`` (2 %) of the
  jobs get one priority change while they wait or run.
- Jobs of shares that can be preempted (they borrow or preempt in-share) checkpoint 80 % of the
  time, others 30 %, every quarter of the mean duration; every job survives
  ``preemption_retries`` (3) preemptions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...model import CapacityLimit, QuotaConfigError, QuotaShareSpec, SharingStrategy
from .synthetic import JobSize, LogNormalDuration, ShareTraffic

PRIORITY_MIX: Mapping[int, float] = {100: 6.0, 500: 3.0, 900: 1.0}
SIGMA = 1.0


def default_traffic(
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    *,
    jobs: int,
    hours: float,
    load: float = 0.7,
    borrower_demand: float = 1.5,
    lender_demand: float = 0.7,
    reserver_demand: float = 0.5,
    priority_change_fraction: float = 0.02,
    preemption_retries: int | None = 3,
) -> list[ShareTraffic]:
    """Traffic for every enabled share so that about ``jobs`` jobs arrive within ``hours``."""
    if jobs < 1 or hours <= 0 or load <= 0:
        raise QuotaConfigError(
            "synthetic workload", "jobs/hours/load", (jobs, hours, load),
            "jobs >= 1, hours > 0 and load > 0",
        )
    environment = {str(limit.unit): limit.max_capacity for limit in capacity_limits}
    demand_of = {
        SharingStrategy.LEND_AND_BORROW: borrower_demand,
        SharingStrategy.LEND: lender_demand,
        SharingStrategy.RESERVE: reserver_demand,
    }
    plans: list[tuple[QuotaShareSpec, list[JobSize], float]] = []
    for spec in shares:
        if not spec.enabled:
            continue
        own = {
            str(limit.unit): min(limit.max_capacity, environment.get(str(limit.unit), 0))
            for limit in spec.capacity_limits
        }
        sizes = [
            JobSize(unit, count, weight * instances)
            for unit, instances in own.items()
            if instances > 0
            for count, weight in ((1, 4.0), (2, 1.0), (4, 0.5))
            if count <= instances
        ]
        if not sizes:
            continue
        # Instance-seconds per second the share asks for.
        offered = load * demand_of[spec.strategy] * sum(own.values())
        plans.append((spec, sizes, offered))
    total_offered = sum(offered for _, _, offered in plans)
    if total_offered <= 0:
        return []
    horizon = hours * 3600.0
    # Every job asks for the same instance-seconds on average; busier shares submit more jobs.
    instance_seconds_per_job = total_offered * horizon / jobs
    traffic = []
    for spec, sizes, offered in plans:
        weight_total = sum(size.weight for size in sizes)
        mean_count = sum(size.instance_count * size.weight for size in sizes) / weight_total
        mean_duration = instance_seconds_per_job / mean_count
        preemptible = spec.strategy.borrows or spec.in_share_preemption
        traffic.append(
            ShareTraffic(
                share=spec.name,
                arrivals_per_hour=jobs * offered / total_offered / hours,
                duration=LogNormalDuration(
                    median=mean_duration / LogNormalDuration(1.0, SIGMA).mean, sigma=SIGMA
                ),
                sizes=sizes,
                priorities=PRIORITY_MIX,
                checkpointed_fraction=0.8 if preemptible else 0.3,
                checkpoint_interval=max(mean_duration / 4, 1.0),
                preemption_retries=preemption_retries,
                priority_change_fraction=priority_change_fraction,
            )
        )
    return traffic
