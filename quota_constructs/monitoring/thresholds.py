"""When a share's alarms go off: thresholds a platform team can keep, each one overridable."""

from __future__ import annotations

from dataclasses import dataclass, field

from aws_cdk import Duration

from ..model import QuotaConfigError
from ..model.capacity import check_count


@dataclass(frozen=True, kw_only=True)
class ShareAlarmThresholds:
    """Thresholds of one share's alarms (see :class:`QuotaShareMonitoring`).

    :param starved_after: the share is *starved* when its oldest RUNNABLE job has waited longer
        than this while part of the share's own limit stayed idle for a whole alarm period.
        Default 30 minutes: longer than a typical scheduling delay and cross-share preemption
        (which reclaims lent capacity within minutes), short enough to matter for a training
        job. Whole minutes, at least 1.
    :param max_preemptions_per_hour: alarm when the share's jobs are preempted more often than
        this in one hour, whatever their budget says. Default 10. ``None`` turns the alarm off
        (for shares that borrow heavily and expect it).
    :param drift_for: alarm when the live share has differed from the declaration (or been
        INVALID or missing) for this long; a deployment changing the share legitimately differs
        for a few minutes. Default 15 minutes. Whole minutes, at least 1.
    """

    starved_after: Duration = field(default_factory=lambda: Duration.minutes(30))
    max_preemptions_per_hour: int | None = 10
    drift_for: Duration = field(default_factory=lambda: Duration.minutes(15))

    def validate(self, *, subject: str, field: str = "thresholds") -> ShareAlarmThresholds:
        for name in ("starved_after", "drift_for"):
            value = getattr(self, name)
            if not isinstance(value, Duration) or not _whole_minutes(value):
                raise QuotaConfigError(
                    subject, f"{field}.{name}", _show(value),
                    "a Duration of whole minutes, at least 1 minute",
                )
        if self.max_preemptions_per_hour is not None:
            check_count(
                self.max_preemptions_per_hour, subject=subject,
                field=f"{field}.max_preemptions_per_hour", minimum=0,
            )
        return self


def _whole_minutes(value: Duration) -> bool:
    seconds = value.to_seconds(integral=False)
    return seconds >= 60 and seconds % 60 == 0


def _show(value: object) -> object:
    return value.to_human_string() if isinstance(value, Duration) else value
