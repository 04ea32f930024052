"""A report a person would rather look at than read: HTML with charts, ``metrics.json``, a CSV.

Standard library only, on purpose: the charts are hand-written inline SVG, so the library gains
no runtime dependency for a report, the page opens offline without scripts or fonts, and the
output is small (the timelines are averaged into a few hundred intervals) and deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...model import CapacityLimit, QuotaShareSpec
from ..results import PolicyComparison
from .exports import metrics_document, write_job_csv, write_metrics
from .page import render_page

REPORT_FILE = "report.html"
METRICS_FILE = "metrics.json"
JOBS_FILE = "jobs.csv"


@dataclass(frozen=True)
class ReportFiles:
    html: Path
    metrics: Path
    jobs: Path
    job_rows: int


def write_report(
    directory: str | Path,
    comparison: PolicyComparison,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    title: str = "Quota share simulation",
    workload: Mapping[str, Any] | None = None,
    buckets: int = 300,
    progress: Callable[[str, int, int], None] | None = None,
) -> ReportFiles:
    """Write ``report.html``, ``metrics.json`` and ``jobs.csv`` (declared policy) into
    ``directory`` (created when missing) and return their paths.

    ``workload`` describes the input in the report and metrics (e.g. ``jobs``, ``source``,
    ``seed``); ``buckets`` is how many intervals the capacity charts average over.
    ``progress(task, done, total)`` is called as each file is written, like
    :func:`~quota_constructs.simulation.compare_policies`'s.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    described = dict(workload or {})
    described.setdefault("jobs", len(comparison.declared.jobs))
    step = progress or _silent
    rows = write_job_csv(out / JOBS_FILE, comparison.declared, progress=step)
    write_metrics(out / METRICS_FILE, metrics_document(
        comparison, capacity_limits=capacity_limits, shares=shares, workload=described
    ))
    step(METRICS_FILE, 1, 1)
    html = render_page(
        comparison,
        capacity_limits=capacity_limits,
        shares=shares,
        title=title,
        workload=described,
        files=(METRICS_FILE, JOBS_FILE),
        buckets=buckets,
        progress=step,
    )
    (out / REPORT_FILE).write_text(html, encoding="utf-8")
    return ReportFiles(out / REPORT_FILE, out / METRICS_FILE, out / JOBS_FILE, rows)


def _silent(task: str, done: int, total: int) -> None:
    del task, done, total


__all__ = ["JOBS_FILE", "METRICS_FILE", "REPORT_FILE", "ReportFiles", "write_report"]
