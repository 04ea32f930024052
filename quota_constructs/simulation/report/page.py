"""The HTML report: one self-contained page (inline CSS and SVG, no script, no external file)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from ...model import CapacityLimit, QuotaShareSpec
from ..results import PolicyComparison, ShareFigures, SimulationResult
from ..targets import outcome, targets_of
from .exports import arrangement_limits, arrangement_results, arrangement_title
from .summary import Finding, environment_utilization, findings, has_jobs, human_seconds
from .svg import (
    POLICY_OPACITY,
    AreaChart,
    Band,
    BarChart,
    BarGroup,
    Line,
    RangeChart,
    RangeRow,
    share_colour,
)
from .timeline import bucket_averages

SHORT = ("decl", "hard", "pool")

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#222;
 margin:24px auto;max-width:1340px;padding:0 16px;line-height:1.45}
h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:32px 0 6px;border-bottom:2px solid #ddd;
 padding-bottom:4px}p.sub{color:#555;margin:2px 0}
.summary{background:#f4f7fb;border:1px solid #c9d7ea;border-radius:8px;padding:12px 18px;
 margin:16px 0}
.summary .label{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:#4a6a94;
 font-weight:700}.summary .headline{font-size:17px;font-weight:600;margin:4px 0 8px}
.summary ul{margin:0;padding-left:0;list-style:none}.summary li{margin:5px 0;padding-left:22px;
 position:relative}.summary li:before{position:absolute;left:0;font-weight:bold}
li.better:before{content:'\\25BC';color:#1a7f37}li.worse:before{content:'\\25B2';color:#c62828}
li.neutral:before{content:'\\25CF';color:#777}
svg{max-width:100%;height:auto}
.grid{display:flex;flex-wrap:wrap;gap:18px 28px;align-items:flex-start}
.chart{margin:8px 0;min-width:0}.chart p{margin:2px 0 0;color:#555;font-size:13px;max-width:640px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{border:1px solid #ddd;
 padding:3px 8px;text-align:right;white-space:nowrap}th{background:#f2f2f2}
td.l,th.l{text-align:left}td.met{background:#e6f4ea}td.missed{background:#fdecea}
h3{font-size:16px;margin:18px 0 4px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:6px;
 vertical-align:-1px}
details{margin:6px 0}.wide{overflow-x:auto;max-width:100%}
table.figures th{white-space:normal;vertical-align:bottom;min-width:40px;max-width:78px}
table.figures th,table.figures td{padding:3px 6px;font-size:12.5px}
th .u{font-weight:normal;color:#666;font-size:12px}
table.figures .share{position:sticky;left:0;z-index:1;background:#fff;
 box-shadow:inset -1px 0 #bbb}table.figures th.share{background:#f2f2f2}
summary{cursor:pointer;font-weight:600}footer{color:#666;font-size:12px;
 margin:32px 0}
"""


@dataclass(frozen=True)
class TimeAxis:
    """Hours from the first submission (minutes for short runs, days for long ones)."""

    start: float
    end: float
    divisor: float
    label: str

    @property
    def per_day(self) -> float | None:
        """Axis units per day, for day marks; None on a minutes axis."""
        return None if self.divisor < 3600 else 86400.0 / self.divisor

    @classmethod
    def of(cls, start: float, end: float) -> TimeAxis:
        span = max(end - start, 1.0)
        if span < 3 * 3600:
            return cls(start, start + span, 60.0, "minutes since the first submission")
        if span > 21 * 86400:
            return cls(start, start + span, 86400.0, "days since the first submission")
        return cls(start, start + span, 3600.0, "hours since the first submission")

    def xs(self, buckets: int) -> list[float]:
        width = (self.end - self.start) / buckets / self.divisor
        return [i * width for i in range(buckets)]


def render_page(
    comparison: PolicyComparison,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    title: str,
    workload: Mapping[str, Any],
    files: Sequence[str] = (),
    buckets: int = 300,
    progress: Callable[[str, int, int], None] | None = None,
) -> str:
    colours = {spec.name: share_colour(i) for i, spec in enumerate(shares)}
    active = [
        spec for spec in shares
        if any(r.shares.get(spec.name) is not None and r.shares[spec.name].jobs > 0
               for r in arrangement_results(comparison).values())
    ]
    headline, notes = findings(comparison, capacity_limits=capacity_limits, shares=shares)
    declared = comparison.declared
    if not has_jobs(comparison):
        return _empty_page(comparison, capacity_limits, shares, colours, title, workload,
                           files, headline)
    axis = TimeAxis.of(declared.started_at, declared.ended_at)
    capacity_html = _capacity_section(declared, capacity_limits, shares, colours, axis, buckets,
                                      progress)
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p class='sub'>{escape(_environment_line(capacity_limits))} · "
        f"{escape(_workload_line(workload))} · simulated span "
        f"{escape(human_seconds(declared.ended_at - declared.started_at))} · figures of every "
        f"arrangement over one window of "
        f"{escape(human_seconds(declared.window[1] - declared.window[0]))} (first submission "
        "to the last job's end under any arrangement)</p>",
        _summary(headline, notes),
        "<h2>The declaration</h2>",
        _declaration_table(shares, colours, declared.shares),
        _compared_declarations(comparison, colours),
        "<h2>Capacity per share over time (declared policy)</h2>",
        capacity_html,
        "<h2>Waiting and completion: declared policy against the alternatives</h2>",
        "<p class='sub'>Each share has three rows: the <b>declared</b> policy (full colour), a "
        "<b>hard partition</b> (every share RESERVE, nobody borrows; lighter) and one "
        "<b>shared FIFO pool</b> without shares (lightest). Wait = submission to first start; "
        "completion = submission to success.</p>",
        _alternatives_line(comparison),
        "<div class='grid'>",
        _chart(_wait_chart(comparison, active, colours), "waits",
               "Shorter bars are better. A share whose declared bar is shorter than its hard "
               "partition bar gains from borrowing; longer means it pays for others' borrowing."),
        _chart(_completion_chart(comparison, active, colours), "completion",
               "Completion includes run time and any work redone after preemptions."),
        "</div>",
        "<h2>Preemptions, lost work and failures</h2>",
        "<div class='grid'>",
        *_cost_charts(comparison, active, colours),
        "</div>",
        "<h2>Utilization and use of allocations</h2>",
        "<div class='grid'>",
        *_allocation_charts(comparison, active, colours, capacity_limits),
        "</div>",
        "<h2>All figures</h2>",
        *_figure_tables(comparison, shares, colours, capacity_limits),
        _footer(files),
        "</body></html>",
    ]
    return "".join(parts)


def _empty_page(
    comparison: PolicyComparison, capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec], colours: Mapping[str, str], title: str,
    workload: Mapping[str, Any], files: Sequence[str], headline: str,
) -> str:
    """A workload without jobs: the page says so first, shows the declaration, and draws no
    chart (an empty chart would read as a scale without data)."""
    return "".join([
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p class='sub'>{escape(_environment_line(capacity_limits))} · "
        f"{escape(_workload_line(workload))}</p>",
        "<section class='summary' id='no-jobs'><div class='label'>What this means</div>"
        f"<div class='headline'>{escape(headline)}</div>"
        "<p>Check the workload file: a history export of a queue with no jobs in the chosen "
        "period has its header alone.</p></section>",
        "<h2>The declaration</h2>",
        _declaration_table(shares, colours),
        _compared_declarations(comparison, colours),
        _footer(files),
        "</body></html>",
    ])


def _summary(headline: str, notes: Sequence[Finding]) -> str:
    items = "".join(
        f"<li class='{escape(n.tone)}'><b>{escape(n.subject)}</b> {escape(n.text)}</li>"
        for n in notes
    )
    return (
        "<section class='summary'><div class='label'>What this means</div>"
        f"<div class='headline'>{escape(headline)}</div><ul>{items}</ul>"
        "<div style='color:#666;font-size:12px;margin-top:6px'>▼ shorter wait than a hard "
        "partition · ▲ longer · ● about the same or context</div></section>"
    )


def _chart(svg: str, name: str, caption: str) -> str:
    text = f"<p>{escape(caption)}</p>" if caption else ""
    return f"<figure class='chart' id='chart-{escape(name)}' style='margin:0'>{svg}{text}</figure>"


def _environment_line(capacity_limits: Sequence[CapacityLimit]) -> str:
    return "environment " + ", ".join(
        f"{limit.max_capacity} × {limit.unit}" for limit in capacity_limits
    )


def _workload_line(workload: Mapping[str, Any]) -> str:
    jobs, changes = workload.get("jobs", 0), workload.get("priority_changes", 0)
    line = f"{jobs:,} job{'' if jobs == 1 else 's'}"
    if changes:
        line += f", {changes:,} priority change{'' if changes == 1 else 's'}"
    source = workload.get("source")
    if source:
        line += f" from {source}"
    return line


def _declaration_table(
    shares: Sequence[QuotaShareSpec], colours: Mapping[str, str],
    declared: Mapping[str, ShareFigures] | None = None,
) -> str:
    """Each share's limits, strategy and options, and its service targets (from its
    agreement) with whether the declared policy met them in this replay (``declared``)."""
    goals = targets_of(shares)
    rows = []
    for spec in shares:
        limits = ", ".join(f"{limit.max_capacity} × {limit.unit}" for limit in spec.capacity_limits)
        borrow = ("—" if spec.borrow_limit is None
                  else "unlimited" if spec.borrow_limit_percent is None
                  else f"{spec.borrow_limit_percent} %")
        goal = goals.get(spec.name)
        target = "none declared" if goal is None else goal.describe()
        verdict = ""
        if goal is not None and declared is not None:
            met = outcome(goal, declared.get(spec.name)).met
            verdict = (f"<td class='l {'met' if met else 'missed'}'>"
                       f"{'met' if met else 'missed'}</td>")
        elif declared is not None:
            verdict = "<td class='l'>—</td>"
        rows.append(
            f"<tr><td class='l'><span class='sw' style='background:{colours[spec.name]}'></span>"
            f"{escape(spec.name)}</td><td class='l'>{escape(spec.strategy.value)}</td>"
            f"<td class='l'>{escape(limits)}</td><td>{escape(borrow)}</td>"
            f"<td>{'on' if spec.in_share_preemption else 'off'}</td>"
            f"<td>{'yes' if spec.enabled else 'DISABLED'}</td>"
            f"<td class='l'>{escape(target)}</td>{verdict}</tr>"
        )
    verdict_head = ("<th class='l'>target met in this replay</th>"
                    if declared is not None else "")
    return (
        "<table><tr><th class='l'>share</th><th class='l'>strategy</th><th class='l'>own limit"
        "</th><th>borrow limit</th><th>in-share preemption</th><th>enabled</th>"
        f"<th class='l'>service target</th>{verdict_head}</tr>"
        + "".join(rows) + "</table>"
    )


def _compared_declarations(comparison: PolicyComparison, colours: Mapping[str, str]) -> str:
    """Each compared declaration's environment and limits, as the declaration's own."""
    out = []
    for index, (name, (limits, specs)) in enumerate(
        comparison.alternative_declarations.items()
    ):
        known = {spec.name: colours.get(spec.name, share_colour(i))
                 for i, spec in enumerate(specs)}
        out.append(
            f"<h3>Compared declaration <b>{escape(name)}</b> (alt{index + 1})</h3>"
            f"<p class='sub'>{escape(_environment_line(limits))}</p>"
            + _declaration_table(specs, known, comparison.alternatives[name].shares)
        )
    return "".join(out)


def _capacity_section(
    result: SimulationResult,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    colours: Mapping[str, str],
    axis: TimeAxis,
    buckets: int,
    progress: Callable[[str, int, int], None] | None,
) -> str:
    xs = axis.xs(buckets)
    overview, panels = [], []
    pairs = sum(1 for limit in capacity_limits for spec in shares if spec.limit_of(limit.unit))
    done = 0
    for limit in capacity_limits:
        unit = str(limit.unit)
        bands = []
        for spec in shares:
            if spec.limit_of(unit) == 0:
                continue
            if progress is not None:
                progress("capacity charts", done, pairs)
            done += 1
            timeline = result.capacity_timeline(spec.name, unit)
            in_use = bucket_averages(timeline.times, timeline.in_use, start=axis.start,
                                     end=axis.end, buckets=buckets)
            borrowed = bucket_averages(timeline.times, timeline.borrowed, start=axis.start,
                                       end=axis.end, buckets=buckets)
            own = [u - b for u, b in zip(in_use, borrowed, strict=True)]
            bands.append(Band(spec.name, colours[spec.name], in_use))
            own_limit = spec.limit_of(unit)
            panel = _instances_chart(
                f"{spec.name} · {unit}", axis, xs, limit,
                [Band("in use within own limit", colours[spec.name], own),
                 Band("borrowed", colours[spec.name], borrowed, hatched=True)],
                level=(f"own limit ({own_limit})", "#333", own_limit), size=(640, 220),
            )
            panels.append(_chart(panel.render(f"cap-{spec.name}-{unit}"),
                                 f"capacity-{spec.name}-{unit}", ""))
        whole = _instances_chart(
            f"Who uses the {unit} instances", axis, xs, limit, bands,
            level=(f"environment capacity ({limit.max_capacity})", "#000", limit.max_capacity),
            size=(1280, 280),
        )
        overview.append(_chart(
            whole.render(f"overview-{unit}"),
            f"overview-{unit}",
            f"Instances of {unit} each share holds (borrowed included), stacked, averaged over "
            f"{buckets} equal intervals.",
        ))
    if progress is not None:
        progress("capacity charts", pairs, pairs)
    legend = (
        "<p class='sub'>Per share and instance type: <b>solid</b> = instances it uses within its "
        "own limit, <b>hatched</b> = borrowed instances (above its own limit), <b>dashed "
        "line</b> = its own limit. Room below the dashed line is allocation it left idle (lent "
        "to borrowers if its strategy lends).</p>"
    )
    return "".join(overview) + legend + "<div class='grid'>" + "".join(panels) + "</div>"


def _instances_chart(
    title: str, axis: TimeAxis, xs: Sequence[float], limit: CapacityLimit,
    bands: Sequence[Band], *, level: tuple[str, str, int], size: tuple[int, int],
) -> AreaChart:
    """Average instances of one type held over the time axis, up to the type's capacity,
    against one dashed ``(label, colour, level)``: the form of every capacity chart (a
    share's use against its own limit, every share's against the environment)."""
    label, colour, height = level
    return AreaChart(
        title=title,
        xs=xs,
        x_label=axis.label,
        y_label="instances (average)",
        bands=bands,
        lines=[Line(label, colour, [float(height)] * len(xs), dash="6 4")],
        y_max=float(limit.max_capacity),
        width=size[0],
        height=size[1],
        per_day=axis.per_day,
    )


def _time_unit(values: Sequence[float | None]) -> tuple[float, str]:
    largest = max((v for v in values if v is not None), default=0.0)
    if largest < 2 * 3600:
        return 60.0, "minutes"
    if largest > 14 * 86400:
        return 86400.0, "days"
    return 3600.0, "hours"


def _wait_chart(
    comparison: PolicyComparison, active: Sequence[QuotaShareSpec], colours: Mapping[str, str]
) -> str:
    return _range_chart(
        comparison, active, colours,
        lambda f: (f.wait_p50, f.wait_p95, f.wait_max),
        title="Wait before the first start, per share", x_label="wait",
        top_label="longest wait", name="waits",
    )


def _completion_chart(
    comparison: PolicyComparison, active: Sequence[QuotaShareSpec], colours: Mapping[str, str]
) -> str:
    return _range_chart(
        comparison, active, colours,
        lambda f: (f.completion_median, f.completion_p95, None),
        title="Completion time (submission to success), per share", x_label="completion time",
        top_label="longest completion", name="completion",
    )


def _range_chart(
    comparison: PolicyComparison,
    active: Sequence[QuotaShareSpec],
    colours: Mapping[str, str],
    pick: Callable[[ShareFigures], tuple[float | None, float | None, float | None]],
    *,
    title: str,
    x_label: str,
    top_label: str,
    name: str,
) -> str:
    """Middle, p95 and top of ``pick`` per share and arrangement (a share's arrangements one
    group of rows), in a time unit that fits the largest p95."""
    results = arrangement_results(comparison)
    divisor, unit = _time_unit([pick(f)[1] for r in results.values() for f in r.shares.values()])
    rows = []
    for spec in active:
        for index, (arrangement, result) in enumerate(results.items()):
            figures = result.shares.get(spec.name)
            mid, high, top = pick(figures) if figures is not None else (None, None, None)
            # Jobs an arrangement can never run are not in its bars: the label says so.
            blocked = figures.blocked_jobs if figures is not None else 0
            rows.append(RangeRow(
                label=f"{spec.name} · {arrangement_title(arrangement)}"
                + (f" ({blocked:,} blocked)" if blocked else ""),
                colour=colours[spec.name],
                opacity=POLICY_OPACITY[index % len(POLICY_OPACITY)],
                mid=(mid or 0.0) / divisor,
                high=(high or 0.0) / divisor,
                top=None if top is None else top / divisor,
                group_start=index == 0,
            ))
    return RangeChart(
        title=title, x_label=x_label, unit=unit, top_label=top_label, rows=rows,
    ).render(name)


def _bars(
    comparison: PolicyComparison,
    active: Sequence[QuotaShareSpec],
    colours: Mapping[str, str],
    value: Callable[[ShareFigures], Sequence[float]],
) -> list[BarGroup]:
    results = arrangement_results(comparison)
    groups = []
    for spec in active:
        series = []
        for result in results.values():
            figures = result.shares.get(spec.name)
            series.append(list(value(figures)) if figures is not None else [0.0])
        groups.append(BarGroup(spec.name, colours[spec.name], series))
    return groups


def _series_names(comparison: PolicyComparison) -> list[str]:
    return [arrangement_title(name) for name in arrangement_results(comparison)]


def _shorts(comparison: PolicyComparison) -> tuple[str, ...]:
    extra = len(comparison.alternatives)
    return SHORT + tuple(f"alt{i + 1}" for i in range(extra))


@dataclass(frozen=True)
class _CostChart:
    """One chart of the "Preemptions, lost work and failures" section: a figure per share and
    arrangement, drawn the same way for each."""

    name: str
    title: str
    y_label: str
    value: Callable[[ShareFigures], Sequence[float]]
    caption: str
    segments: tuple[str, ...] = ()


_COST_CHARTS = (
    _CostChart("preemptions", "Preemptions suffered, per share", "preemptions",
              lambda f: (f.cross_share_preemptions, f.in_share_preemptions),
              "Cross-share: the job ran on borrowed capacity that its lender reclaimed. "
              "In-share: a higher-priority job of the same share took its instances.",
              segments=("cross-share", "in-share")),
    _CostChart("lost", "Work lost to preemption, per share", "instance-hours lost",
              lambda f: (f.lost_instance_hours,),
              "Run time since the last checkpoint (or since the start, without checkpoints) "
              "times the job's instances."),
    _CostChart("failures", "Jobs failed by an exhausted preemption budget, per share",
              "failed jobs", lambda f: (float(f.failed_preemption_budget),),
              "Jobs preempted more often than their preemption_retries allow."),
)


def _cost_charts(
    comparison: PolicyComparison, active: Sequence[QuotaShareSpec], colours: Mapping[str, str]
) -> list[str]:
    return [
        _chart(BarChart(
            title=cost.title, y_label=cost.y_label,
            groups=_bars(comparison, active, colours, cost.value),
            series=_series_names(comparison), series_short=_shorts(comparison),
            segments=cost.segments,
        ).render(cost.name), cost.name, cost.caption)
        for cost in _COST_CHARTS
    ]


def _allocation_charts(
    comparison: PolicyComparison,
    active: Sequence[QuotaShareSpec],
    colours: Mapping[str, str],
    capacity_limits: Sequence[CapacityLimit],
) -> list[str]:
    declared = comparison.declared.shares
    flows = [
        BarGroup(spec.name, colours[spec.name], [
            [declared[spec.name].borrowed_capacity_hours],
            [declared[spec.name].lent_capacity_hours],
        ])
        for spec in active if spec.name in declared
    ]
    results = arrangement_results(comparison)
    busy = {name: environment_utilization(
                result, arrangement_limits(name, comparison, capacity_limits))
            for name, result in results.items()}
    environment = [
        BarGroup(str(limit.unit), "#4a6a94",
                 [[busy[name].get(str(limit.unit), 0.0) * 100] for name in results])
        for limit in capacity_limits
    ]
    several = len(capacity_limits) > 1
    own = [
        BarGroup(f"{spec.name}\n{limit.unit}" if several else spec.name, colours[spec.name], [
            [(r.shares[spec.name].utilization_by_type.get(str(limit.unit), 0.0) * 100)
             if spec.name in r.shares else 0.0]
            for r in results.values()
        ])
        for spec in active for limit in capacity_limits if spec.limit_of(limit.unit)
    ]
    return [
        _chart(BarChart(
            title="Utilization of the environment, per instance type",
            y_label="% of capacity-hours busy",
            groups=environment,
            series=_series_names(comparison), series_short=_shorts(comparison), percent=True,
            x_caption="instance type",
        ).render("environment-utilization"), "environment-utilization",
            "Instance-hours any job held (borrowed use included) over the type's capacity-hours "
            "(its size times the window), per instance type: hours of different types are "
            "never added together. All arrangements over one window."),
        _chart(BarChart(
            title="Use of each share's own allocation, per instance type",
            y_label="% of own allocation",
            groups=own,
            series=_series_names(comparison), series_short=_shorts(comparison), percent=True,
            x_caption="quota share and instance type" if several else "quota share",
        ).render("utilization"), "utilization",
            "Instances used within the share's own limit of the type, over that limit (borrowed "
            "use is not counted here: it is in the chart above and below), all arrangements "
            "over one window."),
        _chart(BarChart(
            title="Borrowed and lent capacity (declared policy)",
            y_label="instance-hours",
            groups=flows,
            series=["borrowed from others", "lent to others"],
            series_short=("borr", "lent"),
        ).render("flows"), "flows",
            "Borrowed: use above the share's own limit. Lent: others' borrowing attributed to "
            "this share's idle allocation (instance-hours of every type the share lists)."),
    ]


@dataclass(frozen=True)
class Column:
    """One column of the "All figures" tables. ``kind`` says how its unit is chosen: ``count``
    and ``fixed`` keep ``unit``; ``time`` picks minutes, hours or days for the whole column
    (across the three arrangements, so the tables compare), never a unit per cell."""

    label: str
    value: Callable[[ShareFigures], float | None]
    kind: str = "count"
    unit: str = ""
    digits: int = 0


COLUMNS: tuple[Column, ...] = (
    Column("jobs", lambda f: f.jobs),
    Column("succeeded", lambda f: f.succeeded),
    Column("failed (budget)", lambda f: f.failed_preemption_budget),
    Column("never runnable", lambda f: f.not_runnable),
    Column("blocked (never runnable)", lambda f: f.blocked_jobs),
    Column("wait p50", lambda f: f.wait_p50, "time"),
    Column("wait p95", lambda f: f.wait_p95, "time"),
    Column("wait max", lambda f: f.wait_max, "time"),
    Column("completion median", lambda f: f.completion_median, "time"),
    Column("completion p95", lambda f: f.completion_p95, "time"),
    Column("borrowed", lambda f: f.borrowed_capacity_hours, "fixed", "inst-h", 1),
    Column("lent", lambda f: f.lent_capacity_hours, "fixed", "inst-h", 1),
    Column("cross-share preemptions", lambda f: f.cross_share_preemptions),
    Column("in-share preemptions", lambda f: f.in_share_preemptions),
    Column("lost", lambda f: f.lost_instance_hours, "fixed", "inst-h", 1),
)
_TIME_DIGITS = {"minutes": 0, "hours": 1, "days": 1}
ZWSP = "\u200b"
UTILIZATION_AFTER = "completion p95"
"""The per-type utilization columns follow this one."""


def columns_of(capacity_limits: Sequence[CapacityLimit]) -> tuple[Column, ...]:
    """The table's columns: one utilization column per instance type (never one figure
    adding types together), after the completion times."""
    several = len(capacity_limits) > 1

    def use_of(unit: str) -> Callable[[ShareFigures], float | None]:
        def value(f: ShareFigures) -> float | None:
            found = f.utilization_by_type.get(unit)
            return None if found is None else found * 100
        return value

    # A zero-width space after each dot lets a narrow heading break inside an instance type
    # instead of running into the next column.
    per_type = tuple(
        Column(f"utilization {str(limit.unit).replace('.', '.' + ZWSP)}" if several
               else "utilization",
               use_of(str(limit.unit)), "fixed", "%", 1)
        for limit in capacity_limits
    )
    cut = next(i for i, c in enumerate(COLUMNS) if c.label == UTILIZATION_AFTER) + 1
    return COLUMNS[:cut] + per_type + COLUMNS[cut:]


def _column_units(
    comparison: PolicyComparison, columns: Sequence[Column],
) -> list[tuple[str, float, int]]:
    """Per column: its unit, the divisor that turns a value into it and the decimals shown."""
    figures = [f for r in arrangement_results(comparison).values() for f in r.shares.values()]
    units = []
    for column in columns:
        values = [column.value(f) for f in figures]
        if column.kind == "time":
            divisor, unit = _time_unit(values)
            units.append((unit, divisor, _digits(values, divisor, _TIME_DIGITS[unit])))
        elif column.kind == "fixed":
            units.append((column.unit, 1.0, _digits(values, 1.0, column.digits)))
        else:
            units.append((column.unit, 1.0, column.digits))
    # Columns in the same unit show the same decimals (5.31 h beside 10.10 h, not 10.1 h).
    most: dict[str, int] = {}
    for unit, _, digits in units:
        most[unit] = max(most.get(unit, 0), digits)
    return [(unit, divisor, most[unit]) for unit, divisor, _ in units]


def _digits(values: Sequence[float | None], divisor: float, least: int) -> int:
    """Decimals that show the column's smallest non-zero value with two significant digits
    (at most 3): with one unit per column, a 2-minute wait in an hours column reads 0.033,
    not 0.0."""
    smallest = min((abs(v) / divisor for v in values if v), default=None)
    digits = least
    while smallest is not None and digits < 3 and smallest < 10 ** (1 - digits):
        digits += 1
    return digits


def _figure_tables(
    comparison: PolicyComparison, shares: Sequence[QuotaShareSpec], colours: Mapping[str, str],
    capacity_limits: Sequence[CapacityLimit],
) -> list[str]:
    columns = columns_of(capacity_limits)
    units = _column_units(comparison, columns)
    head = "".join(
        f"<th>{escape(column.label)}" + (f"<br><span class='u'>{escape(unit)}</span>"
                                         if unit else "") + "</th>"
        for column, (unit, _, _) in zip(columns, units, strict=True)
    )
    out = [
        "<p class='sub'>One unit per column, named under its heading. A table wider than the "
        "page scrolls sideways; the share column stays in place.</p>"
    ]
    for index, (name, result) in enumerate(arrangement_results(comparison).items()):
        rows = []
        for spec in shares:
            figures = result.shares.get(spec.name)
            if figures is None:
                continue
            cells = "".join(
                f"<td>{escape(_cell(column.value(figures), divisor, digits))}</td>"
                for column, (_, divisor, digits) in zip(columns, units, strict=True)
            )
            rows.append(
                f"<tr><td class='l share'><span class='sw' style='background:"
                f"{colours[spec.name]}'></span>{escape(spec.name)}</td>{cells}</tr>"
            )
        out.append(
            f"<details{' open' if index == 0 else ''}><summary>"
            f"{escape(arrangement_title(name))}</summary><div class='wide'><table "
            f"class='figures'><tr><th class='l share'>share</th>{head}</tr>{''.join(rows)}"
            "</table></div></details>"
        )
    return out


def _alternatives_line(comparison: PolicyComparison) -> str:
    if not comparison.alternatives:
        return ""
    names = ", ".join(f"<b>{escape(name)}</b> (alt{i + 1})"
                      for i, name in enumerate(comparison.alternatives))
    return (f"<p class='sub'>Then one row per alternative declaration compared: {names}, "
            "replayed on the same jobs.</p>")


def _cell(value: float | None, divisor: float, digits: int) -> str:
    if value is None:
        return "n/a"
    return f"{value / divisor:,.{digits}f}"


def _footer(files: Sequence[str]) -> str:
    listed = ", ".join(f"<code>{escape(f)}</code>" for f in files)
    return (
        "<footer>Generated by <code>quota_constructs.simulation</code> (offline simulation; "
        "the assumptions where AWS Batch documents no behaviour are listed in the "
        "<code>quota_constructs.simulation</code> module documentation)."
        + (f" Machine-readable figures: {listed}." if listed else "")
        + "</footer>"
    )
