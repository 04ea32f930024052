"""How a change to a quota share is judged when AWS Batch's answer does not say whether it happened.

A 5xx, a timeout or a dropped connection can come back after AWS Batch applied the change; a
throttled request may or may not have been counted. Sending the same change again is then
wrong in two ways: an update that went through leaves the share UPDATING, so the repeat is
refused ("cannot update ... while its status is UPDATING"); and a repeat can apply something
stale. So every mutating call goes through one rule instead of a blind retry: after an
ambiguous answer (or that refusal), read the share and let what is there decide:

- the change is visible (:attr:`Progress.APPLIED`): it went through; the caller goes on, and
  the provider's ``is_complete`` polling waits for the share to settle;
- the share is busy with something else (:attr:`Progress.IN_TRANSITION`): nothing is sent; the
  next ``is_complete`` poll re-reads the share and decides again, within the wait budget;
- the share is settled without the change (:attr:`Progress.NOT_APPLIED`): it did not happen,
  so it is sent again, with backoff, within the retry policy's attempts and the time left.

Each mutation states what "applied" means for it (:class:`ShareWrite`); the rule is the same for
create, update, adopt, disable, re-enable, delete and the ownership tags.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from quota_constructs.wire.live_share import LiveShare

from .ownership import is_owned

BUSY_STATUSES = frozenset({"CREATING", "UPDATING", "DELETING"})
_BUSY_REFUSAL = re.compile(r"\b(CREATING|UPDATING|DELETING)\b")


class Progress(Enum):
    APPLIED = "applied"
    NOT_APPLIED = "not applied"
    IN_TRANSITION = "in transition"


def is_busy_refusal(code: str, message: str) -> bool:
    """AWS Batch refusing a change because the share is still busy with a previous one.

    Only a client error naming a transitional status counts; a validation error never does.
    """
    return code == "ClientException" and bool(_BUSY_REFUSAL.search(message))


@dataclass(frozen=True)
class ShareWrite:
    """One mutating call, and how to tell from the share as it is now whether it took effect."""

    operation: str
    params: Mapping[str, Any]
    progress: Callable[[LiveShare | None], Progress]
    """Judges the share re-read after an ambiguous answer (None: AWS Batch does not have it)."""

    @classmethod
    def update(cls, arn: str, fields: Mapping[str, Any]) -> ShareWrite:
        def progress(share: LiveShare | None) -> Progress:
            if share is not None and share.config.shows(fields):
                return Progress.APPLIED
            return _busy_or_not_applied(share)

        return cls("UpdateQuotaShare", {"quotaShareArn": arn, **fields}, progress)

    @classmethod
    def delete(cls, arn: str) -> ShareWrite:
        def progress(share: LiveShare | None) -> Progress:
            if share is None or share.status == "DELETING":
                return Progress.APPLIED
            return _busy_or_not_applied(share)

        return cls("DeleteQuotaShare", {"quotaShareArn": arn}, progress)

    @classmethod
    def create(cls, params: Mapping[str, Any], owner: str) -> ShareWrite:
        """Applied when a share of that name carries the owner marker the create gave it."""

        def progress(share: LiveShare | None) -> Progress:
            if share is None:
                return Progress.NOT_APPLIED
            if is_owned(share.tags, owner):
                return Progress.APPLIED
            # Someone else's share of that name: not ours to call created; the caller's
            # adoption rules decide what happens to it.
            return Progress.IN_TRANSITION

        return cls("CreateQuotaShare", params, progress)

    @classmethod
    def tag(cls, arn: str, tags: Mapping[str, str]) -> ShareWrite:
        def progress(share: LiveShare | None) -> Progress:
            if share is not None and all(share.tags.get(k) == v for k, v in tags.items()):
                return Progress.APPLIED
            return Progress.NOT_APPLIED

        return cls("TagResource", {"resourceArn": arn, "tags": dict(tags)}, progress)

    @classmethod
    def untag(cls, arn: str, keys: Sequence[str]) -> ShareWrite:
        def progress(share: LiveShare | None) -> Progress:
            if share is None or not set(keys) & set(share.tags):
                return Progress.APPLIED
            return Progress.NOT_APPLIED

        return cls("UntagResource", {"resourceArn": arn, "tagKeys": list(keys)}, progress)


def _busy_or_not_applied(share: LiveShare | None) -> Progress:
    if share is not None and share.status in BUSY_STATUSES:
        return Progress.IN_TRANSITION
    return Progress.NOT_APPLIED
