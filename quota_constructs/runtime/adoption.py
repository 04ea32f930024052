"""Giving an adopted share back as it was (see :mod:`quota_constructs.model.adoption_record`).

One step per call, like every other change of the runtime: the configuration and state the
share had before the adoption are submitted once the share is settled, and the caller moves the
tags and markers only once the share shows them. Giving back never preempts a job, so it
restores only what is safe and says exactly what it left:

- a lower limit or borrow ceiling that would make running jobs preemptible (the shrink guard's
  judgement, :func:`~.guards.assess_shrink`) is held back: the share keeps the larger value,
  which harms nobody. The capacity limits and the sharing (strategy, borrow limit) are tried
  together, then each alone, so that whichever can be restored is;
- in-share preemption turned back on while higher-priority jobs wait to preempt lower-priority
  ones (:func:`~.guards.assess_in_share_enable`) is held back too;
- the state (enabled or disabled) and in-share preemption turned off never preempt: always
  restored.

What is held back is said in the Delete's reason and marked on the share (the lifecycle
record's ``restore_pending`` word, :func:`~.share_request.restore_pending`), so that the owner's
next deployment restores it through its own guards. ``allow_preemption_on_shrink`` waives the
guard of a deployment that lowers limits, not of undoing an adoption.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from quota_constructs.model.adoption_record import AdoptionEntry
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn
from quota_constructs.wire.share_config import CONFIGURATION_FIELDS, ENABLED, ShareConfig

from .batch_gateway import BatchGateway
from .guards import GuardReader, ShareUpdate, assess_in_share_enable, assess_shrink, list_jobs
from .structured_log import log

CAPACITY_FIELDS = ("capacityLimits", "resourceSharingConfiguration")
"""The fields whose restoring can lower what the share may use (the shrink guard judges)."""
PREEMPTION_FIELD = "preemptionConfiguration"
FIELD_NAMES = {
    "capacityLimits": "capacity limits",
    "resourceSharingConfiguration": "sharing (strategy and borrow limit)",
    "preemptionConfiguration": "in-share preemption",
    "state": "state",
}


def recorded_config(share: LiveShare, entry: AdoptionEntry) -> ShareConfig:
    return ShareConfig.from_api({**share.config.api_fields(), **entry.config})


@dataclass(frozen=True)
class HeldBack:
    """One part of the recorded configuration giving back leaves as it is, and why."""

    field: str
    """The UpdateQuotaShare field (one of :data:`CONFIGURATION_FIELDS`)."""
    kept: str
    """Its value now, which the share keeps."""
    recorded: str
    """Its value before the adoption."""
    why: str

    def describe(self) -> str:
        return (f"{FIELD_NAMES[self.field]} (kept: {self.kept}; before the adoption: "
                f"{self.recorded}), because {self.why}")


@dataclass(frozen=True)
class GiveBack:
    """Where giving the recorded configuration back stands after one step."""

    done: bool
    """The share is settled and shows everything given back (less what is held back)."""
    held_back: tuple[HeldBack, ...] = ()
    recorded: ShareConfig | None = None

    @property
    def held_fields(self) -> tuple[str, ...]:
        return tuple(item.field for item in self.held_back)

    @property
    def restored_fields(self) -> tuple[str, ...]:
        return tuple(name for name in CONFIGURATION_FIELDS if name not in self.held_fields)

    def describe(self) -> str:
        """What was restored and what was not, for the Delete's (or the failure's) reason."""
        restored = ", ".join(FIELD_NAMES[name] for name in self.restored_fields)
        if not self.held_back:
            before = f" ({self.recorded.describe()})" if self.recorded is not None else ""
            return f"its configuration and state restored as they were before the adoption{before}"
        held = "; ".join(item.describe() for item in self.held_back)
        return (f"restored as before the adoption: {restored}; NOT restored, since giving "
                f"back never preempts a job: {held}")


def give_back_configuration(
    gateway: BatchGateway,
    arn: QuotaShareArn,
    share: LiveShare,
    entry: AdoptionEntry,
) -> GiveBack:
    """One step: submits what may be given back once the share is settled; ``done`` once the
    share shows it (what is held back is judged again at every step, so what the jobs allow by
    then is restored)."""
    recorded = recorded_config(share, entry)
    fields, held_back = safe_give_back(gateway, arn, share.config, recorded)
    if held_back:
        log("adoption_give_back_held_back", quota_share=arn.arn,
            held_back=[item.describe() for item in held_back])
    if not share.settled:
        return GiveBack(False, held_back, recorded)
    if not fields:
        return GiveBack(True, held_back, recorded)
    progress = gateway.update(arn, fields)
    log("adoption_given_back", quota_share=arn.arn, fields=sorted(fields),
        config=recorded.describe(), progress=progress.value)
    return GiveBack(False, held_back, recorded)


def safe_give_back(
    reader: GuardReader, arn: QuotaShareArn, live: ShareConfig, recorded: ShareConfig,
) -> tuple[dict[str, Any], tuple[HeldBack, ...]]:
    """The UpdateQuotaShare fields that give ``recorded`` back without preempting anyone, and
    what is held back (the module docs)."""
    fields = live.update_fields(recorded)
    capacity = [name for name in CAPACITY_FIELDS if name in fields]
    others = {name: value for name, value in fields.items() if name not in capacity}
    chosen, why = _largest_safe_capacity(reader, arn, live, others, fields, capacity)
    held = [HeldBack(name, live.describe([name]), recorded.describe([name]), why)
            for name in capacity if name not in chosen]
    safe = {**others, **chosen}
    if PREEMPTION_FIELD in safe and recorded.in_share_preemption == ENABLED:
        in_share = assess_in_share_enable(
            reader, ShareUpdate(arn, live, _with(live, safe)), allow_preemption=False)
        if in_share.refused:
            del safe[PREEMPTION_FIELD]
            held.append(HeldBack(
                PREEMPTION_FIELD, live.describe([PREEMPTION_FIELD]),
                recorded.describe([PREEMPTION_FIELD]),
                "turning it on while higher-priority jobs wait would let AWS Batch preempt "
                f"{in_share.victims()}"))
    return safe, tuple(held)


def _largest_safe_capacity(
    reader: GuardReader, arn: QuotaShareArn, live: ShareConfig, others: Mapping[str, Any],
    fields: Mapping[str, Any], capacity: Sequence[str],
) -> tuple[dict[str, Any], str]:
    """The capacity fields restored: all of them, else each alone, else none, whichever first
    lowers nothing below what the share's jobs use; and why the rest is not (the first
    refusal's words)."""
    why = ""
    for size in range(len(capacity), 0, -1):
        for subset in combinations(capacity, size):
            chosen = {name: fields[name] for name in subset}
            assessment = assess_shrink(reader, ShareUpdate(arn, live, _with(live, {
                **others, **chosen})), allow_preemption=False)
            if not assessment.refused:
                return chosen, why
            why = why or (
                "restoring it would lower "
                + "; ".join(s.describe(used) for s, used in assessment.exceeded)
                + f" (usage from {assessment.usage_source}), making these jobs preemptible: "
                + list_jobs(assessment.at_risk, truncated=False))
    return {}, why


def _with(live: ShareConfig, fields: Mapping[str, Any]) -> ShareConfig:
    return ShareConfig.from_api({**live.api_fields(), **fields})
