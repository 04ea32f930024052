"""The fake Batch on loopback (the runtime's fixtures) for the reviewer's probes."""

from __future__ import annotations

from ..runtime.conftest import Batch, batch, fake_batch_server

__all__ = ["Batch", "batch", "fake_batch_server"]
