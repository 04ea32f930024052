"""What is searched: allocations of today's environment among today's shares, and the rules
every candidate obeys (the least limit of each share and type, pins, own limits fitting the
environment), with the conversions between an allocation and a declaration.

An :data:`Allocation` holds, per share in the declaration's order, a :class:`ShareAllocation`:
its limit per instance type of the environment (in the environment's order, 0 where the share
lists none) and its :class:`Terms` (strategy and borrow limit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from ...model import (
    CapacityLimit,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
)
from ..inputs import PriorityChange, SimJob, SimulationOptions
from ..problem import Problem, compile_problem
from .pins import Pin
from .tasks import ShareColumns


@dataclass(frozen=True, slots=True)
class Terms:
    """A share's strategy and borrow limit percent (None: unlimited, or it does not borrow)."""

    strategy: SharingStrategy
    borrow_limit: int | None = None


@dataclass(frozen=True, slots=True)
class ShareAllocation:
    """One share's part of an allocation: its limit per environment type (0: not listed)."""

    limits: tuple[int, ...]
    terms: Terms

    def with_limit(self, k: int, count: int) -> ShareAllocation:
        return ShareAllocation((*self.limits[:k], count, *self.limits[k + 1:]), self.terms)


Allocation = tuple[ShareAllocation, ...]
"""Per share of today's declaration, in its order."""


def with_share(allocation: Allocation, s: int, row: ShareAllocation) -> Allocation:
    """``allocation`` with share ``s``'s part replaced by ``row``."""
    return (*allocation[:s], row, *allocation[s + 1:])


def compose(limits: Sequence[Sequence[int]], terms: Sequence[Terms]) -> Allocation:
    """An allocation of these limits and terms (no borrow limit where a share does not
    borrow)."""
    return tuple(
        ShareAllocation(tuple(row), Terms(t.strategy, t.borrow_limit if t.strategy.borrows
                                          else None))
        for row, t in zip(limits, terms, strict=True)
    )


def terms_of(allocation: Allocation) -> list[Terms]:
    return [row.terms for row in allocation]


def limits_of(allocation: Allocation) -> list[list[int]]:
    """Each share's limits, as rows that may be changed."""
    return [list(row.limits) for row in allocation]


def fit(
    wanted: list[list[int]], floors: list[list[int]], env: Sequence[int],
    least: list[list[int]] | None = None,
) -> list[list[int]] | None:
    """``wanted`` lowered until own limits add up to at most the environment, taking one
    instance at a time from the share furthest above its floor (None when floors alone do not
    fit). With ``least``, a share may go below its floor down to ``least`` (still taken
    from the one furthest above its floor, so the shares needing least give most); None
    when even ``least`` does not fit."""
    limits = [list(row) for row in wanted]
    for k, available in enumerate(env):
        excess = sum(row[k] for row in limits) - available
        while excess > 0:
            surplus = [row[k] - floor[k] if least is None or row[k] > lowest[k] else None
                       for row, floor, lowest in zip(limits, floors, least or floors,
                                                     strict=True)]
            room = [value for value in surplus if value is not None]
            most = max(room) if room else 0
            if not room or (least is None and most <= 0):
                return None
            limits[surplus.index(most)][k] -= 1
            excess -= 1
    return limits


@dataclass(frozen=True)
class SearchSpace:
    """Today's environment and shares, the pins, and each (share, type)'s largest job."""

    environment: tuple[CapacityLimit, ...]
    today: tuple[QuotaShareSpec, ...]
    pins: Mapping[str, Pin]
    largest: Mapping[tuple[int, int], int] = field(default_factory=dict)
    """Per (share index, type index), the most instances one of its jobs asks for."""

    @cached_property
    def units(self) -> list[str]:
        return [str(limit.unit) for limit in self.environment]

    @cached_property
    def capacity(self) -> list[int]:
        return [limit.max_capacity for limit in self.environment]

    @cached_property
    def index(self) -> dict[str, int]:
        """Each share's position in today's declaration."""
        return {spec.name: s for s, spec in enumerate(self.today)}

    @cached_property
    def today_allocation(self) -> Allocation:
        return self.allocation_of(self.today)

    def pinned_limits(self, name: str) -> bool:
        return name in self.pins and self.pins[name].limits

    def pinned_strategy(self, name: str) -> bool:
        return name in self.pins and self.pins[name].strategy

    def on(self, env: Sequence[int]) -> SearchSpace:
        """The same shares and pins on an environment of ``env`` instances per type."""
        limits = tuple(CapacityLimit(unit, count)
                       for unit, count in zip(self.units, env, strict=True))
        return SearchSpace(limits, self.today, self.pins)

    # --- the jobs ----------------------------------------------------------------------------
    def compile(
        self, jobs: list[SimJob], changes: list[PriorityChange], options: SimulationOptions
    ) -> Problem:
        """The jobs checked once against the most any allocation could give each share (every
        listed type up to the whole environment), so that any candidate can be replayed."""
        relaxed = [
            replace(
                spec,
                capacity_limits=[
                    CapacityLimit(limit.unit, self.capacity[self.units.index(str(limit.unit))])
                    if str(limit.unit) in self.units else limit
                    for limit in spec.capacity_limits
                ],
                strategy=SharingStrategy.LEND,
                borrow_limit_percent=None,
            )
            for spec in self.today
        ]
        allocation = QuotaAllocation.check(
            environment_limits=self.environment, shares=relaxed,
            unowned_capacity_borrowable=options.unowned_capacity_borrowable,
        )
        return compile_problem(allocation, jobs, changes)

    def with_largest(self, problem: Problem) -> SearchSpace:
        """This space with each (share, type)'s largest job raised to ``problem``'s."""
        largest = dict(self.largest)
        for s, k, count in zip(problem.job_share, problem.job_unit, problem.job_count,
                               strict=True):
            if count > largest.get((s, k), 0):
                largest[(s, k)] = count
        return replace(self, largest=largest)

    def columns(
        self, allocation: Allocation, env: tuple[int, ...], options: SimulationOptions
    ) -> ShareColumns | None:
        """The engine's columns for ``allocation`` on ``env`` (None when AWS would reject it or
        a job could never start), through the one compile path every simulation uses."""
        try:
            specs = self.specs(allocation)
            limits = [CapacityLimit(unit, count) for unit, count in zip(self.units, env,
                                                                        strict=True)]
            # One job per (share, type) as large as its largest: the compile check rejects
            # an allocation in which it could never start.
            probes = [
                SimJob(job_id=f"largest-{s}-{k}", share=self.today[s].name, submitted_at=0.0,
                       duration=0.0, instance_type=self.units[k], instance_count=count)
                for (s, k), count in sorted(self.largest.items())
            ]
            rules = QuotaAllocation.check(
                environment_limits=limits, shares=specs,
                unowned_capacity_borrowable=options.unowned_capacity_borrowable,
            )
            small = compile_problem(rules, probes)
            # And by the model's rules of what a share can reach (the one place those live):
            # a job beyond it would wait forever in AWS, whatever the simulator makes of it.
            reach = {spec.name: rules.reach(spec.name) for spec in specs}
        except QuotaConfigError:
            return None
        for (s, k), count in self.largest.items():
            if count > reach[self.today[s].name].get(self.units[k], 0):
                return None
        return ShareColumns.of(small)

    # --- allocations and declarations --------------------------------------------------------
    def allocation_of(self, specs: Sequence[QuotaShareSpec]) -> Allocation:
        return tuple(
            ShareAllocation(tuple(spec.limit_of(unit) for unit in self.units),
                            Terms(spec.strategy, spec.borrow_limit_percent))
            for spec in specs
        )

    def specs(self, allocation: Allocation) -> list[QuotaShareSpec]:
        out = []
        for spec, row in zip(self.today, allocation, strict=True):
            strategy = row.terms.strategy
            out.append(replace(
                spec,
                capacity_limits=[
                    CapacityLimit(limit.unit, row.limits[self.units.index(str(limit.unit))])
                    for limit in spec.capacity_limits
                ],
                strategy=strategy,
                borrow_limit_percent=row.terms.borrow_limit if strategy.borrows else None,
            ))
        return out

    def change(self, allocation: Allocation) -> int:
        """Instances moved plus strategies and borrow limits changed, against today."""
        total = 0
        for row, was in zip(allocation, self.today_allocation, strict=True):
            total += sum(abs(a - b) for a, b in zip(row.limits, was.limits, strict=True))
            now, then = row.terms, was.terms
            total += int(now.strategy != then.strategy)
            total += int(now.strategy.borrows and then.strategy.borrows
                         and now.borrow_limit != then.borrow_limit)
        return total

    def fits(self, allocation: Allocation) -> bool:
        """Own limits add up to at most the environment, per type."""
        return all(sum(row.limits[k] for row in allocation) <= size
                   for k, size in enumerate(self.capacity))

    # --- the least limits and the pins -------------------------------------------------------
    def lowest(self, allocation: Allocation) -> list[list[int]]:
        """Per share and type, the least limit any allocation may give it: its pinned limit,
        else at least 1, its largest job and its pinned minimum (0 where it lists none)."""
        rows: list[list[int]] = []
        for s, row in enumerate(allocation):
            pin = self.pins.get(self.today[s].name)
            if pin is not None and pin.limits:
                rows.append(list(row.limits))
                continue
            rows.append([
                0 if not count else max(1, self.largest.get((s, k), 1),
                                        pin.minimum.get(self.units[k], 0) if pin else 0)
                for k, count in enumerate(row.limits)
            ])
        return rows

    def check_pins(self) -> None:
        """Refuse a pin no allocation can honour (QuotaConfigError): a minimum above the
        environment less what every other share listing the type needs at least (1, its
        largest job, its own pin), or above the share's own limit when its limits are
        pinned too. Silently ignoring it would recommend what the user ruled out."""
        today = self.today_allocation
        lowest = self.lowest(today)
        for s, spec in enumerate(self.today):
            pin = self.pins.get(spec.name)
            if pin is None:
                continue
            for unit, count in pin.minimum.items():
                k = self.units.index(unit)
                field_name = f"minimum[{unit}]"
                own = today[s].limits[k]
                if pin.limits and count > own:
                    raise QuotaConfigError(
                        f"pin for {spec.name!r}", field_name, count,
                        f"at most {own}: its limits are pinned too, at {own} x {unit}")
                others = [(self.today[t].name, row[k]) for t, row in enumerate(lowest)
                          if t != s and row[k]]
                most = self.capacity[k] - sum(n for _, n in others)
                if count > most:
                    needs = ", ".join(f"{name} {n}" for name, n in others)
                    raise QuotaConfigError(
                        f"pin for {spec.name!r}", field_name, count,
                        f"at most {max(most, 0)}: the environment has {self.capacity[k]} x "
                        f"{unit}" + (f" and the other shares listing it need at least "
                                     f"{sum(n for _, n in others)} ({needs})" if others
                                     else ""))

    def honours_pins(self, allocation: Allocation) -> bool:
        today = self.today_allocation
        for s, spec in enumerate(self.today):
            pin = self.pins.get(spec.name)
            if pin is None:
                continue
            row = allocation[s]
            if pin.strategy and row.terms != today[s].terms:
                return False
            if pin.limits and row.limits != today[s].limits:
                return False
            if any(row.limits[self.units.index(unit)] < count
                   for unit, count in pin.minimum.items()):
                return False
        return True

    def honour_pins(self, allocation: Allocation) -> Allocation:
        """``allocation`` with every pinned minimum given, taken from the shares furthest
        above their least limits (:meth:`check_pins` made sure it fits)."""
        rows = [
            [max(count, self.pins[spec.name].minimum.get(self.units[k], 0))
             if count and spec.name in self.pins else count
             for k, count in enumerate(row.limits)]
            for spec, row in zip(self.today, allocation, strict=True)
        ]
        fitted = fit(rows, self.lowest(allocation), self.capacity)
        if fitted is None:
            return allocation
        return compose(fitted, terms_of(allocation))

    def resized(
        self, allocation: Allocation, env: Sequence[int], origin: Sequence[int] | None = None,
    ) -> Allocation | None:
        """``allocation`` (for the environment ``origin``, today's by default) on the
        environment ``env``: the limits of each type whose size changes scaled with it (never
        below :meth:`lowest`), then lowered to fit; a type whose size stays keeps its limits
        exactly. None when the least limits do not fit."""
        origin = self.capacity if origin is None else origin
        lowest = self.lowest(allocation)
        pinned = {s for s, spec in enumerate(self.today) if self.pinned_limits(spec.name)}
        rows = [
            [count if s in pinned or not count or env[k] == origin[k]
             else max(lowest[s][k], round(count * env[k] / origin[k]))
             for k, count in enumerate(row.limits)]
            for s, row in enumerate(allocation)
        ]
        fitted = fit(rows, lowest, env)
        if fitted is None:
            return None
        return compose(fitted, terms_of(allocation))
