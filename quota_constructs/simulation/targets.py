"""Service targets: what a share needs from an allocation, and whether a replay meets it.

A share's targets come from its agreement (``ShareAgreement(target_wait_p95=...,
max_budget_failures=...)``); :func:`targets_of` reads them, and ``overrides`` (e.g. the
command line's ``--target vision:wait_p95<=4h``) replace a share's targets field by field.

A target is met by a replay when the share's 95th-percentile wait (submission to first start,
the simulator's ``ShareFigures.wait_p95``) is at most ``wait_p95`` and at most
``max_budget_failures`` of its jobs failed because they were preempted more often than their
preemption budget allowed. A share with jobs the arrangement can never run misses a wait
target: those jobs would wait forever.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from ..model import QuotaConfigError, QuotaShareSpec
from .durations import human_duration
from .results import ShareFigures

_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(s|sec|m|min|h|d)?\s*", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_TARGET = re.compile(r"(?P<share>[^:]+):(?P<what>wait_p95|budget_failures)\s*<=\s*(?P<value>.+)")
TARGET_SYNTAX = "SHARE:wait_p95<=DURATION (e.g. vision:wait_p95<=4h) or SHARE:budget_failures<=N"


@dataclass(frozen=True, slots=True)
class ServiceTarget:
    """One share's targets (seconds; None = no such target)."""

    share: str
    wait_p95: float | None = None
    max_budget_failures: int | None = None

    def describe(self) -> str:
        parts = []
        if self.wait_p95 is not None:
            parts.append(f"wait p95 <= {human_duration(self.wait_p95)}")
        if self.max_budget_failures is not None:
            parts.append(f"jobs lost to a preemption budget <= {self.max_budget_failures}")
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    """How one replay fared against one share's targets."""

    share: str
    target: ServiceTarget
    wait_p95: float | None
    budget_failures: int
    jobs: int

    @property
    def wait_met(self) -> bool:
        if self.target.wait_p95 is None:
            return True
        return self.wait_p95 is None or self.wait_p95 <= self.target.wait_p95

    @property
    def failures_met(self) -> bool:
        limit = self.target.max_budget_failures
        return limit is None or self.budget_failures <= limit

    @property
    def met(self) -> bool:
        return self.wait_met and self.failures_met

    def describe(self) -> str:
        parts = []
        if self.target.wait_p95 is not None:
            shown = "no jobs" if self.wait_p95 is None else (
                "never starts" if math.isinf(self.wait_p95) else human_duration(self.wait_p95)
            )
            parts.append(f"wait p95 {shown} (target {human_duration(self.target.wait_p95)}: "
                         f"{'met' if self.wait_met else 'missed'})")
        if self.target.max_budget_failures is not None:
            parts.append(f"{self.budget_failures} lost to a preemption budget (target <= "
                         f"{self.target.max_budget_failures}: "
                         f"{'met' if self.failures_met else 'missed'})")
        return "; ".join(parts)

    def as_json(self) -> dict[str, object]:
        return {
            "share": self.share,
            "met": self.met,
            "wait_p95_seconds": None if self.wait_p95 is None or math.isinf(self.wait_p95)
            else self.wait_p95,
            "never_starts": self.wait_p95 is not None and math.isinf(self.wait_p95),
            "target_wait_p95_seconds": self.target.wait_p95,
            "budget_failures": self.budget_failures,
            "target_max_budget_failures": self.target.max_budget_failures,
            "jobs": self.jobs,
        }


def targets_of(
    shares: Sequence[QuotaShareSpec], overrides: Iterable[ServiceTarget] = ()
) -> dict[str, ServiceTarget]:
    """Every share's targets (agreement first, then ``overrides`` field by field), by name;
    shares without any target are left out."""
    names = {spec.name for spec in shares}
    found: dict[str, ServiceTarget] = {}
    for spec in shares:
        agreement = spec.agreement
        if agreement is not None and agreement.has_targets:
            found[spec.name] = ServiceTarget(
                spec.name, agreement.target_wait_p95_seconds, agreement.max_budget_failures
            )
    for target in overrides:
        if target.share not in names:
            raise QuotaConfigError(
                f"target for {target.share!r}", "share", target.share,
                "one of the declared shares: " + ", ".join(sorted(names)),
            )
        before = found.get(target.share, ServiceTarget(target.share))
        found[target.share] = ServiceTarget(
            target.share,
            target.wait_p95 if target.wait_p95 is not None else before.wait_p95,
            target.max_budget_failures if target.max_budget_failures is not None
            else before.max_budget_failures,
        )
    return {spec.name: found[spec.name] for spec in shares if spec.name in found}


def outcome(target: ServiceTarget, figures: ShareFigures | None) -> TargetOutcome:
    if figures is None:
        return TargetOutcome(target.share, target, None, 0, 0)
    wait = math.inf if figures.not_runnable else figures.wait_p95
    return TargetOutcome(
        target.share, target, wait, figures.failed_preemption_budget, figures.jobs
    )


def outcomes(
    targets: Mapping[str, ServiceTarget], figures: Mapping[str, ShareFigures]
) -> list[TargetOutcome]:
    return [outcome(target, figures.get(name)) for name, target in targets.items()]


def parse_duration(text: str) -> float:
    """``4h``, ``30min``, ``90s``, ``2d`` or plain seconds -> seconds (> 0)."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(text)
    seconds = float(match.group(1)) * _UNIT_SECONDS[(match.group(2) or "s").lower()]
    if seconds <= 0:
        raise ValueError(text)
    return seconds


def parse_target(text: str) -> ServiceTarget:
    """``vision:wait_p95<=4h`` or ``vision:budget_failures<=0`` (QuotaConfigError otherwise)."""
    match = _TARGET.fullmatch(text.strip())
    if match is None:
        raise QuotaConfigError("recommend", "--target", text, TARGET_SYNTAX)
    share, what, value = match.group("share").strip(), match.group("what"), match.group("value")
    try:
        if what == "wait_p95":
            return ServiceTarget(share, wait_p95=parse_duration(value))
        count = int(value.strip())
        if count < 0:
            raise ValueError(value)
        return ServiceTarget(share, max_budget_failures=count)
    except ValueError:
        raise QuotaConfigError("recommend", "--target", text, TARGET_SYNTAX) from None


def as_timedelta(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)
