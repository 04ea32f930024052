"""AWS resource tag limits shared by every Batch resource the library creates."""

from __future__ import annotations

from collections.abc import Mapping

from .errors import QuotaConfigError
from .tokens import is_unresolved

MAX_TAGS = 50
MAX_TAG_KEY_LENGTH = 128
MAX_TAG_VALUE_LENGTH = 256
RESERVED_TAG_PREFIX = "aws:"


def validate_tags(tags: Mapping[str, str], *, subject: str, field: str = "tags") -> dict[str, str]:
    """At most 50 tags; keys 1–128 characters not starting with ``aws:``; values 0–256."""
    if not isinstance(tags, Mapping):
        raise QuotaConfigError(subject, field, tags, "a mapping of tag keys to string values")
    if len(tags) > MAX_TAGS:
        raise QuotaConfigError(
            subject, field, f"{len(tags)} tags", f"at most {MAX_TAGS} tags per resource"
        )
    for key, value in tags.items():
        if not isinstance(key, str):
            raise QuotaConfigError(subject, f"{field} key", key, "a string")
        if not is_unresolved(key):
            if not 1 <= len(key) <= MAX_TAG_KEY_LENGTH:
                raise QuotaConfigError(
                    subject, f"{field} key", key, f"1 to {MAX_TAG_KEY_LENGTH} characters"
                )
            if key.lower().startswith(RESERVED_TAG_PREFIX):
                raise QuotaConfigError(
                    subject,
                    f"{field} key",
                    key,
                    f"a key that does not start with {RESERVED_TAG_PREFIX!r} (reserved by AWS)",
                )
        if not isinstance(value, str):
            raise QuotaConfigError(subject, f"{field}[{key!r}]", value, "a string value")
        if not is_unresolved(value) and len(value) > MAX_TAG_VALUE_LENGTH:
            raise QuotaConfigError(
                subject, f"{field}[{key!r}]", value, f"at most {MAX_TAG_VALUE_LENGTH} characters"
            )
    return dict(tags)
