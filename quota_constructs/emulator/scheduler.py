"""The simulator's engine under an emulated clock: the shares' rules compiled for it.

Nothing here decides who runs: :class:`~quota_constructs.simulation.engine.SteppingEngine`
(the replay's phases, compiled from the one rules model) does, and tells the service of each
job's start, preemption and end (:class:`~quota_constructs.simulation.engine.JobReports`),
which turns them into job states, attempts and events. The shares' rules are compiled here
when the engine starts and again whenever the API changes them.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import CapacityLimit, QuotaAllocation, QuotaShareSpec
from ..simulation.inputs import SimulationOptions
from ..simulation.problem import Problem, compile_problem


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
