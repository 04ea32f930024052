"""Step 6 of the search: changes that change nothing are undone.

A change of the answer is undone when, undone, no job's replay differs from the answer's; or
when, made alone on today's declaration, no job's replay differs from today's and undoing it
ranks no worse. A proposal whose whole replay is today's is not made. Replays are compared by
the digest of every job's outcome (:func:`.tasks.evaluate_with_digest`).
"""

from __future__ import annotations

from .replays import STRETCH
from .screening import Picker, Scored
from .space import Allocation, ShareAllocation, with_share
from .tasks import Scores

Change = tuple[int, int | None]
"""One separate change against today: (share, None) for its terms, (share, type) for one
limit."""


def drop_no_ops(picker: Picker, best: Allocation, scores: Scores) -> Scored:
    """``best`` with every change that changes nothing undone (see the module docs), e.g. a
    RESERVE share alone on its type made LEND_AND_BORROW.

    On a long history (one with a screening stretch) the replays compared are those of the
    stretch, and what they single out is kept only where a replay of the whole history ranks
    it no worse: one whole replay per round instead of two per change."""
    space, key = picker.space, picker.ranking.key
    today = space.today_allocation
    whole = _Whole(picker, best, scores)
    for _ in range(len(differences(best, today))):
        changes = [c for c in differences(best, today)
                   if space.honours_pins(taken(best, today, c))]
        if not changes:
            break
        picker.say(f"checking whether each of {len(changes)} changes changes any job's replay"
                   + (" (on the screening stretch)" if picker.screen is not None else ""))
        undone = [taken(best, today, c) for c in changes]
        replays = _digests(picker, [best, today, *undone])
        here, base = replays[0], replays[1]
        assert here is not None
        if base is not None and base[1] == here[1] and space.honours_pins(today):
            kept = whole.kept(today, base[0])
            if kept is not None:
                return today, kept  # the whole proposal replays as today does
        n = len(changes)
        # A change made alone on today's declaration is replayed only where that decides
        # something: its undoing changes the answer's replay and ranks no worse.
        asked = [i for i in range(n) if base is not None and (undo := replays[2 + i]) is not None
                 and undo[1] != here[1] and key(undone[i], undo[0]) <= key(best, here[0])]
        alone = dict(zip(asked, _digests(picker, [taken(today, best, changes[i])
                                                  for i in asked]), strict=True))
        dropped = [
            i for i in range(n)
            if (undo := replays[2 + i]) is not None and (
                undo[1] == here[1]
                or (base is not None and (only := alone.get(i)) is not None
                    and only[1] == base[1]))
        ]
        if not dropped:
            break
        if len(dropped) > 1:
            # All of them at once, kept when that ranks no worse (one replay instead of a
            # round per change on a long history).
            together = best
            for i in dropped:
                together = taken(together, today, changes[i])
            together_scores = whole.replayed(together) if space.honours_pins(together) \
                else None
            if together_scores is not None \
                    and key(together, together_scores) <= key(best, whole.scores):
                best, scores = whole.now(together, together_scores)
                continue
        first = replays[2 + dropped[0]]
        assert first is not None
        kept = whole.kept(undone[dropped[0]], first[0])
        if kept is None:
            break
        best, scores = whole.now(undone[dropped[0]], kept)
    return best, scores


def _digests(picker: Picker, allocations: list[Allocation]) -> list[tuple[Scores, str] | None]:
    """Each allocation's scores and replay digest: of the whole history, or of the screening
    stretch where there is one."""
    if picker.screen is None:
        return picker.replayer.digests(allocations)
    return picker.replayer.digests(allocations, picker.screen, STRETCH)


class _Whole:
    """The answer's scores on the whole history, and the check that what a stretch singled
    out ranks no worse there (on a history without a stretch, the digests were the whole
    history's already: nothing is replayed again)."""

    def __init__(self, picker: Picker, best: Allocation, scores: Scores) -> None:
        self.picker = picker
        self.best = best
        self.scores = scores

    def replayed(self, allocation: Allocation) -> Scores | None:
        if self.picker.screen is None:
            (found,) = self.picker.replayer.digests([allocation])
            return None if found is None else found[0]
        (scores,) = self.picker.replayer.evaluate_all([(allocation, None)])
        return scores

    def kept(self, allocation: Allocation, replayed: Scores) -> Scores | None:
        """``allocation``'s whole-history scores when it ranks no worse than the answer there
        (``replayed``: its scores from the digests, the whole history's without a stretch);
        None when it ranks worse."""
        if self.picker.screen is None:
            return replayed
        scores = self.replayed(allocation)
        key = self.picker.ranking.key
        if scores is None or key(allocation, scores) > key(self.best, self.scores):
            return None
        return scores

    def now(self, best: Allocation, scores: Scores) -> Scored:
        self.best, self.scores = best, scores
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
