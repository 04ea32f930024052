"""A declaration as Python code to paste (and to diff against today's), which every command
loads as it is: ``--declaration recommended.py:DECLARATION``."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import fields
from datetime import timedelta
from typing import Any

from ..model import CapacityLimit, QuotaShareSpec, ShareAgreement

DECLARATION = "DECLARATION"
"""The name the written code gives the whole declaration (the commands' one shape)."""


def declaration_code(
    capacity_limits: Sequence[CapacityLimit], shares: Sequence[QuotaShareSpec],
    *, queue_name: str | None = None, lifecycles: Mapping[str, Any] | None = None,
    provisioning: str | None = None,
) -> str:
    """Python source defining ``CAPACITY_LIMITS``, ``SHARES`` and :data:`DECLARATION`, the
    declaration every command loads (``--declaration FILE.py:DECLARATION``), with the queue
    name, each share's lifecycle switches (only those switched on: dataclass instances such
    as ``GuardOptIns``) and the provisioning carried over where given (runs as it is)."""
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
    lines += ["", *_declaration(queue_name, lifecycles or {}, provisioning)]
    return "\n".join(lines) + "\n"


def _declaration(
    queue_name: str | None, lifecycles: Mapping[str, Any], provisioning: str | None
) -> list[str]:
    """``DECLARATION = {...}``: the shape ``quota_constructs.cli.declarations`` reads."""
    lines = [f"{DECLARATION} = {{", '    "capacity_limits": CAPACITY_LIMITS,',
             '    "shares": SHARES,']
    if queue_name is not None:
        lines.append(f'    "queue_name": {queue_name!r},')
    switched = {name: {f.name: True for f in fields(opt_ins) if getattr(opt_ins, f.name) is True}
                for name, opt_ins in lifecycles.items()}
    switched = {name: on for name, on in switched.items() if on}
    if switched:
        lines.append('    "lifecycle_by_share": {')
        lines += [f"        {name!r}: {on!r}," for name, on in switched.items()]
        lines.append("    },")
    if provisioning is not None:
        lines.append(f'    "provisioning": {provisioning!r},')
    lines.append("}")
    return lines


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
