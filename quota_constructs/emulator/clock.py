"""The emulated clock: where emulated time starts, and how it moves (by hand or with real time).

Every time the emulator answers with (``createdAt``, ``startedAt``, a snapshot's
``lastUpdatedAt``, an event's ``time``, the HTTP ``Date`` header) is on this clock: its start
plus the emulated seconds since. The start is the real time when the emulator starts, unless
the user gives one (``--start``, ``Emulator(start=...)``), so a queue rehearsed today reads as
today to every tool that compares those times with a clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

Start = datetime | float | int | None
"""When emulated time starts: an aware datetime (a naive one is read as UTC), seconds since
the epoch, or None for the real time when the clock is made."""


class Clock:
    """Emulated seconds since ``start``. ``manual``: moves only by :meth:`advance`. ``wall``:
    moves at ``speed`` times real time, and :meth:`advance` jumps it ahead as well.

    ``wall`` (seconds since the epoch) and ``monotonic`` are injectable for tests."""

    def __init__(self, kind: str = "manual", *, speed: float = 1.0, start: Start = None,
                 monotonic: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        if kind not in ("manual", "wall"):
            raise ValueError(f"clock: {kind!r} is not valid; expected 'manual' or 'wall'")
        if not speed > 0:
            raise ValueError(f"speed: {speed!r} is not valid; expected a number > 0")
        self.kind = kind
        self.speed = speed
        self.start_ms = start_ms_of(start, wall)
        """Milliseconds since the epoch at emulated second 0."""
        self._monotonic = monotonic
        self._started = monotonic()
        self._jumped = 0.0
        self._lock = threading.Lock()

    @property
    def manual(self) -> bool:
        return self.kind == "manual"

    def now(self) -> float:
        """Emulated seconds since the start."""
        with self._lock:
            if self.manual:
                return self._jumped
            return (self._monotonic() - self._started) * self.speed + self._jumped

    def ms(self, seconds: float) -> int:
        """Emulated second ``seconds`` as milliseconds since the epoch (how Batch sends time)."""
        return self.start_ms + round(seconds * 1000)

    def now_ms(self) -> int:
        """The emulated time now, in milliseconds since the epoch."""
        return self.ms(self.now())

    def advance(self, seconds: float) -> float:
        """Move ahead by ``seconds`` (>= 0); returns the new time."""
        with self._lock:
            self._jumped += seconds
        return self.now()


def start_ms_of(start: Start, wall: Callable[[], float] = time.time) -> int:
    """``start`` (see :data:`Start`) as milliseconds since the epoch."""
    if start is None:
        return round(wall() * 1000)
    if isinstance(start, datetime):
        aware = start if start.tzinfo is not None else start.replace(tzinfo=UTC)
        return round(aware.timestamp() * 1000)
    if isinstance(start, bool) or not isinstance(start, int | float) or not (
        0 <= start < 253402300800  # year 10000
    ):
        raise ValueError(f"start: {start!r} is not valid; expected a datetime, seconds since "
                         "the epoch, or None (now)")
    return round(start * 1000)


def parse_start(text: str) -> datetime:
    """``--start``: an ISO 8601 date and time (``2026-05-04T09:00:00Z``; without an offset it
    is UTC). Raises ValueError naming the value."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--start got {text!r}; allowed: an ISO 8601 date and time such as "
                         "2026-05-04T09:00:00Z (UTC when no offset is given)") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
