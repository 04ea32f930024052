"""The one rules model (:class:`~quota_constructs.model.BorrowingRules`) over a live queue, for
``status`` and ``explain``: what each share can reach, whom it borrows from and lends to, and
the capacity no share owns, per instance type. Nothing in ``quota_constructs.live`` re-derives a
borrowing rule.

The live queue does not say whether capacity no share owns is borrowable (assumption 1 of
:mod:`quota_constructs.model.borrowing`); the commands take the model's default (it is), as the
synth summary, the agreement and the simulator do unless told otherwise
(``--no-unowned-borrowing``, as ``simulate`` spells it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from quota_constructs.model import (
    BorrowingRules,
    LendingParties,
    QuotaConfigError,
    QuotaShareSpec,
    UnitRules,
)
from quota_constructs.wire.live_share import LiveShare


def spec_of(share: LiveShare) -> QuotaShareSpec:
    """The model's view of a live share (limits, strategy, borrow limit, switches)."""
    return share.config.spec(share.name)


def rules_of(environment: Mapping[str, int], shares: Iterable[LiveShare], *,
             unowned_capacity_borrowable: bool = True) -> BorrowingRules | None:
    """The rules of the live queue; None when the environment's capacity is unknown or a live
    share is one the model cannot read (the figures that need the rules are then left out).
    ``unowned_capacity_borrowable=False`` (``--no-unowned-borrowing``) takes the model's other
    reading of its assumption 1."""
    if not environment:
        return None
    try:
        return BorrowingRules.of(environment=environment,
                                 shares=[spec_of(share) for share in shares],
                                 unowned_capacity_borrowable=unowned_capacity_borrowable)
    except (QuotaConfigError, ValueError, TypeError):
        return None


@dataclass(frozen=True)
class UnitUse:
    """One instance type of the live queue: the rules against what the snapshot says is used."""

    unit: str
    rules: BorrowingRules
    usage: Mapping[str, float]
    """In use per share."""

    def rule(self, share: str) -> UnitRules | None:
        return self.rules.by_share.get(share, {}).get(self.unit)

    def own(self, share: str) -> int:
        rule = self.rule(share)
        return 0 if rule is None else rule.own

    def idle_own(self, share: str) -> float:
        return max(0.0, self.own(share) - self.usage.get(share, 0.0))

    def borrowed(self, share: str) -> float:
        return max(0.0, self.usage.get(share, 0.0) - self.own(share))

    @property
    def capacity(self) -> int:
        return int(self.rules.environment.get(self.unit, 0))

    @property
    def owned(self) -> int:
        return sum(self.own(share) for share in self.rules.by_share)

    @property
    def unowned(self) -> int:
        """Capacity of the environment no share's limit accounts for."""
        return max(0, self.capacity - self.owned)

    @property
    def unowned_borrowable(self) -> int:
        return self.unowned if self.rules.unowned_capacity_borrowable else 0

    def idle_to_borrow(self, share: str) -> float:
        """Instances ``share`` could borrow now: the environment's idle capacity less what it
        may not take (idle own capacity of shares that do not lend to it, its own idle, and
        capacity no share owns when that is not borrowable)."""
        rule = self.rule(share)
        lenders = set(rule.lenders if rule is not None else ())
        kept = sum(self.idle_own(other) for other in self.rules.by_share
                   if other != share and other not in lenders)
        unowned_idle = 0 if self.rules.unowned_capacity_borrowable else self.unowned
        idle = self.capacity - sum(self.usage.values())
        return max(0.0, idle - kept - self.idle_own(share) - unowned_idle)

    def lent(self) -> dict[str, float]:
        """Per lender, how much of its idle own capacity borrowers hold (the attribution rule
        and its assumption: :mod:`quota_constructs.model.lending`)."""
        return LendingParties.of_rules(self.rules, self.unit).lent(self.usage)
