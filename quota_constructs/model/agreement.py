"""The agreement behind a quota share: who owns it, why, and what its jobs accept.

AWS Batch knows a share's limits and strategy but not whose it is or what its borrowing jobs
signed up for. The agreement makes that explicit next to the spec: the monitoring tells the
owner when the share's jobs are preempted or starved, and the allocation agreement rendered for
people states it. AWS never sees it; it changes nothing a share does.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    """

    owner: str
    purpose: str = ""
    recoverable: bool = False
    interruption_budget: int | None = None

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
        return self

    def describe_budget(self) -> str:
        """The interruption contract in words: ``"at most 2 preemptions per job"``."""
        budget = self.interruption_budget
        if budget is None:
            return "no limit on preemptions per job"
        if budget == 0:
            return "no preemption allowed"
        return f"at most {budget} preemption{'s' if budget != 1 else ''} per job"


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
