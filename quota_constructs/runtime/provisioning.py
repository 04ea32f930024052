"""Creating, adopting and updating a quota share, and waiting until it is VALID."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from quota_constructs.model.adoption_record import AdoptionEntry, AdoptionRecord
from quota_constructs.model.tags import (
    ADOPTED_TAG_KEY,
    MAX_TAG_VALUE_LENGTH,
    MAX_TAGS,
    counts_against_tag_limit,
)
from quota_constructs.wire.custom_resource import RUNTIME_TAG_KEYS
from quota_constructs.wire.lifecycle_record import RESTORE_PENDING_WORD
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn
from quota_constructs.wire.share_codec import api_configuration
from quota_constructs.wire.share_config import ShareConfig

from .adoption import give_back_configuration
from .batch_gateway import BatchGateway, BatchRequestError
from .errors import QuotaShareLifecycleError
from .guards import ShareUpdate, check_update
from .ownership import (
    ADOPTING_TAG_KEY,
    LIFECYCLE_TAG_KEY,
    OWNER_TAG_KEY,
    claimed_owner_value,
    is_adoption_pending,
    is_owned,
    owner_of,
    previous_owner_of,
    release_on_delete,
)
from .share_request import ShareDeclaration
from .share_writes import Progress
from .structured_log import log


def adoption_refusal(share: LiveShare, declaration: ShareDeclaration) -> str | None:
    """Why a Create of ``declaration`` may not take over ``share`` (same name, already on the
    queue); None when it may. Shared by the custom resource and ``preview``."""
    owned = is_owned(share.tags, declaration.owner)
    # This resource's own adoption in flight (a repeated delivery, or a retried request whose
    # first attempt got through) is recognised before anything else is judged.
    own = owned or is_adoption_pending(share.tags, declaration.owner)
    if not own and not declaration.opt_ins.adopt_existing:
        return (
            f"quota share {declaration.name!r} already exists on job queue "
            f"{declaration.job_queue!r} ({share.arn}) and this stack does not manage it; give "
            "the share ShareLifecycle(adopt_existing=True) to manage it, or choose another name"
        )
    if share.status == "DELETING":
        return deleting_refusal(declaration.name, declaration.job_queue)
    if not own and not share.settled:
        # Checked here, where a failure leaves no trace: once on_event returns, a failure
        # would make CloudFormation's rollback delete the share being adopted.
        return (
            f"quota share {declaration.name!r} on job queue {declaration.job_queue!r} is "
            f"{share.status}; it can be adopted once AWS Batch has finished with it. Retry the "
            "deployment."
        )
    return None


def tag_budget_refusal(
    share: LiveShare, declaration: ShareDeclaration, *, adopting: bool,
    dropped: Iterable[str] = (),
) -> str | None:
    """Why applying ``declaration`` to ``share`` would take it past the tags AWS allows per
    resource, None when it fits: its own tags (less ``dropped``, the keys the resource declared
    before and no longer does), the declared ones and the library's (owner marker, lifecycle
    record, and on an adopted share its adoption record), as the share carries them at the
    change's fullest (an adoption's claim adds the owner marker last). Shared by the custom
    resource, which refuses before any write, and ``preview``."""
    keys = {key for key in share.tags if counts_against_tag_limit(key)} - set(dropped)
    keys |= set(declaration.kept_tags) | {OWNER_TAG_KEY}
    keys |= {ADOPTED_TAG_KEY} if adopting else set()
    if len(keys) <= MAX_TAGS:
        return None
    library = sorted(keys & RUNTIME_TAG_KEYS)
    declared = keys & set(declaration.declared_tags)
    own = sorted(keys - set(library) - declared)
    shown = ", ".join(own[:5]) + (f" and {len(own) - 5} more" if len(own) > 5 else "")
    return (
        f"quota share {declaration.name!r} on job queue {declaration.job_queue!r} "
        f"({share.arn}) would carry {len(keys)} tags, more than the {MAX_TAGS} AWS allows per "
        f"resource: {len(declared)} declared, {len(library)} the custom resource keeps "
        f"({', '.join(library)}) and {len(own)} already on the share that the declaration "
        f"does not set{f' ({shown})' if own else ''}. Nothing was changed. Declare fewer tags, "
        "or remove tags from the share by hand, then retry."
    )


def deleting_refusal(share_name: str, job_queue: str) -> str:
    return (
        f"quota share {share_name!r} on job queue {job_queue!r} is being deleted (status "
        "DELETING); wait until it is gone, then retry the deployment"
    )


class ShareProvisioner:
    """Brings the share a Create or Update declares into being, without collisions."""

    def __init__(self, gateway: BatchGateway, declaration: ShareDeclaration) -> None:
        self._gateway = gateway
        self._declaration = declaration
        self._target = ShareConfig.declared(declaration.spec)
        self.last_status = "unknown"

    def create(self) -> QuotaShareArn:
        """Create the declared share, or take over one of that name this resource may manage.

        Never fails once the share may exist: CloudFormation then records the Provider
        framework's CREATE_FAILED marker, whose rollback Delete the framework ignores, and the
        share would be left behind. A share AWS Batch says exists but reads do not show yet is
        answered with its ARN, and ``is_complete`` decides by its owner marker once it shows.
        """
        decl = self._declaration
        existing = self._gateway.find(decl.job_queue, decl.name)
        if existing is not None:
            return self._adopt(existing)
        try:
            arn = self._gateway.create(
                decl.job_queue, decl.name, api_configuration(decl.spec), decl.creation_tags,
                decl.owner,
            )
        except BatchRequestError as error:
            if error.already_exists or error.ambiguous:
                # A lost answer resent, a repeated delivery running alongside, or someone
                # else: the share is (or may be) there although reads may not show it yet.
                existing = self._gateway.find_once_visible(decl.job_queue, decl.name)
                if existing is None:
                    return self._unconfirmed(error)
                return self._adopt(existing)
            existing = self._gateway.find(decl.job_queue, decl.name)
            if existing is None:
                raise
            return self._adopt(existing)
        if arn is None:
            # The answer was lost and a share of that name that this resource did not create
            # is there: the adoption rules decide, as for a share found before creating.
            existing = self._gateway.find(decl.job_queue, decl.name)
            if existing is None:
                return self.create()
            return self._adopt(existing)
        log("quota_share_created", quota_share=arn.arn, config=self._target.describe())
        return arn

    def _unconfirmed(self, error: BatchRequestError) -> QuotaShareArn:
        arn = self._declaration.expected_arn()
        if arn is None:
            raise error
        log("quota_share_create_unconfirmed", quota_share=arn.arn, code=error.code,
            detail="AWS Batch may hold the share; is_complete decides by its owner marker")
        return arn

    def update_in_place(self, arn: QuotaShareArn) -> QuotaShareArn:
        """Update the share the resource already manages to the declared configuration."""
        share = self._gateway.describe(arn)
        if share is None:
            log("quota_share_missing", quota_share=arn.arn, action="recreate")
            return self.create()
        self._refuse_deleting(share, arn)
        self.converge(share, arn)
        return arn

    def wait(self, arn: QuotaShareArn, *, may_be_unseen: bool = False) -> bool:
        """One ``is_complete`` poll: True once the share is VALID with the declared config.

        ``may_be_unseen``: the request is recent enough that reads may not show a share just
        created; a share not found is then waited for rather than reported gone. When this
        resource's adoption of the share fails, the adoption is undone (its configuration from
        before is put back) and the failure says so.
        """
        try:
            return self._wait(arn, may_be_unseen)
        except QuotaShareLifecycleError as error:
            undone = self._undo_failed_adoption(arn)
            if not undone:
                raise
            raise QuotaShareLifecycleError(f"{error} {undone}") from error

    def _undo_failed_adoption(self, arn: QuotaShareArn) -> str:
        """Start giving back a share this resource was adopting; what was restored and what
        was not ("" when the share is not being adopted by this resource)."""
        owner = self._declaration.owner
        try:
            share = self._gateway.describe(arn)
            if share is None or not is_adoption_pending(share.tags, owner):
                return ""
            entry = AdoptionRecord.from_tags(share.tags).entry_by(owner)
            if entry is None:
                return ""
            give_back = give_back_configuration(self._gateway, arn, share, entry)
        except QuotaShareLifecycleError as error:
            log("adoption_undo_failed", quota_share=arn.arn, reason=str(error))
            return ""
        held = ""
        if give_back.held_back:
            held = (" CloudFormation's rollback marks what was not restored on the share "
                    f"({LIFECYCLE_TAG_KEY} {RESTORE_PENDING_WORD}=...), so that it can be "
                    "restored once the jobs allow.")
        return (
            f"The adoption was undone: quota share {arn.share_name!r}, "
            f"{give_back.describe()}; CloudFormation's rollback then puts back its tags and "
            f"markers and releases it.{held}"
        )

    def _wait(self, arn: QuotaShareArn, may_be_unseen: bool) -> bool:
        share = self._gateway.describe(arn)
        if share is None:
            if may_be_unseen:
                log("quota_share_not_seen_yet", quota_share=arn.arn)
                self.last_status = "not visible yet"
                return False
            raise QuotaShareLifecycleError(
                f"quota share {arn.share_name!r} disappeared from job queue "
                f"{arn.job_queue_name!r} before it became VALID; it was deleted outside this "
                "deployment. Retry the deployment to create it again."
            )
        self._refuse_deleting(share, arn)
        self.last_status = share.status
        log("quota_share_status", quota_share=arn.arn, status=share.status)
        owner = self._declaration.owner
        if not (is_owned(share.tags, owner) or is_adoption_pending(share.tags, owner)):
            # Only after a create that could not be confirmed: the marker decides.
            self._adopt(share)
            return False
        if not self.converge(share, arn):
            return False
        if share.status == "INVALID":
            raise QuotaShareLifecycleError(self._invalid_reason(arn))
        self._claim(share, arn)
        return True

    def converge(self, share: LiveShare, arn: QuotaShareArn) -> bool:
        """Apply what differs from the declaration; True when nothing is left to apply.

        A share that is still CREATING or UPDATING is left alone and picked up by the next
        ``is_complete`` poll, so a repeated delivery never collides with an update in flight.
        """
        if not share.settled:
            return False
        return self._apply(share, arn, self._checked_changes(share, arn))

    def _checked_changes(self, share: LiveShare, arn: QuotaShareArn, *,
                         adopting: bool = False) -> dict[str, Any]:
        """The UpdateQuotaShare fields the declaration needs, once the tag budget, the shrink
        guard and the in-share preemption guard allow them.

        Checked before any change, tags included: a refused shrink leaves the share untouched.
        """
        self._refuse_too_many_tags(share, arn, adopting=adopting)
        fields = share.config.update_fields(self._target)
        if fields:
            check_update(self._gateway, ShareUpdate(arn, share.config, self._target),
                         self._declaration.opt_ins)
        return fields

    def _apply(self, share: LiveShare, arn: QuotaShareArn, fields: dict[str, Any],
               record: AdoptionRecord | None = None) -> bool:
        self._sync_tags(share, arn, record)
        if not fields:
            return True
        if self._gateway.update(arn, fields) is Progress.IN_TRANSITION:
            log("quota_share_update_deferred", quota_share=arn.arn, fields=sorted(fields),
                reason="AWS Batch is busy with the share; the next poll decides")
            return False
        log("quota_share_updated", quota_share=arn.arn, fields=sorted(fields),
            before=share.config.describe(), after=self._target.describe())
        return False

    def _adopt(self, share: LiveShare) -> QuotaShareArn:
        decl = self._declaration
        arn = QuotaShareArn.parse(share.arn)
        if arn is None:
            raise QuotaShareLifecycleError(f"unexpected quota share ARN {share.arn!r}")
        refusal = adoption_refusal(share, decl)
        if refusal is not None:
            raise QuotaShareLifecycleError(refusal)
        owned = is_owned(share.tags, decl.owner)
        if owned or is_adoption_pending(share.tags, decl.owner):
            log("quota_share_adopted", quota_share=share.arn,
                reason="managed by this resource" if owned else "adoption already under way")
            self.converge(share, arn)
            return arn
        fields = self._checked_changes(share, arn, adopting=True)
        record = self._adoption_record(share, arn)
        # Marked (the record of what the share was, its entry pending) before the update, so
        # that a repeated delivery finding the share UPDATING recognises this adoption; taken
        # off again if the update is refused.
        self._gateway.tag(arn, {ADOPTED_TAG_KEY: record.encode()})
        try:
            self._apply(share, arn, fields, record)
        except QuotaShareLifecycleError:
            self._undo_adoption_now(arn)
            raise
        log("quota_share_adopted", quota_share=share.arn, reason="adopt_existing")
        return arn

    def _adoption_record(self, share: LiveShare, arn: QuotaShareArn) -> AdoptionRecord:
        """The share's adoption record with this adoption's entry (pending: the adoption's
        marker): its configuration and the tags this deployment sets on it, as they are now.
        Refused (before any change) when the record would not fit in one tag value."""
        decl = self._declaration
        changed, dropped = self._tag_changes(share)
        entry = AdoptionEntry(
            by=decl.owner, from_resource=owner_of(share.tags) is not None,
            config=share.config.api_fields(), pending=True,
        ).covering(share.tags, [*changed, *dropped])
        record = AdoptionRecord.from_tags(share.tags).pushed(entry)
        if not record.fits:
            raise QuotaShareLifecycleError(
                f"quota share {decl.name!r} on job queue {decl.job_queue!r} ({arn.arn}) cannot "
                f"be adopted: the record of what it was ({ADOPTED_TAG_KEY}) would not fit in one "
                f"tag value of {MAX_TAG_VALUE_LENGTH} characters: the tags the declaration would "
                "overwrite are too long. Nothing was changed. Declare fewer or shorter tags, or "
                "remove tags from the share by hand, then retry."
            )
        return record

    def _refuse_too_many_tags(self, share: LiveShare, arn: QuotaShareArn, *,
                              adopting: bool) -> None:
        _, dropped = self._tag_changes(share)
        refusal = tag_budget_refusal(share, self._declaration, adopting=adopting,
                                     dropped=dropped)
        if refusal is not None:
            raise QuotaShareLifecycleError(refusal)

    def _undo_adoption_now(self, arn: QuotaShareArn) -> None:
        """on_event's own undo (its failure leaves CloudFormation nothing to roll back): put
        back the tags and take off the markers; a configuration change cannot have been made."""
        share = self._gateway.describe(arn)
        if share is None:
            return
        release = release_on_delete(share.tags, self._declaration.owner)
        if release is None:
            return
        changed, removed = release.tag_changes(share.tags)
        if changed:
            self._gateway.tag(arn, changed)
        if removed:
            self._gateway.untag(arn, removed)

    def _claim(self, share: LiveShare, arn: QuotaShareArn) -> None:
        # The change is complete: from now on this resource owns the share, deletion included.
        # One TagResource call writes the owner marker and ends the adoption in its record, so
        # the share never carries a fourth tag of the library's, even for a moment.
        owner = self._declaration.owner
        claim: dict[str, str] = {}
        if not is_owned(share.tags, owner):
            # A previous owner is remembered, so that undoing this adoption (a rollback, or
            # deleting this resource while that owner still declares the share) hands the share
            # back instead of deleting it.
            claim[OWNER_TAG_KEY] = claimed_owner_value(owner, share.tags)
        record = AdoptionRecord.from_tags(share.tags)
        if owner in record.adopting:
            claim[ADOPTED_TAG_KEY] = record.claimed_by(owner).encode()
        if claim:
            self._gateway.tag(arn, claim)
            log("quota_share_claimed", quota_share=arn.arn,
                previous_owner=previous_owner_of({**share.tags, **claim}))
        if share.tags.get(ADOPTING_TAG_KEY) == owner:
            self._gateway.untag(arn, [ADOPTING_TAG_KEY])  # written by earlier versions

    def _tag_changes(self, share: LiveShare) -> tuple[dict[str, str], list[str]]:
        declared = self._declaration.kept_tags
        changed = {key: value for key, value in declared.items() if share.tags.get(key) != value}
        # Only tags this resource declared before are removed; tags others put on the share stay.
        dropped = sorted(
            (self._declaration.previously_declared_tag_keys - set(declared) - RUNTIME_TAG_KEYS)
            & set(share.tags)
        )
        return changed, dropped

    def _sync_tags(self, share: LiveShare, arn: QuotaShareArn,
                   record: AdoptionRecord | None = None) -> None:
        changed, dropped = self._tag_changes(share)
        record = record if record is not None else AdoptionRecord.from_tags(share.tags)
        if record.entries and (changed or dropped):
            # An adopted share's record learns each key's value before the stack touches it,
            # so that giving the share back puts back exactly what was there.
            covered = record.covering(share.tags, [*changed, *dropped])
            if covered != record:
                if not covered.fits:
                    raise QuotaShareLifecycleError(
                        f"quota share {arn.share_name!r}: the record of what it was before "
                        f"its adoption ({ADOPTED_TAG_KEY}) cannot also hold the tags "
                        f"{sorted({*changed, *dropped})}; nothing was changed. Declare fewer "
                        "or shorter tags."
                    )
                changed[ADOPTED_TAG_KEY] = covered.encode()
        written = sorted(changed)
        if dropped and ADOPTED_TAG_KEY in changed:
            # The record first: it knows a dropped key's value before the key goes.
            self._gateway.tag(arn, {ADOPTED_TAG_KEY: changed.pop(ADOPTED_TAG_KEY)})
        if dropped:
            # Removed before the new ones are set, so the share never carries both at once:
            # it never holds more tags than the budget counted (tag_budget_refusal).
            self._gateway.untag(arn, dropped)
        if changed:
            self._gateway.tag(arn, changed)
        if written or dropped:
            log("quota_share_tagged", quota_share=arn.arn, set=written, removed=dropped)

    def _refuse_deleting(self, share: LiveShare, arn: QuotaShareArn) -> None:
        if share.status == "DELETING":
            raise QuotaShareLifecycleError(deleting_refusal(arn.share_name, arn.job_queue_name))

    def _invalid_reason(self, arn: QuotaShareArn) -> str:
        spec = self._declaration.spec
        units = ", ".join(str(unit) for unit in spec.units)
        return (
            f"quota share {arn.share_name!r} on job queue {arn.job_queue_name!r} is INVALID "
            f"after this deployment submitted {self._target.describe()}. AWS Batch gives no "
            f"reason for INVALID; check that every capacity unit ({units}) is one the job "
            "queue's service environment lists, that the job queue's scheduling policy is a "
            "quota-share policy, and that each limit fits the service environment's capacity "
            "limit for that unit. CloudFormation's rollback restores the previous configuration "
            "or removes a share this deployment created."
        )
