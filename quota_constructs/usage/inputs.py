"""The options of ``quota-constructs usage`` that are not files of jobs: a price table, the
window's bounds and the fair-share half-life, each read strictly with a one-line error."""

from __future__ import annotations

import csv
import math
import re
from datetime import UTC, datetime
from pathlib import Path

from ..simulation.targets import parse_duration
from .jobs import UsageInputError

PRICES_HEADER = ("instance_type", "price_per_hour")
INSTANT_SYNTAX = "YYYY-MM-DDTHH:MM:SSZ (UTC), e.g. 2026-11-01T00:00:00Z"
_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
HALF_LIFE_SYNTAX = "a duration > 0 such as 24h, 7d, 90min or 3600 (seconds)"


def parse_instant(text: str, option: str) -> int:
    """``--since``/``--until``: ``YYYY-MM-DDTHH:MM:SSZ`` as epoch milliseconds."""
    if not _INSTANT.fullmatch(text):
        raise UsageInputError(f"{option} got {text!r}; allowed: {INSTANT_SYNTAX}")
    try:
        moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise UsageInputError(f"{option} got {text!r}; allowed: {INSTANT_SYNTAX} (a date "
                              "that exists)") from None
    return round(moment.timestamp() * 1000)


def parse_half_life(text: str) -> float:
    """``--half-life``: hours."""
    try:
        seconds = parse_duration(text)
    except ValueError:
        raise UsageInputError(f"--half-life got {text!r}; allowed: {HALF_LIFE_SYNTAX}") from None
    if not math.isfinite(seconds):
        raise UsageInputError(f"--half-life got {text!r}; allowed: {HALF_LIFE_SYNTAX}")
    return seconds / 3600.0


def read_prices(path: str | Path) -> dict[str, float]:
    """``--prices``: a CSV with the header ``instance_type,price_per_hour``, one row per type,
    each price a number >= 0 (per instance-hour, in whatever currency the file uses)."""
    source = str(path)
    try:
        with Path(path).open(newline="", encoding="utf-8") as stream:
            rows = list(csv.reader(stream))
    except (FileNotFoundError, IsADirectoryError):
        raise UsageInputError(f"--prices got {source!r}; allowed: an existing CSV file with "
                              f"the header {','.join(PRICES_HEADER)}") from None
    except UnicodeDecodeError:
        raise UsageInputError(f"{source}: not UTF-8 text") from None
    header = tuple(name.strip() for name in rows[0]) if rows else ()
    if header != PRICES_HEADER:
        raise UsageInputError(f"{source} line 1: header {','.join(header)!r}; allowed: "
                              f"{','.join(PRICES_HEADER)}")
    prices: dict[str, float] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 2:
            raise UsageInputError(f"{source} line {number}: {len(row)} values; allowed: 2 "
                                  f"({','.join(PRICES_HEADER)})")
        unit, text = row[0].strip(), row[1].strip()
        if not unit:
            raise UsageInputError(f"{source} line {number}: instance_type is empty")
        if unit in prices:
            raise UsageInputError(f"{source} line {number}: instance_type {unit!r} again; "
                                  "allowed: each instance type once")
        try:
            price = float(text)
        except ValueError:
            price = -1.0
        if not math.isfinite(price) or price < 0:
            raise UsageInputError(f"{source} line {number}: price_per_hour {text!r} for "
                                  f"{unit}; allowed: a number >= 0")
        prices[unit] = price
    return prices
