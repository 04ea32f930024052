"""Quota-share declarations the tests deploy."""

from __future__ import annotations

from collections.abc import Mapping

from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy

G5 = "ml.g5.xlarge"
G5_2X = "ml.g5.2xlarge"


def share_spec(
    name: str = "team-a",
    limits: Mapping[str, int] | None = None,
    strategy: SharingStrategy = SharingStrategy.LEND_AND_BORROW,
    borrow: int | None = 100,
    *,
    in_share_preemption: bool = False,
    enabled: bool = True,
    tags: Mapping[str, str] | None = None,
) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name,
        capacity_limits=[CapacityLimit(u, n) for u, n in (limits or {G5: 4}).items()],
        strategy=strategy,
        borrow_limit_percent=borrow if strategy is SharingStrategy.LEND_AND_BORROW else None,
        in_share_preemption=in_share_preemption,
        enabled=enabled,
        tags=dict(tags or {"team": "a"}),
    )
