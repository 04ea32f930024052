"""The report: every share charted, figures exported exactly, one CSV row per job."""

from __future__ import annotations

import csv
import dataclasses
import json
import re
from pathlib import Path

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import JOB_RECORD_FIELDS, PolicyComparison, compare_policies
from quota_constructs.simulation.report import write_report
from quota_constructs.simulation.report.summary import (
    MOST_SHARES,
    compare,
    findings,
    human_seconds,
)
from quota_constructs.simulation.report.svg import nice_ticks, share_colour
from quota_constructs.simulation.report.timeline import bucket_averages
from quota_constructs.simulation.workloads import default_traffic, read_workload, synthesize
from stacks.environments import ENVIRONMENTS
from stacks.launch import PROJECT_ROOT

PROD = ENVIRONMENTS["prod"]
DEV = ENVIRONMENTS["dev"]


@pytest.fixture(scope="module")
def prod_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[PolicyComparison, Path]:
    traffic = default_traffic(PROD.capacity_limits, PROD.shares, jobs=400, hours=72)
    workload = synthesize(traffic, seed=4, jobs=400)
    comparison = compare_policies(
        capacity_limits=PROD.capacity_limits, shares=PROD.shares,
        jobs=workload.jobs, priority_changes=workload.priority_changes,
    )
    out = tmp_path_factory.mktemp("report")
    write_report(out, comparison, capacity_limits=PROD.capacity_limits, shares=PROD.shares,
                 title="prod <test>", workload={"source": "synthetic", "seed": 4})
    return comparison, out


def test_the_page_is_self_contained_and_charts_every_share(
    prod_run: tuple[PolicyComparison, Path],
) -> None:
    _, out = prod_run
    html = (out / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "prod &lt;test&gt;" in html  # titles are escaped
    # Nothing is fetched: no scripts, stylesheets, images or fonts from elsewhere.
    assert not re.search(r"<script|<link|<img|@import|url\((?!#)", html)
    assert not re.search(r"(src|href)=['\"]?(https?:)?//", html)
    for name in ("waits", "completion", "preemptions", "lost", "failures", "utilization",
                 "flows"):
        assert f"id='chart-{name}'" in html
    for index, spec in enumerate(PROD.shares):
        colour = share_colour(index)
        for limit in spec.capacity_limits:
            chart = re.search(
                rf"id='chart-capacity-{spec.name}-{re.escape(str(limit.unit))}'.*?</svg>", html
            )
            assert chart is not None, (spec.name, limit.unit)
            assert colour in chart.group(0)
        # The same colour for the share in the comparison charts.
        waits = re.search(r"id='chart-waits'.*?</svg>", html)
        assert waits is not None and f"{spec.name} · declared policy" in waits.group(0)
        assert colour in waits.group(0)
    for limit in PROD.capacity_limits:
        assert f"id='chart-overview-{limit.unit}'" in html
    assert "What this means" in html


def test_metrics_json_holds_every_figure_of_all_three_arrangements(
    prod_run: tuple[PolicyComparison, Path],
) -> None:
    comparison, out = prod_run
    document = json.loads((out / "metrics.json").read_text())
    assert document["workload"]["seed"] == 4
    assert [s["name"] for s in document["declaration"]["shares"]] == [
        s.name for s in PROD.shares
    ]
    for name in ("declared", "hard_partition", "shared_pool"):
        result = getattr(comparison, name)
        exported = document["arrangements"][name]
        assert exported["started_at"] == result.started_at
        assert exported["ended_at"] == result.ended_at
        assert exported["shares"] == {
            share: dataclasses.asdict(figures) for share, figures in result.shares.items()
        }


def test_the_job_csv_has_one_row_per_job_with_its_outcome(
    prod_run: tuple[PolicyComparison, Path],
) -> None:
    comparison, out = prod_run
    with (out / "jobs.csv").open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == len(comparison.declared.jobs) == 400
    assert tuple(rows[0]) == JOB_RECORD_FIELDS
    for row in rows[:50]:
        outcome = comparison.declared.jobs[row["job_id"]]
        assert row["status"] == outcome.status
        assert int(row["attempts"]) == len(outcome.attempts)
        assert float(row["lost_seconds"]) == outcome.lost_seconds
        assert float(row["wait_seconds"]) == outcome.wait_seconds


def test_the_walkthrough_report_tells_who_gains_from_borrowing(tmp_path: Path) -> None:
    workload = read_workload(PROJECT_ROOT / "examples" / "workloads" / "walkthrough.csv")
    comparison = compare_policies(
        capacity_limits=DEV.capacity_limits, shares=DEV.shares,
        jobs=workload.jobs, priority_changes=workload.priority_changes,
    )
    headline, notes = findings(comparison, capacity_limits=DEV.capacity_limits,
                               shares=DEV.shares)
    research = next(n for n in notes if n.subject == "research")
    # research-med borrows product's idle instance and starts at once instead of waiting.
    assert research.tone == "better"
    assert "cross-share" in research.text
    assert "research" in headline
    files = write_report(tmp_path, comparison, capacity_limits=DEV.capacity_limits,
                         shares=DEV.shares)
    assert files.job_rows == len(workload.jobs)


def test_bucket_averages_keep_the_area_under_the_step_function() -> None:
    # 2 instances from 0 to 30, 1 from 30 to 100, 0 after: 130 instance-seconds over [0, 100).
    averages = bucket_averages([0.0, 30.0, 100.0], [2, 1, 0], start=0.0, end=100.0, buckets=4)
    assert averages == pytest.approx([2.0, 1.2, 1.0, 1.0])
    assert sum(averages) * 25 == pytest.approx(130.0)
    # Before the first change the share holds nothing; one segment can span many buckets.
    assert bucket_averages([50.0], [3], start=0.0, end=100.0, buckets=2) == [0.0, 3.0]
    assert bucket_averages([], [], start=0.0, end=10.0, buckets=3) == [0.0, 0.0, 0.0]


def test_words_and_ticks() -> None:
    assert compare(30.0, 100.0) == ("70 % shorter", "better")
    assert compare(300.0, 100.0) == ("3.0× longer", "worse")
    assert compare(105.0, 100.0)[1] == "neutral"
    assert compare(10.0, 50.0)[1] == "neutral"  # both under a minute
    assert compare(None, 5.0)[1] == "neutral"
    assert compare(3000.0, 0.0) == ("longer", "worse")
    assert compare(1.0, 3000.0) == ("over 99 % shorter", "better")
    assert human_seconds(45) == "45 s"
    assert human_seconds(1800) == "30 min"
    assert human_seconds(7200) == "2 h"
    assert human_seconds(3 * 86400) == "3 d"
    assert nice_ticks(7.3) == [0.0, 2.0, 4.0, 6.0, 8.0]
    assert nice_ticks(0) == [0.0, 1.0]


def test_twenty_shares_stay_readable(tmp_path: Path) -> None:
    unit = "ml.g5.xlarge"
    strategies = [SharingStrategy.LEND_AND_BORROW, SharingStrategy.LEND, SharingStrategy.RESERVE]
    shares = [
        QuotaShareSpec(name=f"team-{i:02d}", capacity_limits=[CapacityLimit(unit, 2)],
                       strategy=strategies[i % 3])
        for i in range(20)
    ]
    capacity = [CapacityLimit(unit, 44)]
    workload = synthesize(default_traffic(capacity, shares, jobs=600, hours=24), seed=2,
                          jobs=600)
    comparison = compare_policies(capacity_limits=capacity, shares=shares, jobs=workload.jobs,
                                  priority_changes=workload.priority_changes)
    _, notes = findings(comparison, capacity_limits=capacity, shares=shares)
    per_share = [n for n in notes if n.subject.startswith("team-")]
    assert len(per_share) == MOST_SHARES
    rest = next(n for n in notes if n.subject == f"{20 - MOST_SHARES} other shares")
    assert all(f"team-{i:02d}" in rest.text or f"team-{i:02d}" in {n.subject for n in per_share}
               for i in range(20))
    write_report(tmp_path, comparison, capacity_limits=capacity, shares=shares)
    html = (tmp_path / "report.html").read_text()
    colours = {share_colour(i) for i in range(20)}
    assert len(colours) == 20
    # Nothing is preempted in this roomy environment: that chart says so; a chart with
    # values (utilization) names every share.
    preemptions = re.search(r"id='chart-preemptions'.*?</svg>", html)
    assert preemptions is not None and "Every value is 0" in preemptions.group(0)
    utilization = re.search(r"id='chart-utilization'.*?</svg>", html)
    assert utilization is not None
    for spec in shares:
        assert f">{spec.name}</text>" in utilization.group(0)
