"""What :func:`~.search.recommend` answers: the :class:`Recommendation`, and per share what
the change costs its jobs."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model import CapacityLimit, QuotaShareSpec
from ..targets import ServiceTarget, TargetOutcome
from .contract import Trade
from .holdout import HoldoutCheck
from .tasks import Demand, ShareScore


@dataclass(frozen=True)
class ShareCost:
    """What one share's jobs suffered in the replays of today's and the recommended
    declaration (the searched history): preemptions and jobs lost to their interruption
    budget. ``change`` says what the recommendation changes for this share ("" when
    nothing); a change to one share's strategy can cost another share's jobs."""

    share: str
    change: str
    today: ShareScore | None
    recommended: ShareScore | None

    @property
    def strategy_changed(self) -> bool:
        return "strategy" in self.change


def describe_change(was: QuotaShareSpec, now: QuotaShareSpec) -> str:
    """``strategy RESERVE -> LEND; ml.g5.xlarge 2 -> 3`` ("" when nothing changes)."""
    parts = []
    if (was.strategy, was.borrow_limit_percent) != (now.strategy, now.borrow_limit_percent):
        def strategy(spec: QuotaShareSpec) -> str:
            if not spec.strategy.borrows:
                return spec.strategy.value
            limit = ("unlimited" if spec.borrow_limit_percent is None
                     else f"{spec.borrow_limit_percent} %")
            return f"{spec.strategy.value} (borrow limit {limit})"
        parts.append(f"strategy {strategy(was)} → {strategy(now)}")
    for limit in was.capacity_limits:
        before, after = limit.max_capacity, now.limit_of(limit.unit)
        if before != after:
            parts.append(f"{limit.unit} {before} → {after}")
    return "; ".join(parts)


@dataclass(frozen=True)
class Recommendation:
    capacity_limits: tuple[CapacityLimit, ...]
    today: tuple[QuotaShareSpec, ...]
    shares: list[QuotaShareSpec]
    meets_targets: bool
    unmet: list[str]
    reasons: dict[str, str]
    """Why each share in ``unmet`` misses (e.g. its demand alone exceeds the environment)."""
    targets: dict[str, ServiceTarget]
    today_outcomes: list[TargetOutcome]
    outcomes: list[TargetOutcome]
    change: int
    """Instances moved plus strategies and borrow limits changed, against today."""
    environment_needed: dict[str, int]
    """Per type, an environment sufficient for every target (a RESERVE partition at each
    share's demand); compare with ``capacity_limits`` to shrink or grow."""
    environment_needed_verified: bool
    """True when a replay on that environment met every target."""
    environment_basis: str
    """How ``environment_needed`` was found (the recommendation scaled, or the partition)."""
    environment_shares: list[QuotaShareSpec]
    """A declaration meeting every target on ``environment_needed`` (empty when none was
    confirmed)."""
    environment_reasons: dict[str, str]
    """Per instance type advised to grow or shrink, why."""
    demand: list[Demand]
    costs: list[ShareCost]
    """Per share, preemptions and budget failures today and under the recommendation."""
    holdout: HoldoutCheck | None
    searched_jobs: int
    simulations: int
    """Replays run (full and single-share ones)."""
    jobs_simulated: int
    seconds: float
    trades: list[Trade] = field(default_factory=list)
    """Each line of a share's agreement the recommendation gives up (:mod:`.contract`): only
    those of shares the user let it trade (``allow_trades``), unless no allocation keeps
    them (then ``meets_targets`` is false)."""
    environment_trades: list[Trade] = field(default_factory=list)
    """The same for ``environment_shares`` on ``environment_needed``."""
    replays: dict[str, int] = field(default_factory=dict)
    """``simulations`` by what the search ran them for."""
    replayed_jobs: dict[str, int] = field(default_factory=dict)
    """``jobs_simulated`` by what the search ran them for."""
    reused_replays: int = 0
    """Replays the search asked for again and read from an earlier one instead of running."""

    def environment_change(self) -> dict[str, int]:
        """Per type, ``environment_needed`` minus today's (negative: could shrink)."""
        return {
            str(limit.unit): self.environment_needed.get(str(limit.unit), 0) - limit.max_capacity
            for limit in self.capacity_limits
        }
