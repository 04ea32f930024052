"""How big each instance type of the environment needs to be: advice per type, each size the
smallest a replay verifies, each growth necessary.

Why per type, searched one type at a time: under the simulator's rules capacity is counted per
instance type (a job runs on one type; limits, borrowing and preemption are per type), so a
type's size only changes the waits of the jobs that run on it. Scaling every type by one factor
(the old way) grows a type whose shares already meet their targets because another type is
short, and a re-run with only that other type fixed then says the first "could shrink".

What it costs: a size is judged by replaying *witnesses* (:mod:`.witnesses`: allocations
built from the recommendation and the demand analysis, one replay each), not by running
``recommend``'s whole search on every size tried (which made the advice cost ten times the
search it advises on). ``recommend``'s own search is run on another environment only to
confirm that a type must grow, where single-share replays have not already shown it.

The search (:meth:`EnvironmentSearch.advise`):

1. *Enough*: today's sizes when the recommended allocation meets every reachable target there
   (its replay is the recommendation's own, read from the ledger); else each type at least
   what a RESERVE partition at every share's demand needs (doubled while that still misses,
   at most a few times), and the best of ``recommend``'s first candidates there becomes a
   second base for the witnesses.
2. *Smallest per type*: each type in turn (the environment's order) is lowered to the
   smallest size on which a witness still meets every reachable target, the other types as
   found so far: by bisection with the witness that met last (two sizes replayed together
   per round, starting from the recommendation's own limits where they meet); then, at one
   instance less than the size found, every other witness is replayed (two at a time, in
   their order), and where one meets it becomes the witness and the search goes on downward
   (at most :data:`SWITCHES` times per type). The witnesses that open borrowing are tried
   only after every type has been lowered without them, each type once more (a strategy is
   a share's on every type: opened early for one type it costs the next ones more than it
   saved), and a type settled by one witness keeps that witness's limits while the next is
   searched (:func:`.witnesses.combined`). Lowering a type later never helps one settled
   before (more capacity never lengthens a wait), so each size is the smallest given the
   final sizes of the others. On a long history (one with a screening stretch) the sizes are
   searched on the stretch and confirmed on the whole history in at most two rounds of two
   replays: every type moved the same fraction of the way from the stretch's sizes back
   toward the sizes the whole history met before the search (none, a half, then the
   interval left in thirds); the lowest that meets is advised.
3. *Every growth necessary*: a type advised to grow goes back to today's size where a
   witness meets every target there; else its growth stands where some share's jobs alone,
   given all of that type at today's size, miss their targets (no allocation could meet
   them: single-share replays), and otherwise where ``recommend``'s own search there misses
   a target too; the target missed is kept as the type's reason.
4. *No growth a replay shows unneeded*: a grown type goes back to today's size where the
   declaration shown, its limits of the type still fitting, meets every target there; and
   where every share running the type met its targets on today's environment, with the
   recommendation's limits of that type, when a replay confirms it.

The declaration shown for the advised environment is the witness that met there. Asked again
on that environment, ``recommend`` meets every target: its own first candidates there include
today's declaration and its strategies, and the partition, and it keeps improving from them.

"Reachable" targets leave out a share whose jobs miss even when every one starts on
submission (:attr:`.tasks.Demand.met` false): no environment meets it, so it is not a
reason to grow. "Meets" also means keeping every share's agreement as today's declaration on
today's environment keeps it (:mod:`.contract`): no size is advised on which a share loses
more jobs to its interruption budget, or misses a target met today.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..problem import Problem
from .candidates import candidates
from .demand import DemandAnalysis
from .ranking import Ranking
from .replays import STRETCH, WHOLE, Replayer
from .screening import CONFIRMED_PER_ROUND
from .space import Allocation, SearchSpace
from .tasks import Scores
from .witnesses import Base, Witness, combined, witnesses

GROWTH_ROUNDS = 4
"""Times the environment is doubled while even a partition at every share's demand misses."""
SWITCHES = 2
"""Times per type the search goes on below the size found with another witness."""
CONFIRM_ROUNDS = 2
"""Rounds of whole-history replays confirming the sizes a long history's stretch met."""
POINTS_PER_ROUND = 2
"""Sizes replayed together per round of a type's bisection (fixed, not the number of workers,
so that the answer does not depend on the executor): two workers' worth of replays, for a
third of the rounds' wall time."""

Found = tuple[Allocation, Scores]
Met = tuple[int, Found]
"""The index of the witness that met (in :meth:`EnvironmentSearch.witnesses`), its allocation
and replay."""
SearchAt = Callable[[tuple[int, ...]], tuple[Found | None, list[str]]]
"""recommend's own search on an environment of that many instances per type: what it finds
when it meets every reachable target (else None), and the targets it misses."""
Beyond = Callable[[tuple[int, ...]], list[str]]
"""The shares whose jobs alone, given the whole of an environment's types they list, miss
their targets there (:func:`.demand.beyond_reach`): no allocation on it can meet them."""


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


BASIS = ("each type the smallest size on which a replay of the whole history met every target "
         "(the recommendation's limits fitted to it, or another allocation built from the "
         "demand analysis); each type advised to grow misses a target at today's size")


class EnvironmentSearch:
    """One environment search around the recommended allocation (see the module docs)."""

    def __init__(
        self, space: SearchSpace, ranking: Ranking, replayer: Replayer, analysis: DemandAnalysis,
        search_at: SearchAt, beyond: Beyond = lambda env: [],
        say: Callable[[str], None] = lambda message: None, screen: Problem | None = None,
    ) -> None:
        self.space = space
        self.ranking = ranking
        self.replayer = replayer
        self.analysis = analysis
        self.search_elsewhere = search_at
        self.today = tuple(space.capacity)
        self.screen = screen
        self.beyond = beyond
        self.say = say
        self.bases: list[Base] = []
        self.base: Allocation = ()
        """The recommendation (the first base)."""
        self.modes: dict[int, int] = {}
        """Per type settled, the witness (index) whose limits of it met."""
        self.searching: int | None = None
        """The type being lowered (its limits come from the witness tried)."""

    def advise(self, best: Allocation, scores: Scores) -> Advice:
        self.base = best
        self.bases = [Base(best, self.today, "the recommendation")]
        # The recommendation on today's environment: its own replay, read from the ledger.
        met = self.first_met(self.today, [0]) or self.first_confirmed(self.today)
        sizes = self.today
        if met is None:
            grown = self.grow()
            if grown is None:
                return Advice(tuple(self.analysis.needed), False,
                              "a RESERVE partition giving every share what it needs alone "
                              "(no replay confirmed it)", None)
            sizes, met = grown
            self.rebase(sizes)
        sizes, met = self.lowered(sizes, met)
        sizes, found, reasons = self.necessary(sizes, met[1])
        if sizes != self.today:
            sizes, found = self.unneeded_growth(sizes, found, reasons)
            sizes, found = self.keep_met_types(sizes, found, scores, reasons)
        for k, unit in enumerate(self.space.units):
            if sizes[k] < self.today[k]:
                reasons.setdefault(unit, self.why_shrink(k, sizes))
        return Advice(sizes, True, BASIS, found[0], reasons, found[1])

    # --- replays ---------------------------------------------------------------------------
    def witnesses(self) -> list[Witness]:
        today_meets = (self.analysis.today_replayed
                       and not self.reachable_missed(self.analysis.today_scores))
        today_scores = self.analysis.today_scores
        losing = frozenset(s for s, spec in enumerate(self.space.today)
                           if self.ranking.loses_jobs(spec.name, today_scores))
        return witnesses(self.space, self.bases, self.analysis.floors, today_meets, losing)

    def build(self, index: int, env: tuple[int, ...]) -> Allocation | None:
        """Witness ``index``'s allocation on ``env``, each type already settled by another
        witness (:attr:`modes`) taking that witness's limits of it, except the type being
        searched: a type lowered with one witness's limits is not undone by searching the
        next type with another's (a witness pooling every type to lower one would otherwise
        be carried to the next, where the recommendation's own limits need less)."""
        every = self.witnesses()
        own = every[index].make(env)
        if own is None or not every[index].per_type:
            return own
        others: dict[int, Allocation] = {}
        for k, mode in self.modes.items():
            if k == self.searching or mode == index or not every[mode].per_type:
                continue
            other = every[mode].make(env)
            if other is None:
                return None
            others[k] = other
        return combined(own, others) if others else own

    def reachable_missed(self, scores: Scores) -> list[str]:
        """Targets missed, leaving out those no environment meets, and the shares whose
        agreement a replay breaks (:mod:`.contract`: today's declaration on today's
        environment is the bound, on every environment advised)."""
        unreachable = self.analysis.unreachable
        missed = [name for name in self.ranking.missed(scores) if name not in unreachable]
        return list(dict.fromkeys([*missed, *(b.share for b in self.ranking.broken(scores))]))

    def first_met(
        self, env: tuple[int, ...], tried: Sequence[int] | None = None, *,
        screened: bool = False,
    ) -> Met | None:
        """The first witness (of ``tried``, indices in :meth:`witnesses`; all by default)
        whose allocation on ``env``, replayed, meets every reachable target, on the whole
        searched history — or, ``screened``, on the screening stretch (see :meth:`lowered`).
        They are replayed :data:`POINTS_PER_ROUND` at a time, in their order, each round only
        where every earlier one missed: the answer is the one a replay of each in turn would
        give. A replay asked again is read from the ledger."""
        every = self.witnesses()
        offered: dict[Allocation, int] = {}
        for index in range(len(every)) if tried is None else tried:
            allocation = self.build(index, env)
            if allocation is not None:
                offered.setdefault(allocation, index)
        queue = list(offered.items())
        for first in range(0, len(queue), POINTS_PER_ROUND):
            chunk = queue[first:first + POINTS_PER_ROUND]
            self.say("environment advice: replaying "
                     + ", ".join(every[index].name for _, index in chunk)
                     + f" on {self.sizes_text(env)}"
                     + (" (the screening stretch)" if screened else ""))
            scored = self.replayer.evaluate_all(
                [(allocation, env) for allocation, _ in chunk],
                self.screen if screened else None, STRETCH if screened else WHOLE)
            for (allocation, index), scores in zip(chunk, scored, strict=True):
                if scores is not None and not self.reachable_missed(scores):
                    return index, (allocation, scores)
        return None

    def met_each(
        self, k: int, sizes: tuple[int, ...], points: Sequence[int], witness: int, *,
        screened: bool,
    ) -> list[Met | None]:
        """Witness ``witness`` on ``sizes`` with type ``k`` at each of ``points``, replayed
        together (one round of the bisection): per point, the witness and its replay where it
        meets every reachable target."""
        make = self.witnesses()[witness]
        envs = [_sized(sizes, k, point) for point in points]
        built = [(self.build(witness, env), env) for env in envs]
        pairs: list[tuple[Allocation, tuple[int, ...] | None]] = [
            (allocation, env) for allocation, env in built if allocation is not None]
        self.say(f"environment advice: replaying {make.name} on "
                 + "; ".join(self.sizes_text(env) for allocation, env in built
                             if allocation is not None)
                 + (" (the screening stretch)" if screened else ""))
        scored = iter(self.replayer.evaluate_all(
            pairs, self.screen if screened else None, STRETCH if screened else WHOLE))
        out: list[Met | None] = []
        for allocation, _ in built:
            scores = None if allocation is None else next(scored)
            out.append(None if allocation is None or scores is None
                       or self.reachable_missed(scores) else (witness, (allocation, scores)))
        return out

    def search_at(self, env: tuple[int, ...]) -> tuple[Found | None, list[str]]:
        """recommend's own search on ``env``."""
        self.say(f"environment advice: recommend's own search on {self.sizes_text(env)}")
        return self.search_elsewhere(env)

    def sizes_text(self, env: tuple[int, ...]) -> str:
        return ", ".join(f"{n} x {unit}" for unit, n in zip(self.space.units, env, strict=True))

    # --- the steps -------------------------------------------------------------------------
    def grow(self) -> tuple[tuple[int, ...], Met] | None:
        upper = tuple(max(now, need) for now, need in zip(self.today, self.analysis.needed,
                                                           strict=True))
        for _ in range(GROWTH_ROUNDS):
            met = self.first_confirmed(upper)
            if met is not None:
                return upper, met
            upper = tuple(2 * size for size in upper)
        return None

    def rebase(self, env: tuple[int, ...]) -> None:
        """Where the recommendation misses on today's environment, it may be a poor base for
        the sizes: the first candidates ``recommend`` replays on the grown environment
        ``env`` (today's declaration, its strategies opened or closed, the shares that miss
        raised toward their demand, the partition: :func:`.candidates.candidates`) are
        replayed there once (screened on the stretch of a long history), and the best that
        meets every reachable target becomes a second base."""
        space = replace(self.space.on(env), largest=self.space.largest)
        analysis = self.analysis
        missing = (set(self.ranking.missed(analysis.today_scores)) if analysis.today_replayed
                   else set(self.ranking.goals))
        offered = [a for a in dict.fromkeys(candidates(
            space, self.ranking, analysis.today_scores, analysis.floors, missing))
            if space.honours_pins(a)]
        self.say(f"environment advice: replaying recommend's {len(offered)} first candidates "
                 f"on {self.sizes_text(env)}")
        if self.screen is not None:
            screened = self.replayer.evaluate_all([(a, env) for a in offered], self.screen,
                                                  STRETCH)
            offered = [a for _, _, a in sorted(
                (self.ranking.key(a, scores), order, a) for order, (a, scores)
                in enumerate(zip(offered, screened, strict=True))
                if scores is not None and not self.reachable_missed(scores)
            )[:CONFIRMED_PER_ROUND]]
        scored = self.replayer.evaluate_all([(a, env) for a in offered])
        met = sorted((self.ranking.key(a, scores), order, a) for order, (a, scores)
                     in enumerate(zip(offered, scored, strict=True))
                     if scores is not None and not self.reachable_missed(scores))
        if met:
            self.bases.append(Base(met[0][2], env, "recommend's best first candidate"))

    def lower_bounds(self) -> list[int]:
        """Per type, the least size any allocation fits in (AWS's ``maxCapacity >= 1``)."""
        lowest = self.space.lowest(self.space.today_allocation)
        return [max(1, sum(row[k] for row in lowest)) for k in range(len(self.space.units))]

    def lowered(self, sizes: tuple[int, ...], met: Met) -> tuple[tuple[int, ...], Met]:
        """Each type in turn lowered to the smallest size a witness meets, the others as found
        so far (:meth:`smallest`), first with the witnesses that keep the base's strategies;
        then each type once more, one instance lower, with those that open borrowing (a
        strategy is a share's on every type: opened to lower one type early, it would cost
        the next ones more than it saved). On a long history (one with a screening stretch)
        the sizes are searched on the stretch and then confirmed on the whole history
        (:meth:`confirmed`): every size advised is one a replay of the whole history met."""
        screened = self.screen is not None
        every = self.witnesses()
        keeping = [i for i, w in enumerate(every) if not w.opens_borrowing]
        opening = [i for i, w in enumerate(every) if w.opens_borrowing]
        lowest, last = sizes, met
        bounds = self.lower_bounds()
        for k, lower in enumerate(bounds):
            self.searching = k
            if last[0] != 0:
                # Each type's search starts from the recommendation's own limits of it (the
                # first witness) where they meet, the types settled as they were.
                last = self.first_met(lowest, [0], screened=screened) or last
            size, last = self.smallest(k, lowest, lower, last, keeping, screened=screened)
            self.settle(k, last)
            lowest = _sized(lowest, k, size)
        for k, lower in enumerate(bounds):
            if not opening or lowest[k] - 1 < lower:
                continue
            self.searching = k
            fewer = _sized(lowest, k, lowest[k] - 1)
            found = self.first_met(fewer, opening, screened=screened)
            self.searching = None
            if found is None:
                continue
            self.searching = k
            size, last = self.smallest(k, fewer, lower, found, range(len(every)),
                                       screened=screened)
            self.settle(k, last)
            lowest = _sized(lowest, k, size)
        if not screened:
            return lowest, last
        return self.confirmed(lowest, last[0], sizes, met)

    def settle(self, k: int, met: Met) -> None:
        """Type ``k`` settled by the witness of ``met``: later searches keep its limits."""
        self.searching = None
        self.modes[k] = met[0]

    def smallest(
        self, k: int, sizes: tuple[int, ...], lower: int, met: Met, allowed: Sequence[int],
        *, screened: bool,
    ) -> tuple[int, Met]:
        """The smallest size of type ``k`` from ``lower`` up to ``sizes[k]`` (met by ``met``)
        on which a witness meets (on the stretch, ``screened``), the other types as
        ``sizes``: bisection with the witness that met (more capacity never lengthens a
        wait); then one instance less with every other witness ``allowed``, and where one
        meets, on downward with it."""
        failing, passing, last = lower - 1, sizes[k], met
        for switch in range(SWITCHES + 1):
            if switch:
                # The new witness went one lower; it may go further: doubling the step
                # until it misses, then bisecting.
                step = 2
                while passing - step > failing:
                    found = self.first_met(_sized(sizes, k, passing - step), [last[0]],
                                           screened=screened)
                    if found is None:
                        failing = passing - step
                        break
                    passing, last, step = passing - step, found, step * 2
            while passing - failing > 1:
                span = passing - failing
                points = sorted({failing + max(1, span * i // (POINTS_PER_ROUND + 1))
                                 for i in range(1, POINTS_PER_ROUND + 1)} - {passing})
                results = self.met_each(k, sizes, points, last[0], screened=screened)
                for point, found in zip(points, results, strict=True):
                    if found is not None:  # the lowest that meets (points ascend)
                        passing, last = point, found
                        break
                failing = max([failing, *(point for point, found in zip(points, results,
                                                                       strict=True)
                                          if found is None and point < passing)])
            if passing - 1 < lower or switch == SWITCHES:
                break
            others = [i for i in allowed if i != last[0]]
            found = self.first_met(_sized(sizes, k, passing - 1), others, screened=screened)
            if found is None:
                break
            passing, last, failing = passing - 1, found, lower - 1
        return passing, last

    def confirmed(
        self, screened: tuple[int, ...], first: int, sizes: tuple[int, ...], met: Met
    ) -> tuple[tuple[int, ...], Met]:
        """The sizes the stretch met confirmed on the whole history, the witness the stretch
        singled out replayed on every type at once moved the same fraction of the way from
        the stretch's sizes back toward ``sizes`` (met on the whole by ``met``): the
        stretch's sizes and halfway first, then the interval left cut in three, for at most
        :data:`CONFIRM_ROUNDS` rounds of :data:`POINTS_PER_ROUND` whole replays, replayed
        together. The lowest that meets is advised (``sizes`` where none does): every size
        advised is one a replay of the whole history met, and a long history's whole
        replays (each costs what tens of the stretch's do) stay a fixed few."""
        def at(fraction: float) -> tuple[int, ...]:
            return tuple(low + math.ceil(fraction * (high - low))
                         for low, high in zip(screened, sizes, strict=True))

        witness = self.witnesses()[first]
        failing, passing, best = -1.0, 1.0, (sizes, met)
        fractions = [0.0, 0.5]
        for _ in range(CONFIRM_ROUNDS):
            tried = [(fraction, at(fraction)) for fraction in fractions]
            tried = [(fraction, env) for fraction, env in tried if env != best[0]]
            built = [(fraction, self.build(first, env), env) for fraction, env in tried]
            pairs: list[tuple[Allocation, tuple[int, ...] | None]] = [
                (allocation, env) for _, allocation, env in built if allocation is not None]
            if not pairs:
                break
            self.say(f"environment advice: confirming {witness.name} on the whole history on "
                     + "; ".join(self.sizes_text(env) for _, allocation, env in built
                                 if allocation is not None))
            scored = iter(self.replayer.evaluate_all(pairs))
            for fraction, allocation, env in built:
                scores = None if allocation is None else next(scored)
                if allocation is None or scores is None or self.reachable_missed(scores):
                    failing = max(failing, fraction) if fraction < passing else failing
                elif fraction < passing:
                    passing, best = fraction, (env, (first, (allocation, scores)))
            if passing <= 0.0:
                break
            low = max(failing, 0.0)
            fractions = [low + (passing - low) * i / 3 for i in (1, 2)]
        return best

    def first_confirmed(self, env: tuple[int, ...]) -> Met | None:
        """:meth:`first_met` on the whole history; on a long history the witnesses are
        screened on the stretch first and only the first that meets there is replayed on
        the whole (one whole replay, not one per witness)."""
        if self.screen is None:
            return self.first_met(env)
        on_stretch = self.first_met(env, screened=True)
        if on_stretch is None:
            return None
        return self.first_met(env, [on_stretch[0]])

    def necessary(
        self, sizes: tuple[int, ...], found: Found
    ) -> tuple[tuple[int, ...], Found, dict[str, str]]:
        """Each type advised to grow, put back to today's size when a witness meets every
        target there; else the growth stands where some share's jobs alone miss there (no
        allocation could meet them: single-share replays), and otherwise where recommend's
        own search there misses too; the reason it must grow."""
        reasons: dict[str, str] = {}
        for k, unit in enumerate(self.space.units):
            if sizes[k] <= self.today[k]:
                continue
            at_today = _sized(sizes, k, self.today[k])
            met = self.first_confirmed(at_today)
            if met is not None:
                sizes, found = at_today, met[1]
                continue
            alone = self.beyond(at_today)
            if alone:
                reasons[unit] = self.why_beyond(k, alone)
                continue
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

    def why_beyond(self, k: int, names: Sequence[str]) -> str:
        unit = self.space.units[k]
        return (f"with {self.today[k]} x {unit} (today's size) and the other types as advised, "
                f"the jobs of {', '.join(names)} alone, given all of it, miss their targets: "
                f"no allocation can meet them")

    def why_shrink(self, k: int, sizes: tuple[int, ...]) -> str:
        unit = self.space.units[k]
        return (f"{sizes[k]} x {unit} is the smallest size on which a replay met every target "
                f"(today {self.today[k]})")
