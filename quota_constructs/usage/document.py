"""``usage.json`` and ``usage.csv``: the figures of :mod:`.figures`, written once each.

``usage.json``::

    {"window": {"start": ISO, "end": ISO, "hours": float},
     "shares": {share: {"jobs", "wait_p50_seconds", "wait_p95_seconds",
                        "target_wait_p95_seconds", "preemptions", "budget_failures",
                        "instance_types": {type: {"own_capacity", "used_hours",
                            "own_used_hours", "borrowed_hours", "idle_own_hours",
                            "lent_hours", "preempted_hours", "cost"}}}},
     "queue": {type: {"capacity", "used_hours", "idle_hours"}},
     "fair_share": {"half_life_hours": float,
                    "shares": {share: {"decayed_used_hours", "decayed_own_hours", "ratio"}}}}

Every declared share and every type of the environment appear (and any other share or type
the history ran); ``null`` where a figure does not exist (no wait without a started job, no
cost without a price, no ratio for a share owning nothing). ``usage.csv`` has one row per share
and instance type: the share, the type and the ``instance_types`` figures.
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..wire.utc_time import iso_utc_ms
from .figures import TypeFigures, UsageResult

TYPE_FIELDS = tuple(TypeFigures.__dataclass_fields__)
CSV_COLUMNS = ("share", "instance_type", *TYPE_FIELDS)


def usage_document(result: UsageResult) -> dict[str, Any]:
    window = result.window
    return {
        "window": {"start": iso_utc_ms(window.start_ms), "end": iso_utc_ms(window.end_ms),
                   "hours": window.hours},
        "shares": {
            name: {
                "jobs": share.jobs,
                "wait_p50_seconds": share.wait_p50_seconds,
                "wait_p95_seconds": share.wait_p95_seconds,
                "target_wait_p95_seconds": share.target_wait_p95_seconds,
                "preemptions": share.preemptions,
                "budget_failures": share.budget_failures,
                "instance_types": {unit: asdict(figures)
                                   for unit, figures in share.instance_types.items()},
            }
            for name, share in result.shares.items()
        },
        "queue": {unit: asdict(queue) for unit, queue in result.queue.items()},
        "fair_share": {
            "half_life_hours": result.half_life_hours,
            "shares": {name: asdict(fair) for name, fair in result.fair_share.items()},
        },
    }


def write_usage_json(path: Path, result: UsageResult) -> None:
    path.write_text(json.dumps(usage_document(result), indent=1) + "\n", encoding="utf-8")


def write_usage_csv(path: Path, result: UsageResult) -> int:
    """One row per share and instance type; returns the rows written."""
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for name, share in result.shares.items():
            for unit, figures in share.instance_types.items():
                values = asdict(figures)
                writer.writerow([name, unit, *("" if values[key] is None else values[key]
                                               for key in TYPE_FIELDS)])
                rows += 1
    return rows
