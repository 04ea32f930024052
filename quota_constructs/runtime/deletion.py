"""Deleting a quota share: guard, disable, delete, and wait until AWS Batch no longer has it.

What is deleted comes only from the physical resource id (the share's ARN), never from the
properties, and only when this resource owns the share (see :mod:`.ownership`); any other share
is released. Every step re-reads the share first, so a repeated delivery of the same event
just continues where the previous one stopped.

Whether active jobs may be terminated is read from the share's lifecycle record (the opt-ins
its last deployment wrote on it, which is what ``preview`` reads too); a share without the
record falls back to the properties CloudFormation sends with the Delete.
"""

from __future__ import annotations

from .batch_gateway import BatchGateway
from .errors import QuotaShareLifecycleError
from .guards import check_no_active_jobs
from .live_share import LiveShare
from .ownership import release_on_delete
from .share_arn import QuotaShareArn
from .share_request import GuardOptIns
from .share_writes import Progress
from .structured_log import log

DISABLED, ENABLED = "DISABLED", "ENABLED"


class ShareDeleter:
    def __init__(
        self,
        gateway: BatchGateway,
        arn: QuotaShareArn,
        *,
        owner: str,
        terminate_active_jobs: bool,
        declared_enabled: bool,
    ) -> None:
        self._gateway = gateway
        self._arn = arn
        self._owner = owner
        self._terminate = terminate_active_jobs
        self._declared_enabled = declared_enabled
        self.last_status = "unknown"

    def start(self) -> None:
        """``on_event``: check the guard, then disable the share (the step before deletion)."""
        share = self._gateway.describe(self._arn)
        if share is None:
            log("quota_share_already_gone", quota_share=self._arn.arn)
            return
        if share.status == "DELETING" or self._released(share):
            return
        self._read_lifecycle_record(share)
        if not share.enabled and self._declared_enabled:
            # Disabled although declared enabled: a previous delivery of this Delete got that
            # far. Failing here would leave it disabled; the polls check the jobs again and
            # put the share back if one slipped in.
            log("quota_share_delete_resumed", quota_share=self._arn.arn, status=share.status)
            return
        check_no_active_jobs(self._gateway, self._arn, terminate_active_jobs=self._terminate)
        if share.settled and share.enabled:
            self._disable()

    def wait(self) -> bool:
        """One ``is_complete`` poll: advance one step; True once the share is gone."""
        share = self._gateway.describe(self._arn)
        if share is None:
            log("quota_share_deleted", quota_share=self._arn.arn)
            return True
        if self._released(share):
            return True
        self._read_lifecycle_record(share)
        self.last_status = share.status
        log("quota_share_status", quota_share=self._arn.arn, status=share.status,
            state=share.config.state)
        if not share.settled:
            return False
        if share.enabled:
            # on_event found the share busy and left disabling to this poll.
            check_no_active_jobs(self._gateway, self._arn, terminate_active_jobs=self._terminate)
            self._disable()
            return False
        if self._check_again_before_delete():
            self._delete()
        return False

    def _read_lifecycle_record(self, share: LiveShare) -> None:
        recorded = GuardOptIns.from_tags(share.tags)
        if recorded is not None:
            self._terminate = recorded.terminate_active_jobs_on_delete

    def _released(self, share: LiveShare) -> bool:
        """Leave a share this resource does not own outright as it is; only markers move."""
        if share.status == "DELETING":
            return False
        release = release_on_delete(share.tags, self._owner)
        if release is None:
            return False
        # Idempotent: a repeated delivery finds the markers already moved and changes nothing.
        changed = {k: v for k, v in release.set_tags.items() if share.tags.get(k) != v}
        removed = [key for key in release.remove_tags if key in share.tags]
        if changed:
            self._gateway.tag(self._arn, changed)
        if removed:
            self._gateway.untag(self._arn, removed)
        log("quota_share_released", quota_share=self._arn.arn, reason=release.reason,
            owner_tag_set=changed or None, tags_removed=removed or None,
            detail="the share and its jobs are left as they are; the Delete succeeds")
        return True

    def _check_again_before_delete(self) -> bool:
        """False when a job slipped in and the share is busy: the next poll puts it back.

        A job submitted between on_event's check and the share being disabled would be
        terminated by the deletion: look once more. If one slipped in, the share is enabled
        again as declared and the Delete fails naming the job, but only once the re-enabling
        is submitted (or seen applied): a Delete never fails leaving the share disabled. When
        AWS Batch is busy with the share, the next poll finds it disabled and tries again.
        """
        try:
            check_no_active_jobs(self._gateway, self._arn, terminate_active_jobs=self._terminate)
        except QuotaShareLifecycleError:
            if not self._declared_enabled:
                raise
            progress = self._gateway.update(self._arn, {"state": ENABLED})
            log("quota_share_reenabled", quota_share=self._arn.arn, progress=progress.value)
            if progress is Progress.APPLIED:
                raise
            return False
        return True

    def _disable(self) -> None:
        progress = self._gateway.update(self._arn, {"state": DISABLED})
        log("quota_share_disabled", quota_share=self._arn.arn, progress=progress.value)

    def _delete(self) -> None:
        progress = self._gateway.delete(self._arn)
        log("quota_share_delete_requested", quota_share=self._arn.arn, progress=progress.value)
