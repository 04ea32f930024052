"""Which job events this container has already acted on, so a duplicate delivery is harmless.

EventBridge delivers at least once, and a Lambda's asynchronous queue may invoke it twice with
the same event; both arrive within seconds and almost always in the same warm container. The
memory is the container's own (no table to deploy and pay for): it is lost when the container
is recycled, so a duplicate that reaches a different container is acted on again. For a FIFO
owner topic SNS drops that copy too (see :mod:`notifier`); for a standard topic the owner may
then read one message twice. An event is remembered only after everything it caused was done,
so a failed invocation is retried in full.
"""

from __future__ import annotations

from collections import OrderedDict

MAX_REMEMBERED = 10_000


class EventMemory:
    def __init__(self, capacity: int = MAX_REMEMBERED) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._capacity = capacity

    def seen(self, key: str) -> bool:
        if key in self._seen:
            self._seen.move_to_end(key)
            return True
        return False

    def remember(self, key: str) -> None:
        self._seen[key] = None
        self._seen.move_to_end(key)
        while len(self._seen) > self._capacity:
            self._seen.popitem(last=False)

    def forget_all(self) -> None:
        self._seen.clear()
