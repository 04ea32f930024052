"""Who lent what: the part of each lending share's idle own capacity that borrowers hold.

The one attribution rule, read by ``quota-constructs status`` (its ``lent`` column) and by the
monitoring's ``metric_lent`` (the same rule written as CloudWatch metric math over the
published ``CapacityInUse``).

AWS Batch reports what each share holds of a type, not whose idle capacity a borrower holds.
**Assumed** (AWS is silent; stated here once): borrowers hold the borrowable capacity no share
owns first, then the lenders' idle own capacity in proportion to how much each has idle,
capped at it. The reason: capacity no share owns cannot be reclaimed by anyone, so nobody lent
it; among lenders nothing says which one a borrower's instance came from, and a proportional
split is exact whenever one share lends or every lender's idle capacity is in use (the cases
that decide a preemption).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .borrowing import BorrowingRules
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
        rest = borrowed - min(borrowed, self.unowned_borrowable)
        idle = {name: max(0.0, self.own.get(name, 0) - usage.get(name, 0.0))
                for name in self.lenders}
        total = sum(idle.values())
        if rest <= 0 or total <= 0:
            return {}
        if rest >= total:
            return idle
        return {name: rest * amount / total for name, amount in idle.items()}
