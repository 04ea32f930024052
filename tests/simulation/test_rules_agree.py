"""The summary, the agreement and the simulator tell one truth about borrowing.

Random declarations (several instance types, every strategy, borrow limits including ones that
round to nothing, environments with and without capacity no share owns, both settings of the
unowned-capacity assumption): for every share and type it lists, what the summary and the
agreement say it can reach is the most the simulator ever gives it under a workload that
saturates it, and the shares they name as its lenders are exactly those the simulator credits
with lending to it. The rendered texts are parsed, so what people read is what is checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from quota_constructs import CapacityLimit, QuotaConfigError, QuotaShareSpec, SharingStrategy
from quota_constructs.model import QuotaAllocation, allocation_summary
from quota_constructs.model.agreement_report import QueueAgreement, allocation_agreement_markdown
from quota_constructs.simulation import NeverRunnable, SimJob, SimulationOptions, simulate

UNITS = ("ml.g5.xlarge", "ml.g6.xlarge", "ml.p4d.24xlarge")
BORROW_LIMITS = (None, 0, 10, 33, 50, 99, 100, 150, 200)


@dataclass(frozen=True)
class Declaration:
    environment: tuple[CapacityLimit, ...]
    shares: tuple[QuotaShareSpec, ...]
    unowned_capacity_borrowable: bool


@st.composite
def declarations(draw: st.DrawFn) -> Declaration:
    units = draw(st.lists(st.sampled_from(UNITS), min_size=1, max_size=3, unique=True))
    environment = tuple(CapacityLimit(u, draw(st.integers(1, 6))) for u in units)
    shares = []
    for i in range(draw(st.integers(1, 4))):
        strategy = draw(st.sampled_from(list(SharingStrategy)))
        listed = draw(st.lists(st.sampled_from(units), min_size=1, max_size=len(units),
                               unique=True))
        limits = [CapacityLimit(u, draw(st.integers(1, 3))) for u in listed]
        borrow = (draw(st.sampled_from(BORROW_LIMITS))
                  if strategy is SharingStrategy.LEND_AND_BORROW else None)
        shares.append(QuotaShareSpec(name=f"S{i}", capacity_limits=limits, strategy=strategy,
                                     borrow_limit_percent=borrow))
    return Declaration(environment, tuple(shares), draw(st.booleans()))


def summary_reach(lines: list[str], share: str) -> dict[str, int]:
    line = next(line for line in lines if line.startswith(f"  {share} "))
    reach = line.split("can reach ", 1)[1].split(";", 1)[0]
    return {unit: int(count) for count, unit in re.findall(r"(\d+) x (\S+?)(?:,|$)", reach)}


def agreement_reach(text: str, share: str) -> dict[str, int]:
    row = next(line for line in text.splitlines() if line.startswith(f"| {share} |"))
    reach = row.split(" | ")[4]
    return {unit: int(count) for count, unit in re.findall(r"(\d+) × (\S+?)(?:,|$)", reach)}


def share_section(text: str, share: str) -> str:
    return text.split(f"### {share}", 1)[1].split("\n### ", 1)[0]


def agreement_lenders(text: str, share: str) -> dict[str, set[str]]:
    """By type: the shares (and unowned capacity) the agreement says ``share`` borrows from."""
    section = share_section(text, share)
    match = re.search(r"\*\*Borrows from:\*\* (.*)", section)
    if match is None or match.group(1).startswith("nobody"):
        return {}
    found: dict[str, set[str]] = {}
    for part in match.group(1).removesuffix(" (only what is left idle).").split("; "):
        sources, amount = part.split(": up to ")
        unit = amount.split(" × ")[1]
        found[unit] = {name for name in sources.split(", ") if name.startswith("S")}
    return found


def agreement_borrowers(text: str, share: str) -> dict[str, set[str]]:
    """By type: the shares the agreement says ``share`` lends to."""
    line = re.search(r"\*\*Lends to:\*\* (.*)", share_section(text, share))
    assert line is not None
    if not line.group(1).startswith("S"):
        return {}
    found: dict[str, set[str]] = {}
    for part in line.group(1).removesuffix(".").split("; "):
        names, unit = part.rsplit(" (", 1)
        found[unit.removesuffix(")")] = set(names.split(", "))
    return found


def saturate(declaration: Declaration, share: QuotaShareSpec, unit: str) -> object:
    """``share`` alone asks for more of ``unit`` than the environment has, at once."""
    count = next(limit.max_capacity for limit in declaration.environment
                 if limit.capacity_unit == unit) + 2
    jobs = [SimJob(job_id=f"j{i}", share=share.name, submitted_at=0.0, duration=100.0,
                   instance_type=unit) for i in range(count)]
    return simulate(
        capacity_limits=declaration.environment, shares=declaration.shares, jobs=jobs,
        # A share that can reach none of the type (RESERVE shares hold all of it) must still
        # be replayable: its jobs are blocked, as in AWS.
        options=SimulationOptions(
            unowned_capacity_borrowable=declaration.unowned_capacity_borrowable,
            never_runnable=NeverRunnable.BLOCK,
        ),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(declarations())
def test_summary_agreement_and_simulator_agree_on_reach_and_lenders(
    declaration: Declaration,
) -> None:
    try:
        allocation = QuotaAllocation.check(
            environment_limits=declaration.environment, shares=declaration.shares,
            unowned_capacity_borrowable=declaration.unowned_capacity_borrowable,
        )
    except QuotaConfigError:
        assume(False)  # RESERVE shares together over the environment: refused, fine
        raise
    lines = allocation_summary(allocation, title="q")
    text = allocation_agreement_markdown(
        title="T", queues=[QueueAgreement(title="q", shares=declaration.shares,
                                          allocation=allocation)],
    )
    for share in declaration.shares:
        said = summary_reach(lines, share.name)
        assert said == agreement_reach(text, share.name)
        lenders_said = agreement_lenders(text, share.name)
        for limit in share.capacity_limits:
            unit = limit.capacity_unit
            result = saturate(declaration, share, unit)
            timeline = result.capacity_timeline(share.name, unit)  # type: ignore[attr-defined]
            assert max(timeline.in_use, default=0) == said[unit], (share.name, unit)
            borrowed = max(timeline.borrowed, default=0) > 0
            lent = {name for name, figures in result.shares.items()  # type: ignore[attr-defined]
                    if figures.lent_capacity_hours > 0}
            assert borrowed == (unit in lenders_said or any(
                unit in line and "capacity no share owns" in line
                for line in share_section(text, share.name).splitlines()
                if line.startswith("- **Borrows from:**")
            )), (share.name, unit)
            assert lent == lenders_said.get(unit, set()), (share.name, unit)
            for lender in lent:
                assert share.name in agreement_borrowers(text, lender)[unit]
        if share.strategy is SharingStrategy.LEND_AND_BORROW:
            for limit in share.capacity_limits:
                unit = limit.capacity_unit
                warned = any(w.startswith(f"quota share {share.name!r}: can borrow no {unit}:")
                             for w in allocation.borrow_warnings)
                assert warned == (unit not in lenders_said and not any(
                    "capacity no share owns" in line and unit in line
                    for line in share_section(text, share.name).splitlines()
                    if line.startswith("- **Borrows from:**")
                )), (share.name, unit)
    # A share that can borrow nothing is never described as borrowing; a lender nobody can
    # borrow from is never described as lending.
    for share in declaration.shares:
        section = share_section(text, share.name)
        if not agreement_lenders(text, share.name) and "capacity no share owns:" not in section:
            assert "borrows others' idle capacity" not in section
            assert "Jobs running on borrowed capacity" not in section
        if not agreement_borrowers(text, share.name):
            assert "lends its idle capacity to" not in section
            assert "lent out while idle" not in section
            assert "reclaim lent capacity" not in section
    for share in declaration.shares:
        for unit, borrowers in agreement_borrowers(text, share.name).items():
            for borrower in borrowers:
                assert share.name in agreement_lenders(text, borrower).get(unit, set())


def test_a_borrow_limit_that_rounds_to_nothing_borrows_nothing_and_says_so() -> None:
    g5 = UNITS[0]
    shares = (
        QuotaShareSpec(name="half", capacity_limits=[CapacityLimit(g5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=50),
        QuotaShareSpec(name="lender", capacity_limits=[CapacityLimit(g5, 2)],
                       strategy=SharingStrategy.LEND),
    )
    declaration = Declaration((CapacityLimit(g5, 3),), shares, True)
    allocation = QuotaAllocation.check(environment_limits=declaration.environment, shares=shares)
    assert allocation.reach("half") == {g5: 1}
    (warning,) = allocation.borrow_warnings
    assert "'half'" in warning and g5 in warning and "0.5" in warning
    text = allocation_agreement_markdown(
        title="T", queues=[QueueAgreement(title="q", shares=shares, allocation=allocation)]
    )
    assert "**Borrows from:** nobody" in share_section(text, "half")
    assert "**Lends to:** nobody" in share_section(text, "lender")
    result = saturate(declaration, shares[0], g5)
    assert max(result.capacity_timeline("half", g5).in_use) == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("borrowable, reach", [(True, 4), (False, 3)])
def test_capacity_no_share_owns_follows_the_stated_assumption(
    borrowable: bool, reach: int
) -> None:
    g5 = UNITS[0]
    shares = (
        QuotaShareSpec(name="b", capacity_limits=[CapacityLimit(g5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW),
        QuotaShareSpec(name="l", capacity_limits=[CapacityLimit(g5, 2)],
                       strategy=SharingStrategy.LEND),
    )
    declaration = Declaration((CapacityLimit(g5, 4),), shares, borrowable)
    allocation = QuotaAllocation.check(environment_limits=declaration.environment,
                                       shares=shares, unowned_capacity_borrowable=borrowable)
    assert allocation.reach("b") == {g5: reach}
    result = saturate(declaration, shares[0], g5)
    assert max(result.capacity_timeline("b", g5).in_use) == reach  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(declarations())
def test_the_problem_compiler_takes_every_borrowing_figure_from_the_rules_model(
    declaration: Declaration,
) -> None:
    """Usable capacity, capacity no share owns, each share's ceiling and the largest job it
    may run are the rules model's, column for column (issue 23: nothing re-derives them)."""
    from quota_constructs.simulation.arrangements import shared_pool
    from quota_constructs.simulation.problem import compile_problem

    try:
        allocation = QuotaAllocation.check(
            environment_limits=declaration.environment, shares=declaration.shares,
            unowned_capacity_borrowable=declaration.unowned_capacity_borrowable)
    except QuotaConfigError:
        assume(False)
        return
    rules = allocation.rules
    problem = compile_problem(allocation, jobs=[])
    units = problem.unit_names
    assert problem.capacity == [rules.usable_capacity(u) for u in units]
    assert problem.unowned == [rules.unowned_usable(u) for u in units]
    for i, spec in enumerate(allocation.shares):
        for k, unit in enumerate(units):
            rule = rules.rules(spec.name, unit)
            assert problem.limit[i * len(units) + k] == rule.own
            assert problem.ceiling[i * len(units) + k] == rule.own + rule.allowance
    # The pool (no shares) may use all the capacity the shares do not own.
    assert shared_pool(problem).unowned == [rules.unowned(u) for u in units]
