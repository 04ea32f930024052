"""What a quota share was before a deployment adopted it: the record an adoption leaves on it.

Adoption is import (DESIGN.md §10): a share the stack adopted existed before, so whatever
undoes the adoption — a rollback, a failed adoption, deleting the adopting resource — gives it
back as it was. The record travels on the share itself, as the lifecycle record does, in one
tag (:data:`ADOPTED_TAG_KEY`), so the custom resource and ``preview`` read it from live state
alone. It holds one entry per adoption still undoable, oldest first:

- ``by``: the owner marker of the resource that adopted the share;
- ``from_resource``: whether it was adopted from another quota-constructs resource (a move);
  False for a share made outside every such resource (by hand, by other tooling), which
  existed before the stack;
- ``config``: its UpdateQuotaShare-shaped configuration and state before the adoption;
- ``tags``: for every tag key the stack has set on it since, the value before (None: absent).
  Keys are added as the stack sets them (an update declaring a new tag extends the record
  first), so releasing the share removes exactly what the stack added and puts back what it
  overwrote, and leaves every other tag alone;
- ``pending``: the adoption has not finished yet (the adopting resource does not own the share
  yet). This is the adoption's marker: it travels in the record's own tag, so that claiming the
  share (writing the owner marker and clearing ``pending``) is one TagResource call that adds
  one key, and an adopted share never carries more than three tags of the library's.

Tag budget: AWS allows 50 tags per share and 256 characters per value. The record is JSON,
compressed and base64-encoded (letters, digits, ``+/=``, all allowed in tag values) behind a
version prefix; an adoption whose record would not fit, or whose tags would not fit beside the
runtime's markers, is refused before anything is changed.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from .tags import ADOPTED_TAG_KEY, MAX_TAG_VALUE_LENGTH

_PREFIX: Final = "1:"
_DICTIONARY: Final = (
    # zlib's preset dictionary for version 1 (never change it; add a version instead): what
    # records repeat, so that one fits in a tag value.
    b'"quota-constructs:lifecycle":"adopt_existing=false allow_preemption_on_shrink=false '
    b'terminate_active_jobs_on_delete=false stack=" adopt_existing=true '
    b'allow_preemption_on_shrink=true terminate_active_jobs_on_delete=true '
    b'delete_adopted_share_on_delete=true "RESERVE" "LEND" "LEND_AND_BORROW" "ENABLED" '
    b'"DISABLED" ml.g5.xlarge ml.g5.2xlarge ml.p4d.24xlarge ml.p5.48xlarge ml.g6.xlarge '
    b'ml.trn1.32xlarge {"b":"","c":{"b":null,"l":[["",1]],"p":"DISABLED","s":"LEND",'
    b'"st":"ENABLED"},"f":1,"t":{"team":null,"quota-constructs:lifecycle":null}}'
)


@dataclass(frozen=True)
class AdoptionEntry:
    by: str
    from_resource: bool
    config: Mapping[str, Any]
    tags: Mapping[str, str | None] = field(default_factory=dict)
    pending: bool = False

    def covering(self, current: Mapping[str, str], keys: Iterable[str]) -> AdoptionEntry:
        """This entry, also recording the current value of each of ``keys`` it does not cover
        yet (called before the stack sets or removes those keys)."""
        added = {key: current.get(key) for key in keys if key not in self.tags}
        return replace(self, tags={**self.tags, **added}) if added else self

    def _json(self) -> dict[str, Any]:
        written = {"b": self.by, "f": 1 if self.from_resource else 0,
                   "c": _compact(self.config), "t": dict(self.tags)}
        return {**written, "p": 1} if self.pending else written

    @classmethod
    def _from_json(cls, raw: Mapping[str, Any]) -> AdoptionEntry:
        tags = raw.get("t") or {}
        return cls(
            by=str(raw["b"]),
            from_resource=bool(raw.get("f")),
            config=_expanded(raw.get("c") or {}),
            tags={str(k): None if v is None else str(v) for k, v in tags.items()},
            pending=bool(raw.get("p")),
        )


def _compact(config: Mapping[str, Any]) -> dict[str, Any]:
    sharing = config.get("resourceSharingConfiguration") or {}
    return {
        # Pairs, not an object: the order AWS Batch lists the limits in is kept.
        "l": [[str(item.get("capacityUnit")), item.get("maxCapacity")]
              for item in config.get("capacityLimits") or []],
        "s": sharing.get("strategy"),
        "b": sharing.get("borrowLimit"),
        "p": (config.get("preemptionConfiguration") or {}).get("inSharePreemption"),
        "st": config.get("state"),
    }


def _expanded(raw: Mapping[str, Any]) -> dict[str, Any]:
    sharing: dict[str, Any] = {"strategy": raw.get("s")}
    if raw.get("b") is not None:
        sharing["borrowLimit"] = raw["b"]
    return {
        "capacityLimits": [{"capacityUnit": unit, "maxCapacity": count}
                           for unit, count in raw.get("l") or []],
        "resourceSharingConfiguration": sharing,
        "preemptionConfiguration": {"inSharePreemption": raw.get("p")},
        "state": raw.get("st"),
    }


@dataclass(frozen=True)
class AdoptionRecord:
    entries: tuple[AdoptionEntry, ...] = ()
    damaged: bool = False
    """The tag is there but cannot be read: the share was adopted, what it was is unknown."""

    @classmethod
    def from_tags(cls, tags: Mapping[str, str]) -> AdoptionRecord:
        value = tags.get(ADOPTED_TAG_KEY)
        if value is None:
            return cls()
        try:
            if not value.startswith(_PREFIX):
                raise ValueError(value)
            inflate = zlib.decompressobj(zdict=_DICTIONARY)
            raw = json.loads(inflate.decompress(base64.b64decode(value[len(_PREFIX):])))
            return cls(tuple(AdoptionEntry._from_json(item) for item in raw))
        except (ValueError, KeyError, TypeError, AttributeError, binascii.Error, zlib.error):
            return cls(damaged=True)

    def encode(self) -> str:
        text = json.dumps([entry._json() for entry in self.entries], separators=(",", ":"),
                          sort_keys=True)
        deflate = zlib.compressobj(9, zdict=_DICTIONARY)
        packed = deflate.compress(text.encode()) + deflate.flush()
        return _PREFIX + base64.b64encode(packed).decode()

    @property
    def fits(self) -> bool:
        """Whether the record fits in one tag value."""
        return len(self.encode()) <= MAX_TAG_VALUE_LENGTH

    def tag_change(self) -> tuple[dict[str, str], list[str]]:
        """``(tags to set, keys to remove)`` that write this record on the share."""
        if not self.entries:
            return {}, [ADOPTED_TAG_KEY]
        return {ADOPTED_TAG_KEY: self.encode()}, []

    @property
    def existed_before_the_stack(self) -> bool:
        """The share was made outside every quota-constructs resource, or the record is
        unreadable (assumed so: the one irreversible choice is never made on a guess)."""
        return self.damaged or any(not entry.from_resource for entry in self.entries)

    def pushed(self, entry: AdoptionEntry) -> AdoptionRecord:
        return replace(self, entries=(*self.entries, entry))

    @property
    def adopting(self) -> frozenset[str]:
        """The resources whose adoption of the share has not finished."""
        return frozenset(entry.by for entry in self.entries if entry.pending)

    def claimed_by(self, marker: str) -> AdoptionRecord:
        """The record once ``marker``'s adoption has finished (its newest entry no longer
        pending)."""
        index = self._newest_index(marker)
        if index is None or not self.entries[index].pending:
            return self
        entries = list(self.entries)
        entries[index] = replace(entries[index], pending=False)
        return replace(self, entries=tuple(entries))

    def entry_by(self, marker: str) -> AdoptionEntry | None:
        """The newest entry of an adoption by ``marker``."""
        return next((e for e in reversed(self.entries) if e.by == marker), None)

    def _newest_index(self, marker: str) -> int | None:
        return next((i for i in reversed(range(len(self.entries)))
                     if self.entries[i].by == marker), None)

    def without(self, marker: str) -> AdoptionRecord:
        """The record once ``marker``'s newest adoption is undone (its entry dropped; an older
        entry by the same resource, from before a move away and back, stays)."""
        index = self._newest_index(marker)
        if index is None:
            return self
        return replace(self, entries=self.entries[:index] + self.entries[index + 1:])

    def settled_on(self, marker: str) -> AdoptionRecord:
        """The record once the resource a move took the share from lets go: ``marker``'s
        newest adoption can no longer be undone, so its entry merges into the one before it
        (what that adoption recorded wins; keys only the move set keep their value from before
        the move, which is the one from before the stack), or is dropped when there is none."""
        index = self._newest_index(marker)
        if index is None or not self.entries[index].from_resource:
            return self
        entries = list(self.entries)
        moved = entries.pop(index)
        if index > 0:
            below = entries[index - 1]
            entries[index - 1] = replace(below, tags={**moved.tags, **below.tags})
        return replace(self, entries=tuple(entries))

    def covering(self, current: Mapping[str, str], keys: Iterable[str]) -> AdoptionRecord:
        """Every entry also records the current value of ``keys`` it does not cover yet."""
        wanted = list(keys)
        return replace(self, entries=tuple(e.covering(current, wanted) for e in self.entries))

    def original(self) -> AdoptionEntry | None:
        """What the share was before the stack: the oldest entry of an adoption from outside
        every resource, with the tags every later entry recorded and it did not."""
        bottom = next((e for e in self.entries if not e.from_resource), None)
        if bottom is None:
            return None
        tags: dict[str, str | None] = {}
        for entry in reversed(self.entries):
            tags.update(entry.tags)
        tags.update(bottom.tags)
        return replace(bottom, tags=tags)
