"""The report says what is true and complete (issue 23): utilization per instance type with
borrowed use, the declarations compared and the service targets, one x-axis per chart,
consistent decimals, and an empty workload said to be empty."""

from __future__ import annotations

import io
import json
import math
import re
from collections import defaultdict
from pathlib import Path

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.simulation import PolicyComparison, SimJob, compare_policies
from quota_constructs.simulation.cli import main as simulate_main
from quota_constructs.simulation.report import write_report
from quota_constructs.simulation.report.summary import findings
from quota_constructs.simulation.results import SimulationResult
from quota_constructs.simulation.workloads import Workload, write_workload

G5, P4 = "ml.g5.xlarge", "ml.p4d.24xlarge"
ENVIRONMENT = [CapacityLimit(G5, 6), CapacityLimit(P4, 2)]
SHARES = [
    QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(P4, 1)],
                   strategy=SharingStrategy.LEND_AND_BORROW,
                   agreement=ShareAgreement(owner="v", target_wait_p95=7200.0)),
    QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 3), CapacityLimit(P4, 1)],
                   strategy=SharingStrategy.LEND,
                   agreement=ShareAgreement(owner="n", target_wait_p95=1800.0,
                                            max_budget_failures=0)),
    QuotaShareSpec(name="speech", capacity_limits=[CapacityLimit(G5, 1)],
                   strategy=SharingStrategy.RESERVE),
]
ALTERNATIVE = [
    QuotaShareSpec(name=s.name, capacity_limits=s.capacity_limits,
                   strategy=SharingStrategy.LEND_AND_BORROW, agreement=s.agreement)
    for s in SHARES
]
ALT_ENVIRONMENT = [CapacityLimit(G5, 7), CapacityLimit(P4, 2)]
DECLARATION = {"capacity_limits": ENVIRONMENT, "shares": SHARES}


def jobs() -> list[SimJob]:
    out = []
    for i in range(30):  # vision borrows g5 while nlp is quiet, then nlp comes back
        out.append(SimJob(job_id=f"v{i}", share="vision", submitted_at=i * 300.0,
                          duration=2400.0, instance_type=G5, instance_count=1 + i % 2))
    for i in range(12):
        out.append(SimJob(job_id=f"n{i}", share="nlp", submitted_at=4000.0 + i * 400.0,
                          duration=1800.0, instance_type=G5 if i % 3 else P4))
    for i in range(6):
        out.append(SimJob(job_id=f"p{i}", share="vision", submitted_at=i * 900.0,
                          duration=3600.0, instance_type=P4, instance_count=2))
    return out


@pytest.fixture(scope="module")
def comparison() -> PolicyComparison:
    return compare_policies(capacity_limits=ENVIRONMENT, shares=SHARES, jobs=jobs(),
                            alternatives={"all-borrow": (ALT_ENVIRONMENT, ALTERNATIVE)})


@pytest.fixture(scope="module")
def page(comparison: PolicyComparison, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("truth")
    write_report(out, comparison, capacity_limits=ENVIRONMENT, shares=SHARES)
    return out


def busy_hours_from_jobs(result: SimulationResult) -> dict[str, float]:
    """Instance-hours held, counted from every attempt of every job (borrowed or not)."""
    busy: dict[str, float] = defaultdict(float)
    for job in result.jobs.values():
        for attempt in job.attempts:
            busy[job.instance_type] += (attempt.ended_at - attempt.started_at) \
                * job.instance_count / 3600
    return busy


def test_utilization_per_type_is_busy_instance_hours_over_capacity_hours(
    comparison: PolicyComparison, page: Path,
) -> None:
    metrics = json.loads((page / "metrics.json").read_text())
    for name, result, environment in (
        ("declared", comparison.declared, ENVIRONMENT),
        ("hard_partition", comparison.hard_partition, ENVIRONMENT),
        ("shared_pool", comparison.shared_pool, ENVIRONMENT),
        ("all-borrow", comparison.alternatives["all-borrow"], ALT_ENVIRONMENT),
    ):
        hours = (result.window[1] - result.window[0]) / 3600
        busy = busy_hours_from_jobs(result)
        expected = {str(c.unit): busy[str(c.unit)] / (c.max_capacity * hours)
                    for c in environment}
        size = {str(c.unit): c.max_capacity for c in environment}
        assert result.utilization(size) == pytest.approx(expected), name
        exported = metrics["arrangements"][name]["instance_types"]
        for unit, value in expected.items():
            assert exported[unit]["utilization"] == pytest.approx(value)
            assert exported[unit]["busy_instance_hours"] == pytest.approx(busy[unit])
    # Borrowed use counts: the declared policy borrows here, and its g5 utilization is not
    # the use within own limits alone.
    declared = comparison.declared
    assert sum(f.borrowed_capacity_hours for f in declared.shares.values()) > 0
    within = sum(f.used_capacity_hours for f in declared.shares.values())
    assert busy_hours_from_jobs(declared)[G5] + busy_hours_from_jobs(declared)[P4] > within


def test_the_summary_gives_utilization_per_type_never_added_together(
    comparison: PolicyComparison,
) -> None:
    _, notes = findings(comparison, capacity_limits=ENVIRONMENT, shares=SHARES)
    (note,) = [n for n in notes if n.subject == "Utilization"]
    for unit in (G5, P4):
        size = {c_unit: c.max_capacity for c in ENVIRONMENT if (c_unit := str(c.unit)) == unit}
        for result in (comparison.declared, comparison.hard_partition, comparison.shared_pool):
            shown = f"{result.utilization(size)[unit] * 100:.1f} %"
            assert shown in note.text.split(f"{unit}:")[1].split(";")[0], (unit, note.text)
    assert "borrowed use included" in note.text
    # No figure over all instance types together.
    assert "all instance types together" not in note.text


def test_the_page_charts_utilization_per_type(page: Path) -> None:
    html = (page / "report.html").read_text()
    chart = re.search(r"id='chart-environment-utilization'.*?</svg>", html, flags=re.S)
    assert chart is not None
    assert f">{G5}</text>" in chart.group(0) and f">{P4}</text>" in chart.group(0)
    own = re.search(r"id='chart-utilization'.*?</svg>", html, flags=re.S)
    assert own is not None
    # Each share's use of its own allocation, one bar group per share with jobs and type it
    # lists (speech has no jobs).
    assert own.group(0).count(f">{P4}</text>") == 2 and own.group(0).count(f">{G5}</text>") == 2


def test_the_declaration_shows_service_targets_and_the_compared_declaration(page: Path) -> None:
    html = (page / "report.html").read_text()
    declaration = html.split("<h2>The declaration</h2>")[1].split("<h2>")[0]
    assert "service target" in declaration
    assert "wait p95 &lt;= 2 h" in declaration  # vision
    assert "wait p95 &lt;= 30 min, jobs lost to a preemption budget &lt;= 0" in declaration
    assert "none declared" in declaration  # speech
    assert re.search(r"class='l (met|missed)'>(met|missed)</td>", declaration)
    compared = declaration.split("Compared declaration")[1]
    assert "all-borrow" in compared and "7 × ml.g5.xlarge" in compared
    assert compared.count("LEND_AND_BORROW") == 3
    metrics = json.loads((page / "metrics.json").read_text())
    assert metrics["compared_declarations"]["all-borrow"]["capacity_limits"][G5] == 7
    vision = metrics["declaration"]["shares"][0]
    assert vision["service_targets"] == {"wait_p95_seconds": 7200.0, "max_budget_failures": None}


def test_one_x_axis_per_chart(page: Path) -> None:
    html = (page / "report.html").read_text()
    # Day boundaries are faint lines named in the axis title, never a second row of labels.
    assert ">day " not in html
    for svg in re.findall(r"<svg.*?</svg>", html, flags=re.S):
        titles = re.findall(r"(hours|minutes|days) since the first submission", svg)
        assert len(titles) <= 1


def test_values_on_one_chart_have_the_same_decimals(page: Path) -> None:
    html = (page / "report.html").read_text()
    for name in ("environment-utilization", "utilization"):
        chart = re.search(rf"id='chart-{name}'.*?</svg>", html, flags=re.S)
        assert chart is not None
        # Values on bars (axis ticks are anchored at their end, left of the axis).
        labels = re.findall(r"text-anchor='(?:start|middle)'[^>]*>([0-9.,]+)%</text>",
                            chart.group(0))
        assert labels and all(re.fullmatch(r"[0-9,]+\.[0-9]", label) for label in labels)
    # In the tables, columns of one unit show one number of decimals.
    table = re.search(r"<table class='figures'>.*?</table>", html, flags=re.S)
    assert table is not None
    heads = re.findall(r"<th>(.*?)</th>", table.group(0))
    units = [re.sub(r".*<span class='u'>([^<]*)</span>", r"\1", h) if "<br>" in h else ""
             for h in heads]
    rows = re.findall(r"<tr><td class='l share'>.*?</tr>", table.group(0), flags=re.S)
    for row in rows:
        cells = re.findall(r"<td>([^<]*)</td>", row)
        decimals: dict[str, set[int]] = defaultdict(set)
        for unit, cell in zip(units, cells, strict=True):
            if cell != "n/a" and unit:
                decimals[unit].add(len(cell.split(".")[1]) if "." in cell else 0)
        assert all(len(found) == 1 for found in decimals.values()), decimals


def test_a_header_only_workload_gives_a_report_that_says_there_are_no_jobs(
    tmp_path: Path,
) -> None:
    """The choice: a report (and the headline on stdout) saying the workload has no jobs,
    exit status 0 — a quiet queue's history export is a header alone, and a pipeline that
    exports then simulates should get a page that says so, not a failure."""
    workload = tmp_path / "empty.csv"
    write_workload(workload, Workload(jobs=[]))
    assert len(workload.read_text().splitlines()) == 1  # the header alone
    out, err = io.StringIO(), io.StringIO()
    code = simulate_main(["--declaration", f"{__name__}:DECLARATION", "--workload",
                          str(workload), "--out", str(tmp_path / "report"), "--quiet"],
                         stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    assert out.getvalue().startswith("The workload has no jobs")
    html = (tmp_path / "report" / "report.html").read_text()
    assert "id='no-jobs'" in html and "The workload has no jobs" in html
    assert "<svg" not in html  # no empty charts
    assert "service target" in html  # the declaration is still shown
    metrics = json.loads((tmp_path / "report" / "metrics.json").read_text())
    assert metrics["workload"]["jobs"] == 0
    assert all(not math.isnan(v["utilization"])
               for v in metrics["arrangements"]["declared"]["instance_types"].values())
