"""What one preemption was: which attempt, of what kind, and how much run time it cost.

Read from a ``preemptionSummary`` (the Preemption Completed event's, or DescribeServiceJob's).
The kind is taken only from what AWS Batch wrote: its documented cross-share reason text, or an
in-share / priority wording; anything else is UNKNOWN rather than a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from quota_constructs.wire.monitoring_contract import CROSS_SHARE, IN_SHARE, UNKNOWN_KIND

_CROSS_SHARE = re.compile(r"cross[\s_-]*share", re.IGNORECASE)
_IN_SHARE = re.compile(r"\bin[\s_-]*share\b|within[\s_-]*(the[\s_-]*)?share|priority",
                       re.IGNORECASE)


def preemption_kind(reason: object) -> str:
    """CROSS_SHARE, IN_SHARE or UNKNOWN, from a Batch status reason."""
    if not isinstance(reason, str):
        return UNKNOWN_KIND
    if _CROSS_SHARE.search(reason):
        return CROSS_SHARE
    if _IN_SHARE.search(reason):
        return IN_SHARE
    return UNKNOWN_KIND


@dataclass(frozen=True)
class Preemption:
    attempt_count: int
    """How many times the job has been preempted, this preemption included."""
    kind: str
    reason: str
    started_at_ms: int | None
    stopped_at_ms: int | None
    training_job: str | None
    """The SageMaker training job of the preempted attempt (its ARN), when Batch says."""

    @classmethod
    def from_summary(cls, summary: Mapping[str, Any]) -> Preemption | None:
        """The latest preemption in a ``preemptionSummary``; None when it records none."""
        attempts = [a for a in summary.get("recentPreemptedAttempts") or []
                    if isinstance(a, Mapping)]
        count = summary.get("preemptedAttemptCount")
        if not isinstance(count, int) or isinstance(count, bool):
            count = len(attempts)
        if count < 1:
            return None
        latest: Mapping[str, Any] = max(
            attempts, key=lambda a: (_ms(a.get("stoppedAt")) or 0, _ms(a.get("startedAt")) or 0),
            default={},
        )
        reason = str(latest.get("statusReason") or "")
        resource = latest.get("serviceResourceId") or {}
        return cls(
            attempt_count=count,
            kind=preemption_kind(reason),
            reason=reason,
            started_at_ms=_ms(latest.get("startedAt")),
            stopped_at_ms=_ms(latest.get("stoppedAt")),
            training_job=str(resource.get("value")) if resource.get("value") else None,
        )

    @property
    def lost_seconds(self) -> float | None:
        """Run time of the preempted attempt, None when Batch did not say when it ran."""
        if self.started_at_ms is None or self.stopped_at_ms is None:
            return None
        return max(0.0, (self.stopped_at_ms - self.started_at_ms) / 1000.0)


def describe_duration(seconds: float) -> str:
    """``2 h 5 min``, ``3 min 20 s``, ``45 s``."""
    return two_clock_units(round(seconds), ((3600, " h"), (60, " min"), (1, " s")))


def two_clock_units(whole_seconds: int, units: Sequence[tuple[int, str]]) -> str:
    """``whole_seconds`` in its largest unit that is not zero and the next one down
    (``2 h 5 min``); ``units`` (size in seconds, label) run from the largest to seconds.
    Shared by the owner messages and ``status``, which spell their units differently."""
    for (size, label), (next_size, next_label) in pairwise(units):
        count, rest = divmod(whole_seconds, size)
        if count:
            return f"{count}{label} {rest // next_size}{next_label}"
    return f"{whole_seconds}{units[-1][1]}"


def _ms(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)
