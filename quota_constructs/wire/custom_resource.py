"""The ``Custom::BatchQuotaShare`` resource's own contract: its type, the guard properties it
takes beside ``AWS::Batch::QuotaShare``'s, how many declared tags it leaves room for, and the
settings the provider construct hands its functions.

The construct renders these names, the custom resource reads them, ``preview`` recognises the
resources by them: a property renamed here is renamed for all three.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from quota_constructs.model.tags import (
    ADOPTED_TAG_KEY,
    ADOPTING_TAG_KEY,
    LIFECYCLE_TAG_KEY,
    MAX_TAGS,
    OWNER_TAG_KEY,
)

CUSTOM_RESOURCE_TYPE: Final = "Custom::BatchQuotaShare"
NATIVE_RESOURCE_TYPE: Final = "AWS::Batch::QuotaShare"

ADOPT_EXISTING: Final = "AdoptExisting"
ALLOW_PREEMPTION_ON_SHRINK: Final = "AllowPreemptionOnShrink"
TERMINATE_ACTIVE_JOBS_ON_DELETE: Final = "TerminateActiveJobsOnDelete"
ALLOW_PREEMPTION_ON_IN_SHARE_ENABLE: Final = "AllowPreemptionOnInShareEnable"
DELETE_ADOPTED_SHARE_ON_DELETE: Final = "DeleteAdoptedShareOnDelete"
GUARD_PROPERTIES: Final[Mapping[str, str]] = {
    # The opt-in's field (``ShareLifecycle`` and the runtime's ``GuardOptIns`` alike) → property.
    "adopt_existing": ADOPT_EXISTING,
    "allow_preemption_on_shrink": ALLOW_PREEMPTION_ON_SHRINK,
    "terminate_active_jobs_on_delete": TERMINATE_ACTIVE_JOBS_ON_DELETE,
    "allow_preemption_on_in_share_enable": ALLOW_PREEMPTION_ON_IN_SHARE_ENABLE,
    "delete_adopted_share_on_delete": DELETE_ADOPTED_SHARE_ON_DELETE,
}
RENDERED_WHEN_SET: Final = frozenset(
    {"allow_preemption_on_in_share_enable", "delete_adopted_share_on_delete"}
)
"""Opt-ins rendered only when True: templates of shares that do not set them stay
byte-identical to those synthesized before the switches existed (an absent one reads False)."""


def guard_properties(opt_ins: Mapping[str, bool]) -> dict[str, bool]:
    """The guard properties for ``opt_ins`` (field → value; an absent field is False), in the
    order and with the omissions the template has always had."""
    return {prop: bool(opt_ins.get(name, False)) for name, prop in GUARD_PROPERTIES.items()
            if opt_ins.get(name, False) or name not in RENDERED_WHEN_SET}


RUNTIME_TAG_KEYS: Final = frozenset(
    {OWNER_TAG_KEY, ADOPTING_TAG_KEY, LIFECYCLE_TAG_KEY, ADOPTED_TAG_KEY}
)
"""Tags the custom resource writes on a share (the adopting tag only in earlier versions, which
it still reads and removes); never declared, never removed as a declared tag."""
KEPT_TAG_KEYS: Final = frozenset({OWNER_TAG_KEY, LIFECYCLE_TAG_KEY})
"""The runtime tags every managed share keeps."""
ADOPTED_SHARE_TAG_KEYS: Final = KEPT_TAG_KEYS | {ADOPTED_TAG_KEY}
"""The runtime tags a share adopted with ``adopt_existing`` keeps: also its adoption record,
which carries the adopting marker while the adoption runs (no fourth tag, even for a moment)."""


def library_tag_keys(*, adopt_existing: bool) -> frozenset[str]:
    """The tags of its own the custom resource writes on a share with these options."""
    return ADOPTED_SHARE_TAG_KEYS if adopt_existing else KEPT_TAG_KEYS


def declared_tag_budget(*, adopt_existing: bool) -> int:
    """Declared tags a custom-resource share may carry: AWS's limit of 50 tags per resource
    (AWS Batch user guide, "Tag restrictions") less the tags the library writes on it (48; 47
    with ``adopt_existing``). A share adopted with tags the declaration does not set counts
    those too, which only the custom resource can see (it refuses before any write)."""
    return MAX_TAGS - len(library_tag_keys(adopt_existing=adopt_existing))


MAX_DECLARED_TAGS: Final = declared_tag_budget(adopt_existing=False)
"""Declared tags a custom-resource share may carry without ``adopt_existing``."""


def declared_tag_limit(*, adopt_existing: bool) -> str:
    """The declared-tag budget as an error message states what is allowed."""
    keys = sorted(library_tag_keys(adopt_existing=adopt_existing))
    option = " and ShareLifecycle(adopt_existing=True)" if adopt_existing else ""
    return (f"at most {declared_tag_budget(adopt_existing=adopt_existing)} with "
            f"ShareProvisioning.CUSTOM_RESOURCE{option}, which keeps {len(keys)} of the "
            f"{MAX_TAGS} tags AWS allows per share for its own ({', '.join(keys)})")


TOTAL_TIMEOUT_ENV: Final = "QUOTA_SHARE_TOTAL_TIMEOUT_SECONDS"
QUERY_INTERVAL_ENV: Final = "QUOTA_SHARE_QUERY_INTERVAL_SECONDS"
"""The provider framework's total timeout and polling interval, passed to the functions so a
poll near the deadline fails with its own reason (:mod:`quota_constructs.runtime.wait_budget`)."""
