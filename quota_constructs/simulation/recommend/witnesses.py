"""The allocations the environment advice judges a size by: its *witnesses*.

A size of the environment is met when some allocation on it, replayed, meets every reachable
target; any allocation that does is a witness that the size is enough. ``recommend``'s own
search on every size tried would find the best witnesses, at the price of a whole search per
size (what made the advice cost ten times the search it advises on). These are built from
what the search already knows instead, each one replay:

- *fitted*: a base allocation (the recommendation) with each type's excess over the size
  taken one instance at a time from the share furthest above its demand (the least reserved
  capacity its own jobs need, from the demand analysis), never below its least limit: the
  shares that need least give first;
- *raised*: the same from the base's limits raised to each share's demand first, so that a
  share short of its demand gets it where there is room;
- *scaled*: the base's limits of each type scaled with the type's size;
- *fitted, borrowing opened*: fitted, with every share that lends (LEND) borrowing too, where
  its strategy is not pinned and it does not lose jobs to its budget today: on a smaller
  environment a share kept to its own limit waits where borrowing idle capacity would serve
  it (``recommend``'s own candidates open borrowing the same way);
- *pooled*: the same, every share that borrows at its least limit (1, its largest job, its
  pinned minimum): as much capacity as possible lent and borrowed, what a small environment
  shared by shares busy at different times needs;
- *today's declaration*, where it meets every target today (``recommend`` keeps it on any
  environment where it does);
- the *partition*: every share RESERVE at its demand (sufficient by construction), the room
  left going toward the base's scaled limits.

Where the recommendation misses on today's environment (the environment must grow), the best
of the first candidates ``recommend`` replays on the grown environment is a second base.

The witnesses that open borrowing change strategies, which are per share on every type: the
environment search tries them only once every type has been lowered without them. Each other
witness builds each type's limits on their own, so types settled by different witnesses
combine (:func:`combined`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from ...model import SharingStrategy
from .candidates import partition
from .space import Allocation, SearchSpace, Terms, compose, fit, terms_of

Sizes = tuple[int, ...]


@dataclass(frozen=True)
class Witness:
    """One way of building an allocation for any size of the environment."""

    name: str
    make: Callable[[Sizes], Allocation | None]
    """The allocation for an environment of that many instances per type (None: none fits)."""
    opens_borrowing: bool = False
    """Its strategies open borrowing the base does not: a change of strategy is per share,
    on every type at once, so it is tried only once every type has been lowered without one
    (:meth:`.environment.EnvironmentSearch.lowered`)."""
    per_type: bool = True
    """Each type's limits built on their own (fitted to that type's size alone), so that
    types settled by different witnesses combine (:func:`combined`); False for a whole
    declaration (today's) or the partition, replayed only as they are."""


def combined(
    own: Allocation, others: dict[int, Allocation]
) -> Allocation:
    """``own`` with each type ``k`` of ``others`` taking that allocation's limits of ``k``; a
    share lending in one and borrowing too in another borrows (borrowing was opened for it
    on some type's behalf, and strategies are per share, not per type)."""
    rows = [list(row.limits) for row in own]
    terms = [row.terms for row in own]
    for k, other in others.items():
        for s, row in enumerate(other):
            rows[s][k] = row.limits[k]
            if row.terms.strategy is SharingStrategy.LEND_AND_BORROW \
                    and terms[s].strategy is SharingStrategy.LEND:
                terms[s] = row.terms
    return compose(rows, terms)


@dataclass(frozen=True)
class Base:
    """An allocation witnesses are built from, and the environment it was found for (its
    limits scale from there)."""

    allocation: Allocation
    origin: Sizes
    name: str


def witnesses(
    space: SearchSpace, bases: Sequence[Base], floors: list[list[int]], today_meets: bool,
    kept_out: frozenset[int] = frozenset(),
) -> list[Witness]:
    """Every witness, in the order they are tried: each base fitted, raised, scaled and
    fitted with borrowing opened (never for the shares ``kept_out``, by index: those losing
    jobs to their budget today); today's declaration where ``today_meets``; the partition at
    the demands ``floors``."""
    out: list[Witness] = []
    for base in bases:
        out += [
            Witness(f"{base.name} fitted", _fitted(space, base.allocation, floors, False)),
            Witness(f"{base.name} raised to the demands", _fitted(space, base.allocation, floors,
                                                                  True)),
            Witness(f"{base.name} scaled", _scaled(space, base)),
        ]
        opened = _borrowing_opened(space, base.allocation, kept_out)
        opens = opened != base.allocation
        if opens:
            out.append(Witness(f"{base.name} fitted, borrowing opened",
                               _fitted(space, opened, floors, False), opens_borrowing=True))
        out.append(Witness(f"{base.name} pooled", _pooled(space, opened, floors),
                           opens_borrowing=opens))
    if today_meets:
        today = space.today_allocation
        out.append(Witness("today's declaration", lambda env: today, per_type=False))
    first = bases[0]
    out.append(Witness("a RESERVE partition at the demands", _partition(space, first, floors),
                       per_type=False))
    return out


def _fitted(
    space: SearchSpace, base: Allocation, floors: list[list[int]], raised: bool
) -> Callable[[Sizes], Allocation | None]:
    lowest = space.lowest(base)
    wanted = [[max(count, floor) if count else 0 for count, floor in zip(row.limits, needs,
                                                                          strict=True)]
              if raised else list(row.limits) for row, needs in zip(base, floors, strict=True)]

    def make(env: Sizes) -> Allocation | None:
        limits = fit(wanted, floors, env, lowest)
        return None if limits is None else compose(limits, terms_of(base))

    return make


def _pooled(
    space: SearchSpace, base: Allocation, floors: list[list[int]]
) -> Callable[[Sizes], Allocation | None]:
    lowest = space.lowest(base)
    wanted = [least if row.terms.strategy.borrows else list(row.limits)
              for row, least in zip(base, lowest, strict=True)]

    def make(env: Sizes) -> Allocation | None:
        limits = fit(wanted, floors, env, lowest)
        return None if limits is None else compose(limits, terms_of(base))

    return make


def _borrowing_opened(
    space: SearchSpace, base: Allocation, kept_out: frozenset[int]
) -> Allocation:
    """``base`` with every LEND share whose strategy is free and which is not ``kept_out``
    borrowing too (LEND_AND_BORROW, no borrow limit)."""
    return tuple(
        replace(row, terms=Terms(SharingStrategy.LEND_AND_BORROW))
        if row.terms.strategy is SharingStrategy.LEND and s not in kept_out
        and not space.pinned_strategy(space.today[s].name) else row
        for s, row in enumerate(base))


def _scaled(space: SearchSpace, base: Base) -> Callable[[Sizes], Allocation | None]:
    return lambda env: space.resized(base.allocation, env, base.origin)


def _partition(
    space: SearchSpace, base: Base, floors: list[list[int]]
) -> Callable[[Sizes], Allocation | None]:
    def make(env: Sizes) -> Allocation | None:
        scaled = space.resized(base.allocation, env, base.origin)
        wanted = [list(row.limits) for row in (scaled or base.allocation)]
        return partition(space, base.allocation, floors, wanted, env)

    return make
