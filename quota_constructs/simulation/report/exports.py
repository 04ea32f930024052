"""The report's machine-readable files: ``metrics.json`` and the per-job CSV."""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...model import CapacityLimit, QuotaShareSpec
from ..results import JOB_RECORD_FIELDS, PolicyComparison, SimulationResult

PROGRESS_ROWS = 10_000
ARRANGEMENTS = ("declared", "hard_partition", "shared_pool")
ARRANGEMENT_TITLES = {
    "declared": "declared policy",
    "hard_partition": "hard partition",
    "shared_pool": "shared FIFO pool",
}


def arrangement_results(comparison: PolicyComparison) -> dict[str, SimulationResult]:
    """The three arrangements, then the alternatives compared with them, in order."""
    results = {name: getattr(comparison, name) for name in ARRANGEMENTS}
    results.update(comparison.alternatives)
    return results


def arrangement_title(name: str) -> str:
    return ARRANGEMENT_TITLES.get(name, name)


def declaration_document(
    capacity_limits: Sequence[CapacityLimit], shares: Sequence[QuotaShareSpec]
) -> dict[str, Any]:
    return {
        "capacity_limits": {str(limit.unit): limit.max_capacity for limit in capacity_limits},
        "shares": [
            {
                "name": spec.name,
                "strategy": spec.strategy.value,
                "borrow_limit_percent": spec.borrow_limit_percent,
                "in_share_preemption": spec.in_share_preemption,
                "enabled": spec.enabled,
                "capacity_limits": {
                    str(limit.unit): limit.max_capacity for limit in spec.capacity_limits
                },
                "service_targets": None if spec.agreement is None
                or not spec.agreement.has_targets else {
                    "wait_p95_seconds": spec.agreement.target_wait_p95_seconds,
                    "max_budget_failures": spec.agreement.max_budget_failures,
                },
            }
            for spec in shares
        ],
    }


def metrics_document(
    comparison: PolicyComparison,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    workload: Mapping[str, Any],
) -> dict[str, Any]:
    """Every per-share figure of all three arrangements, as the result types name them.

    Times are seconds, capacity instance-hours, utilization a fraction (0–1); ``null`` where a
    figure has no value (no job of the share ran).
    """
    return {
        "format": "quota_constructs.simulation.metrics/1",
        "units": {
            "times": "seconds",
            "capacity": "instance-hours",
            "utilization": "fraction of the share's own allocation (0-1), over the "
            "arrangement's window; per instance type in utilization_by_type",
            "instance_types": "per instance type: busy instance-hours (borrowed use included) "
            "over capacity-hours (its size times the window); types never added together",
        },
        "figures_window": "one window for all three arrangements: the first submission to the "
        "last job's end under any of them (window_start, window_end)",
        "declaration": declaration_document(capacity_limits, shares),
        "compared_declarations": {
            name: declaration_document(limits, specs)
            for name, (limits, specs) in comparison.alternative_declarations.items()
        },
        "workload": dict(workload),
        "arrangements": {
            name: {
                "title": arrangement_title(name),
                "started_at": result.started_at,
                "ended_at": result.ended_at,
                "window_start": result.window[0],
                "window_end": result.window[1],
                "not_runnable": len(result.not_runnable),
                "blocked": list(result.blocked),
                "instance_types": _instance_types(result, name, comparison, capacity_limits),
                "shares": {
                    share: dataclasses.asdict(figures) for share, figures in result.shares.items()
                },
            }
            for name, result in arrangement_results(comparison).items()
        },
    }


def arrangement_limits(
    name: str, comparison: PolicyComparison, capacity_limits: Sequence[CapacityLimit]
) -> Sequence[CapacityLimit]:
    """The environment an arrangement ran on: a compared declaration's own, else the
    declared one (the hard partition and the pool use the declared environment)."""
    return comparison.alternative_declarations.get(name, (capacity_limits, ()))[0]


def _instance_types(
    result: SimulationResult, name: str, comparison: PolicyComparison,
    capacity_limits: Sequence[CapacityLimit],
) -> dict[str, dict[str, float]]:
    limits = arrangement_limits(name, comparison, capacity_limits)
    size = {str(limit.unit): limit.max_capacity for limit in limits}
    busy = result.busy_instance_hours()
    hours = (result.window[1] - result.window[0]) / 3600.0
    use = result.utilization(size)
    return {
        unit: {"capacity": count, "capacity_hours": count * hours,
               "busy_instance_hours": busy.get(unit, 0.0), "utilization": use[unit]}
        for unit, count in size.items()
    }


def write_metrics(path: Path, document: Mapping[str, Any]) -> None:
    # allow_nan=False: a NaN or infinity would make the file unreadable to strict JSON parsers.
    path.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n", encoding="utf-8")


def write_job_csv(
    path: Path,
    result: SimulationResult,
    *,
    progress: Callable[[str, int, int], None] | None = None,
) -> int:
    """One row per job (columns :data:`JOB_RECORD_FIELDS`); returns the number of rows."""
    rows = 0
    total = len(result.jobs)
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(JOB_RECORD_FIELDS)
        for record in result.job_records():
            writer.writerow(["" if record[name] is None else record[name]
                             for name in JOB_RECORD_FIELDS])
            rows += 1
            if progress is not None and rows % PROGRESS_ROWS == 0:
                progress(path.name, rows, total)
    if progress is not None:
        progress(path.name, rows, total)
    return rows
