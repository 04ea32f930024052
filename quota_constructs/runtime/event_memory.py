"""Which job events this execution environment has already acted on, so a duplicate delivery is
harmless.

EventBridge delivers at least once, and a Lambda's asynchronous queue may invoke a function
twice with the same event; both usually reach the same execution environment within seconds.
Each handled event leaves a marker file in ``/tmp`` (no table to deploy and pay for). ``/tmp``
outlives the runtime process, which Lambda restarts after a timeout or a crash, so a retry
after such a failure still finds what was done before it.

What remains at least once: a duplicate that reaches a *different* execution environment is
acted on again. For a FIFO owner topic SNS drops that copy too (see :mod:`notifier`); for a
standard topic the owner may then read one message twice. A terminated job is never
terminated twice (only active jobs are). An event is remembered only after everything it
caused was done, so a failed invocation is retried in full.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

MAX_REMEMBERED = 10_000
DIRECTORY_NAME = "quota-constructs-job-events"


class EventMemory:
    def __init__(self, directory: Path | None = None, capacity: int = MAX_REMEMBERED) -> None:
        self._directory = directory
        self._capacity = capacity
        self._seen: set[str] = set()

    @property
    def directory(self) -> Path:
        # Resolved on first use: TMPDIR applies as the process has it then.
        if self._directory is None:
            self._directory = Path(tempfile.gettempdir()) / DIRECTORY_NAME
        return self._directory

    def use_directory(self, directory: Path) -> None:
        self._directory = directory
        self._seen.clear()

    def seen(self, key: str) -> bool:
        digest = _digest(key)
        if digest in self._seen:
            return True
        try:
            return (self.directory / digest).exists()
        except OSError:
            return False

    def remember(self, key: str) -> None:
        digest = _digest(key)
        self._seen.add(digest)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            (self.directory / digest).touch()
            self._trim(keep=digest)
        except OSError:
            pass  # the in-process memory still holds it; /tmp is only the longer memory

    def forget_all(self) -> None:
        self._seen.clear()
        try:
            for marker in self.directory.iterdir():
                marker.unlink(missing_ok=True)
        except OSError:
            pass

    def _trim(self, keep: str) -> None:
        if len(self._seen) > self._capacity:
            self._seen = {keep}
        markers = [entry for entry in os.scandir(self.directory) if entry.name != keep]
        if len(markers) < self._capacity:
            return
        markers.sort(key=lambda entry: entry.stat().st_mtime_ns)
        for entry in markers[: len(markers) - self._capacity // 2]:
            Path(entry.path).unlink(missing_ok=True)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()
