"""Rules that involve a whole queue: its environment, its shares together, its settings."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .capacity import CapacityLimit, check_count, validate_capacity_limits
from .errors import QuotaConfigError
from .share import QuotaShareSpec, SharingStrategy, share_subject
from .tokens import is_unresolved

MAX_SHARES_PER_QUEUE = 20
MIN_QUEUE_PRIORITY, MAX_QUEUE_PRIORITY = 0, 1000
MIN_TIME_LIMIT_SECONDS, MAX_TIME_LIMIT_SECONDS = 600, 86400
TIME_LIMIT_ACTION = "TERMINATE"
TIME_LIMIT_STATE = "RUNNABLE"


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
        if item.action != TIME_LIMIT_ACTION and not is_unresolved(item.action):
            raise QuotaConfigError(
                subject,
                f"{where}.action",
                item.action,
                f"{TIME_LIMIT_ACTION!r} (the only action for SAGEMAKER_TRAINING queues)",
            )
        if item.state != TIME_LIMIT_STATE and not is_unresolved(item.state):
            raise QuotaConfigError(
                subject,
                f"{where}.state",
                item.state,
                f"{TIME_LIMIT_STATE!r} (the only state for SAGEMAKER_TRAINING queues)",
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
    unintended (over-allocation, capacity no share owns).
    """

    environment_limits: tuple[CapacityLimit, ...]
    shares: tuple[QuotaShareSpec, ...]
    warnings: tuple[str, ...] = field(default=())

    @classmethod
    def check(
        cls,
        *,
        environment_limits: Sequence[CapacityLimit],
        shares: Sequence[QuotaShareSpec],
        queue_name: str | None = None,
    ) -> QuotaAllocation:
        subject = queue_subject(queue_name)
        env = validate_capacity_limits(
            environment_limits, subject=f"service environment of {subject}"
        )
        specs = check_share_set(shares, subject=subject)
        capacity = {limit.capacity_unit: limit.max_capacity for limit in env}
        if any(is_unresolved(v) for v in capacity.values()) or any(
            is_unresolved(u) for u in capacity
        ):
            return cls(env, specs)
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
                    "at once"
                )
            elif total < available:
                warnings.append(
                    f"{subject}: {available - total} of {available} {unit} belong to no share; "
                    "shares borrow only what other shares lend, so no job is sure to use them"
                )
        return cls(env, specs, tuple(warnings))

    def capacity_of(self, unit: str) -> int:
        for limit in self.environment_limits:
            if limit.capacity_unit == unit:
                return limit.max_capacity
        return 0

    def reach(self, share_name: str) -> dict[str, int]:
        """Most capacity of each unit the share can ever hold: its own limit plus what it can
        borrow, capped by its borrow limit, by what lending shares own and by the environment.
        """
        share = self.share(share_name)
        reach: dict[str, int] = {}
        for unit in share.units:
            own = share.limit_of(unit)
            borrowable = 0
            if share.strategy.borrows:
                lendable = sum(
                    other.limit_of(unit)
                    for other in self.shares
                    if other.name != share.name and other.strategy.lends
                )
                cap = share.ceiling_of(unit) - own
                borrowable = lendable if math.isinf(cap) else min(lendable, math.floor(cap))
            reach[unit] = min(own + borrowable, self.capacity_of(unit))
        return reach

    def share(self, name: str) -> QuotaShareSpec:
        for spec in self.shares:
            if spec.name == name:
                return spec
        raise KeyError(f"no quota share named {name!r}; shares: {[s.name for s in self.shares]}")


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
