"""A quota share: one team's slice of a training queue's capacity, and who may use it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from aws_cdk import CfnResource, CustomResource, Fn, IResource, RemovalPolicy, Resource, Stack
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from constructs import Construct
from typing_extensions import Protocol, runtime_checkable

from ._construct_props import (
    CONSTRUCT_PATH,
    check_flag,
    child_path,
    errors_name_path,
    parse_quota_share_arn,
)
from .model import (
    QuotaConfigError,
    QuotaShareSpec,
    is_unresolved,
    resource_properties,
    share_subject,
)
from .model.capacity import check_count
from .model.tags import MAX_TAGS

if TYPE_CHECKING:
    from .job_queue import ITrainingJobQueue

CUSTOM_RESOURCE_TYPE = "Custom::BatchQuotaShare"
MIN_JOB_PRIORITY, MAX_JOB_PRIORITY = 0, 9999
"""The range of a service job's ``schedulingPriority`` (higher runs first)."""
SAGEMAKER_SERVICE = "sagemaker.amazonaws.com"

# The custom resource tags each share it manages with an ownership marker.
MAX_DECLARED_TAGS = MAX_TAGS - 1

# Construct prop → custom-resource property for the lifecycle guards (see DESIGN.md §4).
_GUARD_PROPERTIES = {
    "adopt_existing": "AdoptExisting",
    "allow_preemption_on_shrink": "AllowPreemptionOnShrink",
    "terminate_active_jobs_on_delete": "TerminateActiveJobsOnDelete",
}


GrantPermission = Literal["submit", "update_priority"]


@dataclass(frozen=True)
class ShareGrant:
    """Who was granted what on a share through :meth:`QuotaShare.grant_submit` or
    :meth:`QuotaShare.grant_update_priority`, for the allocation agreement people read.

    ``principal`` names the grantee as people find it (a construct path, or the principal as
    IAM would print it); ``max_priority`` is the ``batch:SchedulingPriority`` ceiling, None for
    none.
    """

    principal: str
    permission: GrantPermission
    max_priority: int | None


class ShareProvisioning(Enum):
    """How a :class:`QuotaShare` reaches AWS Batch."""

    CUSTOM_RESOURCE = "CUSTOM_RESOURCE"
    """A ``Custom::BatchQuotaShare`` handled by the stack's :class:`QuotaShareProvider`: waits
    for VALID, refuses to shrink below live usage or delete a share with active jobs unless
    told to, and adopts an existing share only when asked."""
    CLOUDFORMATION = "CLOUDFORMATION"
    """A plain ``AWS::Batch::QuotaShare``: no guards, and not registered in every region."""


def check_provisioning(
    provisioning: ShareProvisioning,
    *,
    subject: str,
    adopt_existing: bool,
    allow_preemption_on_shrink: bool,
    terminate_active_jobs_on_delete: bool,
) -> dict[str, bool]:
    """The lifecycle guards by prop name, once checked against ``provisioning``: they are
    switches of the custom resource, which plain CloudFormation does not have."""
    if not isinstance(provisioning, ShareProvisioning):
        raise QuotaConfigError(
            subject, "provisioning", provisioning,
            "ShareProvisioning.CUSTOM_RESOURCE or ShareProvisioning.CLOUDFORMATION",
        )
    guards = {
        "adopt_existing": adopt_existing,
        "allow_preemption_on_shrink": allow_preemption_on_shrink,
        "terminate_active_jobs_on_delete": terminate_active_jobs_on_delete,
    }
    for field, value in guards.items():
        if check_flag(value, subject=subject, field=field) and (
            provisioning is ShareProvisioning.CLOUDFORMATION
        ):
            raise QuotaConfigError(
                subject, field, value,
                "False with ShareProvisioning.CLOUDFORMATION; only "
                "ShareProvisioning.CUSTOM_RESOURCE can adopt, guard a shrink or guard a delete",
            )
    return guards


def check_share_fits_provisioning(
    spec: QuotaShareSpec,
    *,
    provisioning: ShareProvisioning,
    removal_policy: RemovalPolicy,
    subject: str,
) -> None:
    """What a share's own props must satisfy beyond the model: a removal policy, and room
    for the ownership tag when the custom resource manages it."""
    if not isinstance(removal_policy, RemovalPolicy):
        raise QuotaConfigError(
            subject, "removal_policy", removal_policy, "a RemovalPolicy (DESTROY or RETAIN)"
        )
    if provisioning is ShareProvisioning.CUSTOM_RESOURCE and len(spec.tags) > MAX_DECLARED_TAGS:
        raise QuotaConfigError(
            subject, "tags", f"{len(spec.tags)} tags",
            f"at most {MAX_DECLARED_TAGS} with ShareProvisioning.CUSTOM_RESOURCE, which keeps one "
            f"of the {MAX_TAGS} tags AWS allows per share for its ownership marker",
        )


@runtime_checkable
class IQuotaShare(IResource, Protocol):
    """A quota share on a training job queue, created here or imported."""

    @property
    def quota_share_arn(self) -> str:
        """``arn:<partition>:batch:<region>:<account>:job-queue/<queue>/quota-share/<share>``."""
        ...

    @property
    def quota_share_name(self) -> str:
        """The name jobs are submitted with (``quotaShareName``)."""
        ...

    @property
    def job_queue_arn(self) -> str:
        """The ARN of the queue the share belongs to."""
        ...

    def grant_submit(
        self,
        grantee: iam.IGrantable,
        *,
        max_priority: int | None = None,
        execution_roles: Sequence[iam.IRole] = (),
    ) -> iam.Grant:
        """Submit SageMaker Training service jobs into this share (and no other)."""
        ...

    def grant_update_priority(
        self, grantee: iam.IGrantable, *, max_priority: int | None = None
    ) -> iam.Grant:
        """Change the scheduling priority of submitted service jobs."""
        ...


class _QuotaShareBase(Resource):
    """The grants, shared by created and imported shares."""

    _subject: str
    _grants: list[ShareGrant]

    @property
    def grants(self) -> tuple[ShareGrant, ...]:
        """What :meth:`grant_submit` and :meth:`grant_update_priority` granted, in order."""
        return tuple(getattr(self, "_grants", ()))

    def _record_grant(
        self, grantee: iam.IGrantable, permission: GrantPermission, max_priority: int | None
    ) -> None:
        if not hasattr(self, "_grants"):
            self._grants = []
        self._grants.append(ShareGrant(_principal_label(grantee), permission, max_priority))

    @property
    def quota_share_arn(self) -> str:
        raise NotImplementedError

    @property
    def job_queue_arn(self) -> str:
        raise NotImplementedError

    def grant_submit(
        self,
        grantee: iam.IGrantable,
        *,
        max_priority: int | None = None,
        execution_roles: Sequence[iam.IRole] = (),
    ) -> iam.Grant:
        """``batch:SubmitServiceJob`` into this queue and this share only.

        A request naming another share of the queue is denied, because IAM authorizes the
        quota share named in the request as a resource of its own. With ``max_priority``
        (0–9999) every submission must carry a ``schedulingPriority`` no higher than it; a
        request without one has no ``batch:SchedulingPriority`` and is denied. Passing any of
        ``execution_roles`` to SageMaker (``iam:PassRole``, only to
        ``sagemaker.amazonaws.com``) is granted too; no other role may be passed.
        """
        conditions = self._priority_ceiling(max_priority)
        roles = list(execution_roles)
        for index, role in enumerate(roles):
            if is_unresolved(role) or not isinstance(getattr(role, "role_arn", None), str):
                with errors_name_path(self):
                    raise QuotaConfigError(
                        self._subject, f"execution_roles[{index}]", role,
                        "an iam.IRole (iam.Role.from_role_arn(...) for an existing role)",
                    )
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["batch:SubmitServiceJob"],
            # The service job being created is a required resource of SubmitServiceJob; its
            # id is unknown before submission, so any service job of the queue's account and
            # region. The queue and the share still have to match.
            resource_arns=[self.job_queue_arn, self.quota_share_arn, self._service_jobs_arn()],
            conditions=conditions,
        )
        if roles:
            grant = grant.combine(
                iam.Grant.add_to_principal(
                    grantee=grantee,
                    actions=["iam:PassRole"],
                    resource_arns=[role.role_arn for role in roles],
                    conditions={"StringEquals": {"iam:PassedToService": SAGEMAKER_SERVICE}},
                )
            )
        self._record_grant(grantee, "submit", max_priority)
        return grant

    def grant_update_priority(
        self, grantee: iam.IGrantable, *, max_priority: int | None = None
    ) -> iam.Grant:
        """``batch:UpdateServiceJob`` (which changes only ``schedulingPriority``), with the
        same optional ceiling as :meth:`grant_submit`.

        AWS Batch authorizes UpdateServiceJob against the service job alone (no job-queue or
        quota-share resource type), so this cannot be narrowed to the share's jobs: it covers
        every service job in the share's account and region, and the ceiling is what keeps a
        team from outranking the others.
        """
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["batch:UpdateServiceJob"],
            resource_arns=[self._service_jobs_arn()],
            conditions=self._priority_ceiling(max_priority),
        )
        self._record_grant(grantee, "update_priority", max_priority)
        return grant

    def _priority_ceiling(self, max_priority: int | None) -> dict[str, Any] | None:
        if max_priority is None:
            return None
        with errors_name_path(self):
            check_count(
                max_priority, subject=self._subject, field="max_priority",
                minimum=MIN_JOB_PRIORITY, maximum=MAX_JOB_PRIORITY,
            )
        return {"NumericLessThanEquals": {"batch:SchedulingPriority": max_priority}}

    def _service_jobs_arn(self) -> str:
        return Stack.of(self).format_arn(
            service="batch",
            resource="service-job",
            resource_name="*",
            account=self.env.account,
            region=self.env.region,
        )


class QuotaShare(_QuotaShareBase):
    """A quota share on a training job queue, provisioned as ``provisioning`` says.

    The share is checked against the queue when it is created: against the queue's other
    shares (unique names, at most 20) and, when the environment's capacity is known, against
    that capacity. The share resource is the child ``Resource``. Its name is its identity:
    renaming it (or moving it to another queue) replaces it, and AWS Batch terminates the jobs
    of a deleted share; with ``CUSTOM_RESOURCE`` that delete is guarded.

    :param job_queue: the queue (created here, imported, or from another stack).
    :param spec: the share's declaration.
    :param provisioning: Default: ``ShareProvisioning.CUSTOM_RESOURCE``.
    :param adopt_existing: adopt a same-named share already on the queue instead of failing.
        Default: False. CUSTOM_RESOURCE only.
    :param allow_preemption_on_shrink: allow an update that lowers limits below the share's
        live usage (its jobs above the new limit become preemptible). Default: False.
        CUSTOM_RESOURCE only.
    :param terminate_active_jobs_on_delete: allow deleting the share while it still has
        SUBMITTED…RUNNING jobs (they are terminated). Default: False. CUSTOM_RESOURCE only.
    :param removal_policy: what CloudFormation does with the share when it leaves the stack.
        ``RETAIN`` keeps it (and its jobs) in AWS Batch, unmanaged — the first step of moving a
        share between provisioning modes. Default: ``RemovalPolicy.DESTROY`` (deleted, through
        the delete guard with CUSTOM_RESOURCE).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        job_queue: ITrainingJobQueue,
        spec: QuotaShareSpec,
        provisioning: ShareProvisioning = ShareProvisioning.CUSTOM_RESOURCE,
        adopt_existing: bool = False,
        allow_preemption_on_shrink: bool = False,
        terminate_active_jobs_on_delete: bool = False,
        removal_policy: RemovalPolicy = RemovalPolicy.DESTROY,
    ) -> None:
        # Imported here: job_queue.py imports this module to create shares.
        from .job_queue import ITrainingJobQueue

        # The share's own props are checked before its construct exists, so such a mistake
        # leaves nothing behind in the tree; the queue records the share only if it passes the
        # queue-level checks below.
        if not isinstance(spec, QuotaShareSpec):
            raise QuotaConfigError(
                share_subject(child_path(scope, id)), "spec", spec, "a QuotaShareSpec"
            )
        subject = share_subject(spec.name)
        guards = check_provisioning(
            provisioning,
            subject=subject,
            adopt_existing=adopt_existing,
            allow_preemption_on_shrink=allow_preemption_on_shrink,
            terminate_active_jobs_on_delete=terminate_active_jobs_on_delete,
        )
        check_share_fits_provisioning(
            spec, provisioning=provisioning, removal_policy=removal_policy, subject=subject
        )
        if not isinstance(job_queue, ITrainingJobQueue):
            raise QuotaConfigError(
                subject, "job_queue", job_queue,
                "a TrainingJobQueue or one of its from_... imports",
            )
        super().__init__(scope, id)
        self._subject = subject
        job_queue._register_quota_share(spec)
        self.job_queue = job_queue
        self.spec = spec
        self.provisioning = provisioning
        properties = resource_properties(spec, job_queue.job_queue_arn)
        self._resource: CfnResource | CustomResource
        if provisioning is ShareProvisioning.CLOUDFORMATION:
            self._resource = _cloudformation_quota_share(self, properties)
        else:
            # Imported on first use: the provider brings Lambda, Step Functions and the runtime
            # asset, which an app that provisions only with CloudFormation never needs.
            from .share_provider import QuotaShareProvider

            provider = QuotaShareProvider.for_stack(Stack.of(self))
            provider.manage_shares_of(job_queue.job_queue_arn)
            self._resource = CustomResource(
                self,
                "Resource",
                service_token=provider.service_token,
                service_timeout=provider.service_timeout,
                resource_type=CUSTOM_RESOURCE_TYPE,
                properties={
                    **properties,
                    **{_GUARD_PROPERTIES[field]: value for field, value in guards.items()},
                },
            )
        self._resource.apply_removal_policy(removal_policy)

    @cached_property
    def quota_share_arn(self) -> str:
        if isinstance(self._resource, batch.CfnQuotaShare):
            return self._resource.attr_quota_share_arn
        # The provider returns the share's ARN as the physical resource id.
        return self._resource.ref

    @property
    def quota_share_name(self) -> str:
        return self.spec.name

    @property
    def job_queue_arn(self) -> str:
        return self.job_queue.job_queue_arn

    @staticmethod
    def from_quota_share_arn(scope: Construct, id: str, quota_share_arn: str) -> IQuotaShare:
        """An existing share, for grants:
        ``arn:<partition>:batch:<region>:<account>:job-queue/<queue>/quota-share/<share>``."""
        return _ImportedQuotaShare(scope, id, quota_share_arn)


class _ImportedQuotaShare(_QuotaShareBase):
    def __init__(self, scope: Construct, id: str, arn: str) -> None:
        # Checked before Resource parses the ARN, whose own error names neither resource
        # nor field.
        with errors_name_path(lambda: child_path(scope, id)):
            parsed = parse_quota_share_arn(
                arn, subject=share_subject(CONSTRUCT_PATH), field="quota_share_arn"
            )
        super().__init__(scope, id, environment_from_arn=arn)
        self._arn = arn
        if parsed is None:
            # The share ARN is the queue ARN followed by /quota-share/<name>.
            self._queue_arn, self._name = Fn.split("/quota-share/", arn, 2)
            self._subject = share_subject(CONSTRUCT_PATH)
        else:
            self._queue_arn, self._name = parsed
            self._subject = share_subject(self._name)

    @property
    def quota_share_arn(self) -> str:
        return self._arn

    @property
    def quota_share_name(self) -> str:
        return self._name

    @property
    def job_queue_arn(self) -> str:
        return self._queue_arn


def _principal_label(grantee: iam.IGrantable) -> str:
    """The grantee as people reading the agreement find it: its construct path when it is a
    construct of this app, else the principal as IAM prints it."""
    node = getattr(grantee, "node", None)
    path = getattr(node, "path", None)
    if isinstance(path, str) and path:
        return path
    return str(grantee.grant_principal)


def _cloudformation_quota_share(
    scope: Construct, properties: Mapping[str, Any]
) -> batch.CfnQuotaShare:
    """The ``AWS::Batch::QuotaShare`` whose properties are exactly ``properties``."""
    sharing = properties["ResourceSharingConfiguration"]
    return batch.CfnQuotaShare(
        scope,
        "Resource",
        quota_share_name=properties["QuotaShareName"],
        job_queue=properties["JobQueue"],
        capacity_limits=[
            batch.CfnQuotaShare.QuotaShareCapacityLimitProperty(
                capacity_unit=limit["CapacityUnit"], max_capacity=limit["MaxCapacity"]
            )
            for limit in properties["CapacityLimits"]
        ],
        resource_sharing_configuration=(
            batch.CfnQuotaShare.QuotaShareResourceSharingConfigurationProperty(
                strategy=sharing["Strategy"], borrow_limit=sharing.get("BorrowLimit")
            )
        ),
        preemption_configuration=batch.CfnQuotaShare.QuotaSharePreemptionConfigurationProperty(
            in_share_preemption=properties["PreemptionConfiguration"]["InSharePreemption"]
        ),
        state=properties["State"],
        tags=properties.get("Tags"),
    )
