"""The emulated clock: seconds since the emulator started, moved by hand or by real time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Clock:
    """Emulated seconds since start. ``manual``: moves only by :meth:`advance`. ``wall``: moves
    at ``speed`` times real time, and :meth:`advance` jumps it ahead as well."""

    def __init__(self, kind: str = "manual", *, speed: float = 1.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        if kind not in ("manual", "wall"):
            raise ValueError(f"clock: {kind!r} is not valid; expected 'manual' or 'wall'")
        if not speed > 0:
            raise ValueError(f"speed: {speed!r} is not valid; expected a number > 0")
        self.kind = kind
        self.speed = speed
        self._monotonic = monotonic
        self._started = monotonic()
        self._jumped = 0.0
        self._lock = threading.Lock()

    @property
    def manual(self) -> bool:
        return self.kind == "manual"

    def now(self) -> float:
        with self._lock:
            if self.manual:
                return self._jumped
            return (self._monotonic() - self._started) * self.speed + self._jumped

    def advance(self, seconds: float) -> float:
        """Move ahead by ``seconds`` (>= 0); returns the new time."""
        with self._lock:
            self._jumped += seconds
        return self.now()
