"""What one CloudFormation event asks of the runtime, parsed strictly through the model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from quota_constructs.model import (
    QuotaConfigError,
    QuotaShareSpec,
    parse_bool,
    share_subject,
    spec_from_properties,
)
from quota_constructs.model.tags import MAX_TAGS

from .ownership import MARKER_TAG_KEYS, OWNER_TAG_KEY, owner_marker
from .share_arn import QuotaShareArn

ADOPT_EXISTING = "AdoptExisting"
ALLOW_PREEMPTION_ON_SHRINK = "AllowPreemptionOnShrink"
TERMINATE_ACTIVE_JOBS_ON_DELETE = "TerminateActiveJobsOnDelete"


@dataclass(frozen=True)
class GuardOptIns:
    """The three explicit opt-ins; each absent one is False (the guard stays on)."""

    adopt_existing: bool = False
    allow_preemption_on_shrink: bool = False
    terminate_active_jobs_on_delete: bool = False

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> GuardOptIns:
        subject = share_subject(props.get("QuotaShareName"))

        def flag(key: str) -> bool:
            return parse_bool(props.get(key, False), subject=subject, field=key)

        return cls(
            adopt_existing=flag(ADOPT_EXISTING),
            allow_preemption_on_shrink=flag(ALLOW_PREEMPTION_ON_SHRINK),
            terminate_active_jobs_on_delete=flag(TERMINATE_ACTIVE_JOBS_ON_DELETE),
        )


@dataclass(frozen=True)
class ShareEvent:
    """The parts of a Provider-framework event every request type uses."""

    request_type: str
    physical: QuotaShareArn | None
    physical_id: str
    owner: str
    properties: Mapping[str, Any]
    old_properties: Mapping[str, Any] = field(default_factory=dict)
    event: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, event: Mapping[str, Any]) -> ShareEvent:
        request_type = event.get("RequestType")
        if request_type not in ("Create", "Update", "Delete"):
            raise QuotaConfigError(
                "custom resource event", "RequestType", request_type, "Create, Update or Delete"
            )
        physical_id = str(event.get("PhysicalResourceId") or "")
        return cls(
            request_type=str(request_type),
            physical=QuotaShareArn.parse(physical_id),
            physical_id=physical_id,
            owner=owner_marker(
                str(event.get("StackId", "")), str(event.get("LogicalResourceId", ""))
            ),
            properties=_properties(event, "ResourceProperties"),
            old_properties=_properties(event, "OldResourceProperties"),
            event=event,
        )

    def declaration(self) -> ShareDeclaration:
        return ShareDeclaration.parse(self)

    def opt_ins(self) -> GuardOptIns:
        return GuardOptIns.from_properties(self.properties)


@dataclass(frozen=True)
class ShareDeclaration:
    """The share a Create or Update declares: validated spec, queue, opt-ins and tags to keep."""

    spec: QuotaShareSpec
    job_queue: str
    opt_ins: GuardOptIns
    owner: str
    previously_declared_tag_keys: frozenset[str]

    @classmethod
    def parse(cls, event: ShareEvent) -> ShareDeclaration:
        spec, job_queue = spec_from_properties(event.properties)
        if len(set(spec.tags) - MARKER_TAG_KEYS) >= MAX_TAGS:
            raise QuotaConfigError(
                share_subject(spec.name), "tags", f"{len(spec.tags)} tags",
                f"at most {MAX_TAGS - 1} tags: the custom resource keeps one tag "
                f"({OWNER_TAG_KEY}) to recognise the shares it manages",
            )
        old_tags = event.old_properties.get("Tags")
        return cls(
            spec=spec,
            job_queue=job_queue,
            opt_ins=event.opt_ins(),
            owner=event.owner,
            # Old properties only say which tags the resource used to own; they are not
            # re-validated, so a rule added since cannot block an update.
            previously_declared_tag_keys=frozenset(
                str(key) for key in old_tags
            ) if isinstance(old_tags, Mapping) else frozenset(),
        )

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def declared_tags(self) -> dict[str, str]:
        """The tags the declaration gives the share; the ownership markers are the runtime's."""
        return {k: v for k, v in self.spec.tags.items() if k not in MARKER_TAG_KEYS}

    @property
    def creation_tags(self) -> dict[str, str]:
        """The tags of a share this resource creates: declared ones plus the owner marker."""
        return {**self.declared_tags, OWNER_TAG_KEY: self.owner}


def _properties(event: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = event.get(key) or {}
    if not isinstance(value, Mapping):
        raise QuotaConfigError("custom resource event", key, value, "an object")
    return value
