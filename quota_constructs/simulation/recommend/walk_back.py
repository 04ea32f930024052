"""Step 5 of the search: walking back toward today's declaration.

Each change of the answer is undone in turn, fully or half way, and kept undone where every
target is still met and no line of an agreement broken (:mod:`.contract`); repeated until
nothing more can be undone or the budget of replays is spent.
"""

from __future__ import annotations

from .screening import Accept, Picker, Scored
from .space import Allocation, ShareAllocation, with_share
from .tasks import Scores


def walk_back(picker: Picker, best: Allocation, scores: Scores, budget: int) -> Scored:
    """Undo changes of ``best`` (which meets every target) while every target stays met."""
    change = picker.space.change
    start = picker.replayer.asked
    while picker.replayer.asked - start < budget:
        moves = _moves(picker, best)
        if not moves:
            break
        picker.say(f"walking back toward today's declaration: {len(moves)} allocations")
        found = picker.pick(moves, None, better=_closer_than(picker, change(best)))
        if found is None:
            break
        best, scores = found
    return best, scores


def _closer_than(picker: Picker, change: int) -> Accept:
    def closer(allocation: Allocation, scores: Scores) -> bool:
        return picker.ranking.acceptable(scores) and picker.space.change(allocation) < change

    return closer


def _moves(picker: Picker, current: Allocation) -> list[Allocation]:
    """Every single change of ``current`` undone (a limit fully or half way), where the
    result fits the environment, honours the pins and is closer to today; closest first."""
    space = picker.space
    moves: list[Allocation] = []
    present = space.change(current)
    for s, (row, was) in enumerate(zip(current, space.today_allocation, strict=True)):
        if row.terms != was.terms:
            moves.append(with_share(current, s, ShareAllocation(row.limits, was.terms)))
        for k, (a, b) in enumerate(zip(row.limits, was.limits, strict=True)):
            for value in dict.fromkeys((b, (a + b) // 2)):
                if value != a:
                    moves.append(with_share(current, s, row.with_limit(k, value)))
    fitting = [move for move in dict.fromkeys(moves)
               if space.fits(move) and space.change(move) < present]
    fitting = [move for move in fitting if space.honours_pins(move)]
    fitting.sort(key=space.change)
    return fitting
