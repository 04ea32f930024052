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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.wire.custom_resource import QUERY_INTERVAL_ENV, TOTAL_TIMEOUT_ENV

from .clock import Clock

STARTED_AT_KEY = "QuotaShareRequestStartedAt"
"""Key of ``on_event``'s result that the framework passes on to each ``is_complete`` call."""



def started_now(clock: Clock) -> dict[str, float]:
    """The stamp ``on_event`` adds to its result: the time it submitted the change."""
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

    def elapsed(self, now: float) -> int:
        """Whole seconds since the change was submitted, at ``now``."""
        return int(now - self.started_at)

    def exhausted(self, now: float) -> bool:
        """Whether a poll at ``now`` is the last that can still fail with its own reason."""
        # Two intervals of margin: the next poll might otherwise come after the framework's.
        return now - self.started_at >= self.total_seconds - 2 * self.interval_seconds
