"""How long ``is_complete`` may keep answering "not yet" before it fails with its own reason.

The Provider framework gives up after its total timeout with a bare "Operation timed out".
The provider construct passes that timeout and the polling interval to the functions, and
``on_event`` stamps the time it submitted the change into the event the framework hands to
every ``is_complete`` poll; a poll that finds the share still busy close to the deadline then
fails with a message saying what was still pending. Without either value the runtime simply
keeps polling and the framework's timeout is the bound.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.wire.custom_resource import QUERY_INTERVAL_ENV, TOTAL_TIMEOUT_ENV

STARTED_AT_KEY = "QuotaShareRequestStartedAt"
"""Key of ``on_event``'s result that the framework passes on to each ``is_complete`` call."""

clock: Callable[[], float] = time.time


def started_now() -> dict[str, float]:
    return {STARTED_AT_KEY: round(clock(), 3)}


@dataclass(frozen=True)
class WaitBudget:
    started_at: float
    total_seconds: int
    interval_seconds: int

    @classmethod
    def of(cls, event: Mapping[str, Any]) -> WaitBudget | None:
        try:
            return cls(
                float(event[STARTED_AT_KEY]),
                int(os.environ[TOTAL_TIMEOUT_ENV]),
                int(os.environ[QUERY_INTERVAL_ENV]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def elapsed(self) -> int:
        return int(clock() - self.started_at)

    @property
    def exhausted(self) -> bool:
        # Two intervals of margin: the next poll might otherwise come after the framework's.
        return clock() - self.started_at >= self.total_seconds - 2 * self.interval_seconds
