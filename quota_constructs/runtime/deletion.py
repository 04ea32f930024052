"""Deleting a quota share: guard, disable, delete, and wait until AWS Batch no longer has it.

What is deleted comes only from the physical resource id (the share's ARN), never from the
properties, and only when this resource owns the share (see :mod:`.ownership`); any other share
is released, and a share the stack adopted is given back as it was before the adoption
(:mod:`.adoption`). Every step re-reads the share first, so a repeated delivery of the same
event just continues where the previous one stopped. Whatever ends a delete without deleting the
share (a guard, a denied or failed call) first puts back the state it had before the delete.

Whether active jobs may be terminated is read from the share's lifecycle record (the opt-ins
its last deployment wrote on it, which is what ``preview`` reads too); a share without the
record falls back to the properties CloudFormation sends with the Delete.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from quota_constructs.wire.lifecycle_record import lifecycle_with_restore_pending
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.share_arn import QuotaShareArn

from .adoption import GiveBack, give_back_configuration
from .batch_gateway import BatchGateway, BatchRequestError
from .errors import QuotaShareLifecycleError
from .guards import check_no_active_jobs
from .ownership import LIFECYCLE_TAG_KEY, Release, release_on_delete
from .share_request import GuardOptIns, disabled_for_delete, lifecycle_with_delete_mark
from .share_writes import Progress
from .structured_log import log

DISABLED, ENABLED = "DISABLED", "ENABLED"


@dataclass(eq=False)
class ShareDeleter:
    """One Delete of one share, resumed from the share itself at every step.

    The state a refused or failed delete puts back is the share's state from *before the delete
    began*: the handler marks the share (in its lifecycle record) before disabling it, so only
    a share this delete disabled is enabled again, and a share an operator disabled to drain it
    stays disabled.
    """

    gateway: BatchGateway
    arn: QuotaShareArn
    _: KW_ONLY
    owner: str
    # The opt-ins as the Delete's properties give them; the share's lifecycle record, read at
    # every step, overrides them (see the module docs).
    terminate_active_jobs: bool
    delete_adopted_share: bool = False
    last_status: str = field(default="unknown", init=False)

    def start(self) -> None:
        """``on_event``: check the guard, then disable the share (the step before deletion)."""
        try:
            share = self.gateway.describe(self.arn)
        except BatchRequestError as error:
            if error.ambiguous:
                raise  # AWS Batch kept failing for every attempt: another read would too
            # A previous delivery may have disabled the share: put it back first. _fail raises
            # unless AWS Batch is busy with the share; then the polls read again and decide.
            self._fail(error)
            return
        try:
            self._start(share)
        except _Deferred:
            log("quota_share_refusal_deferred", quota_share=self.arn.arn)
        except QuotaShareLifecycleError as error:
            self._fail(error)

    def wait(self) -> bool:
        """One ``is_complete`` poll: advance one step; True once the share is gone."""
        try:
            return self._step()
        except _Deferred:
            log("quota_share_refusal_deferred", quota_share=self.arn.arn)
            return False
        except QuotaShareLifecycleError as error:
            return self._fail(error)

    def _fail(self, error: QuotaShareLifecycleError) -> bool:
        """Any other failure (a denied or failed read, say) ends the delete only once a share
        this delete disabled is enabled again; False: that is pending, the next poll decides."""
        try:
            restored = self._put_back(None)
        except QuotaShareLifecycleError as again:
            log("quota_share_put_back_failed", quota_share=self.arn.arn, reason=str(again))
            raise error from None
        if restored is None:
            return False
        if not restored:
            raise error
        raise QuotaShareLifecycleError(f"{error}{restored}") from error

    def _start(self, share: LiveShare | None) -> None:
        if share is None:
            log("quota_share_already_gone", quota_share=self.arn.arn)
            return
        self._read_lifecycle_record(share)
        if share.status == "DELETING" or self._released(share) is not None:
            return
        if not share.enabled and disabled_for_delete(share.tags):
            # A previous delivery of this Delete got that far; the polls check the jobs again
            # and put the share back if one slipped in.
            log("quota_share_delete_resumed", quota_share=self.arn.arn, status=share.status)
            return
        self._guarded(share, lambda: self._check_jobs())
        if share.settled and share.enabled:
            self._guarded(share, lambda: self._disable(share))

    def _step(self) -> bool:
        share = self.gateway.describe(self.arn)
        if share is None:
            log("quota_share_deleted", quota_share=self.arn.arn)
            return True
        self._read_lifecycle_record(share)
        released = self._released(share)
        if released is not None:
            return released
        self.last_status = share.status
        log("quota_share_status", quota_share=self.arn.arn, status=share.status,
            state=share.config.state)
        if not share.settled:
            return False
        if share.enabled:
            # on_event found the share busy and left disabling to this poll.
            self._guarded(share, lambda: self._check_jobs())
            self._guarded(share, lambda: self._disable(share))
            return False
        self._guarded(share, lambda: self._check_jobs())
        self._guarded(share, self._delete)
        return False

    def _read_lifecycle_record(self, share: LiveShare) -> None:
        recorded = GuardOptIns.from_tags(share.tags)
        if recorded is not None:
            self.terminate_active_jobs = recorded.terminate_active_jobs_on_delete
            self.delete_adopted_share = recorded.delete_adopted_share_on_delete

    def _released(self, share: LiveShare) -> bool | None:
        """Give back a share this resource may not delete; only what the release says moves.

        None: this resource may delete the share. False: giving it back is under way (its
        configuration from before an adoption is being put back). True: released.
        """
        if share.status == "DELETING":
            return None
        release = release_on_delete(share.tags, self.owner,
                                    delete_adopted=self.delete_adopted_share)
        if release is None:
            return None
        give_back = None
        if release.restore is not None:
            give_back = give_back_configuration(self.gateway, self.arn, share, release.restore)
            if not give_back.done:
                self.last_status = f"{share.status} (being given back)"
                return False
        held_back = give_back.held_fields if give_back is not None else ()
        # Idempotent: a repeated delivery finds the tags already moved and changes nothing.
        changed, removed = release.tag_changes(share.tags, held_back)
        if changed:
            self.gateway.tag(self.arn, changed)
        if removed:
            self.gateway.untag(self.arn, removed)
        log("quota_share_released", quota_share=self.arn.arn,
            reason=released_reason(release, give_back),
            tags_set=sorted(changed) or None, tags_removed=removed or None,
            detail="the share's jobs are left as they are; the Delete succeeds")
        return True

    def _check_jobs(self) -> None:
        # Checked at every step: a job submitted between on_event's check and the share being
        # disabled would be terminated by the deletion.
        check_no_active_jobs(self.gateway, self.arn,
                             terminate_active_jobs=self.terminate_active_jobs)

    def _guarded(self, share: LiveShare, step: Callable[[], None]) -> None:
        """Run ``step``; if it refuses or fails, put back the state from before the delete.

        The Delete fails only once the re-enabling is submitted (or seen applied): a Delete
        never fails leaving disabled a share it disabled. When AWS Batch is busy with the share,
        the error waits for the next poll, which finds the share disabled and tries again.
        """
        try:
            step()
        except QuotaShareLifecycleError as error:
            restored = self._put_back(share)
            if restored is None:
                raise _Deferred() from error
            raise QuotaShareLifecycleError(f"{error}{restored}") from error

    def _put_back(self, seen: LiveShare | None) -> str | None:
        """Undo this delete's disabling; the sentence saying so, None when deferred."""
        share = self.gateway.describe(self.arn) or seen  # the step may have moved it on
        if share is None or not disabled_for_delete(share.tags):
            return ""
        said = ""
        if not share.enabled:
            progress = self.gateway.update(self.arn, {"state": ENABLED})
            log("quota_share_reenabled", quota_share=self.arn.arn, progress=progress.value)
            if progress is not Progress.APPLIED:
                return None
            said = (f" Quota share {self.arn.share_name!r} was enabled again, as it was "
                    "before this delete began.")
        self._mark(share, marked=False)
        return said

    def _disable(self, share: LiveShare) -> None:
        # Marked first: a retried or repeated delivery then knows this delete disabled it.
        self._mark(share, marked=True)
        progress = self.gateway.update(self.arn, {"state": DISABLED})
        log("quota_share_disabled", quota_share=self.arn.arn, progress=progress.value)

    def _mark(self, share: LiveShare, *, marked: bool) -> None:
        if disabled_for_delete(share.tags) == marked:
            return
        value = lifecycle_with_delete_mark(share.tags, marked)
        if value:
            self.gateway.tag(self.arn, {LIFECYCLE_TAG_KEY: value})
        else:
            self.gateway.untag(self.arn, [LIFECYCLE_TAG_KEY])

    def _delete(self) -> None:
        progress = self.gateway.delete(self.arn)
        log("quota_share_delete_requested", quota_share=self.arn.arn, progress=progress.value)


def released_reason(release: Release, give_back: GiveBack | None) -> str:
    """Why the share was released, and exactly what giving it back restored and did not."""
    if give_back is None:
        return release.reason
    reason = f"{release.reason}; {give_back.describe()}"
    if not give_back.held_back:
        return reason
    mark = lifecycle_with_restore_pending("", give_back.held_fields)
    return (f"{reason}. What was not restored is marked on the share ({LIFECYCLE_TAG_KEY} "
            f"{mark}) and the monitoring reports the share as drifted until it is: "
            f"{release.restores_rest}")


class _Deferred(Exception):
    """A refusal whose putting back AWS Batch could not take yet: the next poll decides."""
