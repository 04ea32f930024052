"""A quota share's configuration in one comparable form, whether declared or read from Batch,
and its one rendering as fields in either casing AWS uses.

CloudFormation's ``AWS::Batch::QuotaShare`` properties and the Batch API's request and answer
carry the same configuration fields, PascalCase in one and camelCase in the other
(``capacityLimits`` / ``CapacityLimits``): :data:`CONFIGURATION_FIELDS` names them once and
:class:`Casing` spells them. "Unlimited borrow" is ``borrowLimit`` -1 on the wire and
``borrow_limit_percent=None`` in a spec: :func:`borrow_limit_percent` reads it and
:attr:`QuotaShareSpec.borrow_limit <quota_constructs.model.share.QuotaShareSpec.borrow_limit>`
writes it, nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from quota_constructs.model.borrow_limit import UNLIMITED_BORROW, borrow_ceiling
from quota_constructs.model.capacity import CapacityLimit
from quota_constructs.model.share import QuotaShareSpec, SharingStrategy

ENABLED: Final = "ENABLED"
DISABLED: Final = "DISABLED"
BORROWING_STRATEGY: Final = SharingStrategy.LEND_AND_BORROW.value


class Casing(Enum):
    """How a field name is spelled: the Batch API's camelCase or CloudFormation's PascalCase."""

    API = "api"
    CLOUDFORMATION = "cloudformation"

    def key(self, field: str) -> str:
        """``field`` (as the API spells it) in this casing."""
        return field if self is Casing.API else field[:1].upper() + field[1:]


CONFIGURATION_FIELDS: Final = (
    "capacityLimits", "resourceSharingConfiguration", "preemptionConfiguration", "state",
)
"""The fields CreateQuotaShare, UpdateQuotaShare, DescribeQuotaShare and the resource's
properties share (in this order, the order templates have always had)."""


def recased(fields: Mapping[str, Any], casing: Casing) -> dict[str, Any]:
    """Configuration fields as the API spells them (a request's), spelled in ``casing``; only
    the :data:`CONFIGURATION_FIELDS` given are kept."""

    def spelled(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {casing.key(str(key)): spelled(item) for key, item in value.items()}
        if isinstance(value, list):
            return [spelled(item) for item in value]
        return value

    return {casing.key(name): spelled(fields[name]) for name in CONFIGURATION_FIELDS
            if name in fields}


def switch(on: bool) -> str:
    return ENABLED if on else DISABLED


def borrow_limit_percent(strategy: str, borrow_limit: int | None) -> int | None:
    """A spec's ``borrow_limit_percent`` for AWS's ``borrowLimit`` (-1, unlimited, is None)."""
    if borrow_limit == UNLIMITED_BORROW and strategy == BORROWING_STRATEGY:
        return None
    return borrow_limit


@dataclass(frozen=True)
class ShareConfig:
    """Limits per unit, strategy, borrow limit (-1 unlimited; None unless borrowing), switches."""

    limits: Mapping[str, int]
    strategy: str
    borrow_limit: int | None
    in_share_preemption: str
    state: str

    @classmethod
    def declared(cls, spec: QuotaShareSpec) -> ShareConfig:
        return cls(
            limits={str(limit.capacity_unit): limit.max_capacity
                    for limit in spec.capacity_limits},
            strategy=spec.strategy.value,
            borrow_limit=spec.borrow_limit,
            in_share_preemption=switch(spec.in_share_preemption),
            state=switch(spec.enabled),
        )

    @classmethod
    def from_api(cls, fields: Mapping[str, Any]) -> ShareConfig:
        """Normalise DescribeQuotaShare / ListQuotaShares fields (absent values take defaults)."""
        limits = {
            str(item.get("capacityUnit")): int(item.get("maxCapacity", 0))
            for item in fields.get("capacityLimits") or []
        }
        sharing = fields.get("resourceSharingConfiguration") or {}
        strategy = str(sharing.get("strategy", ""))
        borrow: int | None = None
        if strategy == BORROWING_STRATEGY:
            raw = sharing.get("borrowLimit")
            borrow = UNLIMITED_BORROW if raw is None else int(raw)
        preemption = fields.get("preemptionConfiguration") or {}
        return cls(
            limits=limits,
            strategy=strategy,
            borrow_limit=borrow,
            in_share_preemption=str(preemption.get("inSharePreemption", DISABLED)),
            state=str(fields.get("state", ENABLED)),
        )

    def spec(self, name: str, tags: Mapping[str, str] | None = None) -> QuotaShareSpec:
        """The model's view of this configuration for the share called ``name``."""
        return QuotaShareSpec(
            name=name,
            capacity_limits=[CapacityLimit(unit, count) for unit, count in self.limits.items()],
            strategy=self.strategy,  # type: ignore[arg-type]
            borrow_limit_percent=borrow_limit_percent(self.strategy, self.borrow_limit),
            in_share_preemption=self.in_share_preemption == ENABLED,
            enabled=self.state == ENABLED,
            tags=dict(tags or {}),
        )

    def fields(self, casing: Casing = Casing.API,
               only: frozenset[str] = frozenset(CONFIGURATION_FIELDS)) -> dict[str, Any]:
        """This configuration as request fields (or resource properties) in ``casing``;
        ``only`` the given :data:`CONFIGURATION_FIELDS`."""
        key = casing.key
        sharing: dict[str, Any] = {key("strategy"): self.strategy}
        if self.borrow_limit is not None:
            # 0 means "never borrow" and must be sent; only "cannot borrow" leaves it out.
            sharing[key("borrowLimit")] = self.borrow_limit
        values: dict[str, Any] = {
            "capacityLimits": [
                {key("capacityUnit"): unit, key("maxCapacity"): count}
                for unit, count in self.limits.items()
            ],
            "resourceSharingConfiguration": sharing,
            "preemptionConfiguration": {key("inSharePreemption"): self.in_share_preemption},
            "state": self.state,
        }
        return {key(name): values[name] for name in CONFIGURATION_FIELDS if name in only}

    def api_fields(self) -> dict[str, Any]:
        """This whole configuration as UpdateQuotaShare fields."""
        return self.fields(Casing.API)

    def update_fields(self, target: ShareConfig) -> dict[str, Any]:
        """The UpdateQuotaShare fields that turn this configuration into ``target``."""
        changed = {
            "capacityLimits": dict(self.limits) != dict(target.limits),
            "resourceSharingConfiguration":
                (self.strategy, self.borrow_limit) != (target.strategy, target.borrow_limit),
            "preemptionConfiguration": self.in_share_preemption != target.in_share_preemption,
            "state": self.state != target.state,
        }
        return target.fields(only=frozenset(name for name, differs in changed.items() if differs))

    def limit_of(self, unit: str) -> int:
        return self.limits.get(unit, 0)

    def ceiling_of(self, unit: str) -> float:
        """The most of ``unit`` the share may use: own limit plus what it may borrow, rounded
        as the model rounds it (:func:`~quota_constructs.model.borrow_limit.borrow_ceiling`)."""
        return borrow_ceiling(self.limit_of(unit), self.borrow_limit)

    def shows(self, fields: Mapping[str, Any]) -> bool:
        """True when this configuration already has every value UpdateQuotaShare ``fields`` set."""
        return ShareConfig.from_api({**self.api_fields(), **fields}) == self

    def describe(self, only: Iterable[str] = CONFIGURATION_FIELDS) -> str:
        """How a person would read this configuration (``only`` the given
        :data:`CONFIGURATION_FIELDS`) in an error message."""
        parts = {
            "capacityLimits": "capacity limits [" + ", ".join(
                f"{unit}: {count}" for unit, count in self.limits.items()) + "]",
            "resourceSharingConfiguration": f"strategy {self.strategy}" + (
                "" if self.borrow_limit is None else ", borrow limit " + (
                    "unlimited" if self.borrow_limit == UNLIMITED_BORROW
                    else f"{self.borrow_limit}%")),
            "preemptionConfiguration": f"in-share preemption {self.in_share_preemption}",
            "state": f"state {self.state}",
        }
        wanted = set(only)
        return ", ".join(parts[name] for name in CONFIGURATION_FIELDS if name in wanted)
