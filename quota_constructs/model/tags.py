"""AWS resource tag limits shared by every Batch resource the library creates, and the one
place the library's own tag keys are named.

The limits are the AWS Batch user guide's "Tag restrictions": at most 50 tags per resource;
keys of 1–128 and values of at most 256 Unicode characters; and ``aws:`` in any case reserved
for AWS as the prefix of a key or a value. The constructs check declared tags with them at
synth, the team client before it calls Batch, and the local emulator on every request that
tags.

Characters are not judged: the guide names letters, numbers, spaces and ``+ - = . _ : / @``
only as what is "generally allowed" when a tagging schema spans *other* services, and
botocore's Batch model gives tag keys and values no pattern, so refusing another character
would refuse a tag AWS Batch may accept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .errors import QuotaConfigError
from .tokens import is_unresolved

MAX_TAGS = 50
MAX_TAG_KEY_LENGTH = 128
MAX_TAG_VALUE_LENGTH = 256
RESERVED_TAG_PREFIX = "aws:"
LIBRARY_TAG_PREFIX: Final = "quota-constructs:"
"""Every tag key the library sets or reads starts with this."""
SHARE_TAG_KEY: Final = LIBRARY_TAG_PREFIX + "quota-share"
"""The tag every service job submitted under ``grant_submit`` carries, valued with the share's
name: it is what lets ``grant_update_priority`` reach a team's own jobs and no one else's (the
one library key a team sets)."""
OWNER_TAG_KEY: Final = LIBRARY_TAG_PREFIX + "owner"
ADOPTING_TAG_KEY: Final = LIBRARY_TAG_PREFIX + "adopting"
LIFECYCLE_TAG_KEY: Final = LIBRARY_TAG_PREFIX + "lifecycle"
DEPLOYED_CONFIG_TAG_KEY: Final = LIBRARY_TAG_PREFIX + "deployed-config"
ADOPTED_TAG_KEY: Final = LIBRARY_TAG_PREFIX + "adopted"
RESERVED_LIBRARY_TAG_KEYS: Final = (
    OWNER_TAG_KEY, ADOPTING_TAG_KEY, LIFECYCLE_TAG_KEY, DEPLOYED_CONFIG_TAG_KEY, ADOPTED_TAG_KEY,
)
"""The library's keys that only the library sets (on quota shares: ownership marker, adoption
step, lifecycle record, deployed configuration, what an adopted share was). ``grant_submit``
lists them by name: IAM's string patterns cannot say "this prefix except the share's tag", so
a key added here is reserved in every grant synthesized afterwards. The team client refuses
the whole prefix."""


def counts_against_tag_limit(key: str) -> bool:
    """Whether ``key`` counts against the 50 tags per resource: AWS says tags whose key starts
    with ``aws:`` (in any case) do not (AWS Batch user guide, "Tag restrictions")."""
    return not key.lower().startswith(RESERVED_TAG_PREFIX)


def is_library_tag_key(key: str) -> bool:
    """Whether ``key`` is in the library's namespace (compared without case, as IAM's
    ``...IgnoreCase`` operators the grants use do)."""
    return key.lower().startswith(LIBRARY_TAG_PREFIX)


def validate_tags(tags: Mapping[str, str], *, subject: str, field: str = "tags") -> dict[str, str]:
    """At most 50 tags; keys of 1–128 and values of 0–256 characters, neither starting with
    ``aws:`` (the module docstring's rules). Unresolved tokens are not judged."""
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
            problem = tag_text_problem(key, minimum=1, maximum=MAX_TAG_KEY_LENGTH)
            if problem is not None:
                raise QuotaConfigError(subject, f"{field} key", key, problem)
        if not isinstance(value, str):
            raise QuotaConfigError(subject, f"{field}[{key!r}]", value, "a string value")
        if not is_unresolved(value):
            problem = tag_text_problem(value, minimum=0, maximum=MAX_TAG_VALUE_LENGTH)
            if problem is not None:
                raise QuotaConfigError(subject, f"{field}[{key!r}]", value, problem)
    return dict(tags)


def tag_text_problem(text: str, *, minimum: int, maximum: int) -> str | None:
    """What a tag key or value must be instead, or None when ``text`` is one."""
    if not minimum <= len(text) <= maximum:
        return f"{minimum} to {maximum} characters"
    if text.lower().startswith(RESERVED_TAG_PREFIX):
        return f"text that does not start with {RESERVED_TAG_PREFIX!r} (reserved by AWS)"
    return None
