"""recommend's environment advice is per instance type, sufficient and necessary (issue 23).

Sufficient: the advised sizes, with the declaration given for them, meet every target when
replayed by simulate(). Necessary: a type advised to grow, put back at today's size with every
other type as advised, is one recommend itself then cannot meet every target on. Per type: a
type whose shares meet their targets today is never grown because another type is short.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.model import QuotaConfigError
from quota_constructs.simulation import Recommendation, SimJob, recommend, simulate

G5, P4 = "ml.g5.xlarge", "ml.p4d.24xlarge"
STRATEGIES = (SharingStrategy.RESERVE, SharingStrategy.LEND, SharingStrategy.LEND_AND_BORROW)


def share(name: str, limits: dict[str, int], strategy: SharingStrategy,
          wait: float | None) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name, capacity_limits=[CapacityLimit(u, n) for u, n in limits.items()],
        strategy=strategy,
        agreement=None if wait is None else ShareAgreement(owner=name, target_wait_p95=wait),
    )


def env(sizes: dict[str, int]) -> list[CapacityLimit]:
    return [CapacityLimit(unit, count) for unit, count in sizes.items()]


def misses(environment: Sequence[CapacityLimit], shares: Sequence[QuotaShareSpec],
           jobs: Sequence[SimJob]) -> list[str]:
    """Shares whose wait target a replay misses, straight from simulate()."""
    try:
        result = simulate(capacity_limits=environment, shares=shares, jobs=jobs)
    except QuotaConfigError as error:
        return [f"not runnable: {error}"]
    out = []
    for spec in shares:
        target = spec.agreement.target_wait_p95_seconds if spec.agreement else None
        wait = result.shares[spec.name].wait_p95
        if target is not None and wait is not None and wait > target:
            out.append(spec.name)
    return out


def run(sizes: dict[str, int], shares: Sequence[QuotaShareSpec],
        jobs: Sequence[SimJob]) -> Recommendation:
    with ThreadPoolExecutor(2) as pool:
        return recommend(capacity_limits=env(sizes), shares=shares, jobs=jobs, executor=pool)


def check_advice(sizes: dict[str, int], shares: Sequence[QuotaShareSpec],
                 jobs: Sequence[SimJob]) -> Recommendation:
    rec = run(sizes, shares, jobs)
    assert rec.environment_needed_verified, rec.environment_basis
    advised = rec.environment_needed
    # Sufficient: the declaration given for the advised sizes meets every target there.
    assert misses(env(advised), rec.environment_shares, jobs) == []
    # Necessary: each type advised to grow, at today's size with the others as advised,
    # is an environment recommend itself cannot meet every target on, and the reason
    # names a share that runs it.
    runners = {unit: {job.share for job in jobs if job.instance_type == unit} for unit in sizes}
    for unit, delta in rec.environment_change().items():
        if delta <= 0:
            continue
        # Never grown for a type whose shares all meet their targets at today's size.
        assert set(rec.unmet) & runners[unit], (unit, rec.unmet)
        back = run({**advised, unit: sizes[unit]}, shares, jobs)
        assert not back.meets_targets, (unit, advised)
        # Nor does the declaration given for the advised sizes meet them there, where its
        # own limits still fit (recommend never over-allocates a type).
        if sum(s.limit_of(unit) for s in rec.environment_shares) <= sizes[unit]:
            assert misses(env({**advised, unit: sizes[unit]}), rec.environment_shares, jobs)
        assert set(back.unmet) & runners[unit], (unit, back.unmet)
        assert any(name in rec.environment_reasons[unit] for name in runners[unit])
    # Asked again on the advised environment, recommend meets every target and grows nothing.
    again = run(advised, shares, jobs)
    assert again.meets_targets, (advised, again.unmet)
    assert all(delta <= 0 for delta in again.environment_change().values())
    return rec


def test_a_type_whose_shares_meet_their_targets_is_not_grown_for_another_short_type() -> None:
    """The reported case: p4d is short for 'llm'; g5's shares ('vision') meet theirs with room
    to spare. Only p4d grows; g5 can shrink, and stays so when p4d alone is fixed."""
    shares = [share("llm", {P4: 1}, SharingStrategy.LEND, wait=600.0),
              share("vision", {G5: 4}, SharingStrategy.LEND, wait=600.0)]
    jobs = [SimJob(job_id=f"l{i}", share="llm", submitted_at=0.0, duration=3600.0,
                   instance_type=P4) for i in range(3)]
    jobs += [SimJob(job_id=f"v{i}", share="vision", submitted_at=i * 4000.0, duration=1800.0,
                    instance_type=G5) for i in range(6)]
    today = {P4: 1, G5: 4}
    rec = check_advice(today, shares, jobs)
    change = rec.environment_change()
    assert change[P4] == 2  # three one-hour jobs at once, a ten-minute target
    assert change[G5] == -3  # one job at a time: one instance is enough
    fixed = run({P4: 3, G5: 4}, shares, jobs)  # only p4d fixed: g5 still shrinks, never grows
    assert fixed.environment_change() == {P4: 0, G5: -3}


def random_case(seed: int) -> tuple[dict[str, int], list[QuotaShareSpec], list[SimJob]]:
    rng = random.Random(seed)
    sizes = {G5: rng.randint(2, 4), P4: rng.randint(1, 3)}
    shares: list[QuotaShareSpec] = []
    jobs: list[SimJob] = []
    for index, name in enumerate(("A", "B", "C")[: rng.randint(2, 3)]):
        units = [u for u in (G5, P4) if rng.random() < 0.6] or [rng.choice((G5, P4))]
        limits = {u: 1 for u in units}
        shares.append(share(name, limits, rng.choice(STRATEGIES),
                            rng.choice((None, 900.0, 3600.0, 7200.0))))
        for i in range(rng.randint(4, 9)):
            jobs.append(SimJob(
                job_id=f"{name}{i}", share=name, instance_type=rng.choice(units),
                submitted_at=rng.choice((0.0, 10000.0)) + index * 2000.0 + rng.uniform(0, 900),
                duration=rng.uniform(900, 4000),
            ))
    if not any(s.agreement for s in shares):
        shares[0] = share(shares[0].name, {str(c.unit): c.max_capacity
                                           for c in shares[0].capacity_limits},
                          shares[0].strategy, 1800.0)
    # Today's limits fill the environment as far as it goes (at least 1 each).
    for unit, size in sizes.items():
        listing = [s for s in shares if s.limit_of(unit)]
        sizes[unit] = max(size, len(listing))
    return sizes, shares, jobs


@pytest.mark.parametrize("seed", range(12))
def test_advice_is_sufficient_and_each_growth_necessary_on_random_two_type_cases(
    seed: int,
) -> None:
    sizes, shares, jobs = random_case(seed)
    check_advice(sizes, shares, jobs)


# --- no change that changes nothing ---------------------------------------------------------
def outcomes(environment: Sequence[CapacityLimit], shares: Sequence[QuotaShareSpec],
             jobs: Sequence[SimJob]) -> dict[str, object] | None:
    try:
        result = simulate(capacity_limits=environment, shares=shares, jobs=jobs)
    except QuotaConfigError:
        return None
    return {job_id: (job.status, job.finished_at, job.attempts)
            for job_id, job in result.jobs.items()}


def assert_every_change_changes_something(
    sizes: dict[str, int], today: Sequence[QuotaShareSpec], rec: Recommendation,
    jobs: Sequence[SimJob],
) -> None:
    """Each share the recommendation changes: made alone on today's declaration, or undone
    from the recommendation, some job's replay differs."""
    environment = env(sizes)
    before = outcomes(environment, today, jobs)
    after = outcomes(environment, rec.shares, jobs)
    for s, (was, now) in enumerate(zip(today, rec.shares, strict=True)):
        if was == now:
            continue
        alone = [*today[:s], now, *today[s + 1:]]
        undone = [*rec.shares[:s], was, *rec.shares[s + 1:]]
        assert (outcomes(environment, alone, jobs) != before
                or outcomes(environment, undone, jobs) != after), (was, now)


def test_a_reserve_share_alone_on_its_type_is_not_made_to_borrow() -> None:
    """'llm' alone on p4d misses its target: no strategy changes that (nothing to borrow and
    nobody to lend to), so none is proposed or counted."""
    shares = [share("llm", {P4: 1}, SharingStrategy.RESERVE, wait=60.0),
              share("vision", {G5: 1}, SharingStrategy.RESERVE, wait=60.0),
              share("nlp", {G5: 1}, SharingStrategy.LEND, wait=None)]
    jobs = [SimJob(job_id=f"l{i}", share="llm", submitted_at=0.0, duration=3600.0,
                   instance_type=P4) for i in range(2)]
    jobs += [SimJob(job_id=f"v{i}", share="vision", submitted_at=0.0, duration=600.0,
                    instance_type=G5) for i in range(2)]
    sizes = {P4: 1, G5: 2}
    rec = run(sizes, shares, jobs)
    llm = rec.shares[0]
    assert llm.strategy is SharingStrategy.RESERVE and llm.limit_of(P4) == 1
    assert rec.change == sum(a != b for a, b in zip(shares, rec.shares, strict=True))
    assert_every_change_changes_something(sizes, shares, rec, jobs)


@pytest.mark.parametrize("seed", range(12))
def test_no_proposed_change_leaves_the_replay_identical_on_random_cases(seed: int) -> None:
    sizes, shares, jobs = random_case(seed)
    rec = run(sizes, shares, jobs)
    assert_every_change_changes_something(sizes, shares, rec, jobs)


# --- what the advice costs ------------------------------------------------------------------
def test_a_shrinking_advice_replays_witnesses_not_a_search_on_every_size() -> None:
    """Sizing down runs recommend's own search on no other environment (each size tried is
    one replay of an allocation built from the answer and the demands); and an answer that
    meets every target runs no replay of a share alone with the whole environment (only a
    missed target needs one to say why): the demand analysis is today's replay and the
    demand probes, nothing else."""
    shares = [share("A", {G5: 5}, SharingStrategy.LEND, wait=1800.0),
              share("B", {G5: 5}, SharingStrategy.LEND, wait=1800.0)]
    jobs = [SimJob(job_id=f"{name}{i}", share=name, submitted_at=i * 1000.0, duration=1500.0,
                   instance_type=G5) for i in range(40) for name in "AB"]
    rec = check_advice({G5: 10}, shares, jobs)
    assert rec.meets_targets and rec.environment_change()[G5] < 0
    assert not [reason for reason in rec.replays if "another environment" in reason]
    assert rec.replays["demand analysis"] == 1 + sum(d.probes for d in rec.demand)
    assert 0 < rec.replays["environment advice"] <= 12
