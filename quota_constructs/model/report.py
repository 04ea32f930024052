"""A plain-text summary of how a queue's capacity is divided, for people reading a synth."""

from __future__ import annotations

from .borrowing import UNOWNED
from .queue import QuotaAllocation
from .share import QuotaShareSpec


def describe_borrow_limit(spec: QuotaShareSpec) -> str:
    if spec.borrow_limit is None:
        return "n/a"
    if spec.borrow_limit_percent is None:
        return "unlimited"
    return f"{spec.borrow_limit_percent}%"


def allocation_summary(allocation: QuotaAllocation, *, title: str) -> list[str]:
    """One header line for the environment, then one line per share."""
    environment = ", ".join(
        f"{limit.max_capacity} x {limit.capacity_unit}" for limit in allocation.environment_limits
    )
    lines = [f"{title}: service environment {environment}"]
    width = max((len(spec.name) for spec in allocation.shares), default=0)
    for spec in allocation.shares:
        limits = ", ".join(
            f"{limit.max_capacity} x {limit.capacity_unit}" for limit in spec.capacity_limits
        )
        rules = allocation.rules
        reach = ", ".join(f"{count} x {unit}" for unit, count in rules.reach(spec.name).items())
        line = (
            f"  {spec.name:<{width}}  limit {limits}; {spec.strategy.value}; "
            f"borrow {describe_borrow_limit(spec)}; "
            f"in-share preemption {'on' if spec.in_share_preemption else 'off'}; "
            f"{'enabled' if spec.enabled else 'DISABLED'}; can reach {reach}"
        )
        sources = [*rules.lenders(spec.name)]
        if any(rule.borrows_unowned for rule in rules.units_of(spec.name)):
            sources.append(UNOWNED)
        if sources:
            line += f"; borrows from {', '.join(sources)}"
        if borrowers := rules.borrowers(spec.name):
            line += f"; lends to {', '.join(borrowers)}"
        lines.append(line)
    lines.extend(f"  warning: {warning}" for warning in allocation.all_warnings)
    return lines
