"""The tags by which the runtime recognises the shares one custom resource manages.

Repeated delivery of a Create, and the rollback of a rename, find a share of the declared name
already on the queue. Only a share carrying this resource's owner marker is taken over silently;
any other needs ``adopt_existing``. The marker ties a share to one CloudFormation resource
(stack id + logical id): a stack recreated under the same name gets a new stack id and
therefore does not silently take over what a previous stack left behind.

A share adopted with ``adopt_existing`` first carries the adopting resource's marker in its
adoption record (:mod:`quota_constructs.model.adoption_record`: an entry ``pending`` until the
adoption finishes), and gets the owner key only once the adopting deployment step has finished
(VALID with the declared configuration): one TagResource call writes the owner key and clears
``pending``, so an adopted share never carries more than the library's three tags (owner,
lifecycle record, adoption record). Earlier versions wrote the adopting marker under a key of
its own (``quota-constructs:adopting``), which is still read and removed. When the share had
another resource's owner marker, the claim remembers that resource in the owner tag's value
(``<new owner>/<previous owner>``): the adoption can still be undone.

Delete (stack deletion, removal, the cleanup after a replacement, the rollback of a create or
of a replacement) disables and deletes a share only when this resource owns it outright. In
every other case the share is *released*: left exactly as it is, its jobs untouched, and the
Delete succeeds, saying why in the log (``quota_share_released``). Only the markers move:

- owned by this resource, remembering a previous owner: handed back to that owner. This is the
  rollback of an adoption (the same declaration moved to another construct path or stack, and
  the deployment failed) — the original resource still declares the share.
- owned by another resource: released. If that owner remembers this resource as its previous
  owner, this resource lets go (the remembered owner is dropped), so that the new owner's own
  Delete later deletes the share. This is the completed move: CloudFormation deletes the old
  resource after the new one adopted the share.
- owned by this resource while another resource is adopting it: released; deleting it would
  pull the share from under the adoption.
- being adopted by this resource, never finished (the create failed and is rolled back):
  given back as it was, and this resource's adopting marker removed. It existed before the
  adoption and must not be lost or changed because the stack could not take it over.
- **no owner marker at all: released.** Every share this runtime creates carries the marker
  from its CreateQuotaShare on, so a share without one was made by hand or by other tooling, or
  someone removed the tag: it is not this resource's to destroy. Deleting it would be the one
  irreversible choice; releasing it costs at most a share the user deletes by hand.

A share made outside every quota-constructs resource and adopted (no previous owner to remember)
becomes the adopting resource's once its adoption completed, but it existed before the stack:
as CloudFormation's resource import keeps an imported resource (``DeletionPolicy: Retain``), a
Delete of that resource gives the share back as it was before the adoption and releases it,
unless the share's lifecycle record says ``delete_adopted_share_on_delete``. What it was is
recorded on the share by the adoption (:mod:`quota_constructs.model.adoption_record`); the
same record gives a share back to the resource a rolled-back move took it from, with that
resource's configuration, state and lifecycle record, and undoes a failed adoption.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from quota_constructs.model import tags as model_tags
from quota_constructs.model.adoption_record import AdoptionEntry, AdoptionRecord
from quota_constructs.model.tags import ADOPTED_TAG_KEY
from quota_constructs.wire.lifecycle_record import (
    lifecycle_with_restore_pending,
    restore_pending,
)

OWNER_TAG_KEY = model_tags.OWNER_TAG_KEY
ADOPTING_TAG_KEY = model_tags.ADOPTING_TAG_KEY
MARKER_TAG_KEYS = frozenset({OWNER_TAG_KEY, ADOPTING_TAG_KEY})
LIFECYCLE_TAG_KEY = model_tags.LIFECYCLE_TAG_KEY
"""The share's lifecycle opt-ins as its last deployment declared them (see
:meth:`quota_constructs.runtime.share_request.GuardOptIns.tag_value`), kept beside the owner
marker so that a delete can be judged, by the guard and by ``preview``, from the share alone."""
UNRECORDED_TAG_KEYS = MARKER_TAG_KEYS | {ADOPTED_TAG_KEY}
"""Tags an adoption record never lists: they are moved by the release itself. (The lifecycle
record is listed: giving a share back puts back the previous owner's lifecycle record, or
removes the stack's from a share made outside it.)"""
OWNER_RESTORES_THE_REST = (
    "that resource's next update restores the rest through its guards once the jobs allow "
    "(CloudFormation sends it an update when its properties change: any change to the share's "
    "declaration, a tag for instance, is enough)"
)
RESTORED_BY_HAND = (
    "no deployment manages the share now: restore the rest by hand once the jobs allow "
    "(aws batch update-quota-share), then remove the mark"
)
_PREVIOUS = "/"
"""Separates the owner from the owner it took the share over from, in the owner tag's value."""


def owner_marker(stack_id: str, logical_resource_id: str) -> str:
    """A short, stable, non-reversible marker for one custom resource."""
    digest = hashlib.sha256(f"{stack_id}\n{logical_resource_id}".encode()).hexdigest()
    return digest[:20]


def stack_marker(stack_id: str) -> str:
    """A short, stable marker of one stack, recorded in the lifecycle tag so that ``preview``
    of one stack's template can tell the shares of other stacks on the same queue apart (the
    owner marker cannot be read back: it hashes stack and resource together)."""
    return hashlib.sha256(stack_id.encode()).hexdigest()[:20]


def owner_of(tags: Mapping[str, str]) -> str | None:
    """The marker of the resource that owns the share, None when no resource does."""
    owner = (tags.get(OWNER_TAG_KEY) or "").split(_PREVIOUS, 1)[0]
    return owner or None


def previous_owner_of(tags: Mapping[str, str]) -> str | None:
    """The owner the current owner took the share over from, while it may still take it back."""
    value = tags.get(OWNER_TAG_KEY) or ""
    _, _, previous = value.partition(_PREVIOUS)
    return previous or None


def claimed_owner_value(marker: str, tags: Mapping[str, str]) -> str:
    """The owner tag's value once ``marker`` claims a share that carries ``tags``."""
    current = owner_of(tags)
    if current is None or current == marker:
        return marker
    return f"{marker}{_PREVIOUS}{current}"


def is_owned(tags: Mapping[str, str], marker: str) -> bool:
    return owner_of(tags) == marker


def adopting_markers(tags: Mapping[str, str]) -> frozenset[str]:
    """The resources that started adopting the share and have not finished: the pending
    entries of its adoption record, and the adopting tag earlier versions wrote."""
    legacy = tags.get(ADOPTING_TAG_KEY)
    return AdoptionRecord.from_tags(tags).adopting | ({legacy} if legacy else set())


def is_adoption_pending(tags: Mapping[str, str], marker: str) -> bool:
    """The resource started adopting this pre-existing share but never finished doing so."""
    return marker in adopting_markers(tags) and not is_owned(tags, marker)


@dataclass(frozen=True)
class Release:
    """Why a Delete leaves the share in place, and the changes that go with it."""

    reason: str
    set_tags: Mapping[str, str] = field(default_factory=dict)
    remove_tags: Sequence[str] = ()
    restore: AdoptionEntry | None = None
    """What the share was before the adoption being undone: its configuration and state are
    put back first, then its tags (as the entry lists them) with the markers."""
    record: AdoptionRecord | None = None
    """The adoption record to leave on the share (None: unchanged)."""
    restores_rest: str = ""
    """Who restores what giving the configuration back had to hold back (it never preempts),
    once the mark on the share (:func:`~.share_request.restore_pending`) says what that is."""

    def tag_changes(self, tags: Mapping[str, str], held_back: Sequence[str] = ()
                    ) -> tuple[dict[str, str], list[str]]:
        """``(tags to set, keys to remove)`` that finish the release of a share carrying
        ``tags``, marking the configuration fields giving back ``held_back`` in its lifecycle
        record; empty once done (a repeated delivery changes nothing)."""
        wanted: dict[str, str | None] = {}
        if self.restore is not None:
            wanted.update(self.restore.tags)
        if self.record is not None:
            set_record, drop_record = self.record.tag_change()
            wanted.update(set_record)
            wanted.update(dict.fromkeys(drop_record))
        wanted.update(self.set_tags)
        wanted.update(dict.fromkeys(self.remove_tags))
        if held_back:
            lifecycle = wanted[LIFECYCLE_TAG_KEY] if LIFECYCLE_TAG_KEY in wanted else tags.get(
                LIFECYCLE_TAG_KEY)
            # Added to what a mark given back with the tags already says: what an earlier
            # give-back held back is still not what its owner had.
            pending = {*held_back, *restore_pending({LIFECYCLE_TAG_KEY: lifecycle or ""})}
            wanted[LIFECYCLE_TAG_KEY] = lifecycle_with_restore_pending(lifecycle, pending)
        changed = {k: v for k, v in wanted.items() if v is not None and tags.get(k) != v}
        removed = [k for k, v in wanted.items() if v is None and k in tags]
        return changed, removed


def release_on_delete(
    tags: Mapping[str, str], marker: str, *, delete_adopted: bool | None = None
) -> Release | None:
    """None when the resource ``marker`` may delete the share: it owns it outright and the
    share did not exist before the stack (or ``delete_adopted`` says to delete it anyway; None:
    as the share's lifecycle record says, which is what ``preview`` judges by)."""
    if delete_adopted is None:
        words = (tags.get(LIFECYCLE_TAG_KEY) or "").split()
        delete_adopted = "delete_adopted_share_on_delete=true" in words
    owner, previous = owner_of(tags), previous_owner_of(tags)
    adopting = adopting_markers(tags)
    adopting_here = marker in adopting
    # The adopting tag of earlier versions goes with this resource's adoption; an adoption
    # recorded in the record goes with its entry (``record.without``).
    own_adopting = [ADOPTING_TAG_KEY] if tags.get(ADOPTING_TAG_KEY) == marker else []
    record = AdoptionRecord.from_tags(tags)

    def undo_adoption(reason: str, restores_rest: str,
                      set_tags: Mapping[str, str] | None = None) -> Release:
        """The release that undoes this resource's own adoption (finished or not): its adopting
        marker goes, and the share gets back what the adoption recorded it was."""
        return Release(reason, set_tags or {}, own_adopting,
                       restore=record.entry_by(marker), record=record.without(marker),
                       restores_rest=restores_rest)

    if owner == marker:
        if previous is not None and previous != marker:
            return undo_adoption(
                "this resource adopted the share from another resource, which still declares "
                "it: handed back to that resource, with the tags and lifecycle record it had",
                OWNER_RESTORES_THE_REST,
                {OWNER_TAG_KEY: previous},
            )
        if adopting - {marker}:
            return Release("another resource is adopting the share")
        if record.existed_before_the_stack and not delete_adopted:
            original = record.original()
            return Release(
                "the share existed before the stack adopted it: given back, with the tags it "
                "had, and released (ShareLifecycle(delete_adopted_share_on_delete=True) "
                "deletes it)",
                remove_tags=[OWNER_TAG_KEY, *own_adopting,
                             *([] if original is not None else [LIFECYCLE_TAG_KEY])],
                restore=original,
                record=AdoptionRecord(),
                restores_rest=RESTORED_BY_HAND,
            )
        return None
    if owner is None:
        if adopting_here:
            return undo_adoption(
                "this resource never finished adopting the pre-existing share: given back, "
                "with the tags it had",
                RESTORED_BY_HAND,
            )
        return Release(
            f"the share carries no owner marker ({OWNER_TAG_KEY}): it was not created or "
            "adopted by a quota-constructs resource, or the tag was removed; delete it by hand "
            "if it is no longer needed"
        )
    if previous == marker:
        return Release(
            "another quota-constructs resource owns the share (it adopted it): let go",
            {OWNER_TAG_KEY: owner},
            own_adopting,
            record=record.settled_on(owner) if record.entries else None,
        )
    if adopting_here:
        return undo_adoption(
            "another quota-constructs resource owns the share, which this resource never "
            "finished adopting: given back to it, with the tags it had",
            OWNER_RESTORES_THE_REST,
        )
    return Release("another quota-constructs resource owns the share (it adopted it)")
