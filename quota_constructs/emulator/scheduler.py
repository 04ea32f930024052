"""The simulator's engine under an emulated clock: what each job does, told to the service.

Nothing here decides who runs: :class:`~quota_constructs.simulation.engine.SteppingEngine`
(the replay's phases, compiled from the one rules model) does. This module turns its reports
into job states, attempts and events, and recompiles the shares' rules when the API changes
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..model import CapacityLimit, QuotaAllocation, QuotaShareSpec
from ..simulation.engine import SteppingEngine
from ..simulation.inputs import SimulationOptions
from ..simulation.problem import Problem, compile_problem
from ..simulation.results import CROSS_SHARE


class JobReports(Protocol):
    """What hears of each job's start, preemption and end (the service), at the engine's
    moment in emulated seconds."""

    def job_started(self, j: int, now: float, borrowed: bool) -> None: ...

    def job_preempted(self, j: int, now: float, by: int, cross_share: bool,
                      failed: bool) -> None: ...

    def job_ended(self, j: int, now: float) -> None: ...


def compile_shares(
    capacity_limits: Sequence[CapacityLimit], shares: Sequence[QuotaShareSpec],
    options: SimulationOptions,
) -> Problem:
    """The shares' rules as the engine reads them (raises QuotaConfigError for a layout the
    model refuses)."""
    allocation = QuotaAllocation.check(
        environment_limits=capacity_limits, shares=shares,
        unowned_capacity_borrowable=options.unowned_capacity_borrowable,
    )
    return compile_problem(allocation, jobs=[])


class EmulatorEngine(SteppingEngine):
    """Reports each start, preemption and end to the service, at the engine's moment."""

    def __init__(self, problem: Problem, options: SimulationOptions,
                 service: JobReports) -> None:
        super().__init__(problem, options)
        self.service = service

    def on_started(self, j: int, borrowed: bool) -> None:
        self.service.job_started(j, self.now, borrowed)

    def on_preempted(self, j: int, by: int, kind: int, failed: bool) -> None:
        self.service.job_preempted(j, self.now, by, kind == CROSS_SHARE, failed)

    def on_ended(self, j: int) -> None:
        self.service.job_ended(j, self.now)
