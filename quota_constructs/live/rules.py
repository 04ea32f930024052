"""The one rules model (:class:`~quota_constructs.model.BorrowingRules`) over a live queue, for
``status`` and ``explain``: what each share can reach, whom it borrows from and lends to, and
the capacity no share owns, per instance type; and, per type at the moment of the snapshot,
what is idle, borrowed and lent (:class:`~quota_constructs.model.UnitUse`, :func:`unit_use`).
Nothing in ``quota_constructs.live`` re-derives a borrowing rule.

The live queue does not say whether capacity no share owns is borrowable (assumption 1 of
:mod:`quota_constructs.model.borrowing`); the commands take the model's default (it is), as the
synth summary, the agreement and the simulator do unless told otherwise
(``--no-unowned-borrowing``, as ``simulate`` spells it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from quota_constructs.model import BorrowingRules, QuotaConfigError, QuotaShareSpec, UnitUse
from quota_constructs.runtime.batch_reads import QueueSnapshot
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


def unit_use(rules: BorrowingRules | None, unit: str, snapshot: QueueSnapshot,
             shares: Iterable[str]) -> UnitUse | None:
    """What ``shares`` hold of ``unit`` in ``snapshot``, read by the rules; None when the rules
    are unknown or the environment lists no ``unit``."""
    if rules is None or unit not in rules.environment:
        return None
    return UnitUse(unit, rules, {share: snapshot.usage_of(share).get(unit, 0.0)
                                 for share in shares})
