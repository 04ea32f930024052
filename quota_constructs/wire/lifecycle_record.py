"""The words of a custom-resource share's lifecycle record (``quota-constructs:lifecycle``) that
more than the custom resource reads: every reader splits the record the same way, and the
monitoring and ``preview`` read the ``restore_pending`` mark a give-back leaves.

The record's value is space-separated ``word=value`` pairs (AWS tag values allow letters,
digits, spaces and ``_ . : / = + - @``). The custom resource writes the opt-ins and the
stack's marker (:mod:`quota_constructs.runtime.share_request`) and, while a give-back holds
part of a share's configuration back, the mark below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from quota_constructs.model.tags import LIFECYCLE_TAG_KEY

RESTORE_PENDING_WORD: Final = "restore_pending"
"""Present when a rolled-back or undone adoption gave the share back without some of its
recorded configuration, because restoring it would have preempted running jobs: the value
names what was left as it is (``capacity_limits+resource_sharing``). It stays until a
deployment writes the share's lifecycle record again, which it does only once its guards let
it apply its whole declaration; until then the monitoring reports the share as drifted."""
RESTORE_PENDING_PARTS: Final = {
    "capacityLimits": "capacity_limits",
    "resourceSharingConfiguration": "resource_sharing",
    "preemptionConfiguration": "in_share_preemption",
    "state": "state",
}
"""UpdateQuotaShare field -> its word in the mark."""


def lifecycle_words(value: str) -> dict[str, str]:
    """The lifecycle tag's ``word=value`` pairs."""
    return dict(part.partition("=")[::2] for part in value.split())


def restore_pending(tags: Mapping[str, str]) -> tuple[str, ...]:
    """The UpdateQuotaShare fields a give-back left as they were (the mark); empty when none."""
    value = lifecycle_words(tags.get(LIFECYCLE_TAG_KEY) or "").get(RESTORE_PENDING_WORD) or ""
    words = set(value.split("+"))
    return tuple(name for name, word in RESTORE_PENDING_PARTS.items() if word in words)


def lifecycle_with_restore_pending(value: str | None, fields: Iterable[str]) -> str | None:
    """The lifecycle tag's ``value`` (None: no tag) with the mark for ``fields`` (none: without
    the mark); None when no word is left."""
    wanted = set(fields)
    words = [part for part in (value or "").split()
             if part.partition("=")[0] != RESTORE_PENDING_WORD]
    pending = "+".join(word for name, word in RESTORE_PENDING_PARTS.items() if name in wanted)
    if pending:
        words.append(f"{RESTORE_PENDING_WORD}={pending}")
    return " ".join(words) or None
