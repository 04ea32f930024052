"""``report.html``: what happened, for people — built from the simulator's report renderers
(its stylesheet, time axis, bucket averaging, area and bar charts), one self-contained page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from html import escape

from ..model import CapacityLimit, QuotaShareSpec
from ..simulation.report.page import CSS, TimeAxis
from ..simulation.report.summary import human_seconds, percent
from ..simulation.report.svg import AreaChart, Band, BarChart, BarGroup, Line, share_colour
from ..wire.utc_time import iso_utc_ms
from .figures import ShareFigures, UsageResult

OWN_COLOUR, BORROWED_COLOUR, IDLE_COLOUR = "#0072B2", "#D55E00", "#9a9a9a"
EXTRA_CSS = ("td.warn{background:#fff4e5}ul.defs li{margin:3px 0}"
             "table.share caption{text-align:left;font-weight:600;padding:4px 0}")


def render_usage_page(
    result: UsageResult,
    *,
    capacity_limits: Sequence[CapacityLimit],
    shares: Sequence[QuotaShareSpec],
    title: str,
    sources: Sequence[str],
    files: Sequence[str] = (),
) -> str:
    colours = {name: share_colour(i) for i, name in enumerate(result.shares)}
    window = result.window
    axis = TimeAxis.of(window.start_ms / 1000.0, window.end_ms / 1000.0)
    axis = replace(axis, label=axis.label.replace("the first submission", "the window's start"))
    jobs = sum(share.jobs for share in result.shares.values())
    buckets = result.buckets
    splits = {key: (list(timeline.within), list(timeline.above))
              for key, timeline in result.timelines.items()}
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{escape(title)}</title><style>{CSS}{EXTRA_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p class='sub'>{escape(iso_utc_ms(window.start_ms))} to "
        f"{escape(iso_utc_ms(window.end_ms))} "
        f"({window.hours:,.2f} hours) · environment "
        + escape(", ".join(f"{c.max_capacity} × {c.unit}" for c in capacity_limits))
        + f" · {jobs:,} jobs submitted in the window · from "
        + escape(", ".join(sources)) + "</p>",
        _summary(result),
        "<h2>Capacity per instance type over time</h2>",
        "<p class='sub'>Instances in use within the shares' own limits (solid), in use above "
        "them (borrowed, hatched) and in use by no share (idle, grey), stacked up to the "
        f"environment's capacity (dashed), averaged over {buckets} equal intervals. Borrowed "
        "instances are a lender's idle allocation or capacity no share owns; each share's "
        "idle own allocation and what of it was lent are in its table below.</p>",
        *_type_charts(result, splits, capacity_limits, axis, buckets),
        "<details><summary>Per share and instance type</summary><div class='grid'>",
        *_share_charts(result, splits, colours, axis, buckets),
        "</div></details>",
        "<h2>Each share against its agreement</h2>",
        *(_share_table(share, colours[name], _spec(shares, name))
          for name, share in result.shares.items()),
        "<h2>Fair share</h2>",
        _fair_share(result, colours),
        "<h2>The queue</h2>",
        _queue_table(result),
        "<h2>How each figure is defined</h2>",
        _definitions(result),
        _footer(files),
        "</body></html>",
    ]
    return "".join(parts)


def _spec(shares: Sequence[QuotaShareSpec], name: str) -> QuotaShareSpec | None:
    return next((spec for spec in shares if spec.name == name), None)


def _hours(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.2f}"


def _summary(result: UsageResult) -> str:
    items: list[str] = []
    hours = result.window.hours
    for unit, queue in result.queue.items():
        if queue.capacity and hours:
            busy = percent(queue.used_hours / (queue.capacity * hours))
            items.append(f"<b>{escape(unit)}</b>: {queue.used_hours:,.1f} of "
                         f"{queue.capacity * hours:,.1f} instance-hours used ({busy}), "
                         f"{queue.idle_hours:,.1f} idle.")
    totals = {name: (sum(t.borrowed_hours for t in share.instance_types.values()),
                     sum(t.lent_hours for t in share.instance_types.values()))
              for name, share in result.shares.items()}
    borrower = max(totals, key=lambda name: totals[name][0], default=None)
    if borrower is not None and totals[borrower][0] > 0:
        items.append(f"<b>{escape(borrower)}</b> borrowed the most: "
                     f"{totals[borrower][0]:,.1f} instance-hours above its own limits.")
    lender = max(totals, key=lambda name: totals[name][1], default=None)
    if lender is not None and totals[lender][1] > 0:
        items.append(f"<b>{escape(lender)}</b> lent the most: {totals[lender][1]:,.1f} "
                     "instance-hours of its idle allocation.")
    for name, share in result.shares.items():
        missed = _missed(share)
        if missed:
            items.append(f"<b>{escape(name)}</b> missed its agreement: {escape(missed)}.")
    preempted = sum(t.preempted_hours for s in result.shares.values()
                    for t in s.instance_types.values())
    count = sum(s.preemptions for s in result.shares.values())
    if count:
        items.append(f"{count:,} preempted attempts threw away {preempted:,.1f} "
                     "instance-hours of run.")
    unseen = sum(s.unseen_preemptions for s in result.shares.values())
    if unseen:
        items.append(f"{unseen:,} preemptions are counted whose attempts' times AWS Batch no "
                     "longer showed: their run time is in no figure.")
    if result.priced:
        cost = sum(t.cost or 0.0 for s in result.shares.values()
                   for t in s.instance_types.values())
        items.append(f"Cost of the instance-hours used: {cost:,.2f}.")
    items.extend(escape(note) for note in result.notes)
    body = "".join(f"<li class='neutral'>{item}</li>" for item in items)
    return ("<section class='summary'><div class='label'>What happened</div><ul>"
            f"{body}</ul></section>")


def _missed(share: ShareFigures) -> str:
    missed = []
    target = share.target_wait_p95_seconds
    if target is not None and share.wait_p95_seconds is not None \
            and share.wait_p95_seconds > target:
        missed.append(f"waits at the 95th percentile {human_seconds(share.wait_p95_seconds)} "
                      f"(target {human_seconds(target)})")
    most = share.max_budget_failures
    if most is not None and share.budget_failures > most:
        missed.append(f"{share.budget_failures} jobs lost to their preemption budget "
                      f"(at most {most})")
    return "; ".join(missed)


Split = tuple[list[float], list[float]]


def _type_charts(result: UsageResult, splits: Mapping[tuple[str, str], Split],
                 capacity_limits: Sequence[CapacityLimit], axis: TimeAxis,
                 buckets: int) -> list[str]:
    capacity = {c.capacity_unit: c.max_capacity for c in capacity_limits}
    xs = axis.xs(buckets)
    out = []
    for unit in result.instance_types:
        own_total = sum(share.instance_types[unit].own_capacity
                        for share in result.shares.values())
        within, above = [0.0] * buckets, [0.0] * buckets
        for name in result.shares:
            split = splits.get((name, unit))
            if split is None:
                continue
            inside, outside = split
            within = [a + b for a, b in zip(within, inside, strict=True)]
            above = [a + b for a, b in zip(above, outside, strict=True)]
        size = capacity.get(unit, 0)
        idle = [max(0.0, size - w - a) for w, a in zip(within, above, strict=True)]
        chart = AreaChart(
            title=f"{unit}: used within own limits, borrowed, idle", xs=xs,
            x_label=axis.label, y_label="instances (average)",
            bands=[Band("used within own limits", OWN_COLOUR, within),
                   Band("borrowed (above a share's own limit)", BORROWED_COLOUR, above,
                        hatched=True),
                   Band("idle (in use by no share)", IDLE_COLOUR, idle, opacity=0.45)],
            lines=[Line(f"environment capacity ({size})", "#000", [float(size)] * buckets,
                        dash="6 4"),
                   Line(f"the shares' own limits, added ({own_total})", "#555",
                        [float(own_total)] * buckets, dash="2 3")],
            y_max=float(max(size, own_total, 1, *(a + b for a, b in
                                                  zip(within, above, strict=True)))),
            width=1280, height=280, per_day=axis.per_day,
        )
        out.append(_figure(chart.render(f"type-{unit}"), f"type-{unit}"))
    return out


def _share_charts(result: UsageResult, splits: Mapping[tuple[str, str], Split],
                  colours: Mapping[str, str], axis: TimeAxis, buckets: int) -> list[str]:
    xs = axis.xs(buckets)
    out = []
    for (name, unit), timeline in result.timelines.items():
        inside, outside = splits[name, unit]
        idle = [max(0.0, timeline.own - w) for w in inside]
        colour = colours[name]
        chart = AreaChart(
            title=f"{name} · {unit}", xs=xs, x_label=axis.label, y_label="instances (average)",
            bands=[Band("within own limit", colour, inside),
                   Band("borrowed", colour, outside, hatched=True),
                   Band("own allocation it did not use (idle or lent)", IDLE_COLOUR, idle,
                        opacity=0.45)],
            lines=[Line(f"own limit ({timeline.own})", "#333",
                        [float(timeline.own)] * buckets, dash="6 4")],
            width=640, height=220, per_day=axis.per_day,
        )
        out.append(_figure(chart.render(f"share-{name}-{unit}"), f"share-{name}-{unit}"))
    return out


def _figure(svg: str, name: str) -> str:
    return f"<figure class='chart' id='chart-{escape(name)}' style='margin:0'>{svg}</figure>"


def _share_table(share: ShareFigures, colour: str, spec: QuotaShareSpec | None) -> str:
    agreement = spec.agreement if spec is not None else None
    described = ("not in the declaration (a share that no longer exists?): everything it ran "
                 "counts as borrowed" if spec is None else
                 f"{spec.strategy.value}, own "
                 + ", ".join(f"{c.max_capacity} × {c.unit}" for c in spec.capacity_limits)
                 + (f", owner {agreement.owner}" if agreement else ""))
    wait_class = _verdict(share.wait_p95_seconds, share.target_wait_p95_seconds)
    budget_class = _verdict(share.budget_failures, share.max_budget_failures)
    head = (
        f"<table class='share'><caption><span class='sw' style='background:{colour}'></span>"
        f"{escape(share.share)} — {escape(described)}</caption>"
        "<tr><th class='l'>jobs submitted</th><th>started</th><th>wait p50</th>"
        "<th>wait p95</th><th>target p95</th><th>preemptions</th><th>budget failures</th>"
        "<th>most allowed</th></tr>"
        f"<tr><td class='l'>{share.jobs:,}</td><td>{share.started_jobs:,}</td>"
        f"<td>{escape(human_seconds(share.wait_p50_seconds))}</td>"
        f"<td{wait_class}>{escape(human_seconds(share.wait_p95_seconds))}</td>"
        f"<td>{escape(_target(share.target_wait_p95_seconds))}</td>"
        f"<td{' class=warn' if share.unseen_preemptions else ''}>{share.preemptions:,}"
        + (f" ({share.unseen_preemptions:,} without times)" if share.unseen_preemptions else "")
        + f"</td><td{budget_class}>{share.budget_failures:,}</td>"
        f"<td>{'none' if share.max_budget_failures is None else share.max_budget_failures}</td>"
        "</tr></table>"
    )
    rows = "".join(
        f"<tr><td class='l'>{escape(unit)}</td><td>{t.own_capacity}</td>"
        f"<td>{_hours(t.used_hours)}</td><td>{_hours(t.own_used_hours)}</td>"
        f"<td>{_hours(t.borrowed_hours)}</td><td>{_hours(t.idle_own_hours)}</td>"
        f"<td>{_hours(t.lent_hours)}</td><td>{_hours(t.preempted_hours)}</td>"
        f"<td>{'n/a' if t.cost is None else f'{t.cost:,.2f}'}</td></tr>"
        for unit, t in share.instance_types.items()
    )
    types = (
        "<table><tr><th class='l'>instance type</th><th>own capacity</th><th>used h</th>"
        "<th>own used h</th><th>borrowed h</th><th>idle own h</th><th>lent h</th>"
        f"<th>preempted h</th><th>cost</th></tr>{rows}</table>"
    )
    return head + types


def _target(seconds: float | None) -> str:
    return "none" if seconds is None else human_seconds(seconds)


def _verdict(value: float | None, most: float | None) -> str:
    if value is None or most is None:
        return ""
    return " class='met'" if value <= most else " class='missed'"


def _fair_share(result: UsageResult, colours: Mapping[str, str]) -> str:
    groups = [BarGroup(name, colours[name], [[fair.ratio or 0.0]])
              for name, fair in result.fair_share.items()]
    chart = BarChart(title="Decayed use over decayed own allocation", y_label="ratio",
                     groups=groups, series=["ratio"])
    rows = "".join(
        f"<tr><td class='l'><span class='sw' style='background:{colours[name]}'></span>"
        f"{escape(name)}</td><td>{_hours(fair.decayed_used_hours)}</td>"
        f"<td>{_hours(fair.decayed_own_hours)}</td>"
        f"<td>{'n/a' if fair.ratio is None else f'{fair.ratio:.3f}'}</td></tr>"
        for name, fair in result.fair_share.items()
    )
    return (
        f"<p class='sub'>Each instant weighs 0.5^((end − τ) / {result.half_life_hours:g} h): "
        "recent use counts most, as Slurm's and KAI's fair share do. A ratio above 1: the "
        "share used more than it owns (it borrowed); below 1: others used its allocation or "
        "it lay idle. Instance-hours of every type are added.</p>"
        + _figure(chart.render("fair-share"), "fair-share")
        + "<table><tr><th class='l'>share</th><th>decayed used h</th><th>decayed own h</th>"
        f"<th>ratio</th></tr>{rows}</table>"
    )


def _queue_table(result: UsageResult) -> str:
    hours = result.window.hours
    rows = "".join(
        f"<tr><td class='l'>{escape(unit)}</td><td>{q.capacity}</td>"
        f"<td>{_hours(q.capacity * hours)}</td><td>{_hours(q.used_hours)}</td>"
        f"<td>{_hours(q.idle_hours)}</td>"
        f"<td>{percent(q.used_hours / (q.capacity * hours)) if q.capacity and hours else 'n/a'}"
        "</td></tr>"
        for unit, q in result.queue.items()
    )
    return ("<table><tr><th class='l'>instance type</th><th>capacity</th><th>capacity h</th>"
            f"<th>used h</th><th>idle h</th><th>utilization</th></tr>{rows}</table>")


def _definitions(result: UsageResult) -> str:
    unowned = ("capacity no share owns is borrowed first (nobody lent it)"
               if result.unowned_capacity_borrowable else
               "capacity no share owns is not borrowable (--no-unowned-borrowing)")
    items = [
        "Window: from the first submission to the last attempt's end (an attempt still "
        "running: the moment the history was exported), unless --since/--until narrow it; "
        "every attempt is clipped to it.",
        "usage(τ): instances of a share's attempts of one type running at τ. used = ∫usage; "
        "own used = ∫min(usage, own); borrowed = ∫max(0, usage − own); idle own = "
        "∫max(0, own − usage); all in instance-hours.",
        f"Lent: borrowed hours attributed to lenders by the library's one lending rule: "
        f"{unowned}, then each lending share (LEND or LEND_AND_BORROW owning the type, from "
        "which some share can borrow it) lends in proportion to its idle own capacity, never "
        "more than it has idle; RESERVE never lends.",
        "Preempted hours: instance-hours, within the window, of attempts that ended by "
        "preemption. Preemptions: AWS Batch's count of preempted attempts "
        "(preemptedAttemptCount) of the jobs submitted in the window.",
        "Budget failures: jobs submitted in the window that FAILED after more preemptions "
        "than their preemptionRetriesBeforeTermination.",
        "Waits: submission to first start of the jobs submitted in the window that started; "
        "percentiles by linear interpolation between the closest ranks (numpy's default).",
        "Jobs: every job submitted in the window, cancelled and never started included.",
        "Queue idle: capacity × hours − the shares' used hours. Cost: used hours × the "
        "type's price per instance-hour (n/a without one).",
        f"Fair share: decayed used = ∫usage · 0.5^((end − τ)/{result.half_life_hours:g} h) "
        "over every type; decayed own = the share's own limits added over every type, "
        "decayed the same way; ratio = decayed used / decayed own.",
    ]
    return "<ul class='defs'>" + "".join(f"<li>{escape(item)}</li>" for item in items) + "</ul>"


def _footer(files: Sequence[str]) -> str:
    listed = ", ".join(f"<code>{escape(name)}</code>" for name in files)
    return ("<footer>Generated by <code>quota-constructs usage</code> from what AWS Batch "
            "recorded (no simulation)." + (f" Figures: {listed}." if listed else "")
            + "</footer>")

