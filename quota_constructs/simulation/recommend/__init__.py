"""Recommend an allocation that meets every share's service targets, changing least.

    rec = recommend(capacity_limits=[...], shares=[...], jobs=[...], executor=None)
    rec.shares          # the recommended declaration (agreements kept)
    rec.meets_targets   # every target met when the (searched part of the) history is replayed
    rec.unmet           # shares whose targets it misses, with rec.reasons[share] (for a share
                        # that no allocation can satisfy: its demand alone exceeds the environment)

What is searched (:mod:`.space`): each share's capacity limit per instance type it already
lists (never a new type, never below 1: AWS's ``maxCapacity >= 1``), its strategy and borrow
limit. In-share preemption and the environment stay as declared; own limits of the
recommendation add up to at most the environment (every guarantee can be honoured at once) and
RESERVE limits never exceed it (AWS rejects that). ``pins`` (:mod:`.pins`) keep a share's
strategy, its limits, or a minimum guarantee.

The steps, each in its own module
---------------------------------
:func:`.search.search` runs steps 1-7 in order; :func:`.search.recommend` runs it, then 8.

1. **Demand analysis** (:mod:`.demand`; cheap: each replay holds one share's jobs of one
   type). For every share with a target and every type it uses, the least *reserved* capacity
   with which those jobs, alone, meet the target is found by bisection (:func:`.tasks.demand`).
   Served alone by a reserved partition, a share's waits do not depend on anyone else, so a
   RESERVE partition giving every share at least that capacity meets every target: a
   *sufficient* allocation, certain under the simulator's rules. The sum over shares is an
   environment that is sufficient.
2. **Impossibility** (:mod:`.demand`, exact): a share whose jobs alone, given the whole
   environment of the types it lists, miss its target misses it under every allocation,
   because any allocation gives it at most that capacity and other shares only compete for
   it. It is reported in ``unmet`` with the reason (:mod:`.explain`).
3. **Candidates** (:mod:`.candidates`) between today's declaration and that partition:
   today's, today's strategies with the shares that miss raised toward their demand (none of
   it beyond their largest job, a quarter, half, three quarters, all of it; capacity taken
   from the shares furthest above what they need), the same with lending opened (RESERVE ->
   LEND), with borrowing opened for waits or closed for jobs lost to budgets, and the
   partition.
4. **Improving** (:mod:`.improve`) while targets are missed: capacity moves toward each share
   that misses (a quarter of its limit per type) from capacity no share owns and then from the
   shares with most room before their own targets; its borrowing is opened (waits) or closed
   or capped (lost jobs). A move is kept when it ranks better (:mod:`.ranking`): fewer targets
   missed, then a smaller shortfall.
5. **Walking back** (:mod:`.walk_back`): each change of the answer is undone in turn, fully
   or half way, and kept undone where every target is still met; repeated until nothing more
   can be undone or ``max_simulations`` is reached.
6. **Changes that change nothing** are undone (:mod:`.no_ops`): one whose undoing leaves no
   job's replay different, or which made alone on today's declaration changes no job's replay
   and whose undoing ranks no worse; a proposal whose whole replay is today's is not made.
7. **The environment needed, per instance type** (:mod:`.environment`): each type the
   smallest size a replay verifies, the others as found; a type grows only where recommend's
   own search, with that type at today's size, misses a target of a share running it.
   ``environment_needed``, ``environment_reasons`` and a declaration for it
   (``environment_shares``).
8. **Hold-out** (:mod:`.holdout`): with ``holdout``, today's and the recommended declaration
   replayed on the last part of the history, which the search never saw.

**The contract** (:mod:`.contract`): each share's declared interruption budget and every
target today's declaration meets bound the search (steps 3-7): an allocation that breaks one
never ranks above one that keeps them all, and no environment is advised on which one breaks,
unless ``allow_trades`` names the share; the answer names every line given up
(``Recommendation.trades``).

**Screening** (:mod:`.screening`): long histories (more than twice ``screen_jobs``) rank the
candidates of steps 3-5 on a stretch of ``screen_jobs`` jobs from the middle of the history
first and replay only the best two on the whole of it; step 6 compares the stretch's replays
and keeps what they single out where the whole history ranks it no worse; step 7 searches a
type's sizes on the stretch and confirms the size found on the whole history. The demand
analysis and every answer use the whole history.

**Replays** (:mod:`.replays`): every replay goes through one :class:`.replays.Replayer`, which
sends the tasks of :mod:`.tasks` to the executor and counts them by what the search ran them
for (``Recommendation.replays``), and one :class:`.replays.Ledger` per call, shared with the
searches step 7 runs on other environments: a replay asked for again (same allocation,
environment and part of the history) is read from the first; a demand is bisected once (it is
what a share's own jobs need, whatever the environment) and its probes are kept; a search on
another environment skips the replays only a shown answer needs (the alone replays behind a
reason, no-op changes of an answer that misses), and is not run at all where a share's jobs
alone miss there (no allocation could meet them). The answer's types are in :mod:`.result`.

Every answer is confirmed by a full replay: ``meets_targets`` is never inferred from a bound.
Bisection and "a share alone with the whole environment is its best case" assume that more
capacity never makes a share's p95 wait longer (a queue that starts a job whenever one fits);
the tests compare the recommendation with an exhaustive search over every allocation of small
environments, where it finds an allocation whenever one exists.

Determinism: results are read in submission order (never completion order), ties are broken
by a fixed candidate order, and nothing is random, so the same inputs give the same
recommendation on any executor (local processes, a Dask cluster's ``get_executor()``).
"""

from .contract import EVERY_SHARE, MEASURES, Trade
from .holdout import HoldoutCheck
from .pins import Pin
from .result import Recommendation, ShareCost, describe_change
from .search import DEFAULT_MAX_SIMULATIONS, DEFAULT_OPTIONS, DEFAULT_SCREEN_JOBS, recommend
from .tasks import Demand, ShareScore

__all__ = [
    "DEFAULT_MAX_SIMULATIONS",
    "DEFAULT_OPTIONS",
    "DEFAULT_SCREEN_JOBS",
    "EVERY_SHARE",
    "MEASURES",
    "Demand",
    "HoldoutCheck",
    "Pin",
    "Recommendation",
    "ShareCost",
    "ShareScore",
    "Trade",
    "describe_change",
    "recommend",
]
