"""Step 4 of the search: improving while targets are missed.

Capacity moves toward each share that misses (or breaks a line of its agreement: see
:mod:`.contract`; a quarter of its limit per type) from capacity
no share owns and then from the shares with most room before their own targets; its borrowing
is opened (waits) or closed or capped (lost jobs). A move is kept when it ranks better on the
whole history: fewer targets missed, then a smaller shortfall.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ...model import SharingStrategy
from .screening import Picker, Scored
from .space import Allocation, ShareAllocation, Terms, with_share
from .tasks import Scores


def improve(picker: Picker, best: Allocation, scores: Scores, budget: int) -> Scored:
    """Moves toward the targets ``best`` misses, kept while they rank better, until every
    target is met, nothing ranks better or ``budget`` replays are spent."""
    ranking = picker.ranking
    start = picker.replayer.asked
    while not ranking.acceptable(scores) and picker.replayer.asked - start < budget:
        moves = _moves(picker, best, scores)
        if not moves:
            break
        picker.say(f"improving: {len(moves)} allocations toward the targets missed "
                   f"({', '.join(_wanting(picker, scores))})")
        found = picker.pick(moves, (best, scores))
        if found is None or found[0] == best:
            break
        best, scores = found
    return best, scores


def _moves(picker: Picker, current: Allocation, scores: Scores) -> list[Allocation]:
    """For each share that misses: its terms changed (borrowing closed or capped for jobs
    lost, opened for waits), and a quarter more of each type it lists."""
    space, ranking = picker.space, picker.ranking
    moves: list[Allocation] = []
    slack = ranking.slack(scores)
    for name in _wanting(picker, scores):
        s = space.index[name]
        row = current[s]
        if not space.pinned_strategy(name):
            moves += [with_share(current, s, ShareAllocation(row.limits, terms))
                      for terms in _terms_tried(row.terms, ranking.loses_jobs(name, scores))]
        if space.pinned_limits(name):
            continue
        for k, count in enumerate(row.limits):
            if not count:
                continue
            grown = _give(picker, current, s, k, max(1, math.ceil(count / 4)), slack)
            if grown is not None:
                moves.append(grown)
    return list(dict.fromkeys(m for m in moves if m != current))


def _wanting(picker: Picker, scores: Scores) -> list[str]:
    """The shares that miss a target, then those breaking a line of their agreement."""
    ranking = picker.ranking
    return list(dict.fromkeys([*ranking.missed(scores),
                               *(bound.share for bound in ranking.broken(scores))]))


def _terms_tried(terms: Terms, losing: bool) -> list[Terms]:
    """A share losing jobs to its budget stops borrowing, or borrows at most half; one whose
    waits are too long borrows without limit."""
    borrow = terms.borrow_limit
    options: list[Terms] = []
    if losing and terms.strategy.borrows:
        options.append(Terms(SharingStrategy.LEND))
        if borrow is None or borrow > 50:
            options.append(Terms(SharingStrategy.LEND_AND_BORROW, 50))
    if not losing and (not terms.strategy.borrows or borrow is not None):
        options.append(Terms(SharingStrategy.LEND_AND_BORROW))
    return options


def _give(
    picker: Picker, current: Allocation, s: int, k: int, step: int, slack: Mapping[int, float]
) -> Allocation | None:
    """``step`` more of unit ``k`` for share ``s``: from capacity no share owns first, then
    from the shares with most room, never below their largest job, 1 or a pinned limit."""
    space = picker.space
    rows = [list(row.limits) for row in current]
    rows[s][k] += step
    excess = sum(row[k] for row in rows) - space.capacity[k]
    donors = sorted(
        (t for t in range(len(rows)) if t != s and rows[t][k] and slack.get(t, 0) >= 0
         and not space.pinned_limits(space.today[t].name)),
        key=lambda t: (-slack[t], t),
    )
    for t in donors:
        if excess <= 0:
            break
        pin = space.pins.get(space.today[t].name)
        lowest = max(1, space.largest.get((t, k), 1),
                     pin.minimum.get(space.units[k], 0) if pin else 0)
        take = min(excess, rows[t][k] - lowest)
        if take > 0:
            rows[t][k] -= take
            excess -= take
    if excess > 0:
        return None
    return tuple(ShareAllocation(tuple(limits), row.terms)
                 for limits, row in zip(rows, current, strict=True))
