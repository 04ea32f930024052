"""What the user rules out: a :class:`Pin` per share, checked against the declaration."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ...model import QuotaConfigError, QuotaShareSpec


@dataclass(frozen=True)
class Pin:
    """What the search must leave alone for one share.

    ``strategy``: keep its strategy and borrow limit; ``limits``: keep its capacity limits;
    ``minimum``: guarantee at least this many of each instance type (e.g. ``{"ml.g5.xlarge":
    2}``)."""

    share: str
    strategy: bool = False
    limits: bool = False
    minimum: Mapping[str, int] = field(default_factory=dict)


def pins_by_share(shares: Sequence[QuotaShareSpec], pins: Iterable[Pin]) -> dict[str, Pin]:
    """Each pin under its share's name; QuotaConfigError for a pin naming no declared share,
    or a minimum of a type the share does not list or below 1. Whether the environment can
    honour the minimums is checked later (:meth:`.space.SearchSpace.check_pins`)."""
    names = {spec.name: spec for spec in shares}
    found: dict[str, Pin] = {}
    for pin in pins:
        if pin.share not in names:
            raise QuotaConfigError(f"pin for {pin.share!r}", "share", pin.share,
                                   "one of the declared shares: " + ", ".join(sorted(names)))
        for unit, count in pin.minimum.items():
            listed = [str(limit.unit) for limit in names[pin.share].capacity_limits]
            if unit not in listed:
                raise QuotaConfigError(f"pin for {pin.share!r}", "minimum", unit,
                                       "an instance type the share lists: " + ", ".join(listed))
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise QuotaConfigError(f"pin for {pin.share!r}", f"minimum[{unit}]", count,
                                       "an integer >= 1")
        found[pin.share] = pin
    return found
