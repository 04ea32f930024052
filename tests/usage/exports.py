"""Hand-written history exports (the columns ``quota-constructs history`` writes), for tests
whose figures are worked out by hand."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from quota_constructs.live.history import COLUMNS

HOUR_MS = 3_600_000
T0 = 1_793_491_200_000
"""2026-11-01T00:00:00Z."""


def at(hours: float) -> int:
    return T0 + round(hours * HOUR_MS)


def utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Row:
    job_id: str
    share: str
    created_h: float
    status: str
    runs: tuple[tuple[float, float | None, str], ...] = ()
    """(start h, stop h or None while running, ending)."""
    count: int = 1
    unit: str = "ml.g5.xlarge"
    retries: int | None = None
    preemptions: int | None = None


def write_export(path: Path, rows: list[Row], exported_h: float) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(COLUMNS)
        for row in rows:
            runs = ";".join(f"{at(a)}/{'' if b is None else at(b)}/{ended}"
                            for a, b, ended in row.runs)
            preempted = sum(ended == "PREEMPTED" for _, _, ended in row.runs)
            count = preempted if row.preemptions is None else row.preemptions
            writer.writerow([
                row.job_id, row.share, (at(row.created_h) - T0) / 1000, 0, row.unit, row.count,
                0, "" if row.retries is None else row.retries, utc(at(row.created_h)),
                row.job_id, row.status, "finished", len(row.runs), count,
                max(0, count - preempted), runs, utc(at(exported_h)),
            ])
    return path
