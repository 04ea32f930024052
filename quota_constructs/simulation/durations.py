"""Durations in words, one way for everything recommend and the simulation report say.

``92142`` reads ``25 h 35 min``, never ``92,142 s`` or ``1.07 d``: a person compares waits in
hours and minutes. Two units at most; the smaller is cut (not rounded up), so a wait is never
shown longer than it was and ``59 min 59 s`` never reads ``1 h``.
"""

from __future__ import annotations

import math

_MINUTE, _HOUR, _DAY = 60, 3600, 86400


def human_duration(seconds: float | None) -> str:
    """``45 s``, ``2 min 30 s``, ``25 min``, ``1 h 30 min``, ``25 h 35 min``, ``3 d 4 h``;
    ``n/a`` for None, ``never`` for infinity (a job that never starts)."""
    if seconds is None:
        return "n/a"
    if math.isinf(seconds):
        return "never"
    whole = int(max(seconds, 0.0))
    if seconds < 90:
        return f"{seconds:.0f} s"
    if whole < _HOUR:
        minutes, rest = divmod(whole, _MINUTE)
        return _two(minutes, "min", rest if minutes < 10 else 0, "s")
    if whole < 72 * _HOUR:
        hours, rest = divmod(whole, _HOUR)
        return _two(hours, "h", rest // _MINUTE, "min")
    days, rest = divmod(whole, _DAY)
    return _two(days, "d", rest // _HOUR, "h")


def _two(large: int, large_unit: str, small: int, small_unit: str) -> str:
    return f"{large:,} {large_unit}" + (f" {small} {small_unit}" if small else "")
