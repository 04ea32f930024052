"""How big each instance type of the environment needs to be: advice per type, each size the
smallest a replay verifies, each growth necessary.

Why per type, searched one type at a time: under the simulator's rules capacity is counted per
instance type (a job runs on one type; limits, borrowing and preemption are per type), so a
type's size only changes the waits of the jobs that run on it. Scaling every type by one factor
(the old way) grows a type whose shares already meet their targets because another type is
short, and a re-run with only that other type fixed then says the first "could shrink".

The search (:meth:`EnvironmentSearch.advise`):

1. *Enough*: today's sizes when the recommended allocation meets every reachable target there;
   else each type at least what a RESERVE partition at every share's demand needs (doubled
   while that still misses, at most a few times).
2. *Smallest per type*: each type in turn (the environment's order) is lowered to the
   smallest size on which a replay still meets every reachable target, the other types as
   found so far. A size is met when the recommended allocation, its limits of that type
   scaled with it (:meth:`.space.SearchSpace.resized`), or a RESERVE partition at each
   share's demand with the room left toward those limits, meets the targets; then one
   instance less is tried with ``recommend``'s own search there (it may find an allocation
   the scaled ones miss), and the search goes on from what it finds. Lowering a type later
   never helps one settled before (more capacity never lengthens a wait), so each size is
   the smallest given the final sizes of the others.
3. *Every growth necessary*: for each type advised to grow, the same search ``recommend``
   runs is run on the advised environment with that type back at today's size; when it
   meets every target there the type is not grown. What remains is what a re-run of
   ``recommend`` with that type at today's size would also miss; the target missed is kept
   as the type's reason.
4. *Confirmed as recommend would answer*: when the advised environment differs from today's,
   ``recommend``'s search on it gives the declaration shown for it (when it meets every
   target; otherwise the allocation step 2 verified).
5. *No growth a replay shows unneeded*: a grown type goes back to today's size where that
   declaration, its limits of the type still fitting, meets every target there; and where
   every share running the type met its targets on today's environment, with the
   recommendation's limits of that type, when a replay confirms it.

"Reachable" targets leave out a share whose jobs miss even when every one starts on
submission (:attr:`.tasks.Demand.met` false): no environment meets it, so it is not a
reason to grow. "Meets" also means keeping every share's agreement as today's declaration on
today's environment keeps it (:mod:`.contract`): no size is advised on which a share loses
more jobs to its interruption budget, or misses a target met today.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..problem import Problem
from .candidates import partition
from .demand import DemandAnalysis
from .ranking import Ranking
from .replays import STRETCH, WHOLE, Replayer
from .space import Allocation, SearchSpace
from .tasks import Scores

POINTS_PER_ROUND = 3
"""Sizes of one type replayed in parallel per round of the search (fixed, not the number of
workers, so that the answer does not depend on the executor)."""
GROWTH_ROUNDS = 4
"""Times the environment is doubled while even a partition at every share's demand misses."""
ROUNDS = 2
"""Searches of the sizes: from the recommendation, then once more from what recommend finds
on the sizes found (it may fit smaller ones)."""
SEARCHED_STEPS = 2
"""Times one instance less of a type is tried with recommend's own search, per round."""

Found = tuple[Allocation, Scores]
SearchAt = Callable[[tuple[int, ...]], tuple[Found | None, list[str]]]
"""recommend's own search on an environment of that many instances per type: what it finds
when it meets every reachable target (else None), and the targets it misses."""
RuledOut = Callable[[tuple[int, ...]], bool]
"""Whether no allocation on an environment can meet every reachable target, known without a
search (a share's jobs alone there miss: :func:`.demand.beyond_reach`)."""


def _sized(sizes: tuple[int, ...], k: int, size: int) -> tuple[int, ...]:
    """``sizes`` with type ``k`` at ``size``."""
    return (*sizes[:k], size, *sizes[k + 1:])


@dataclass(frozen=True)
class Advice:
    sizes: tuple[int, ...]
    verified: bool
    basis: str
    allocation: Allocation | None
    reasons: dict[str, str] = field(default_factory=dict)
    """Per instance type advised to change, why (in words)."""
    scores: Scores = field(default_factory=dict)
    """``allocation`` replayed on ``sizes``."""


class EnvironmentSearch:
    """One environment search around the recommended allocation (see the module docs)."""

    def __init__(
        self, space: SearchSpace, ranking: Ranking, replayer: Replayer, analysis: DemandAnalysis,
        search_at: SearchAt, ruled_out: RuledOut = lambda env: False,
        say: Callable[[str], None] = lambda message: None, screen: Problem | None = None,
    ) -> None:
        self.space = space
        self.ranking = ranking
        self.replayer = replayer
        self.analysis = analysis
        self.search_elsewhere = search_at
        self.today = tuple(space.capacity)
        self.cache: dict[str, dict[tuple[Allocation, tuple[int, ...]], Found | None]] = {}
        """Per part of the history replayed, per (base, environment), what :meth:`probe`
        found."""
        self.screen = screen
        self.base: Allocation = ()
        self.origin: tuple[int, ...] = self.today
        """The environment ``base`` was found for (its limits scale from there)."""
        self.searched: dict[tuple[int, ...], tuple[Found | None, list[str]]] = {}
        self.ruled_out = ruled_out
        self.say = say

    def advise(self, best: Allocation, scores: Scores) -> Advice:
        self.base = best
        (found,) = self.probe([self.today])
        sizes = self.today
        if found is None:
            grown = self.grow()
            if grown is None:
                return Advice(tuple(self.analysis.needed), False,
                              "a RESERVE partition giving every share what it needs alone "
                              "(no replay confirmed it)", None)
            sizes, found = grown
        basis = ("each type the smallest size on which a replay met every target; each type "
                 "advised to grow misses a target at today's size")
        confirmed_at: tuple[int, ...] | None = None
        for _ in range(ROUNDS):
            for k, lower in enumerate(self.lower_bounds()):
                sizes, found = self.shrink(k, sizes, found, lower)
                sizes, found = self.one_less(k, sizes, found, lower)
            sizes, found, reasons = self.necessary(sizes, found)
            if sizes == self.today or sizes == confirmed_at:
                break
            confirmed = self.found_at(sizes)
            if confirmed is None:
                break
            # What recommend finds on these sizes may fit smaller ones: search again from it.
            found, confirmed_at = confirmed, sizes
            self.base, self.origin = confirmed[0], sizes
        if confirmed_at == sizes:
            basis += " (the declaration shown is what recommend finds there)"
        if sizes != self.today:
            sizes, found = self.unneeded_growth(sizes, found, reasons)
            sizes, found = self.keep_met_types(sizes, found, scores, reasons)
        for k, unit in enumerate(self.space.units):
            if sizes[k] < self.today[k]:
                reasons.setdefault(unit, self.why_shrink(k, sizes))
        return Advice(sizes, True, basis, found[0], reasons, found[1])

    # --- replays ---------------------------------------------------------------------------
    def candidates(self, env: tuple[int, ...]) -> list[Allocation]:
        """The recommended allocation on ``env`` and a RESERVE partition at every share's
        demand, the room left going toward the former's limits."""
        out: list[Allocation] = []
        scaled = self.space.resized(self.base, env, self.origin)
        if scaled is not None:
            out.append(scaled)
        wanted = [list(row.limits) for row in (scaled or self.base)]
        reserved = partition(self.space, self.base, self.analysis.floors, wanted, env)
        if reserved is not None and reserved not in out:
            out.append(reserved)
        return out

    def reachable_missed(self, scores: Scores) -> list[str]:
        """Targets missed, leaving out those no environment meets, and the shares whose
        agreement a replay breaks (:mod:`.contract`: today's declaration on today's
        environment is the bound, on every environment advised)."""
        unreachable = self.analysis.unreachable
        missed = [name for name in self.ranking.missed(scores) if name not in unreachable]
        return list(dict.fromkeys([*missed, *(b.share for b in self.ranking.broken(scores))]))

    def probe(self, envs: Sequence[tuple[int, ...]], *, screened: bool = False
              ) -> list[Found | None]:
        """Per environment, the first candidate whose replay meets every reachable target
        (None: none does); replayed together, in a fixed order, on the whole searched
        history — or, ``screened``, on the screening stretch (a long history's: see
        :meth:`shrink`)."""
        base = self.base
        part = STRETCH if screened else WHOLE
        cache = self.cache.setdefault(part, {})
        todo = [env for env in dict.fromkeys(envs) if (base, env) not in cache]
        for env in todo:
            cache[(base, env)] = None
        # The candidates in their order, each replayed only where every earlier one missed:
        # the first that meets is the answer, so a later one would decide nothing.
        offered = {env: self.candidates(env) for env in todo}
        for turn in range(max((len(c) for c in offered.values()), default=0)):
            pairs = [(env, candidates[turn]) for env, candidates in offered.items()
                     if turn < len(candidates) and cache[(base, env)] is None]
            if not pairs:
                break
            self.say(f"environment advice: replaying {len(pairs)} allocations"
                     + (" on the screening stretch" if screened else "") + " on "
                     + "; ".join(self.sizes_text(env) for env, _ in pairs))
            scored = self.replayer.evaluate_all(
                [(allocation, env) for env, allocation in pairs],
                self.screen if screened else None, part)
            for (env, allocation), scores in zip(pairs, scored, strict=True):
                if scores is not None and not self.reachable_missed(scores):
                    cache[(base, env)] = (allocation, scores)
        return [cache[(base, env)] for env in envs]

    def search_at(self, env: tuple[int, ...]) -> tuple[Found | None, list[str]]:
        """recommend's own search on ``env`` (once per environment)."""
        if env not in self.searched:
            self.say(f"environment advice: recommend's own search on {self.sizes_text(env)}")
            self.searched[env] = self.search_elsewhere(env)
        return self.searched[env]

    def sizes_text(self, env: tuple[int, ...]) -> str:
        return ", ".join(f"{n} x {unit}" for unit, n in zip(self.space.units, env, strict=True))

    def found_at(self, env: tuple[int, ...]) -> Found | None:
        """What recommend's own search finds on ``env`` when it meets every reachable target;
        None without a search where a share's jobs alone miss there (no allocation could
        meet them), when only the answer, not the targets missed, is wanted."""
        if env not in self.searched and self.ruled_out(env):
            return None
        return self.search_at(env)[0]

    # --- the steps -------------------------------------------------------------------------
    def grow(self) -> tuple[tuple[int, ...], Found] | None:
        upper = tuple(max(now, need) for now, need in zip(self.today, self.analysis.needed,
                                                           strict=True))
        for _ in range(GROWTH_ROUNDS):
            (found,) = self.probe([upper])
            if found is not None:
                return upper, found
            upper = tuple(2 * size for size in upper)
        return None

    def lower_bounds(self) -> list[int]:
        """Per type, the least size any allocation fits in (AWS's ``maxCapacity >= 1``)."""
        lowest = self.space.lowest(self.space.today_allocation)
        return [max(1, sum(row[k] for row in lowest)) for k in range(len(self.space.units))]

    def shrink(
        self, k: int, sizes: tuple[int, ...], found: Found, lower: int
    ) -> tuple[tuple[int, ...], Found]:
        """The smallest size of type ``k`` (the others as ``sizes``) a replay meets, by a
        search replaying :data:`POINTS_PER_ROUND` sizes per round.

        On a long history (one with a screening stretch) the sizes are searched on the
        stretch, and the size found is then confirmed on the whole history, bisected up to
        ``sizes[k]`` (met on the whole already) where it falls short: every size advised is
        one a replay of the whole history met."""
        screened = self.screen is not None
        failing, passing, first = lower - 1, sizes[k], found
        while passing - failing > 1:
            span = passing - failing
            points = sorted({failing + max(1, round(span * i / (POINTS_PER_ROUND + 1)))
                             for i in range(1, POINTS_PER_ROUND + 1)} - {passing})
            envs = [_sized(sizes, k, point) for point in points]
            results = self.probe(envs, screened=screened)
            met = [(point, result) for point, result in zip(points, results, strict=True)
                   if result is not None]
            if met:
                passing, found = met[0]
            failing = max([failing, *(point for point, result in zip(points, results,
                                                                    strict=True)
                                      if result is None and point < passing)])
        if not screened:
            return _sized(sizes, k, passing), found
        return self.confirmed(k, sizes, first, passing)

    def confirmed(
        self, k: int, sizes: tuple[int, ...], found: Found, screened: int
    ) -> tuple[tuple[int, ...], Found]:
        """The smallest size of type ``k`` from ``screened`` (what the stretch met) up to
        ``sizes[k]`` (met on the whole history by ``found``) that a replay of the whole
        history meets, bisected between the two."""
        failing, passing = screened - 1, sizes[k]
        middle = screened  # the stretch's answer first: most often the whole meets it too
        while passing - failing > 1:
            (met,) = self.probe([_sized(sizes, k, middle)])
            if met is None:
                failing = middle
            else:
                passing, found = middle, met
            middle = (failing + passing) // 2
        return _sized(sizes, k, passing), found

    def one_less(
        self, k: int, sizes: tuple[int, ...], found: Found, lower: int
    ) -> tuple[tuple[int, ...], Found]:
        """One instance less of type ``k`` where recommend's own search meets every target
        there (it may find an allocation the scaled ones miss); then searched from it."""
        for _ in range(SEARCHED_STEPS):
            if sizes[k] - 1 < lower:
                break
            fewer = _sized(sizes, k, sizes[k] - 1)
            met = self.found_at(fewer)
            if met is None:
                break
            sizes, found = fewer, met
            self.base, self.origin = met[0], fewer
            sizes, found = self.shrink(k, sizes, found, lower)
        return sizes, found

    def necessary(
        self, sizes: tuple[int, ...], found: Found
    ) -> tuple[tuple[int, ...], Found, dict[str, str]]:
        """Each type advised to grow, put back to today's size when a replay there (or
        recommend's own search there) meets every target; the reason it must grow otherwise."""
        reasons: dict[str, str] = {}
        for k, unit in enumerate(self.space.units):
            if sizes[k] <= self.today[k]:
                continue
            at_today = _sized(sizes, k, self.today[k])
            (mine,) = self.probe([at_today])
            missed: list[str] = []
            if mine is None:
                mine, missed = self.search_at(at_today)
            if mine is not None:
                sizes, found = at_today, mine
                continue
            reasons[unit] = self.why_grow(k, missed)
        return sizes, found, reasons

    def unneeded_growth(
        self, sizes: tuple[int, ...], found: Found, reasons: dict[str, str]
    ) -> tuple[tuple[int, ...], Found]:
        """The declaration shown for the advised environment, replayed with each grown type
        back at today's size: where its own limits still fit there (recommend's rule: every
        guarantee honoured at once) and it still meets every target, that type is not grown,
        so the declaration given never contradicts a growth."""
        for k, unit in enumerate(self.space.units):
            if sizes[k] <= self.today[k]:
                continue
            if sum(row.limits[k] for row in found[0]) > self.today[k]:
                continue
            at_today = _sized(sizes, k, self.today[k])
            (scores,) = self.replayer.evaluate_all([(found[0], at_today)])
            if scores is not None and not self.reachable_missed(scores):
                sizes, found = at_today, (found[0], scores)
                reasons.pop(unit, None)
        return sizes, found

    def keep_met_types(
        self, sizes: tuple[int, ...], found: Found, scores: Scores, reasons: dict[str, str]
    ) -> tuple[tuple[int, ...], Found]:
        """A grown type every share running it meets its targets on today's environment
        (the recommendation's replay, ``scores``) goes back to today's size, with the
        recommendation's limits of that type, when a replay confirms every target is still
        met: its shares need nothing more of it."""
        missed = set(self.ranking.missed(scores))
        for k, unit in enumerate(self.space.units):
            runners = set(self.runners(k)) & set(self.ranking.goals)
            if sizes[k] <= self.today[k] or runners & missed:
                continue
            at_today = _sized(sizes, k, self.today[k])
            mixed = tuple(row.with_limit(k, mine.limits[k])
                          for row, mine in zip(found[0], self.base, strict=True))
            (replayed,) = self.replayer.evaluate_all([(mixed, at_today)])
            if replayed is not None and not self.reachable_missed(replayed):
                sizes, found = at_today, (mixed, replayed)
                reasons.pop(unit, None)
        return sizes, found

    # --- reasons ---------------------------------------------------------------------------
    def runners(self, k: int) -> list[str]:
        """Shares with jobs of type ``k``."""
        space = self.space
        return [space.today[s].name for (s, unit) in sorted(space.largest) if unit == k]

    def why_grow(self, k: int, missed: Sequence[str]) -> str:
        unit = self.space.units[k]
        runners = self.runners(k)
        named = [name for name in missed if name in runners] or list(missed)
        return (f"with {self.today[k]} x {unit} (today's size) and the other types as advised, "
                f"recommend's search finds no allocation meeting the targets of "
                f"{', '.join(named)}")

    def why_shrink(self, k: int, sizes: tuple[int, ...]) -> str:
        unit = self.space.units[k]
        return (f"{sizes[k]} x {unit} is the smallest size on which a replay met every target "
                f"(today {self.today[k]})")
