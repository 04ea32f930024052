"""The fake Batch on loopback (the runtime's fixtures), and the live commands pointed at it."""

from __future__ import annotations

from ..runtime.conftest import Batch, batch, fake_batch_server

__all__ = ["Batch", "batch", "fake_batch_server"]
