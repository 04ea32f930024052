"""One quota share: a team's slice of the queue's capacity and how it shares idle capacity."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from .agreement import ShareAgreement, validate_agreement
from .borrow_limit import UNLIMITED_BORROW, borrow_ceiling
from .capacity import CapacityLimit, CapacityUnit, validate_capacity_limits
from .errors import QuotaConfigError
from .tags import validate_tags
from .tokens import is_unresolved

SHARE_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,128}")


class SharingStrategy(StrEnum):
    """What a share does with capacity it is not using, and whether it may use more."""

    RESERVE = "RESERVE"
    """Idle capacity stays with the share: it never lends and never borrows."""
    LEND = "LEND"
    """Idle capacity is lent to other shares (and reclaimed by preemption); never borrows."""
    LEND_AND_BORROW = "LEND_AND_BORROW"
    """Lends idle capacity and borrows others' idle capacity up to the borrow limit."""

    @property
    def lends(self) -> bool:
        return self is not SharingStrategy.RESERVE

    @property
    def borrows(self) -> bool:
        return self is SharingStrategy.LEND_AND_BORROW


def share_subject(name: object) -> str:
    return f"quota share {name!r}"


def check_share_name(name: object, *, subject: str, field: str = "name") -> None:
    if is_unresolved(name):
        return
    if not isinstance(name, str) or not SHARE_NAME_PATTERN.fullmatch(name):
        raise QuotaConfigError(
            subject, field, name, "1 to 128 characters of letters, digits, '-' and '_'"
        )


@dataclass(frozen=True, kw_only=True)
class QuotaShareSpec:
    """The declaration of one quota share, validated when it is built.

    ``borrow_limit_percent`` is only for ``LEND_AND_BORROW``: ``None`` borrows without limit
    (sent to AWS Batch as -1), ``0`` never borrows (sent as 0), any other value caps borrowing
    at that percentage of the share's own limit for each unit (200 = up to twice as much).

    ``agreement`` (optional) says who owns the share, why, and what its jobs accept (see
    :class:`ShareAgreement`). It is for people and for the monitoring: AWS Batch never receives
    it, and adding or changing it changes nothing the share does.
    """

    name: str
    capacity_limits: Sequence[CapacityLimit]
    strategy: SharingStrategy
    borrow_limit_percent: int | None = None
    in_share_preemption: bool = False
    enabled: bool = True
    tags: Mapping[str, str] = field(default_factory=dict)
    agreement: ShareAgreement | None = None

    def __post_init__(self) -> None:
        subject = share_subject(self.name)
        check_share_name(self.name, subject=subject)
        strategy = self.strategy
        if not isinstance(strategy, SharingStrategy):
            try:
                strategy = SharingStrategy(strategy)
            except ValueError:
                raise QuotaConfigError(
                    subject, "strategy", strategy, _one_of(m.value for m in SharingStrategy)
                ) from None
            object.__setattr__(self, "strategy", strategy)
        limits = validate_capacity_limits(self.capacity_limits, subject=subject)
        object.__setattr__(self, "capacity_limits", limits)
        if self.borrow_limit_percent is not None:
            if not strategy.borrows:
                raise QuotaConfigError(
                    subject,
                    "borrow_limit_percent",
                    self.borrow_limit_percent,
                    f"only with strategy LEND_AND_BORROW (strategy is {strategy.value}); "
                    "leave it None",
                )
            _check_borrow_limit_percent(self.borrow_limit_percent, subject=subject)
        for flag in ("in_share_preemption", "enabled"):
            if not isinstance(getattr(self, flag), bool):
                raise QuotaConfigError(subject, flag, getattr(self, flag), "True or False")
        object.__setattr__(self, "tags", validate_tags(self.tags, subject=subject))
        validate_agreement(self.agreement, subject=subject)

    @property
    def borrow_limit(self) -> int | None:
        """The ``borrowLimit`` AWS Batch receives; None when the strategy cannot borrow."""
        if not self.strategy.borrows:
            return None
        return UNLIMITED_BORROW if self.borrow_limit_percent is None else self.borrow_limit_percent

    @property
    def units(self) -> tuple[CapacityUnit, ...]:
        return tuple(CapacityUnit._known(str(limit.unit)) for limit in self.capacity_limits)

    def limit_of(self, unit: str) -> int:
        """The share's own limit for ``unit`` (0 when it does not list it)."""
        for limit in self.capacity_limits:
            if limit.unit == unit:
                return limit.max_capacity
        return 0

    def ceiling_of(self, unit: str) -> float:
        """Most of ``unit`` its borrow limit lets the share use: its own limit plus
        ``floor(percent × limit / 100)`` (see :mod:`quota_constructs.model.borrow_limit`)."""
        return borrow_ceiling(self.limit_of(unit), self.borrow_limit)


BORROW_LIMIT_ALLOWED = (
    "a whole percentage >= 0 of the share's own limit it may borrow on top, e.g. 50 (half "
    "its limit again) or 200 (twice its limit); None borrows without limit, 0 never borrows"
)


def _check_borrow_limit_percent(value: object, *, subject: str) -> None:
    """A whole percentage; the two likely mix-ups (AWS Batch's -1 for unlimited, a fraction
    for a percentage) are named in the message."""
    if is_unresolved(value):
        return
    valid = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if valid:
        return
    hint = ""
    if value == UNLIMITED_BORROW and not isinstance(value, bool):
        hint = "None, not -1, means unlimited here (the library sends AWS Batch its -1); "
    elif isinstance(value, float) and 0 < value < 1:
        hint = f"it is a percentage, not a fraction: {round(value * 100)} for {value}; "
    raise QuotaConfigError(subject, "borrow_limit_percent", value, hint + BORROW_LIMIT_ALLOWED)


def _one_of(values: object) -> str:
    return "one of " + ", ".join(str(v) for v in values)  # type: ignore[attr-defined]
