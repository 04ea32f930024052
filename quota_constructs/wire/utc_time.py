"""How the commands' JSON writes a moment (``usage.json``, explain's and estimate's
``start_estimate``): ISO 8601 in UTC with a ``Z``, to the millisecond when it is not a whole
second (``2026-11-01T00:00:00Z``, ``2026-11-01T00:00:00.250Z``)."""

from __future__ import annotations

from datetime import UTC, datetime


def iso_utc(moment: datetime) -> str:
    """``moment`` (aware) as the commands write it."""
    spec = "seconds" if moment.microsecond == 0 else "milliseconds"
    return moment.astimezone(UTC).isoformat(timespec=spec).replace("+00:00", "Z")


def iso_utc_ms(epoch_ms: int) -> str:
    """Epoch milliseconds as the commands write them (a float of milliseconds over 1,000 is
    exact to the microsecond for any date of this era, so the milliseconds are kept)."""
    return iso_utc(datetime.fromtimestamp(epoch_ms / 1000, UTC))
