"""A quota share's configuration in one comparable form, whether declared or read from Batch."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.model import UNLIMITED_BORROW, QuotaShareSpec, api_configuration
from quota_constructs.model.borrow_limit import borrow_ceiling

BORROWING_STRATEGY = "LEND_AND_BORROW"


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
        return cls.from_api(api_configuration(spec))

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
            in_share_preemption=str(preemption.get("inSharePreemption", "DISABLED")),
            state=str(fields.get("state", "ENABLED")),
        )

    def limit_of(self, unit: str) -> int:
        return self.limits.get(unit, 0)

    def ceiling_of(self, unit: str) -> float:
        """The most of ``unit`` the share may use: own limit plus what it may borrow, rounded
        as the model rounds it (:func:`~quota_constructs.model.borrow_limit.borrow_ceiling`)."""
        return borrow_ceiling(self.limit_of(unit), self.borrow_limit)

    def update_fields(self, target: ShareConfig) -> dict[str, Any]:
        """The UpdateQuotaShare fields that turn this configuration into ``target``."""
        fields: dict[str, Any] = {}
        if dict(self.limits) != dict(target.limits):
            fields["capacityLimits"] = [
                {"capacityUnit": unit, "maxCapacity": count}
                for unit, count in target.limits.items()
            ]
        if (self.strategy, self.borrow_limit) != (target.strategy, target.borrow_limit):
            sharing: dict[str, Any] = {"strategy": target.strategy}
            if target.borrow_limit is not None:
                # 0 (never borrow) is sent as 0; only "cannot borrow" leaves it out.
                sharing["borrowLimit"] = target.borrow_limit
            fields["resourceSharingConfiguration"] = sharing
        if self.in_share_preemption != target.in_share_preemption:
            fields["preemptionConfiguration"] = {"inSharePreemption": target.in_share_preemption}
        if self.state != target.state:
            fields["state"] = target.state
        return fields

    def api_fields(self) -> dict[str, Any]:
        """This whole configuration as UpdateQuotaShare fields."""
        sharing: dict[str, Any] = {"strategy": self.strategy}
        if self.borrow_limit is not None:
            sharing["borrowLimit"] = self.borrow_limit
        return {
            "capacityLimits": [
                {"capacityUnit": unit, "maxCapacity": count} for unit, count in self.limits.items()
            ],
            "resourceSharingConfiguration": sharing,
            "preemptionConfiguration": {"inSharePreemption": self.in_share_preemption},
            "state": self.state,
        }

    def shows(self, fields: Mapping[str, Any]) -> bool:
        """True when this configuration already has every value UpdateQuotaShare ``fields`` set."""
        return ShareConfig.from_api({**self.api_fields(), **fields}) == self

    def describe(self) -> str:
        """How a person would read this configuration in an error message."""
        limits = ", ".join(f"{unit}: {count}" for unit, count in self.limits.items())
        text = f"capacity limits [{limits}], strategy {self.strategy}"
        if self.borrow_limit is not None:
            unlimited = self.borrow_limit == UNLIMITED_BORROW
            borrow = "unlimited" if unlimited else f"{self.borrow_limit}%"
            text += f", borrow limit {borrow}"
        return text + f", in-share preemption {self.in_share_preemption}, state {self.state}"
