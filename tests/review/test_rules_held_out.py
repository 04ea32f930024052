"""Reviewer's held-out check of issue 15: reach, lenders and borrowers agree with the simulator.

Unlike ``tests/simulation/test_rules_agree.py`` the declarations here are drawn to stress what
that test rarely draws: environments far over-allocated by RESERVE shares, borrow percentages
that round to zero for one instance type and not another (limits 1-9, percents 1-101), five
shares, disabled lenders, and large unowned capacity with the assumption switched off.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from quota_constructs import CapacityLimit, QuotaConfigError, QuotaShareSpec, SharingStrategy
from quota_constructs.model import QuotaAllocation, allocation_summary
from quota_constructs.model.agreement_report import QueueAgreement, allocation_agreement_markdown
from quota_constructs.simulation import NeverRunnable, SimJob, SimulationOptions, simulate
from tests.simulation.test_rules_agree import (
    agreement_borrowers,
    agreement_lenders,
    agreement_reach,
    summary_reach,
)

UNITS = ("ml.g5.xlarge", "ml.g5.12xlarge")
PERCENTS = (None, 1, 9, 11, 20, 34, 49, 51, 101)
Drawn = tuple[tuple[CapacityLimit, ...], tuple[QuotaShareSpec, ...], bool]


@st.composite
def declarations(draw: st.DrawFn) -> Drawn:
    shares = []
    for i in range(draw(st.integers(2, 5))):
        strategy = draw(st.sampled_from(list(SharingStrategy)))
        # One share per declaration may be off: an idle, disabled lender.
        enabled = i != 0 or draw(st.booleans())
        limits = [CapacityLimit(u, draw(st.integers(1, 9)))
                  for u in draw(st.lists(st.sampled_from(UNITS), min_size=1, max_size=2,
                                         unique=True))]
        shares.append(QuotaShareSpec(
            name=f"S{i}", capacity_limits=limits, strategy=strategy, enabled=enabled,
            borrow_limit_percent=(draw(st.sampled_from(PERCENTS))
                                  if strategy is SharingStrategy.LEND_AND_BORROW else None),
        ))
    environment = []
    for unit in UNITS:
        owned = sum(s.limit_of(unit) for s in shares)
        reserved = sum(s.limit_of(unit) for s in shares
                       if s.strategy is SharingStrategy.RESERVE)
        if owned == 0:
            continue
        # From RESERVE-only (everyone else over-allocated) to twice what the shares own.
        environment.append(CapacityLimit(unit, draw(st.integers(max(1, reserved), 2 * owned))))
    return tuple(environment), tuple(shares), draw(st.booleans())


def peak(environment: tuple[CapacityLimit, ...], shares: tuple[QuotaShareSpec, ...],
         borrowable: bool, jobs: list[SimJob], share: str, unit: str) -> tuple[int, set[str]]:
    result = simulate(capacity_limits=environment, shares=shares, jobs=jobs,
                      options=SimulationOptions(unowned_capacity_borrowable=borrowable,
                                                never_runnable=NeverRunnable.BLOCK))
    lent = {name for name, figures in result.shares.items() if figures.lent_capacity_hours > 0}
    return max(result.capacity_timeline(share, unit).in_use, default=0), lent


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(declarations())
def test_held_out_reach_and_lenders_match_the_simulator(drawn: Drawn) -> None:
    environment, shares, borrowable = drawn
    try:
        allocation = QuotaAllocation.check(environment_limits=environment, shares=shares,
                                           unowned_capacity_borrowable=borrowable)
    except QuotaConfigError:
        assume(False)
        raise
    lines = allocation_summary(allocation, title="q")
    text = allocation_agreement_markdown(
        title="T", queues=[QueueAgreement(title="q", shares=shares, allocation=allocation)])
    size = {limit.capacity_unit: limit.max_capacity for limit in environment}
    for share in shares:
        said = summary_reach(lines, share.name)
        assert said == agreement_reach(text, share.name)
        if not share.enabled:
            continue
        lenders = agreement_lenders(text, share.name)
        for limit in share.capacity_limits:
            unit = limit.capacity_unit
            jobs = [SimJob(job_id=f"j{i}", share=share.name, submitted_at=0.0, duration=50.0,
                           instance_type=unit) for i in range(size[unit] + 3)]
            most, lent = peak(environment, shares, borrowable, jobs, share.name, unit)
            assert most == said[unit], (share.name, unit, most, said)
            assert lent == lenders.get(unit, set()), (share.name, unit, lent, lenders)
            for lender in lent:
                assert share.name in agreement_borrowers(text, lender).get(unit, set())
            # Each share of the other types' runs never change this type's reach.
            if share.strategy is SharingStrategy.LEND_AND_BORROW:
                warned = any(w.startswith(f"quota share {share.name!r}: can borrow no {unit}:")
                             for w in allocation.borrow_warnings)
                assert warned == (most <= limit.max_capacity), (share.name, unit, most)
