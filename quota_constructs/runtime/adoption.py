"""Giving an adopted share back as it was (see :mod:`quota_constructs.model.adoption_record`).

One step per call, like every other change of the runtime: the configuration and state the
share had before the adoption are submitted once the share is settled, and the caller moves the
tags and markers only once the share shows them. Giving back never preempts a job: a lower limit
or borrow ceiling that would make running jobs preemptible is held back (the share keeps the
larger value, which harms nobody; the log says so). ``allow_preemption_on_shrink`` waives the
guard of a deployment that lowers limits, not of undoing an adoption.
"""

from __future__ import annotations

from quota_constructs.model.adoption_record import AdoptionEntry
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn
from quota_constructs.wire.share_config import ShareConfig

from .batch_gateway import BatchGateway
from .guards import ShareUpdate, assess_shrink, list_jobs
from .structured_log import log

_CAPACITY_FIELDS = ("capacityLimits", "resourceSharingConfiguration")


def recorded_config(share: LiveShare, entry: AdoptionEntry) -> ShareConfig:
    return ShareConfig.from_api({**share.config.api_fields(), **entry.config})


def give_back_configuration(
    gateway: BatchGateway,
    arn: QuotaShareArn,
    share: LiveShare,
    entry: AdoptionEntry,
) -> bool:
    """One step: True once the share shows the recorded configuration and state (less what
    the shrink guard holds back) and is settled; False while a change is pending."""
    target = recorded_config(share, entry)
    fields = share.config.update_fields(target)
    if any(key in fields for key in _CAPACITY_FIELDS):
        assessment = assess_shrink(gateway, ShareUpdate(arn, share.config, target),
                                   allow_preemption=False)
        if assessment.refused:
            for key in _CAPACITY_FIELDS:
                fields.pop(key, None)
            log("adoption_give_back_held_back", quota_share=arn.arn,
                reason="giving back the smaller capacity would make jobs preemptible",
                jobs=list_jobs(assessment.at_risk, truncated=False))
    if not share.settled:
        return False
    if not fields:
        return True
    progress = gateway.update(arn, fields)
    log("adoption_given_back", quota_share=arn.arn, fields=sorted(fields),
        config=target.describe(), progress=progress.value)
    return False
