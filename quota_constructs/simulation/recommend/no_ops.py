"""Step 6 of the search: changes that change nothing are undone.

A change of the answer is undone when, undone, no job's replay differs from the answer's; or
when, made alone on today's declaration, no job's replay differs from today's and undoing it
ranks no worse. A proposal whose whole replay is today's is not made. Replays are compared by
the digest of every job's outcome (:func:`.tasks.evaluate_with_digest`).
"""

from __future__ import annotations

from .screening import Picker, Scored
from .space import Allocation, ShareAllocation, with_share
from .tasks import Scores

Change = tuple[int, int | None]
"""One separate change against today: (share, None) for its terms, (share, type) for one
limit."""


def drop_no_ops(picker: Picker, best: Allocation, scores: Scores) -> Scored:
    """``best`` with every change that changes nothing undone (see the module docs), e.g. a
    RESERVE share alone on its type made LEND_AND_BORROW."""
    space, key = picker.space, picker.ranking.key
    today = space.today_allocation
    for _ in range(len(differences(best, today))):
        changes = [c for c in differences(best, today)
                   if space.honours_pins(taken(best, today, c))]
        if not changes:
            break
        picker.say(f"checking whether each of {len(changes)} changes changes any job's replay")
        undone = [taken(best, today, c) for c in changes]
        alone = [taken(today, best, c) for c in changes]
        replays = picker.replayer.digests([best, today, *undone, *alone])
        here, base = replays[0], replays[1]
        assert here is not None
        if base is not None and base[1] == here[1] and space.honours_pins(today):
            return today, base[0]  # the whole proposal replays as today does
        n = len(changes)
        dropped = [
            i for i in range(n)
            if (undo := replays[2 + i]) is not None and (
                undo[1] == here[1]
                or (base is not None and (only := replays[2 + n + i]) is not None
                    and only[1] == base[1]
                    and key(undone[i], undo[0]) <= key(best, scores)))
        ]
        if not dropped:
            break
        if len(dropped) > 1:
            # All of them at once, kept when that ranks no worse (one replay instead of a
            # round per change on a long history).
            together = best
            for i in dropped:
                together = taken(together, today, changes[i])
            (replayed,) = picker.replayer.digests([together]) if space.honours_pins(together) \
                else (None,)
            if replayed is not None and key(together, replayed[0]) <= key(best, scores):
                best, scores = together, replayed[0]
                continue
        first = replays[2 + dropped[0]]
        assert first is not None
        best, scores = undone[dropped[0]], first[0]
    return best, scores


def differences(allocation: Allocation, today: Allocation) -> list[Change]:
    """Each separate change of ``allocation`` against ``today``."""
    out: list[Change] = []
    for s, (row, was) in enumerate(zip(allocation, today, strict=True)):
        if row.terms != was.terms:
            out.append((s, None))
        out += [(s, k) for k, (a, b) in enumerate(zip(row.limits, was.limits, strict=True))
                if a != b]
    return out


def taken(target: Allocation, source: Allocation, change: Change) -> Allocation:
    """``target`` with one change taken from ``source``."""
    s, k = change
    row = target[s]
    if k is None:
        return with_share(target, s, ShareAllocation(row.limits, source[s].terms))
    return with_share(target, s, row.with_limit(k, source[s].limits[k]))
