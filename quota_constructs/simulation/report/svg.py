"""Hand-written inline SVG charts: no dependency, no script, readable offline in any browser.

Three chart shapes cover the report: a step/area chart over time, grouped (and stacked) bars
per share, and a range chart (bar to p95, tick at the median, whisker to the maximum). Every
chart has a title, axis labels with units and a legend; colours come from the caller so a share
keeps its colour across charts.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

# In the order shares are declared: Okabe–Ito first (colour-blind safe; yellow darkened to read
# on white), then Kelly's colours of maximum contrast, for the 20 shares a queue can hold.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#8C564B", "#C9A800",
    "#875692", "#BE0032", "#8DB600", "#848482", "#604E97", "#F99379", "#2B3D26", "#B3446C",
    "#C2B280", "#882D17", "#0FA3A3", "#654522",
)
POLICY_OPACITY = (1.0, 0.5, 0.25, 0.8, 0.65, 0.4, 0.15)
"""Per arrangement: declared, hard partition, pool, then alternatives (--compare)."""
"""Declared, hard partition, shared pool: the same share colour, lighter for the alternatives."""
FONT = "font-family='system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif'"
TEXT = "#222"
GRID = "#e3e3e3"


COMPACT_GROUPS = 8
"""Bar charts with more shares than this switch to narrow bars."""


def share_colour(index: int) -> str:
    """The share's colour; beyond the palette, hues a golden angle apart."""
    if index < len(PALETTE):
        return PALETTE[index]
    hue = (index * 137.508) % 360
    lightness = 0.38 if index % 2 else 0.55
    r, g, b = colorsys.hls_to_rgb(hue / 360, lightness, 0.65)
    return f"#{round(r * 255):02X}{round(g * 255):02X}{round(b * 255):02X}"


def _fit(label: str, room: float, char_width: float) -> str:
    """``label`` cut with an ellipsis to about ``room`` pixels."""
    most = max(int(room / char_width), 3)
    return label if len(label) <= most else label[: most - 1] + "…"


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """0 and round steps (1, 2, 2.5, 5 × 10^k) up to at least ``top``."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < top - 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def fmt(value: float) -> str:
    """A short label: 3 significant digits, thousands as k/M."""
    if value == 0:
        return "0"
    size = abs(value)
    if size >= 1e6:
        return f"{value / 1e6:.3g}M"
    if size >= 1e4:
        return f"{value / 1e3:.3g}k"
    if size >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def _text(x: float, y: float, body: str, *, size: int = 12, anchor: str = "start",
          weight: str = "normal", fill: str = TEXT, rotate: float | None = None) -> str:
    turn = f" transform='rotate({rotate:g} {x:.1f} {y:.1f})'" if rotate is not None else ""
    return (
        f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' "
        f"font-weight='{weight}' fill='{fill}'{turn}>{escape(body)}</text>"
    )


def _y_grid(
    ticks: list[float], left: float, plot_w: float, py: Callable[[float], float],
    label: Callable[[float], str],
) -> list[str]:
    """A horizontal grid line and its label at each tick of the y axis."""
    out = []
    for tick in ticks:
        out.append(f"<line x1='{left}' y1='{py(tick):.1f}' x2='{left + plot_w}' "
                   f"y2='{py(tick):.1f}' stroke='{GRID}'/>")
        out.append(_text(left - 6, py(tick) + 4, label(tick), size=11, anchor="end"))
    return out


def _svg(width: float, height: float, title: str, body: list[str]) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
        f"viewBox='0 0 {width:.0f} {height:.0f}' role='img' {FONT}>"
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def _hatch(pattern_id: str, colour: str, opacity: float = 1.0) -> str:
    return (
        f"<pattern id='{pattern_id}' width='6' height='6' patternUnits='userSpaceOnUse' "
        f"patternTransform='rotate(45)'><rect width='6' height='6' fill='{colour}' "
        f"fill-opacity='{0.25 * opacity:.2f}'/><line x1='0' y1='0' x2='0' y2='6' "
        f"stroke='{colour}' stroke-opacity='{opacity:.2f}' stroke-width='3'/></pattern>"
    )


def _legend(
    items: Sequence[tuple[str, str]], x: float, y: float, width: float
) -> tuple[str, float]:
    """Swatches (SVG fragment drawn in a 14×10 box) with labels, wrapped to ``width``."""
    parts, cx, cy = [], x, y
    for swatch, label in items:
        item_width = 22 + 7 * len(label) + 16
        if cx + item_width > x + width and cx > x:
            cx, cy = x, cy + 18
        parts.append(f"<g transform='translate({cx:.1f},{cy - 9:.1f})'>{swatch}</g>")
        parts.append(_text(cx + 20, cy, label, size=12))
        cx += item_width
    return "".join(parts), cy - y + 18


def all_zero(title: str, what: str, width: int = 640) -> str:
    """A chart whose values are all zero: its title and a sentence saying so, not an empty
    0–1 axis that reads like a scale without data."""
    body = [
        _text(16, 20, title, size=14, weight="bold"),
        f"<rect x='16' y='34' width='{width - 32}' height='44' rx='6' fill='#f6f6f6' "
        "stroke='#ddd'/>",
        _text(width / 2, 61, f"Every value is 0: {what}.", size=13, anchor="middle",
              fill="#555"),
    ]
    return _svg(width, 90, title, body)


def swatch_fill(fill: str, opacity: float = 1.0) -> str:
    return f"<rect width='14' height='10' fill='{fill}' fill-opacity='{opacity:.2f}'/>"


def swatch_line(colour: str, dash: str = "") -> str:
    dashes = f" stroke-dasharray='{dash}'" if dash else ""
    return f"<line x1='0' y1='5' x2='14' y2='5' stroke='{colour}' stroke-width='2'{dashes}/>"


@dataclass(frozen=True)
class Band:
    """One filled layer of an area chart (stacked on the layers before it)."""

    label: str
    colour: str
    values: Sequence[float]
    hatched: bool = False
    opacity: float = 0.85


@dataclass(frozen=True)
class Line:
    label: str
    colour: str
    values: Sequence[float]
    dash: str = ""


@dataclass(frozen=True)
class AreaChart:
    """Stacked areas (and lines) over time. ``xs`` are the left edges of equal buckets."""

    title: str
    xs: Sequence[float]
    x_label: str
    y_label: str
    bands: Sequence[Band]
    lines: Sequence[Line] = ()
    width: int = 640
    height: int = 250
    y_max: float | None = None
    per_day: float | None = None
    """x units per day (24 on an hours axis, 1 on a days axis): a faint mark at each day,
    labelled along the top. None: no day marks (a run of minutes)."""
    empty_text: str = "nothing to show"

    def render(self, chart_id: str) -> str:
        values = [v for band in self.bands for v in band.values]
        if self.y_max is None and not any(values) and not any(
            v for line in self.lines for v in line.values
        ):
            return all_zero(self.title, self.empty_text, self.width)
        left, right, top, bottom = 56, 16, 34, 46
        legend, legend_height = _legend(self._legend_items(), left, self.height + 8,
                                        self.width - left - right)
        height = self.height + legend_height + 4
        plot_w = self.width - left - right
        plot_h = self.height - top - bottom
        n = len(self.xs)
        x_end = self.xs[-1] + (self.xs[1] - self.xs[0] if n > 1 else 1.0) if n else 1.0
        stacked_top = [0.0] * n
        for band in self.bands:
            stacked_top = [a + b for a, b in zip(stacked_top, band.values, strict=True)]
        peak = max([*stacked_top, *(v for line in self.lines for v in line.values), 0.0])
        ticks = nice_ticks(self.y_max if self.y_max is not None else max(peak, 1.0))
        y_top = ticks[-1]

        def px(x: float) -> float:
            return left + plot_w * x / x_end

        def py(y: float) -> float:
            return top + plot_h * (1 - y / y_top)

        body = [_text(left, 20, self.title, size=14, weight="bold"),
                *_y_grid(ticks, left, plot_w, py, fmt)]
        defs = []
        for tick in self._x_ticks(x_end):
            if tick > x_end + 1e-9:
                break
            body.append(f"<line x1='{px(tick):.1f}' y1='{top + plot_h}' x2='{px(tick):.1f}' "
                        f"y2='{top + plot_h + 4}' stroke='{TEXT}'/>")
            body.append(_text(px(tick), top + plot_h + 16, fmt(tick), size=11, anchor="middle"))
        body.extend(self._day_marks(x_end, px, top, plot_h))
        base = [0.0] * n
        step = (x_end / n) if n else 1.0
        for index, band in enumerate(self.bands):
            upper = [a + b for a, b in zip(base, band.values, strict=True)]
            fill = band.colour
            if band.hatched:
                pattern = f"{chart_id}-h{index}"
                defs.append(_hatch(pattern, band.colour))
                fill = f"url(#{pattern})"
            points = _step_points(self.xs, upper, step, px, py)
            back = _step_points(self.xs, base, step, px, py)[::-1]
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points + back)
            body.append(f"<polygon points='{path}' fill='{fill}' "
                        f"fill-opacity='{1.0 if band.hatched else band.opacity}' stroke='none'/>")
            base = upper
        for line in self.lines:
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in
                           _step_points(self.xs, line.values, step, px, py))
            dash = f" stroke-dasharray='{line.dash}'" if line.dash else ""
            body.append(f"<polyline points='{pts}' fill='none' stroke='{line.colour}' "
                        f"stroke-width='2'{dash}/>")
        body.append(f"<rect x='{left}' y='{top}' width='{plot_w}' height='{plot_h}' "
                    f"fill='none' stroke='#999'/>")
        x_label = self.x_label
        if self.per_day is not None and x_end >= self.per_day:
            x_label += " (dotted lines: day boundaries)"
        body.append(_text(left + plot_w / 2, top + plot_h + 34, x_label, anchor="middle"))
        body.append(_text(16, top + plot_h / 2, self.y_label, anchor="middle", rotate=-90))
        body.append(legend)
        return _svg(self.width, height, self.title, [f"<defs>{''.join(defs)}</defs>", *body])

    def _x_ticks(self, x_end: float) -> list[float]:
        """Round ticks; on an hours axis of a day or more, multiples of 6, 12, 24, 48 or 168
        hours, so ticks and day marks line up."""
        if self.per_day != 24 or x_end < 24:
            return nice_ticks(x_end, 6)
        step = next((s for s in (6, 12, 24, 48, 168) if x_end / s <= 8), 168)
        return [float(step * i) for i in range(int(x_end // step) + 1)]

    def _day_marks(
        self, x_end: float, px: Callable[[float], float], top: float, plot_h: float
    ) -> list[str]:
        if self.per_day is None or x_end < self.per_day:
            return []
        # Faint lines only: labels along the top would be a second x-axis competing with
        # the one below (the axis title says what the lines are).
        days = int(x_end / self.per_day)
        return [
            f"<line x1='{px(day * self.per_day):.1f}' y1='{top}' x2='{px(day * self.per_day):.1f}' "
            f"y2='{top + plot_h}' stroke='#b9c3d0' stroke-dasharray='2 3'/>"
            for day in range(1, days + 1)
        ]

    def _legend_items(self) -> list[tuple[str, str]]:
        items = []
        for band in self.bands:
            if band.hatched:
                swatch = (f"<rect width='14' height='10' fill='{band.colour}' fill-opacity='0.25'/>"
                          f"<line x1='2' y1='10' x2='12' y2='0' stroke='{band.colour}' "
                          f"stroke-width='3'/>")
            else:
                swatch = swatch_fill(band.colour, band.opacity)
            items.append((swatch, band.label))
        items.extend((swatch_line(line.colour, line.dash), line.label) for line in self.lines)
        return items


def _step_points(
    xs: Sequence[float],
    ys: Sequence[float],
    step: float,
    px: Callable[[float], float],
    py: Callable[[float], float],
) -> list[tuple[float, float]]:
    """Each bucket drawn flat across its width: the data are bucket averages, not samples."""
    points: list[tuple[float, float]] = []
    for x, y in zip(xs, ys, strict=True):
        points.append((px(x), py(y)))
        points.append((px(x + step), py(y)))
    return points


@dataclass(frozen=True)
class BarGroup:
    """One share: its colour and, per series (policy), the stacked segment values."""

    label: str
    colour: str
    values: Sequence[Sequence[float]]


@dataclass(frozen=True)
class BarChart:
    """Vertical bars grouped by share; within a group one bar per series, segments stacked.

    Series differ by opacity of the share's colour (and a short label under each bar); stacked
    segments after the first are hatched.
    """

    title: str
    y_label: str
    groups: Sequence[BarGroup]
    series: Sequence[str]
    series_short: Sequence[str] = ()
    segments: Sequence[str] = ()
    height: int = 260
    percent: bool = False
    x_caption: str = "quota share"

    def value_digits(self) -> int:
        """Decimals of every value written on the bars: the same for the whole chart
        (percentages 1; counts 0; other figures 1), never one per bar."""
        if self.percent:
            return 1
        whole = all(float(v).is_integer() for g in self.groups for seg in g.values for v in seg)
        return 0 if whole else 1

    def _shown(self, total: float, digits: int) -> str:
        return f"{total:,.{digits}f}" + ("%" if self.percent else "")

    def render(self, chart_id: str) -> str:
        if not any(value for group in self.groups for seg in group.values for value in seg):
            return all_zero(self.title, f"no {self.y_label} in any arrangement or share")
        n_series = max(len(self.series), 1)
        # Many shares: narrower bars, values written upwards, no per-bar series labels.
        compact = len(self.groups) > COMPACT_GROUPS
        digits = self.value_digits()
        bar_w = (13 if compact else 26) if n_series > 1 else (20 if compact else 34)
        longest = max(len(self._shown(sum(seg), digits)) for g in self.groups for seg in g.values)
        # Values written upwards when they would not fit across their bar.
        upright = compact or longest * 5.6 > bar_w
        lines = max(len(g.label.split("\n")) for g in self.groups)
        left, right, top = 56, 16, (64 if upright else 34)
        bottom = 58 + 14 * (lines - 1)
        group_w = n_series * bar_w + (14 if compact else 26)
        width = max(640, left + right + group_w * len(self.groups))
        plot_w = width - left - right
        height_base = self.height + (top - 34)
        plot_h = height_base - top - bottom
        legend, legend_height = _legend(self._legend_items(), left, height_base + 8, plot_w)
        height = height_base + legend_height + 4
        totals = [sum(seg) for g in self.groups for seg in g.values]
        ticks = nice_ticks(max([*totals, 0.0]) or 1.0)
        y_top = ticks[-1]

        def py(y: float) -> float:
            return top + plot_h * (1 - y / y_top)

        percent = self.percent
        body = [_text(left, 20, self.title, size=14, weight="bold"),
                *_y_grid(ticks, left, plot_w, py,
                         lambda tick: f"{fmt(tick)}%" if percent else fmt(tick))]
        defs = []
        slot = plot_w / max(len(self.groups), 1)
        for g_index, group in enumerate(self.groups):
            x0 = left + slot * g_index + (slot - n_series * bar_w) / 2
            for s_index, segments in enumerate(group.values):
                opacity = POLICY_OPACITY[s_index % len(POLICY_OPACITY)] if n_series > 1 else 1.0
                x = x0 + s_index * bar_w
                base = 0.0
                for k, value in enumerate(segments):
                    if value <= 0:
                        continue
                    fill = group.colour
                    fill_opacity = opacity
                    if k > 0:
                        pattern = f"{chart_id}-g{g_index}s{s_index}k{k}"
                        defs.append(_hatch(pattern, group.colour, max(opacity, 0.45)))
                        fill, fill_opacity = f"url(#{pattern})", 1.0
                    y1, y2 = py(base + value), py(base)
                    body.append(
                        f"<rect x='{x + 1:.1f}' y='{y1:.1f}' width='{bar_w - 2}' "
                        f"height='{max(y2 - y1, 0.5):.1f}' fill='{fill}' "
                        f"fill-opacity='{fill_opacity:.2f}' stroke='{group.colour}' "
                        f"stroke-width='0.8'/>"
                    )
                    base += value
                total = sum(segments)
                shown = self._shown(total, digits)
                if upright:
                    body.append(_text(x + bar_w / 2 + 3, py(total) - 3, shown, size=10,
                                      rotate=-90))
                else:
                    body.append(_text(x + bar_w / 2, py(total) - 4, shown, size=10,
                                      anchor="middle"))
                if self.series_short and n_series > 1 and not compact:
                    body.append(_text(x + bar_w / 2, top + plot_h + 12,
                                      self.series_short[s_index], size=9, anchor="middle",
                                      fill="#666"))
            for line, text in enumerate(group.label.split("\n")):
                body.append(_text(left + slot * (g_index + 0.5),
                                  top + plot_h + (18 if compact else 28) + 14 * line,
                                  _fit(text, slot, 6.5 if compact else 7.5),
                                  size=11 if compact else 12, anchor="middle",
                                  weight="bold" if line == 0 else "normal",
                                  fill=group.colour))
        body.append(f"<line x1='{left}' y1='{top + plot_h}' x2='{left + plot_w}' "
                    f"y2='{top + plot_h}' stroke='#999'/>")
        body.append(_text(16, top + plot_h / 2, self.y_label, anchor="middle", rotate=-90))
        body.append(_text(left + plot_w / 2, top + plot_h + 44 + 14 * (lines - 1),
                          self.x_caption,
                          anchor="middle", size=11, fill="#666"))
        body.append(legend)
        return _svg(width, height, self.title, [f"<defs>{''.join(defs)}</defs>", *body])

    def _legend_items(self) -> list[tuple[str, str]]:
        grey = "#555"
        items: list[tuple[str, str]] = []
        if len(self.series) > 1:
            for index, name in enumerate(self.series):
                short = f" ({self.series_short[index]})" if self.series_short else ""
                opacity = POLICY_OPACITY[index % len(POLICY_OPACITY)]
                items.append((swatch_fill(grey, opacity), f"{name}{short}"))
        # A segment's swatch is a small stacked bar with its own part filled (solid at the
        # bottom, hatched above), so it never looks like a series' plain swatch.
        for index, name in enumerate(self.segments):
            if index == 0:
                swatch = (f"<rect x='3' y='0' width='8' height='10' fill='none' stroke='{grey}'/>"
                          f"<rect x='3' y='5' width='8' height='5' fill='{grey}'/>")
                items.append((swatch, f"{name} (solid, bottom of a bar)"))
            else:
                swatch = (f"<rect x='3' y='0' width='8' height='10' fill='none' stroke='{grey}'/>"
                          f"<rect x='3' y='0' width='8' height='5' fill='{grey}' "
                          f"fill-opacity='0.25'/><line x1='4' y1='5' x2='9' y2='0' "
                          f"stroke='{grey}' stroke-width='2'/>")
                items.append((swatch, f"{name} (hatched, stacked on top)"))
        return items


@dataclass(frozen=True)
class RangeRow:
    """One bar of a range chart: to ``high`` (p95), tick at ``mid`` (median), whisker to ``top``."""

    label: str
    colour: str
    opacity: float
    mid: float
    high: float
    top: float | None = None
    group_start: bool = False


@dataclass(frozen=True)
class RangeChart:
    """Horizontal bars, one row per (share, policy). Whiskers beyond the axis end in an arrow
    with the value written out, so one extreme maximum does not flatten every other bar."""

    title: str
    x_label: str
    rows: Sequence[RangeRow]
    unit: str
    width: int = 640
    bar_label: str = "95th percentile"
    mid_label: str = "median"
    top_label: str = "maximum"

    def render(self, chart_id: str) -> str:
        del chart_id
        if not any(row.high or row.mid or row.top for row in self.rows):
            return all_zero(self.title, f"no {self.x_label} in any arrangement or share",
                            self.width)
        left, right, top = 190, 70, 34
        row_h = 17
        gaps = sum(1 for row in self.rows if row.group_start)
        plot_h = row_h * len(self.rows) + 8 * gaps
        plot_w = self.width - left - right
        highs = [row.high for row in self.rows]
        tops = [row.top for row in self.rows if row.top is not None]
        axis_top = max([*highs, 0.0]) * 1.3
        if tops and max(tops) <= axis_top * 1.15:
            axis_top = max(axis_top, max(tops))
        ticks = nice_ticks(axis_top or 1.0)
        x_top = ticks[-1]

        def px(x: float) -> float:
            return left + plot_w * min(x, x_top) / x_top

        body = [_text(10, 20, self.title, size=14, weight="bold")]
        for tick in ticks:
            body.append(f"<line x1='{px(tick):.1f}' y1='{top}' x2='{px(tick):.1f}' "
                        f"y2='{top + plot_h}' stroke='{GRID}'/>")
            body.append(_text(px(tick), top + plot_h + 15, fmt(tick), size=11, anchor="middle"))
        y = float(top)
        for row in self.rows:
            if row.group_start and y > top:
                y += 8
            cy = y + row_h / 2
            body.append(_text(left - 8, cy + 4, row.label, size=11, anchor="end",
                              fill=TEXT))
            body.append(f"<rect x='{left}' y='{y + 2:.1f}' width='{px(row.high) - left:.1f}' "
                        f"height='{row_h - 4}' fill='{row.colour}' "
                        f"fill-opacity='{row.opacity:.2f}' stroke='{row.colour}'/>")
            body.append(f"<line x1='{px(row.mid):.1f}' y1='{y + 1:.1f}' x2='{px(row.mid):.1f}' "
                        f"y2='{y + row_h - 1:.1f}' stroke='{TEXT}' stroke-width='2.5'/>")
            if row.top is not None and row.top > row.high:
                end = px(row.top)
                body.append(f"<line x1='{px(row.high):.1f}' y1='{cy:.1f}' x2='{end:.1f}' "
                            f"y2='{cy:.1f}' stroke='{row.colour}' stroke-width='1.5'/>")
                if row.top > x_top:
                    body.append(f"<polygon points='{end:.1f},{cy - 4:.1f} {end + 7:.1f},{cy:.1f} "
                                f"{end:.1f},{cy + 4:.1f}' fill='{row.colour}'/>")
                    body.append(_text(end + 10, cy + 4, f"{fmt(row.top)}", size=10))
                else:
                    body.append(f"<line x1='{end:.1f}' y1='{cy - 4:.1f}' x2='{end:.1f}' "
                                f"y2='{cy + 4:.1f}' stroke='{row.colour}' stroke-width='1.5'/>")
            y += row_h
        body.append(f"<line x1='{left}' y1='{top}' x2='{left}' y2='{top + plot_h}' "
                    f"stroke='#999'/>")
        body.append(_text(left + plot_w / 2, top + plot_h + 32, f"{self.x_label} ({self.unit})",
                          anchor="middle"))
        grey = "#555"
        items = [
            (swatch_fill(grey), f"bar: {self.bar_label}"),
            (f"<line x1='7' y1='0' x2='7' y2='10' stroke='{TEXT}' stroke-width='2.5'/>",
             f"tick: {self.mid_label}"),
        ]
        if tops:
            items.append((swatch_line(grey), f"whisker: {self.top_label} (arrow: off the axis)"))
        legend, legend_height = _legend(items, left, top + plot_h + 52, plot_w + right)
        body.append(legend)
        return _svg(self.width, top + plot_h + 52 + legend_height, self.title, body)
