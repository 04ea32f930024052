"""What the last deployment of a share applied, recorded on the share itself.

A monitor compares the live share with the declaration its own stack was synthesized with; a
team's stack deployed on its own may have changed the share on purpose since. So every share
the custom resource provisions for a monitored queue carries a tag with the fingerprint of the
configuration that deployment declared (the monitoring construct sets it; the custom resource
applies tags as it applies every declared tag). A live share that differs from the monitor's
declaration but matches its own tag was deployed that way: not drift. One that matches neither
was changed outside any deployment.
"""

from __future__ import annotations

import hashlib
import json
from typing import Final

from quota_constructs.model import tags as model_tags

from .lifecycle_record import restore_pending
from .live_share import LiveShare
from .share_config import ShareConfig

DEPLOYED_CONFIG_TAG_KEY: Final = model_tags.DEPLOYED_CONFIG_TAG_KEY
FINGERPRINT_LENGTH: Final = 16


def config_fingerprint(config: ShareConfig) -> str:
    """A short stable digest of a configuration (order of limits and defaults normalised by
    :class:`ShareConfig`)."""
    canonical = json.dumps(
        {
            "limits": sorted(config.limits.items()),
            "strategy": config.strategy,
            "borrow_limit": config.borrow_limit,
            "in_share_preemption": config.in_share_preemption,
            "state": config.state,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def deployed_as_is(live: LiveShare) -> bool:
    """Whether the live configuration is exactly what the share's last deployment declared.
    Never for a share a give-back left partly as it was (:func:`.restore_pending`): what it
    holds is not what its owner declared, whatever the tag says."""
    if restore_pending(live.tags):
        return False
    return live.tags.get(DEPLOYED_CONFIG_TAG_KEY) == config_fingerprint(live.config)
