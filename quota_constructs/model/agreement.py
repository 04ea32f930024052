"""The agreement behind a quota share: who owns it, why, and what its jobs accept.

AWS Batch knows a share's limits and strategy but not whose it is or what its borrowing jobs
signed up for. The agreement makes that explicit next to the spec: the monitoring tells the
owner when the share's jobs are preempted or starved, and the allocation agreement rendered for
people states it. AWS never sees it; it changes nothing a share does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from .capacity import check_count
from .errors import QuotaConfigError
from .tokens import is_unresolved

MAX_OWNER_LENGTH = 256
MAX_PURPOSE_LENGTH = 1024


@dataclass(frozen=True, kw_only=True)
class ShareAgreement:
    """What a quota share is for and what its jobs accept.

    Checked where it is used (``QuotaShareSpec(agreement=...)``), so that an error can name the
    share it belongs to.

    ``owner`` is a name people recognise (a team, a person, an on-call rotation); the monitoring
    routes the share's notifications and alarms to the topic given for that owner.
    ``recoverable`` says the share's workloads checkpoint, so a preemption costs little.
    ``interruption_budget`` is the most preemptions one job of the share may suffer: ``None``
    (the default, as in AWS) means unlimited, ``0`` means not one. A job past its budget is
    reported to the owner, and terminated only where the monitoring was told to enforce it.

    Service targets (optional; what ``quota-constructs recommend`` searches an allocation for):
    ``target_wait_p95`` is the 95th-percentile wait from submission to first start the team
    needs, in seconds (a number or a :class:`datetime.timedelta`, > 0); ``max_budget_failures``
    is the most jobs the share may lose to an exhausted preemption budget over a replayed
    history (an integer >= 0). AWS never sees them; they are promises to check, not settings.
    """

    owner: str
    purpose: str = ""
    recoverable: bool = False
    interruption_budget: int | None = None
    target_wait_p95: float | timedelta | None = None
    max_budget_failures: int | None = None

    @property
    def target_wait_p95_seconds(self) -> float | None:
        """``target_wait_p95`` in seconds (None when no wait target is set)."""
        target = self.target_wait_p95
        if target is None:
            return None
        if isinstance(target, timedelta):
            return target.total_seconds()
        return float(target)

    @property
    def has_targets(self) -> bool:
        return self.target_wait_p95 is not None or self.max_budget_failures is not None

    def validate(self, *, subject: str, field: str = "agreement") -> ShareAgreement:
        """Raise :class:`QuotaConfigError` naming ``subject`` and the field when anything is off."""
        _check_text(
            self.owner, subject=subject, field=f"{field}.owner", minimum=1,
            maximum=MAX_OWNER_LENGTH, what="a name people recognise (a team or a person)",
        )
        _check_text(
            self.purpose, subject=subject, field=f"{field}.purpose", minimum=0,
            maximum=MAX_PURPOSE_LENGTH, what="a short sentence saying what the share is for",
        )
        if not isinstance(self.recoverable, bool):
            raise QuotaConfigError(subject, f"{field}.recoverable", self.recoverable,
                                   "True or False")
        if self.interruption_budget is not None:
            check_count(
                self.interruption_budget, subject=subject,
                field=f"{field}.interruption_budget", minimum=0,
            )
        _check_wait_target(self.target_wait_p95, subject=subject, field=f"{field}.target_wait_p95")
        if self.max_budget_failures is not None:
            check_count(
                self.max_budget_failures, subject=subject,
                field=f"{field}.max_budget_failures", minimum=0,
            )
        return self

    def describe_targets(self) -> str:
        """The service targets in words, or ``"none declared"``."""
        parts = []
        wait = self.target_wait_p95_seconds
        if wait is not None:
            parts.append(f"95% of jobs start within {describe_seconds(wait)} of submission")
        failures = self.max_budget_failures
        if failures is not None:
            parts.append(
                "no job lost to an exhausted preemption budget" if failures == 0 else
                f"at most {failures} job{'s' if failures != 1 else ''} lost to an exhausted "
                "preemption budget"
            )
        return "; ".join(parts) if parts else "none declared"

    def describe_budget(self) -> str:
        """The interruption contract in words: ``"at most 2 preemptions per job"``."""
        budget = self.interruption_budget
        if budget is None:
            return "no limit on preemptions per job"
        if budget == 0:
            return "no preemption allowed"
        return f"at most {budget} preemption{'s' if budget != 1 else ''} per job"


def describe_seconds(seconds: float) -> str:
    """``14400`` -> ``"4 h"``; whole units where they fit (s, min, h, d)."""
    for size, unit in ((86400.0, "d"), (3600.0, "h"), (60.0, "min")):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def _check_wait_target(value: object, *, subject: str, field: str) -> None:
    if value is None or is_unresolved(value):
        return
    allowed = (
        "None, or a number of seconds > 0 or a datetime.timedelta > 0 (e.g. timedelta(hours=4))"
    )
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise QuotaConfigError(subject, field, value, allowed)
    if not math.isfinite(seconds) or seconds <= 0:
        raise QuotaConfigError(subject, field, value, allowed)


def validate_agreement(value: object, *, subject: str, field: str = "agreement") -> None:
    """``value`` is None or a valid :class:`ShareAgreement`."""
    if value is None:
        return
    if not isinstance(value, ShareAgreement):
        raise QuotaConfigError(
            subject, field, value, "a ShareAgreement(owner=..., purpose=..., ...) or None"
        )
    value.validate(subject=subject, field=field)


def _check_text(
    value: object, *, subject: str, field: str, minimum: int, maximum: int, what: str
) -> None:
    if is_unresolved(value):
        return
    allowed = f"{what}: {minimum} to {maximum} printable characters"
    if not isinstance(value, str):
        raise QuotaConfigError(subject, field, value, allowed)
    if not minimum <= len(value) <= maximum or not value.isprintable():
        raise QuotaConfigError(subject, field, value, allowed)
    if minimum and not value.strip():
        raise QuotaConfigError(subject, field, value, allowed + ", not only spaces")
