"""Step functions of capacity over time, averaged into a few hundred equal buckets.

A million-job run changes a share's use millions of times; a chart needs a few hundred points.
Each bucket gets the time-weighted average of the step function over its span, so the area
under the chart (instance-hours) is preserved exactly. One pass over the change points.
"""

from __future__ import annotations

from collections.abc import Sequence


def bucket_averages(
    times: Sequence[float],
    values: Sequence[float],
    *,
    start: float,
    end: float,
    buckets: int,
) -> list[float]:
    """Average of the step function (``values[i]`` from ``times[i]`` to ``times[i + 1]``, 0
    before the first change, the last value until ``end``) over each of ``buckets`` equal
    spans of [start, end]."""
    if buckets < 1:
        raise ValueError("buckets must be >= 1")
    width = (end - start) / buckets
    if width <= 0:
        return [float(values[-1]) if values else 0.0] * buckets
    area = [0.0] * buckets
    count = len(times)
    for i in range(count):
        value = values[i]
        if value == 0:
            continue
        seg_start = max(times[i], start)
        seg_end = min(times[i + 1] if i + 1 < count else end, end)
        if seg_end <= seg_start:
            continue
        first = min(int((seg_start - start) / width), buckets - 1)
        last = min(int((seg_end - start) / width), buckets - 1)
        if first == last:
            area[first] += value * (seg_end - seg_start)
            continue
        area[first] += value * (start + (first + 1) * width - seg_start)
        for b in range(first + 1, last):
            area[b] += value * width
        area[last] += value * (seg_end - (start + last * width))
    return [a / width for a in area]
