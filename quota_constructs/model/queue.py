"""Rules that involve a whole queue: its environment, its shares together, its settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from .borrowing import BorrowingRules, UnitRules
from .capacity import CapacityLimit, check_count, validate_capacity_limits
from .errors import QuotaConfigError
from .share import QuotaShareSpec, SharingStrategy, share_subject
from .tokens import is_unresolved

MAX_SHARES_PER_QUEUE = 20
MIN_QUEUE_PRIORITY, MAX_QUEUE_PRIORITY = 0, 1000
MIN_TIME_LIMIT_SECONDS, MAX_TIME_LIMIT_SECONDS = 600, 86400
TIME_LIMIT_ACTION = "TERMINATE"
TIME_LIMIT_STATE = "RUNNABLE"
TIME_LIMIT_FIXED_FIELDS = (("action", TIME_LIMIT_ACTION), ("state", TIME_LIMIT_STATE))
"""The time-limit action's fields a SAGEMAKER_TRAINING queue allows one value of, checked alike."""


def queue_subject(name: str | None) -> str:
    return f"job queue {name!r}" if name else "job queue"


def check_queue_priority(priority: object, *, subject: str) -> None:
    check_count(
        priority,
        subject=subject,
        field="priority",
        minimum=MIN_QUEUE_PRIORITY,
        maximum=MAX_QUEUE_PRIORITY,
    )


@dataclass(frozen=True, kw_only=True)
class JobStateTimeLimitAction:
    """Terminate jobs that stay RUNNABLE longer than ``max_time_seconds`` (600–86400).

    A SAGEMAKER_TRAINING queue supports only the RUNNABLE state and the TERMINATE action; the
    fields exist so a mistaken value is reported rather than silently replaced.
    """

    max_time_seconds: int
    reason: str
    action: str = TIME_LIMIT_ACTION
    state: str = TIME_LIMIT_STATE


def validate_time_limit_actions(
    actions: Sequence[JobStateTimeLimitAction], *, subject: str
) -> tuple[JobStateTimeLimitAction, ...]:
    for index, item in enumerate(actions):
        where = f"job_state_time_limit_actions[{index}]"
        if not isinstance(item, JobStateTimeLimitAction):
            raise QuotaConfigError(subject, where, item, "a JobStateTimeLimitAction")
        for name, only in TIME_LIMIT_FIXED_FIELDS:
            value = getattr(item, name)
            if value != only and not is_unresolved(value):
                raise QuotaConfigError(
                    subject,
                    f"{where}.{name}",
                    value,
                    f"{only!r} (the only {name} for SAGEMAKER_TRAINING queues)",
                )
        check_count(
            item.max_time_seconds,
            subject=subject,
            field=f"{where}.max_time_seconds",
            minimum=MIN_TIME_LIMIT_SECONDS,
            maximum=MAX_TIME_LIMIT_SECONDS,
        )
        if not isinstance(item.reason, str) or not item.reason:
            raise QuotaConfigError(subject, f"{where}.reason", item.reason, "a non-empty string")
    return tuple(actions)


@dataclass(frozen=True)
class QuotaAllocation:
    """How a queue's environment capacity is divided between its shares.

    Built with :meth:`check`, which raises :class:`QuotaConfigError` for layouts AWS Batch would
    reject or that strand jobs, and collects ``warnings`` for layouts that work but are likely
    unintended (over-allocation, capacity no share owns) and ``borrow_warnings`` for
    LEND_AND_BORROW shares whose borrow limit rounds to nothing of some type. What each share
    can reach, and whom it borrows from and lends to, is :attr:`rules` (one
    :class:`~quota_constructs.model.borrowing.BorrowingRules`, with its stated assumptions).
    """

    environment_limits: tuple[CapacityLimit, ...]
    shares: tuple[QuotaShareSpec, ...]
    warnings: tuple[str, ...] = field(default=())
    borrow_warnings: tuple[str, ...] = field(default=())
    unowned_capacity_borrowable: bool = True

    @classmethod
    def check(
        cls,
        *,
        environment_limits: Sequence[CapacityLimit],
        shares: Sequence[QuotaShareSpec],
        queue_name: str | None = None,
        unowned_capacity_borrowable: bool = True,
    ) -> QuotaAllocation:
        subject = queue_subject(queue_name)
        env = validate_capacity_limits(
            environment_limits, subject=f"service environment of {subject}"
        )
        specs = check_share_set(shares, subject=subject)
        if not isinstance(unowned_capacity_borrowable, bool):
            raise QuotaConfigError(
                subject, "unowned_capacity_borrowable", unowned_capacity_borrowable,
                "True or False",
            )
        capacity = {limit.capacity_unit: limit.max_capacity for limit in env}
        if any(is_unresolved(v) for v in capacity.values()) or any(
            is_unresolved(u) for u in capacity
        ):
            return cls(env, specs, unowned_capacity_borrowable=unowned_capacity_borrowable)
        for spec in specs:
            for index, limit in enumerate(spec.capacity_limits):
                if limit.capacity_unit not in capacity:
                    raise QuotaConfigError(
                        share_subject(spec.name),
                        f"capacity_limits[{index}].unit",
                        limit.capacity_unit,
                        "a unit the service environment lists "
                        f"({', '.join(sorted(capacity))}); jobs needing any other unit wait "
                        "in RUNNABLE forever",
                    )
        warnings: list[str] = []
        for unit, available in capacity.items():
            holding = [s for s in specs if s.limit_of(unit)]
            holders = [(s.name, s.limit_of(unit)) for s in holding]
            reserved = [
                (s.name, s.limit_of(unit)) for s in holding if s.strategy is SharingStrategy.RESERVE
            ]
            if _known_sum(reserved) > available:
                raise _over_reservation(specs, unit, available, reserved)
            total = _known_sum(holders)
            if total > available:
                warnings.append(
                    f"{subject}: shares together hold {_sum_text(holders)} of {unit} but the "
                    f"service environment has {available}; not every share can reach its limit "
                    "at once."
                )
            elif total < available:
                warnings.append(
                    f"{subject}: {available - total} of {available} {unit} belong to no share; "
                    + (
                        "only LEND_AND_BORROW shares can use them, by borrowing (the library's "
                        "assumption: AWS documents borrowing only other shares' idle capacity), "
                        "so no job is sure to run on them."
                        if unowned_capacity_borrowable else
                        "AWS documents borrowing only other shares' idle capacity, so the "
                        "library assumes no job can use them (unowned_capacity_borrowable=False)"
                        "; give them to a share."
                    )
                )
        allocation = cls(
            env, specs, tuple(warnings), unowned_capacity_borrowable=unowned_capacity_borrowable
        )
        rules = allocation.rules
        borrow_warnings = [
            _nothing_to_borrow(spec, rule, rules)
            for spec in specs
            # A limit known only at deploy time says nothing about what rounds to zero.
            if not any(is_unresolved(limit.max_capacity) for limit in spec.capacity_limits)
            for rule in rules.nothing_to_borrow(spec)
        ]
        return replace(allocation, borrow_warnings=tuple(borrow_warnings))

    @cached_property
    def rules(self) -> BorrowingRules:
        """Per share and instance type: what it can reach, whom it borrows from and lends to."""
        return BorrowingRules.of(
            environment={limit.capacity_unit: limit.max_capacity
                         for limit in self.environment_limits},
            shares=self.shares,
            unowned_capacity_borrowable=self.unowned_capacity_borrowable,
        )

    @property
    def share_warnings(self) -> tuple[str, ...]:
        """Warnings about single shares' declarations (:func:`share_warnings`)."""
        return tuple(warning for spec in self.shares for warning in share_warnings(spec))

    @property
    def all_warnings(self) -> tuple[str, ...]:
        return (*self.warnings, *self.borrow_warnings, *self.share_warnings)

    def capacity_of(self, unit: str) -> int:
        for limit in self.environment_limits:
            if limit.capacity_unit == unit:
                return limit.max_capacity
        return 0

    def reach(self, share_name: str) -> dict[str, int]:
        """Most capacity of each unit the share can ever hold (:attr:`rules`)."""
        self.share(share_name)
        return self.rules.reach(share_name)

    def share(self, name: str) -> QuotaShareSpec:
        for spec in self.shares:
            if spec.name == name:
                return spec
        raise KeyError(f"no quota share named {name!r}; shares: {[s.name for s in self.shares]}")


def share_warnings(spec: QuotaShareSpec) -> list[str]:
    """Warnings about one share's declaration that need no other share to judge: a layout that
    works but probably does not do what was meant. Each is a full sentence."""
    agreement = spec.agreement
    if (
        spec.in_share_preemption
        and agreement is not None
        and agreement.interruption_budget == 0
    ):
        return [
            f"{share_subject(spec.name)}: in-share preemption is on but its interruption budget "
            "is 0, so a higher-priority submission into the share fails a running "
            "lower-priority job outright (a job submitted with "
            "preemptionRetriesBeforeTermination 0 fails on its first preemption); turn in-share "
            "preemption off, or allow at least one preemption per job."
        ]
    return []


def _nothing_to_borrow(spec: QuotaShareSpec, rule: UnitRules, rules: BorrowingRules) -> str:
    """Why a LEND_AND_BORROW share can borrow none of a type it lists, with the figures (the
    rules model's own reason)."""
    return (
        f"{share_subject(spec.name)}: can borrow no {rule.unit}: "
        f"{rules.why_nothing_to_borrow(spec, rule)}; it is LEND_AND_BORROW but behaves as LEND "
        "for this type."
    )


def _over_reservation(
    specs: Sequence[QuotaShareSpec], unit: str, available: int, reserved: list[tuple[str, int]]
) -> QuotaConfigError:
    """Blame the RESERVE share whose limit first takes the total past the environment."""
    running = 0
    for name, count in reserved:
        if is_unresolved(count):
            continue
        if running + count > available:
            spec = next(s for s in specs if s.name == name)
            index = next(i for i, limit in enumerate(spec.capacity_limits)
                         if limit.capacity_unit == unit)
            return QuotaConfigError(
                share_subject(name),
                f"capacity_limits[{index}].max_capacity",
                count,
                f"at most {available - running} {unit}: RESERVE shares together would hold "
                f"{_sum_text(reserved)} of the environment's {available}, and RESERVE capacity "
                "is never lent, so more than exists cannot be honoured",
            )
        running += count
    raise AssertionError("called only when the RESERVE total exceeds the environment")


def check_share_set(
    shares: Sequence[QuotaShareSpec], *, subject: str
) -> tuple[QuotaShareSpec, ...]:
    """At most 20 shares per queue, each a QuotaShareSpec, with unique names."""
    if isinstance(shares, (str, bytes, Mapping)) or not isinstance(shares, Sequence):
        raise QuotaConfigError(subject, "shares", shares, "a list of QuotaShareSpec")
    if len(shares) > MAX_SHARES_PER_QUEUE:
        raise QuotaConfigError(
            subject,
            "shares",
            f"{len(shares)} shares",
            f"at most {MAX_SHARES_PER_QUEUE} quota shares per job queue",
        )
    seen: set[str] = set()
    for index, spec in enumerate(shares):
        if not isinstance(spec, QuotaShareSpec):
            raise QuotaConfigError(subject, f"shares[{index}]", spec, "a QuotaShareSpec")
        if spec.name in seen and not is_unresolved(spec.name):
            raise QuotaConfigError(
                share_subject(spec.name), "name", spec.name, "a name unique within the job queue"
            )
        seen.add(spec.name)
    return tuple(shares)


def _known_sum(parts: Sequence[tuple[str, int]]) -> int:
    return sum(count for _, count in parts if not is_unresolved(count))


def _sum_text(parts: Sequence[tuple[str, int]]) -> str:
    return " + ".join(f"{name}={count}" for name, count in parts) + f" = {_known_sum(parts)}"
