"""Why a share's target is missed, in words: beyond any allocation (its demand alone exceeds
the environment), or not met by any allocation the search tried."""

from __future__ import annotations

from collections.abc import Sequence

from ..durations import human_duration
from ..targets import ServiceTarget
from .space import SearchSpace
from .tasks import Demand, Scores


def impossible(
    space: SearchSpace, goal: ServiceTarget, name: str, scores: Scores, listed: Sequence[int],
    demands: Sequence[Demand],
) -> str:
    """``name``'s jobs alone, given the whole environment of the types it ``listed``
    (``scores``), still miss ``goal``."""
    score = scores.get(name)
    whole = ", ".join(f"{space.capacity[k]} x {space.units[k]}"
                      for k, count in enumerate(listed) if count > 0)
    parts = []
    if score is not None and goal.wait_p95 is not None and score.wait_p95 is not None \
            and score.wait_p95 > goal.wait_p95:
        parts.append(f"wait p95 {human_duration(score.wait_p95)} against a target of "
                     f"{human_duration(goal.wait_p95)}")
    if score is not None and goal.max_budget_failures is not None \
            and score.budget_failures > goal.max_budget_failures:
        parts.append(f"{score.budget_failures} jobs lost to their preemption budget "
                     f"against at most {goal.max_budget_failures}")
    needs = [
        f"{d.capacity} x {d.unit}" for d in demands
        if d.share == name and d.capacity > space.capacity[space.units.index(d.unit)]
    ]
    tail = f"; it would need {', '.join(needs)}" if needs else ""
    return (f"{name}'s demand alone exceeds the environment: its jobs alone, given the "
            f"whole environment ({whole}), reach {'; '.join(parts)}{tail}")


def why_missed(
    space: SearchSpace, goal: ServiceTarget, name: str, scores: Scores, floors: list[list[int]],
    needed: list[int],
) -> str:
    """``name`` misses ``goal`` under the best allocation found (``scores``), though some
    allocation might meet it: what it needs alone, and whether the partition fits."""
    short = [
        f"{needed[k]} x {unit} (environment {space.capacity[k]})"
        for k, unit in enumerate(space.units) if needed[k] > space.capacity[k]
    ]
    mine = floors[space.index[name]]
    own = ", ".join(f"{mine[k]} x {unit}" for k, unit in enumerate(space.units) if mine[k])
    score = scores.get(name)
    shown = "no replay" if score is None else (
        f"wait p95 {human_duration(score.wait_p95 or 0.0)}, {score.budget_failures} jobs "
        "lost")
    # Which target is missed, beside what the best allocation gives.
    shown += f" against its target of {goal.describe()}"
    if short:
        # A partition's sum is enough, not a minimum: shared capacity may need less (the
        # environment advice says how much).
        return (f"{name} needs {own} on its own; reserved for every share with a target, "
                f"that adds up to {', '.join(short)}, more than the environment has, and "
                f"no allocation tried shares capacity well enough to make up for it; the "
                f"best allocation found gives {name} {shown}")
    return (f"no allocation tried meets it (best: {shown}); it needs {own} when served "
            "alone")
