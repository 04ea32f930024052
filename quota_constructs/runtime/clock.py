"""The wall clock the runtime reads, passed in rather than read from a module global.

The Lambda entry points pass :data:`WALL_CLOCK`; whoever drives a handler elsewhere (tests, the
soak run) passes its own, so no age or deadline depends on how fast the machine is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

Clock = Callable[[], float]
"""Seconds since the epoch, as ``time.time`` reads them."""

WALL_CLOCK: Final[Clock] = time.time
