"""A declaration as Python code to paste (and to diff against today's)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from datetime import timedelta

from ..model import CapacityLimit, QuotaShareSpec, ShareAgreement


def declaration_code(
    capacity_limits: Sequence[CapacityLimit], shares: Sequence[QuotaShareSpec]
) -> str:
    """Python source defining ``CAPACITY_LIMITS`` and ``SHARES`` (runs as it is)."""
    uses_timedelta = any(
        isinstance(spec.agreement.target_wait_p95, timedelta)
        for spec in shares if spec.agreement is not None
    )
    lines = []
    if uses_timedelta:
        lines.append("from datetime import timedelta")
        lines.append("")
    lines += [
        "from quota_constructs import (",
        "    CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy,",
        ")",
        "",
        "CAPACITY_LIMITS = [",
        *(f"    CapacityLimit({str(c.unit)!r}, {c.max_capacity})," for c in capacity_limits),
        "]",
        "",
        "SHARES = [",
    ]
    for spec in shares:
        lines += ["    QuotaShareSpec(", f"        name={spec.name!r},",
                  "        capacity_limits=["]
        lines += [f"            CapacityLimit({str(c.unit)!r}, {c.max_capacity}),"
                  for c in spec.capacity_limits]
        lines += ["        ],", f"        strategy=SharingStrategy.{spec.strategy.name},"]
        if spec.strategy.borrows:
            lines.append(f"        borrow_limit_percent={spec.borrow_limit_percent!r},"
                         + ("  # None = unlimited" if spec.borrow_limit_percent is None else ""))
        lines.append(f"        in_share_preemption={spec.in_share_preemption!r},")
        if not spec.enabled:
            lines.append("        enabled=False,")
        if spec.tags:
            lines.append(f"        tags={dict(spec.tags)!r},")
        if spec.agreement is not None:
            lines.append(f"        agreement={_agreement(spec.agreement)},")
        lines.append("    ),")
    lines.append("]")
    return "\n".join(lines) + "\n"


def _agreement(agreement: ShareAgreement) -> str:
    parts = [f"owner={agreement.owner!r}"]
    if agreement.purpose:
        parts.append(f"purpose={agreement.purpose!r}")
    if agreement.recoverable:
        parts.append("recoverable=True")
    if agreement.interruption_budget is not None:
        parts.append(f"interruption_budget={agreement.interruption_budget!r}")
    target = agreement.target_wait_p95
    if isinstance(target, timedelta):
        parts.append(f"target_wait_p95=timedelta(seconds={target.total_seconds()!r})")
    elif target is not None:
        parts.append(f"target_wait_p95={target!r}")
    if agreement.max_budget_failures is not None:
        parts.append(f"max_budget_failures={agreement.max_budget_failures!r}")
    return "ShareAgreement(" + ", ".join(parts) + ")"


def declaration_diff(today: str, recommended: str) -> str:
    """A unified diff of two declarations' code ("" when they are the same)."""
    return "".join(difflib.unified_diff(
        today.splitlines(keepends=True), recommended.splitlines(keepends=True),
        fromfile="today.py", tofile="recommended.py",
    ))
