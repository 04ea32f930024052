"""What people see: the "All figures" tables (one unit per column, the share column kept while
scrolling), day marks on time axes, all-zero charts that say so, legend swatches that cannot
be confused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from quota_constructs.simulation import PolicyComparison, compare_policies
from quota_constructs.simulation.report import write_report
from quota_constructs.simulation.report.svg import AreaChart, Band, BarChart, BarGroup
from quota_constructs.simulation.workloads import default_traffic, synthesize
from stacks.environments import ENVIRONMENTS

PROD = ENVIRONMENTS["prod"]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    traffic = default_traffic(PROD.capacity_limits, PROD.shares, jobs=400, hours=72)
    workload = synthesize(traffic, seed=4, jobs=400)
    comparison: PolicyComparison = compare_policies(
        capacity_limits=PROD.capacity_limits, shares=PROD.shares,
        jobs=workload.jobs, priority_changes=workload.priority_changes,
    )
    out: Path = tmp_path_factory.mktemp("report")
    write_report(out, comparison, capacity_limits=PROD.capacity_limits, shares=PROD.shares)
    return (out / "report.html").read_text()


def figure_tables(page: str) -> list[str]:
    return re.findall(r"<table class='figures'>.*?</table>", page, flags=re.DOTALL)


def test_each_column_has_one_unit_named_in_its_heading(page: str) -> None:
    tables = figure_tables(page)
    assert len(tables) == 3
    for table in tables:
        header = re.findall(r"<th>(.*?)</th>", table)
        # (a zero-width space may follow the dots of an instance type, so it can break)
        units = dict(re.findall(r"^([^<]+)<br><span class='u'>([^<]+)</span>$",
                                h.replace("\u200b", ""))[0]
                     for h in header if "<br>" in h)
        assert units["wait p95"] in ("minutes", "hours", "days")
        # One utilization column per instance type, never one adding types together.
        assert [label for label in units if label.startswith("utilization")] == [
            f"utilization {limit.unit}" for limit in PROD.capacity_limits]
        assert all(units[f"utilization {limit.unit}"] == "%" for limit in PROD.capacity_limits)
        assert units["lost"] == "inst-h"
        # Cells are bare numbers: no unit of their own that could differ from row to row.
        for cell in re.findall(r"<td>([^<]*)</td>", table):
            assert re.fullmatch(r"[0-9,]+(\.[0-9]+)?|n/a", cell), cell
    # The same unit in all three tables, so they compare.
    headers = {tuple(re.findall(r"<th>(.*?)</th>", table)) for table in tables}
    assert len(headers) == 1


def test_the_share_column_stays_while_a_wide_table_scrolls(page: str) -> None:
    css = re.search(r"<style>(.*?)</style>", page, flags=re.DOTALL)
    assert css is not None
    assert re.search(r"table\.figures \.share\{position:sticky;left:0", css.group(1))
    assert re.search(r"\.wide\{overflow-x:auto", css.group(1))
    for table in figure_tables(page):
        assert table.count("class='l share'") == 1 + len(PROD.shares)


DAY_LINE = "stroke='#b9c3d0' stroke-dasharray='2 3'"


def test_hours_axes_carry_day_lines_and_day_ticks_on_one_axis() -> None:
    chart = AreaChart(title="t", xs=[i * 0.24 for i in range(300)], x_label="hours",
                      y_label="n", bands=[Band("a", "#000", [1.0] * 300)], y_max=2.0,
                      per_day=24.0).render("c")
    assert chart.count(DAY_LINE) == 2  # days 1 and 2 of a 72-hour axis
    # One x-axis: no second row of labels ("day 1", ...) along the top.
    assert ">day " not in chart and "(dotted lines: day boundaries)" in chart
    ticks = re.findall(r"text-anchor='middle' font-weight='normal' fill='#222'>(\d+)<", chart)
    assert ticks and all(int(t) % 12 == 0 for t in ticks)
    minutes = AreaChart(title="t", xs=[0.0, 1.0], x_label="minutes", y_label="n",
                        bands=[Band("a", "#000", [1.0, 1.0])], y_max=2.0).render("m")
    assert DAY_LINE not in minutes and "day boundaries" not in minutes


def test_the_capacity_charts_of_a_three_day_run_have_day_lines(page: str) -> None:
    overview = re.search(r"id='chart-overview-ml.g5.xlarge'.*?</svg>", page)
    assert overview is not None and DAY_LINE in overview.group(0)
    assert ">day " not in page


def test_an_all_zero_chart_says_so_instead_of_a_zero_to_one_axis() -> None:
    bars = BarChart(title="Preemptions", y_label="preemptions",
                    groups=[BarGroup("a", "#123456", [[0.0], [0.0], [0.0]])],
                    series=["x", "y", "z"]).render("p")
    assert "Every value is 0: no preemptions" in bars
    assert ">1<" not in bars and "<rect x='" not in bars.split("</title>", 1)[1].replace(
        "<rect x='16' y='34'", "")
    area = AreaChart(title="Use", xs=[0.0, 1.0], x_label="h", y_label="n",
                     bands=[Band("a", "#000", [0.0, 0.0])]).render("u")
    assert "Every value is 0" in area


def test_segment_swatches_differ_from_series_swatches() -> None:
    chart = BarChart(title="Preemptions", y_label="preemptions",
                     groups=[BarGroup("a", "#123456", [[1.0, 2.0], [0.0, 1.0], [0.0, 0.0]])],
                     series=["declared policy", "hard partition", "shared FIFO pool"],
                     segments=("cross-share", "in-share")).render("p")
    swatches = dict(
        (label, swatch) for swatch, label in re.findall(
            r"<g transform='translate\([^)]*\)'>(.*?)</g><text[^>]*>([^<]*)</text>", chart)
    )
    declared = swatches["declared policy"]
    cross = next(s for label, s in swatches.items() if label.startswith("cross-share"))
    in_share = next(s for label, s in swatches.items() if label.startswith("in-share"))
    assert len({declared, cross, in_share}) == 3
