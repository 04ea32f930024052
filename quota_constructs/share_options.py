"""How a quota share reaches AWS Batch, and what its deployments may do to the jobs inside it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from aws_cdk import RemovalPolicy

from ._construct_props import check_flag
from .model import QuotaConfigError
from .wire.custom_resource import GUARD_PROPERTIES, guard_properties


class ShareProvisioning(Enum):
    """How a :class:`QuotaShare` reaches AWS Batch."""

    CUSTOM_RESOURCE = "CUSTOM_RESOURCE"
    """A ``Custom::BatchQuotaShare`` handled by a :class:`QuotaShareProvider`: waits for VALID,
    refuses to shrink below live usage, to turn in-share preemption on while it would preempt
    running jobs, or to delete a share with active jobs unless told to, and adopts an existing
    share only when asked."""
    CLOUDFORMATION = "CLOUDFORMATION"
    """A plain ``AWS::Batch::QuotaShare``: no guards, and not registered in every region."""


@dataclass(frozen=True, kw_only=True)
class ShareLifecycle:
    """What deployments may do to one quota share and the jobs in it.

    Every switch defaults to the safe choice; each is an explicit, per-share opt-in. The
    guards are switches of the custom resource (``ShareProvisioning.CUSTOM_RESOURCE``): with
    ``ShareProvisioning.CLOUDFORMATION`` they must stay False.

    :param adopt_existing: adopt a same-named share already on the queue instead of failing.
        Default: False.
    :param allow_preemption_on_shrink: allow an update that lowers limits below the share's
        live usage (its jobs above the new limit become preemptible). Default: False.
    :param allow_preemption_on_in_share_enable: allow an update that turns in-share preemption
        on while a RUNNABLE job of the share cannot start within its free capacity and
        outranks some of its SCHEDULED/STARTING/RUNNING jobs (AWS Batch preempts those at
        once). Without it such an update is refused, naming the jobs; with nothing to preempt
        it is applied either way. Default: False.
    :param terminate_active_jobs_on_delete: allow deleting the share while it still has
        SUBMITTED…RUNNING jobs (AWS Batch terminates them). It takes effect only once deployed,
        so deploy it *before* the deployment that removes or renames the share. Default: False.
    :param delete_adopted_share_on_delete: deleting this resource deletes a share it adopted
        that was made outside the stack (through the delete guard), instead of giving it back
        as it was before the adoption (configuration, state and its own tags) and releasing it
        — the default, as CloudFormation's resource import keeps an imported resource. Like
        ``terminate_active_jobs_on_delete``, it takes effect once deployed. Default: False.
    :param removal_policy: what CloudFormation does with the share when it leaves the stack.
        ``RETAIN`` keeps it (and its jobs) in AWS Batch, unmanaged — the first step of moving a
        share between provisioning modes. Default: ``RemovalPolicy.DESTROY`` (deleted, through
        the delete guard with CUSTOM_RESOURCE).
    """

    adopt_existing: bool = False
    allow_preemption_on_shrink: bool = False
    terminate_active_jobs_on_delete: bool = False
    allow_preemption_on_in_share_enable: bool = False
    removal_policy: RemovalPolicy = RemovalPolicy.DESTROY
    delete_adopted_share_on_delete: bool = False

    def guard_properties(self) -> dict[str, bool]:
        """The guards as the custom resource's properties."""
        return guard_properties({name: getattr(self, name) for name in GUARD_PROPERTIES})


def check_lifecycle(
    lifecycle: ShareLifecycle,
    *,
    provisioning: ShareProvisioning,
    subject: str,
    field: str = "lifecycle",
) -> ShareLifecycle:
    """``lifecycle`` once checked against ``provisioning``; errors name ``subject`` (the share)
    and the switch as ``<field>.<switch>``."""
    check_provisioning(provisioning, subject=subject)
    if not isinstance(lifecycle, ShareLifecycle):
        raise QuotaConfigError(
            subject, field, lifecycle, "a ShareLifecycle(adopt_existing=..., ...)"
        )
    for switch in GUARD_PROPERTIES:
        value = getattr(lifecycle, switch)
        if check_flag(value, subject=subject, field=f"{field}.{switch}") and (
            provisioning is ShareProvisioning.CLOUDFORMATION
        ):
            raise QuotaConfigError(
                subject, f"{field}.{switch}", value,
                "False with ShareProvisioning.CLOUDFORMATION; only "
                "ShareProvisioning.CUSTOM_RESOURCE can adopt, guard a shrink, guard turning "
                "in-share preemption on or guard a delete",
            )
    if not isinstance(lifecycle.removal_policy, RemovalPolicy):
        raise QuotaConfigError(
            subject, f"{field}.removal_policy", lifecycle.removal_policy,
            "a RemovalPolicy (DESTROY or RETAIN)",
        )
    return lifecycle


def check_provisioning(provisioning: ShareProvisioning, *, subject: str) -> None:
    if not isinstance(provisioning, ShareProvisioning):
        raise QuotaConfigError(
            subject, "provisioning", provisioning,
            "ShareProvisioning.CUSTOM_RESOURCE or ShareProvisioning.CLOUDFORMATION",
        )
