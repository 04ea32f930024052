"""The borrowing rules: per share and instance type, what it can reach, whom it borrows from and
whom it lends to. The one place every part of the library reads them from.

The summary, the allocation agreement and the simulator take their figures from
:class:`BorrowingRules` (``QuotaAllocation.rules``), and the custom resource's shrink guard its
borrow ceiling from :func:`~.borrow_limit.borrow_ceiling` (the rounding of assumption 2
lives in :mod:`.borrow_limit`, below this module and the spec); none of them re-derives a rule
(the monitoring only measures use against the declared limits, and reads reach and lenders
from here when it needs them). What AWS Batch documents is followed as written; where it is
silent, the assumption is stated here once.

Choosing the other reading of assumption 1: CDK context
``quota_constructs:unownedCapacityBorrowable`` (``false``) for the constructs, summary and
agreement; ``QuotaAllocation.check(..., unowned_capacity_borrowable=False)`` in Python;
``SimulationOptions(unowned_capacity_borrowable=False)`` (``--no-unowned-borrowing``) for a
replay.

Documented (AWS Batch user guide, quota shares):
- RESERVE keeps its idle capacity, never lends and never borrows; LEND lends idle capacity and
  never borrows; LEND_AND_BORROW lends and borrows "idle capacity from other shares", at most
  ``borrowLimit`` percent of its own limit per capacity unit (-1 unlimited, 0 none).
- Idle capacity lent out is reclaimed by cross-share preemption when its owner's jobs arrive.

Assumptions (AWS is silent; the reason, and the option where a user may want the other):

1. **Capacity no share owns** (the environment lists more of a type than the shares' limits add
   up to) is borrowable by LEND_AND_BORROW shares, within their borrow limits, by default
   (``unowned_capacity_borrowable=True``). The reason: the service environment, not the
   shares, is what launches capacity; a share's limit bounds what it holds without
   borrowing, and no share owns that capacity so none can reclaim it or lose by its use. AWS
   documents borrowing "idle capacity from other shares" and says nothing of capacity no
   share owns, so it is never *guaranteed* to anyone (the synth warns about it).
   ``unowned_capacity_borrowable=False`` takes AWS's sentence literally: only other shares'
   idle capacity is borrowed, and capacity no share owns runs no job at all (every share's
   own use fits within the shares' limits).
2. **Rounding of a borrow percentage**: a share may borrow ``floor(percent × own limit / 100)``
   instances of each type. Capacity is counted in whole instances, so a fraction can never run
   a job; rounding down never promises an instance AWS might not give (50 % of one instance is
   no instance). A ``LEND_AND_BORROW`` share whose allowance rounds to 0 for a type it lists
   borrows nothing of it, and the synth warns.
3. What a share can reach is also capped by the environment less what RESERVE shares other than
   itself hold (never lent), so an over-allocated environment is not promised twice.
4. **An over-allocated environment** (the shares' limits of a type add up to more than the
   environment lists; allowed, with a warning): a share's own limit is what it may hold without
   borrowing, not capacity set aside for it. What other shares hold within their own limits is
   never taken back (cross-share preemption reclaims only borrowed capacity: AWS documents it
   as a share reclaiming "resources that it has lent to others"), so a share below its limit
   takes what the environment has idle (less what RESERVE shares keep idle) or what borrowers
   hold, and otherwise waits for capacity to free, first come, first served. What it could
   take now is :meth:`~.lending.UnitUse.idle_own`; the simulator and the emulator schedule by
   the same reading.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

# The rounding itself (assumption 2) sits one floor down, where a spec can read it too.
from .borrow_limit import borrow_allowance
from .share import QuotaShareSpec, SharingStrategy

UNOWNED = "capacity no share owns"
"""How agreements and summaries name the unowned capacity a borrower may use."""


@dataclass(frozen=True)
class UnitRules:
    """One share's rules for one instance type."""

    unit: str
    own: int
    """Its own limit (0 when it does not list the type: it cannot run jobs of it)."""
    allowance: float
    """What its borrow limit allows on top (rounded down; ``math.inf`` unlimited; 0 none)."""
    reach: int
    """The most it can ever hold: own + what it can actually borrow, within the environment
    less other RESERVE shares' limits."""
    lenders: tuple[str, ...]
    """Shares it can borrow from (empty when it can borrow nothing of this type)."""
    borrows_unowned: int
    """Instances of capacity no share owns it can borrow (0 unless assumption 1 is lifted)."""
    borrowers: tuple[str, ...] = ()
    """Shares that can borrow this share's idle capacity of this type."""
    room: int = 0
    """The most of the environment it could ever hold: the capacity jobs can use (assumption
    1) less what RESERVE shares other than itself keep (assumption 3)."""
    kept_by: tuple[tuple[str, int], ...] = ()
    """The RESERVE shares other than itself that list the type, with their limits."""

    @property
    def borrowable(self) -> int:
        """Instances it can hold above its own limit."""
        return max(0, self.reach - self.own)

    @property
    def borrows(self) -> bool:
        return self.borrowable > 0


@dataclass(frozen=True)
class BorrowingRules:
    """Per share and instance type, what it can reach and whom it borrows from or lends to.

    Built once per queue from the environment and the declared shares
    (:meth:`of`); read by everything that describes or replays borrowing.
    """

    environment: Mapping[str, int]
    unowned_capacity_borrowable: bool
    by_share: Mapping[str, Mapping[str, UnitRules]]
    owned_by_unit: Mapping[str, int] = field(default_factory=dict)
    """Per type, the shares' own limits added up."""

    @classmethod
    def of(
        cls,
        *,
        environment: Mapping[str, int],
        shares: Sequence[QuotaShareSpec],
        unowned_capacity_borrowable: bool = True,
    ) -> BorrowingRules:
        env = dict(environment)
        owned = {unit: sum(s.limit_of(unit) for s in shares) for unit in env}
        reserved = {
            unit: sum(s.limit_of(unit) for s in shares if s.strategy is SharingStrategy.RESERVE)
            for unit in env
        }
        by_share: dict[str, dict[str, UnitRules]] = {}
        for spec in shares:
            rules: dict[str, UnitRules] = {}
            for unit in env:
                own = spec.limit_of(unit)
                allowance = borrow_allowance(own, spec.borrow_limit)
                usable = cls.usable(env[unit], owned[unit], unowned_capacity_borrowable)
                others_reserved = reserved[unit] - (
                    own if spec.strategy is SharingStrategy.RESERVE else 0
                )
                room = max(0, usable - others_reserved)
                kept_by = tuple((other.name, other.limit_of(unit)) for other in shares
                                if other.name != spec.name and other.limit_of(unit) > 0
                                and other.strategy is SharingStrategy.RESERVE)
                reach = 0 if own == 0 else int(min(own + allowance, room))
                lenders: tuple[str, ...] = ()
                unowned = 0
                if reach > own:
                    lenders = tuple(
                        other.name for other in shares
                        if other.name != spec.name and other.strategy.lends
                        and other.limit_of(unit) > 0
                    )
                    if unowned_capacity_borrowable:
                        unowned = min(reach - own, max(0, env[unit] - owned[unit]))
                rules[unit] = UnitRules(unit, own, allowance, reach, lenders, unowned,
                                        room=room, kept_by=kept_by)
            by_share[spec.name] = rules
        # Lending is the mirror of borrowing: a share lends to exactly those that borrow from it.
        for spec in shares:
            for unit, rule in by_share[spec.name].items():
                borrowers = tuple(
                    other.name for other in shares
                    if spec.name in by_share[other.name][unit].lenders
                )
                by_share[spec.name][unit] = replace(rule, borrowers=borrowers)
        return cls(env, unowned_capacity_borrowable, by_share, owned)

    @staticmethod
    def usable(capacity: int, owned: int, unowned_capacity_borrowable: bool) -> int:
        """How much of an environment's ``capacity`` of a type any job can ever use: all of it
        when capacity no share owns is borrowable, else only what the shares own."""
        return capacity if unowned_capacity_borrowable else min(capacity, owned)

    def owned(self, unit: str) -> int:
        """Instances of ``unit`` the shares own (their limits added up)."""
        return self.owned_by_unit.get(unit, 0)

    def unowned(self, unit: str) -> int:
        """Instances of ``unit`` the environment lists beyond what the shares own."""
        return max(0, self.environment.get(unit, 0) - self.owned(unit))

    def usable_capacity(self, unit: str) -> int:
        """How much of ``unit`` jobs can ever use (assumption 1 decides the unowned part)."""
        return self.usable(self.environment.get(unit, 0), self.owned(unit),
                           self.unowned_capacity_borrowable)

    def unowned_usable(self, unit: str) -> int:
        """Capacity no share owns that borrowers may use (0 unless assumption 1 holds)."""
        return max(0, self.usable_capacity(unit) - self.owned(unit))

    def rules(self, share: str, unit: str) -> UnitRules:
        return self.by_share[share][unit]

    def units_of(self, share: str) -> Iterator[UnitRules]:
        """The share's rules for the types it lists, in the environment's order."""
        for rule in self.by_share[share].values():
            if rule.own > 0:
                yield rule

    def reach(self, share: str) -> dict[str, int]:
        """The most of each type it lists the share can ever hold."""
        return {rule.unit: rule.reach for rule in self.units_of(share)}

    def lenders(self, share: str) -> list[str]:
        """Every share it can borrow from, of any type, in declaration order."""
        return _union(rule.lenders for rule in self.units_of(share))

    def borrowers(self, share: str) -> list[str]:
        """Every share that can borrow from it, of any type, in declaration order."""
        return _union(rule.borrowers for rule in self.units_of(share))

    def borrows(self, share: str) -> bool:
        return any(rule.borrows for rule in self.units_of(share))

    def nothing_to_borrow(self, spec: QuotaShareSpec) -> list[UnitRules]:
        """Types a LEND_AND_BORROW share lists but can borrow none of: its allowance rounds to
        0, or nothing is there to borrow."""
        if spec.strategy is not SharingStrategy.LEND_AND_BORROW:
            return []
        return [rule for rule in self.units_of(spec.name) if not rule.borrows]

    def why_nothing_to_borrow(self, spec: QuotaShareSpec, rule: UnitRules) -> str:
        """Why ``spec`` can borrow none of ``rule``'s type (one of :meth:`nothing_to_borrow`),
        with the figures: its borrow limit allows nothing, or the environment, less what the
        RESERVE shares keep, leaves nothing beyond its own limit (whoever lends)."""
        percent = spec.borrow_limit_percent
        if rule.allowance == 0 and percent:
            return (f"borrow_limit_percent {percent} of its {rule.own} x {rule.unit} is "
                    f"{percent * rule.own / 100:g} instances, rounded down to 0 (whole "
                    "instances only)")
        if rule.allowance == 0:
            return "borrow_limit_percent is 0"
        unit = rule.unit
        capacity = self.environment.get(unit, 0)
        usable = self.usable_capacity(unit)
        what = f"the service environment's {capacity} x {unit}"
        if usable < capacity:
            what += (f", of which only the {usable} the shares own can run jobs "
                     "(unowned_capacity_borrowable=False)")
        kept = sum(limit for _, limit in rule.kept_by)
        if kept:
            reserve = [name for name, _ in rule.kept_by]
            what += (f", less the {kept} that RESERVE "
                     f"{_they(reserve, 'share', 'keeps', 'shares', 'keep')}")
        lenders = [name for name, by_unit in self.by_share.items()
                   if name != spec.name and by_unit[unit].own > 0
                   and name not in dict(rule.kept_by)]
        who = (f"although {_they(lenders, '', 'lends', '', 'lend')} it" if lenders
               else f"and no other share lends {unit}")
        return (f"{what}, leaves {rule.room}, no more than its own limit of {rule.own}: "
                f"nothing is left for it to borrow, {who}")


def _they(names: Sequence[str], noun: str, verb: str, nouns: str, verbs: str) -> str:
    """``share 'a' keeps`` / ``shares 'a', 'b' keep``."""
    quoted = ", ".join(repr(name) for name in names)
    one = len(names) == 1
    return " ".join(part for part in ((noun if one else nouns), quoted, verb if one else verbs)
                    if part)


def _union(groups: Iterator[tuple[str, ...]]) -> list[str]:
    seen: dict[str, None] = {}
    for group in groups:
        for name in group:
            seen.setdefault(name, None)
    return list(seen)
