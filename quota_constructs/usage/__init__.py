"""What each team used, borrowed, lent and lost: a usage report from what AWS Batch recorded.

    quota-constructs usage --history jobs.csv --declaration my_platform.quotas:PROD \
        [--prices prices.csv] [--since 2026-11-01T00:00:00Z --until 2026-12-01T00:00:00Z] \
        [--half-life 7d] [--ledger s3://bucket/job-ledger/gpu-prod] --out usage/

Reads a ``quota-constructs history`` export (and/or the monitoring's job ledger), integrates
every share's instance counts over time per instance type (:mod:`.figures` defines each
figure) and writes ``usage.json``, ``usage.csv`` and ``report.html`` (:func:`write_usage`).
Pure Python but for the ledger's S3 reads (boto3); no ``aws_cdk``, no simulation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..model import CapacityLimit, QuotaShareSpec
from .document import usage_document, write_usage_csv, write_usage_json
from .figures import (
    DEFAULT_HALF_LIFE_HOURS,
    FairShare,
    QueueFigures,
    ShareFigures,
    TypeFigures,
    UsageResult,
    Window,
    default_window,
    measure,
)
from .jobs import JobTable, UsageInputError, merge_records, read_history
from .page import render_usage_page

USAGE_JSON = "usage.json"
"""The figures, in the schema of :mod:`quota_constructs.usage.document`."""
USAGE_CSV = "usage.csv"
"""One row per share and instance type."""
REPORT_HTML = "report.html"
"""The page for people."""


@dataclass(frozen=True)
class UsageFiles:
    json: Path
    csv: Path
    html: Path
    rows: int
    """Rows of ``usage.csv`` (one per share and instance type)."""


def write_usage(directory: str | Path, result: UsageResult, *,
                capacity_limits: Sequence[CapacityLimit], shares: Sequence[QuotaShareSpec],
                title: str = "Quota share usage", sources: Sequence[str] = ()) -> UsageFiles:
    """Write the three files into ``directory`` (created when missing)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    write_usage_json(out / USAGE_JSON, result)
    rows = write_usage_csv(out / USAGE_CSV, result)
    html = render_usage_page(result, capacity_limits=capacity_limits, shares=shares,
                             title=title, sources=sources, files=(USAGE_JSON, USAGE_CSV))
    (out / REPORT_HTML).write_text(html, encoding="utf-8")
    return UsageFiles(out / USAGE_JSON, out / USAGE_CSV, out / REPORT_HTML, rows)


__all__ = [
    "DEFAULT_HALF_LIFE_HOURS",
    "REPORT_HTML",
    "USAGE_CSV",
    "USAGE_JSON",
    "FairShare",
    "JobTable",
    "QueueFigures",
    "ShareFigures",
    "TypeFigures",
    "UsageFiles",
    "UsageInputError",
    "UsageResult",
    "Window",
    "default_window",
    "measure",
    "merge_records",
    "read_history",
    "usage_document",
    "write_usage",
]
