"""Who lent what, and what is idle: one instance type of a queue at one moment, read by the rules.

:class:`UnitUse` is what ``quota-constructs status`` shows (borrowed, idle own, lent) and what
``explain`` reasons from (what a share could start on now, what cross-share preemption could
reclaim for it), so the two never disagree, over-allocated environments included.

:class:`LendingParties` is the one attribution rule, read by :class:`UnitUse` (``status``'s
``lent`` column), by the monitoring's ``metric_lent`` (the same rule written as CloudWatch
metric math over the published ``CapacityInUse``) and, integrated over time by
:class:`LentOverTime`, by ``quota-constructs usage`` (its ``lent_hours``).

AWS Batch reports what each share holds of a type, not whose idle capacity a borrower holds.
**Assumed** (AWS is silent; stated here once): borrowers hold the borrowable capacity no share
owns first, then the lenders' idle own capacity in proportion to how much each has idle,
capped at it. The reason: capacity no share owns cannot be reclaimed by anyone, so nobody lent
it; among lenders nothing says which one a borrower's instance came from, and a proportional
split is exact whenever one share lends or every lender's idle capacity is in use (the cases
that decide a preemption).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .borrowing import BorrowingRules, UnitRules
from .share import SharingStrategy

_LENDING = frozenset(strategy.value for strategy in SharingStrategy if strategy.lends)


@dataclass(frozen=True)
class LendingParties:
    """Of one instance type: each share's own limit, which shares lend, and how much capacity
    no share owns borrowers may hold (taken before any lender's)."""

    own: Mapping[str, int]
    """Own limit per share whose use above it counts as borrowed, in declaration order."""
    lenders: tuple[str, ...]
    """Shares whose idle own capacity can be lent, in declaration order."""
    unowned_borrowable: int = 0
    """Capacity no share owns that borrowers may hold (0 when unknown or not borrowable)."""

    @classmethod
    def of_rules(cls, rules: BorrowingRules, unit: str) -> LendingParties:
        """From the rules model (the environment's capacity known): a lender is a share some
        other share can borrow the type from; capacity no share owns as assumption 1 says."""
        own = {name: by_unit[unit].own if unit in by_unit else 0
               for name, by_unit in rules.by_share.items()}
        lenders = tuple(name for name, by_unit in rules.by_share.items()
                        if unit in by_unit and by_unit[unit].borrowers)
        return cls(own, lenders, rules.unowned_usable(unit))

    @classmethod
    def by_strategy(cls, own: Mapping[str, int], strategies: Mapping[str, str]) -> LendingParties:
        """By strategy alone (the environment's capacity unknown): every share whose strategy
        lends is a lender, and nothing is known of capacity no share owns. Takes the strategy's
        text, so a live share the model would refuse is still read."""
        return cls(dict(own), tuple(name for name in own if strategies.get(name) in _LENDING))

    def listing(self) -> LendingParties:
        """Only the shares that list the type (own limit above 0): the ones whose use of it is
        published; a share without a limit of a type runs no job of it."""
        own = {name: limit for name, limit in self.own.items() if limit > 0}
        return LendingParties(own, tuple(name for name in self.lenders if name in own),
                              self.unowned_borrowable)

    def lent(self, usage: Mapping[str, float]) -> dict[str, float]:
        """Per lender, how much of its idle own capacity borrowers hold, given what each share
        holds (``usage``; a share missing holds nothing). Empty when nothing is lent."""
        borrowed = sum(max(0.0, usage.get(name, 0.0) - own) for name, own in self.own.items())
        rest = self.borrowed_from_lenders(borrowed)
        idle = {name: max(0.0, self.own.get(name, 0) - usage.get(name, 0.0))
                for name in self.lenders}
        total = sum(idle.values())
        if rest <= 0 or total <= 0:
            return {}
        if rest >= total:
            return idle
        return {name: rest * amount / total for name, amount in idle.items()}

    def borrowed_from_lenders(self, borrowed: float) -> float:
        """Of ``borrowed`` (every share's use above its own limit, added up), what the lenders'
        idle capacity carries: capacity no share owns is taken first."""
        return borrowed - min(borrowed, self.unowned_borrowable)

    def lent_fraction(self, borrowed: float, idle: float) -> float:
        """The part of every lender's idle own capacity that borrowers hold, when borrowers
        hold ``borrowed`` above their limits and the lenders have ``idle`` idle together:
        :meth:`lent` gives each lender its idle amount times this."""
        rest = self.borrowed_from_lenders(borrowed)
        if rest <= 0 or idle <= 0:
            return 0.0
        return 1.0 if rest >= idle else rest / idle


class LentOverTime:
    """:meth:`LendingParties.lent` integrated over time, one change of one share's use at a time.

    At every instant each lender has lent its idle amount times the rule's
    :meth:`~LendingParties.lent_fraction`; the fraction changes with every share's use, a
    lender's idle amount only with its own. So the fraction's integral is kept as one running
    total, and a lender's lent capacity-time is its idle amount times what that total grew by
    while its idle amount stayed the same: each change costs O(1) whatever the number of
    shares, and the result equals summing :meth:`~LendingParties.lent` over every interval
    between changes (the tests check it). Times are any one unit (seconds); the answer is in
    instances times that unit.

    ``shares`` fixes an order so a caller can name a share by its position
    (:meth:`change_at`); shares outside the parties may be among them (their use is neither
    borrowed nor lent, as :meth:`LendingParties.lent` ignores them).
    """

    def __init__(self, parties: LendingParties, start: float,
                 shares: Sequence[str] | None = None) -> None:
        self.parties = parties
        self.shares = tuple(parties.own if shares is None else shares)
        self._position = {name: number for number, name in enumerate(self.shares)}
        self._own = [parties.own.get(name) for name in self.shares]
        lenders = set(parties.lenders)
        self._lends = [name in lenders and own is not None
                       for name, own in zip(self.shares, self._own, strict=True)]
        self._usage = [0.0] * len(self.shares)
        self._idle = [float(max(0, own or 0)) if lends else 0.0
                      for own, lends in zip(self._own, self._lends, strict=True)]
        self._idle_total = sum(self._idle)
        self._borrowed = 0.0
        self._fraction = 0.0
        self._fraction_of = parties.lent_fraction
        self._at = start
        self._integral = 0.0
        """The fraction's integral from ``start`` to ``_at``."""
        self._mark = [0.0] * len(self.shares)
        """Per lender, the integral when its idle amount last changed."""
        self._lent = [0.0] * len(self.shares)

    def change(self, share: str, usage: float, at: float) -> None:
        """From ``at`` on, ``share`` holds ``usage`` (``at`` never before the last change)."""
        position = self._position.get(share)
        if position is None:
            self._integral += self._fraction * (at - self._at)
            self._at = at
            return  # not a party to the rule: its use is neither borrowed nor lent
        self.change_at(position, usage, at)

    def change_at(self, position: int, usage: float, at: float) -> None:
        """:meth:`change` of the share at ``position`` of :attr:`shares`."""
        self.replay((at,), (position,), (usage,))

    def replay(self, times: Sequence[float], positions: Sequence[int],
               usages: Sequence[float]) -> None:
        """:meth:`change_at` of each change in turn (``times`` never decreasing): the same
        answer, without a call per change, for a caller with millions of them."""
        integral, fraction, at = self._integral, self._fraction, self._at
        own_of, lends, usage_of = self._own, self._lends, self._usage
        idle_of, mark, lent = self._idle, self._mark, self._lent
        borrowed, idle_total, fraction_of = self._borrowed, self._idle_total, self._fraction_of
        for now, position, usage in zip(times, positions, usages, strict=True):
            integral += fraction * (now - at)
            at = now
            own = own_of[position]
            if own is None:
                continue  # not a party to the rule: its use is neither borrowed nor lent
            before = usage_of[position]
            usage_of[position] = usage
            moved = False
            if usage > own or before > own:
                borrowed += (usage - own if usage > own else 0.0) - (
                    before - own if before > own else 0.0)
                moved = True
            if lends[position]:
                idle = idle_of[position]
                lent[position] += idle * (integral - mark[position])
                mark[position] = integral
                now_idle = own - usage if usage < own else 0.0
                if now_idle != idle:
                    idle_of[position] = now_idle
                    idle_total += now_idle - idle
                    moved = True
            if moved:
                fraction = fraction_of(borrowed, idle_total)
        self._integral, self._fraction, self._at = integral, fraction, at
        self._borrowed, self._idle_total = borrowed, idle_total

    def lent(self, end: float) -> dict[str, float]:
        """Per lender, its idle capacity borrowers held from ``start`` to ``end`` (no change
        after ``end`` is counted: call it after the last change at or before ``end``)."""
        integral = self._integral + self._fraction * (end - self._at)
        return {name: self._lent[n] + self._idle[n] * (integral - self._mark[n])
                for n, name in enumerate(self.shares) if self._lends[n]}

@dataclass(frozen=True)
class UnitUse:
    """One instance type of a queue at one moment: the rules model against what each share
    holds. What is idle, borrowed and lent, read alike by ``status`` (its columns) and
    ``explain`` (its reasons), over-allocated environments included (assumption 4 of
    :mod:`.borrowing`: what other shares hold within their own limits is never taken back).
    """

    unit: str
    rules: BorrowingRules
    usage: Mapping[str, float]
    """In use per share (a share missing holds nothing)."""

    def rule(self, share: str) -> UnitRules | None:
        return self.rules.by_share.get(share, {}).get(self.unit)

    def own(self, share: str) -> int:
        rule = self.rule(share)
        return 0 if rule is None else rule.own

    def used(self, share: str) -> float:
        return self.usage.get(share, 0.0)

    def borrowed(self, share: str) -> float:
        """What it holds above its own limit."""
        return max(0.0, self.used(share) - self.own(share))

    def unused_own(self, share: str) -> float:
        """The part of its own limit it does not use (whether or not it could take it now)."""
        return max(0.0, self.own(share) - self.used(share))

    @property
    def capacity(self) -> int:
        """The environment's capacity of the type."""
        return int(self.rules.environment.get(self.unit, 0))

    @property
    def usable(self) -> int:
        """What jobs can ever use of it (assumption 1 decides capacity no share owns)."""
        return self.rules.usable_capacity(self.unit)

    @property
    def in_use(self) -> float:
        return sum(self.usage.values())

    @property
    def idle(self) -> float:
        """Usable capacity no job holds."""
        return max(0.0, self.usable - self.in_use)

    @property
    def owned(self) -> int:
        return self.rules.owned(self.unit)

    @property
    def over_allocated(self) -> bool:
        """The shares' limits add up to more than the environment has (assumption 4)."""
        return self.owned > self.capacity

    @property
    def unowned(self) -> int:
        """Capacity of the environment no share's limit accounts for."""
        return self.rules.unowned(self.unit)

    @property
    def unowned_borrowable(self) -> int:
        return self.rules.unowned_usable(self.unit)

    def borrowers(self) -> list[str]:
        """Shares holding more than their own limit, in declaration order."""
        return [share for share in self.rules.by_share if self.borrowed(share) > 0]

    @property
    def reclaimable(self) -> float:
        """Borrowed capacity: what cross-share preemption can take back for a share whose job
        fits within its own limit (nothing else is ever taken back)."""
        return sum(self.borrowed(share) for share in self.rules.by_share)

    def kept_idle(self, share: str) -> float:
        """Idle capacity RESERVE shares other than ``share`` keep (never lent, assumption 3)."""
        rule = self.rule(share)
        return sum(self.unused_own(name) for name, _ in (rule.kept_by if rule else ()))

    def free_for(self, share: str) -> float:
        """What ``share`` could start jobs on now without preempting anyone: the idle capacity
        less what other RESERVE shares keep idle."""
        return max(0.0, self.idle - self.kept_idle(share))

    def idle_own(self, share: str) -> float:
        """The part of its own limit ``share`` could take now: on free capacity, or by
        reclaiming what borrowers hold. In an over-allocated environment the rest of its
        unused limit is held by other shares within their own limits, and is not idle."""
        return min(self.unused_own(share), self.free_for(share) + self.reclaimable)

    def held_within_others_limits(self, share: str) -> float:
        """The part of its unused own limit it cannot take now: other shares hold it within
        their own limits (only in an over-allocated environment)."""
        return self.unused_own(share) - self.idle_own(share)

    def lent(self) -> dict[str, float]:
        """Per lender, how much of its idle own capacity borrowers hold (the attribution rule
        and its assumption: this module's docstring)."""
        return LendingParties.of_rules(self.rules, self.unit).lent(self.usage)
