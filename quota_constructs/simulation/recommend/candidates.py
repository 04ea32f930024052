"""Step 3 of the search: the first candidates, between today's declaration and a RESERVE
partition at every share's demand.

Today's strategies with the shares that miss raised toward their demand (none of it beyond
their largest job, a quarter, half, three quarters, all of it; capacity taken from the shares
furthest above what they need), the same with lending opened (RESERVE -> LEND), with
borrowing opened for waits or closed for jobs lost to budgets, and the partition.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...model import SharingStrategy
from .ranking import Ranking
from .space import Allocation, SearchSpace, Terms, compose, fit, limits_of, terms_of
from .tasks import Scores

LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Fractions of their demand the shares that miss are raised to, in the first candidates (0:
only as far as their largest job needs)."""


def candidates(
    space: SearchSpace, ranking: Ranking, today_scores: Scores, floors: list[list[int]],
    missing: set[str],
) -> list[Allocation]:
    """The first candidates (see the module docs), for the shares ``missing`` their targets
    today; ``floors`` as :func:`.demand.floors`."""
    today = space.today_allocation
    base = limits_of(today)
    variants = _strategy_variants(space, ranking, today_scores, missing)
    out: list[Allocation] = [compose(base, list(v)) for v in variants[1:]]
    for level in LEVELS:
        wanted, level_floors = _raised(space, ranking, base, floors, missing, level)
        limits = fit(wanted, level_floors, space.capacity)
        if limits is None:
            continue
        out += [compose(limits, list(v)) for v in variants
                if level in (0.0, 0.5, 1.0) or v == variants[0]]
    whole = partition(space, today, floors, [list(r) for r in base], tuple(space.capacity))
    if whole is not None:
        out.append(whole)
    return out


def _strategy_variants(
    space: SearchSpace, ranking: Ranking, today_scores: Scores, missing: set[str]
) -> list[tuple[Terms, ...]]:
    """Today's terms first; then the shares that miss helped (borrowing opened for their
    waits, closed for their lost jobs); then lending opened for every free share; then
    borrowing opened for every free share that does not lose jobs (distinct ones only)."""
    strategies = terms_of(space.today_allocation)
    helped = list(strategies)
    losing: set[int] = set()
    for name in sorted(missing):
        s = space.index[name]
        if space.pinned_strategy(name):
            continue
        if ranking.loses_jobs(name, today_scores):
            losing.add(s)
            helped[s] = Terms(SharingStrategy.LEND)  # its jobs stop borrowing
        elif not strategies[s].strategy.borrows:
            helped[s] = Terms(SharingStrategy.LEND_AND_BORROW)
    # Opening lending (RESERVE -> LEND) lets shares whose busy times differ share
    # capacity; letting everyone borrow goes further. A share that loses jobs to its
    # budget stays out of borrowing in both.
    free = [not space.pinned_strategy(spec.name) for spec in space.today]
    n = len(strategies)
    lending = [
        Terms(SharingStrategy.LEND)
        if free[s] and helped[s].strategy is SharingStrategy.RESERVE else helped[s]
        for s in range(n)
    ]
    borrowing = [
        Terms(SharingStrategy.LEND_AND_BORROW) if free[s] and s not in losing else helped[s]
        for s in range(n)
    ]
    return list(dict.fromkeys(tuple(v) for v in (strategies, helped, lending, borrowing)))


def _raised(
    space: SearchSpace, ranking: Ranking, base: list[list[int]], floors: list[list[int]],
    missing: set[str], level: float,
) -> tuple[list[list[int]], list[list[int]]]:
    """Today's limits with each share that misses raised to ``level`` of its floor, and the
    floors the others may be lowered to (``level`` of theirs, at least their largest job)."""
    wanted = [list(row) for row in base]
    level_floors = [list(row) for row in floors]
    for s, spec in enumerate(space.today):
        name = spec.name
        if space.pinned_limits(name) or name not in ranking.goals:
            continue
        pin = space.pins.get(name)
        level_floors[s] = [
            0 if not f else max(
                1, space.largest.get((s, k), 0), math.ceil(level * f),
                pin.minimum.get(space.units[k], 0) if pin else 0,
            )
            for k, f in enumerate(floors[s])
        ]
        if name in missing:
            wanted[s] = [max(a, b) for a, b in zip(base[s], level_floors[s], strict=True)]
    return wanted, level_floors


def partition(
    space: SearchSpace,
    terms_from: Allocation,
    floors: list[list[int]],
    wanted: list[list[int]],
    env: Sequence[int],
) -> Allocation | None:
    """Every share at least its floor, RESERVE unless its strategy is pinned (then the terms
    of ``terms_from``); capacity left over goes back toward ``wanted``."""
    limits = fit([[max(a, b) for a, b in zip(w, f, strict=True)]
                  for w, f in zip(wanted, floors, strict=True)], floors, env)
    if limits is None:
        return None
    terms = [
        row.terms if space.pinned_strategy(spec.name) else Terms(SharingStrategy.RESERVE)
        for spec, row in zip(space.today, terms_from, strict=True)
    ]
    return compose(limits, terms)
