"""What one CloudFormation event asks of the runtime, parsed strictly through the model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from quota_constructs.model import (
    QuotaConfigError,
    QuotaShareSpec,
    share_subject,
)
from quota_constructs.wire.custom_resource import (
    GUARD_PROPERTIES,
    RENDERED_WHEN_SET,
    RUNTIME_TAG_KEYS,
    declared_tag_budget,
    declared_tag_limit,
)
from quota_constructs.wire.lifecycle_record import lifecycle_words
from quota_constructs.wire.share_arn import QuotaShareArn, is_job_queue_arn, quota_share_arn
from quota_constructs.wire.share_codec import parse_bool, spec_from_properties

from .ownership import (
    LIFECYCLE_TAG_KEY,
    OWNER_TAG_KEY,
    owner_marker,
    stack_marker,
)

_TAG_FIELDS = {field: field for field in GUARD_PROPERTIES}
"""GuardOptIns field -> its word in the lifecycle tag's value (tag values allow [a-z=_ ]): the
field's own name. The opt-ins rendered only when set are recorded only when set too (absent
reads as off), so the record of every share deployed without them is unchanged."""
_STACK_WORD = "stack"
"""The lifecycle tag's word for the deploying stack's :func:`~.ownership.stack_marker`."""
_DISABLED_FOR_DELETE_WORD = "disabled_for_delete"
"""Present while a Delete has disabled the share (set before it disables it): the state to
put back when the delete is refused or fails is the one from before the delete began, which
an operator may have set (a share disabled to drain stays disabled)."""


@dataclass(frozen=True)
class GuardOptIns:
    """The explicit opt-ins; each absent one is False (the guard stays on)."""

    adopt_existing: bool = False
    allow_preemption_on_shrink: bool = False
    terminate_active_jobs_on_delete: bool = False
    allow_preemption_on_in_share_enable: bool = False
    delete_adopted_share_on_delete: bool = False
    """Deleting the resource that adopted a share made outside the stack deletes the share
    (through the delete guard) instead of giving it back as it was."""

    @classmethod
    def from_properties(cls, props: Mapping[str, Any]) -> GuardOptIns:
        subject = share_subject(props.get("QuotaShareName"))

        def flag(key: str) -> bool:
            return parse_bool(props.get(key, False), subject=subject, field=key)

        return cls(**{name: flag(prop) for name, prop in GUARD_PROPERTIES.items()})

    def tag_value(self, stack: str = "") -> str:
        """``adopt_existing=false allow_preemption_on_shrink=true ... stack=<marker>``: the
        lifecycle tag (``stack`` only when given)."""
        words = [f"{word}={'true' if getattr(self, name) else 'false'}"
                 for name, word in _TAG_FIELDS.items()
                 if getattr(self, name) or name not in RENDERED_WHEN_SET]
        if stack:
            words.append(f"{_STACK_WORD}={stack}")
        return " ".join(words)

    @classmethod
    def from_tags(cls, tags: Mapping[str, str]) -> GuardOptIns | None:
        """The opt-ins the share's last deployment recorded; None when it recorded none.

        A switch the tag does not name, or names with another value than ``true``, is off:
        reading a damaged tag never waives a guard.
        """
        value = tags.get(LIFECYCLE_TAG_KEY)
        if value is None:
            return None
        words = lifecycle_words(value)
        if not set(words) & set(_TAG_FIELDS.values()):
            return None  # only a delete's own mark: no deployment recorded its opt-ins
        return cls(**{name: words.get(word) == "true" for name, word in _TAG_FIELDS.items()})


def recorded_stack(tags: Mapping[str, str]) -> str | None:
    """The :func:`~.ownership.stack_marker` of the stack that last deployed the share; None
    when its lifecycle record names none (deployed before the record carried it)."""
    return lifecycle_words(tags.get(LIFECYCLE_TAG_KEY) or "").get(_STACK_WORD) or None


def disabled_for_delete(tags: Mapping[str, str]) -> bool:
    """A Delete disabled the share (the share was enabled before that delete began)."""
    words = lifecycle_words(tags.get(LIFECYCLE_TAG_KEY) or "")
    return words.get(_DISABLED_FOR_DELETE_WORD) == "true"


def lifecycle_with_delete_mark(tags: Mapping[str, str], marked: bool) -> str:
    """The lifecycle tag's value with the delete's mark set or taken off ("" = no tag left)."""
    words = [part for part in (tags.get(LIFECYCLE_TAG_KEY) or "").split()
             if part.partition("=")[0] != _DISABLED_FOR_DELETE_WORD]
    if marked:
        words.append(f"{_DISABLED_FOR_DELETE_WORD}=true")
    return " ".join(words)



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
    stack: str = ""
    """The deploying stack's marker, recorded in the lifecycle tag ("" records none)."""
    stack_id: str = ""
    """The deploying stack's ARN: its partition, region and account are the share's."""

    @classmethod
    def parse(cls, event: ShareEvent) -> ShareDeclaration:
        spec, job_queue = spec_from_properties(event.properties)
        opt_ins = event.opt_ins()
        declared = len(set(spec.tags) - RUNTIME_TAG_KEYS)
        if declared > declared_tag_budget(adopt_existing=opt_ins.adopt_existing):
            raise QuotaConfigError(
                share_subject(spec.name), "tags", f"{declared} tags",
                declared_tag_limit(adopt_existing=opt_ins.adopt_existing),
            )
        old_tags = event.old_properties.get("Tags")
        return cls(
            spec=spec,
            job_queue=job_queue,
            opt_ins=opt_ins,
            owner=event.owner,
            # Old properties only say which tags the resource used to own; they are not
            # re-validated, so a rule added since cannot block an update.
            previously_declared_tag_keys=frozenset(
                str(key) for key in old_tags
            ) if isinstance(old_tags, Mapping) else frozenset(),
            stack=stack_marker(str(event.event.get("StackId", ""))),
            stack_id=str(event.event.get("StackId", "")),
        )

    @property
    def name(self) -> str:
        return self.spec.name

    def expected_arn(self) -> QuotaShareArn | None:
        """The ARN the declared share has once created: a share lives in its queue's account
        and region, which are the stack's (Batch has no cross-account resource policies)."""
        queue_arn = self.job_queue
        if not is_job_queue_arn(queue_arn):
            parts = self.stack_id.split(":")
            if len(parts) < 5 or parts[0] != "arn":
                return None
            queue_arn = f"arn:{parts[1]}:batch:{parts[3]}:{parts[4]}:job-queue/{self.job_queue}"
        return QuotaShareArn.parse(quota_share_arn(queue_arn, self.name))

    @property
    def declared_tags(self) -> dict[str, str]:
        """The tags the declaration gives the share; the ownership markers are the runtime's."""
        return {k: v for k, v in self.spec.tags.items() if k not in RUNTIME_TAG_KEYS}

    @property
    def kept_tags(self) -> dict[str, str]:
        """What the share carries after every Create, Update or adoption: the declared tags and
        the record of this deployment's lifecycle opt-ins and stack."""
        return {**self.declared_tags, LIFECYCLE_TAG_KEY: self.opt_ins.tag_value(self.stack)}

    @property
    def creation_tags(self) -> dict[str, str]:
        """The tags of a share this resource creates: kept tags plus the owner marker."""
        return {**self.kept_tags, OWNER_TAG_KEY: self.owner}


def _properties(event: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = event.get(key) or {}
    if not isinstance(value, Mapping):
        raise QuotaConfigError("custom resource event", key, value, "an object")
    return value
