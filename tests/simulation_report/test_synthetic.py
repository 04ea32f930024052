"""The synthetic generator: deterministic per seed, statistically what it was asked for."""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter

import pytest

from quota_constructs import CapacityLimit, QuotaConfigError
from quota_constructs.simulation.workloads import (
    ExponentialDuration,
    FixedDuration,
    JobSize,
    LogNormalDuration,
    ShareTraffic,
    default_traffic,
    iter_synthetic,
    synthesize,
)
from stacks.environments import ENVIRONMENTS

G5, G5_12 = "ml.g5.xlarge", "ml.g5.12xlarge"


def traffic(**overrides: object) -> list[ShareTraffic]:
    base: dict[str, object] = {
        "share": "a",
        "arrivals_per_hour": 30.0,
        "duration": LogNormalDuration(median=1800.0, sigma=0.5),
        "sizes": [JobSize(G5, 1, 3.0), JobSize(G5_12, 2, 1.0)],
        "priorities": {1: 1.0, 9: 1.0},
        "checkpointed_fraction": 0.25,
        "checkpoint_interval": 300.0,
        "preemption_retries": 2,
        "priority_change_fraction": 0.1,
    }
    base.update(overrides)
    return [
        ShareTraffic(**base),  # type: ignore[arg-type]
        ShareTraffic(share="b", arrivals_per_hour=10.0, duration=FixedDuration(600.0),
                     sizes=[JobSize(G5)]),
    ]


def test_the_same_seed_gives_the_same_workload_and_another_seed_does_not() -> None:
    first = synthesize(traffic(), seed=7, jobs=2000)
    assert first == synthesize(traffic(), seed=7, jobs=2000)
    assert first != synthesize(traffic(), seed=8, jobs=2000)
    # A prefix is the same workload cut short: generation does not depend on the length asked.
    assert synthesize(traffic(), seed=7, jobs=500).jobs == first.jobs[:500]


def test_arrivals_follow_the_rates_and_come_in_submission_order() -> None:
    workload = synthesize(traffic(), seed=1, hours=200)
    times = [job.submitted_at for job in workload.jobs]
    assert times == sorted(times)
    assert max(times) <= 200 * 3600
    per_share = Counter(job.share for job in workload.jobs)
    # Poisson counts: mean = rate × hours, standard deviation = its square root.
    for share, rate in (("a", 30.0), ("b", 10.0)):
        expected = rate * 200
        assert abs(per_share[share] - expected) < 5 * math.sqrt(expected)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert statistics.fmean(gaps) == pytest.approx(3600 / 40, rel=0.05)


def test_sizes_durations_priorities_and_checkpoints_follow_their_distributions() -> None:
    jobs = [job for job in synthesize(traffic(), seed=3, jobs=20000).jobs if job.share == "a"]
    n = len(jobs)
    sizes = Counter((job.instance_type, job.instance_count) for job in jobs)
    assert set(sizes) == {(G5, 1), (G5_12, 2)}
    assert sizes[(G5, 1)] / n == pytest.approx(0.75, abs=0.02)
    durations = sorted(job.duration for job in jobs)
    assert statistics.median(durations) == pytest.approx(1800.0, rel=0.05)
    log_sd = statistics.stdev(math.log(d) for d in durations)
    assert log_sd == pytest.approx(0.5, rel=0.05)
    assert Counter(job.priority for job in jobs)[9] / n == pytest.approx(0.5, abs=0.02)
    checkpointed = [job for job in jobs if job.checkpoint_interval is not None]
    assert len(checkpointed) / n == pytest.approx(0.25, abs=0.02)
    assert {job.checkpoint_interval for job in checkpointed} == {300.0}
    assert {job.preemption_retries for job in jobs} == {2}


def test_priority_changes_happen_while_the_job_can_still_be_waiting_or_running() -> None:
    workload = synthesize(traffic(), seed=5, jobs=5000)
    jobs = {job.job_id: job for job in workload.jobs}
    changes = list(workload.priority_changes)
    a_jobs = sum(1 for job in workload.jobs if job.share == "a")
    assert len(changes) / a_jobs == pytest.approx(0.1, abs=0.02)
    assert [c.at for c in changes] == sorted(c.at for c in changes)
    for change in changes:
        job = jobs[change.job_id]
        assert job.share == "a"  # b has a single priority: nothing to change to
        assert job.submitted_at <= change.at <= job.submitted_at + job.duration
        assert change.priority != job.priority


def test_generation_is_lazy() -> None:
    endless = iter_synthetic(traffic(), seed=1, hours=1e12)
    first = list(itertools.islice(endless, 3))
    assert [job.job_id.rsplit("-", 1)[1] for job, _ in first] == ["0", "1", "2"]


def test_exponential_durations_have_the_given_mean() -> None:
    workload = synthesize(
        traffic(duration=ExponentialDuration(mean=1000.0)), seed=2, jobs=20000
    )
    mean = statistics.fmean(job.duration for job in workload.jobs if job.share == "a")
    assert mean == pytest.approx(1000.0, rel=0.05)


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"arrivals_per_hour": -1.0}, "arrivals_per_hour"),
        ({"arrivals_per_hour": math.nan}, "arrivals_per_hour"),
        ({"duration": LogNormalDuration(median=-5.0)}, "duration"),
        ({"sizes": []}, "sizes"),
        ({"sizes": [JobSize(G5, 0)]}, "sizes[0].instance_count"),
        ({"sizes": [JobSize(G5, 1, 0.0)]}, "sizes[0].weight"),
        ({"priorities": {10000: 1.0}}, "priorities"),
        ({"checkpointed_fraction": 1.5}, "checkpointed_fraction"),
        ({"checkpoint_interval": None}, "checkpoint_interval"),
        ({"preemption_retries": -1}, "preemption_retries"),
        ({"priority_change_fraction": -0.1}, "priority_change_fraction"),
    ],
)
def test_bad_traffic_names_the_share_and_field(override: dict[str, object], field: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        traffic(**override)
    assert caught.value.subject == "synthetic traffic of share 'a'"
    assert caught.value.field == field


def test_a_workload_needs_a_bound_and_distinct_shares() -> None:
    with pytest.raises(QuotaConfigError):
        synthesize(traffic(), seed=1)
    with pytest.raises(QuotaConfigError):
        synthesize([*traffic(), *traffic()], seed=1, jobs=5)


def test_default_traffic_offers_the_documented_load_per_strategy() -> None:
    env = ENVIRONMENTS["prod"]
    hours = 500.0
    shares = default_traffic(env.capacity_limits, env.shares, jobs=40000, hours=hours, load=1.0)
    assert [t.share for t in shares] == ["research", "product", "evaluation"]
    workload = synthesize(shares, seed=11, hours=hours)
    assert len(workload.jobs) == pytest.approx(40000, rel=0.03)
    offered: Counter[str] = Counter()
    for job in workload.jobs:
        offered[job.share] += job.duration * job.instance_count / 3600
    # research (LEND_AND_BORROW) asks 1.5×, product (LEND) 0.7×, evaluation (RESERVE) 0.5× of
    # its own instances (prod: 6, 3 and 3 across both instance types).
    for share, demand, own in (("research", 1.5, 6), ("product", 0.7, 3), ("evaluation", 0.5, 3)):
        assert offered[share] / hours == pytest.approx(demand * own, rel=0.1)
    limits = {spec.name: {str(u.unit): u.max_capacity for u in spec.capacity_limits}
              for spec in env.shares}
    for job in workload.jobs:
        assert job.instance_count <= limits[job.share][job.instance_type]


def test_default_traffic_rejects_nonsense() -> None:
    with pytest.raises(QuotaConfigError):
        default_traffic([CapacityLimit(G5, 1)], ENVIRONMENTS["dev"].shares, jobs=0, hours=1)
