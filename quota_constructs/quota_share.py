"""A quota share: one team's slice of a training queue's capacity, and who may use it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal
from weakref import WeakKeyDictionary

import jsii
from aws_cdk import (
    Annotations,
    CfnResource,
    CustomResource,
    Fn,
    IAnyProducer,
    IResolveContext,
    IResource,
    ITaggable,
    Lazy,
    Stack,
    TagManager,
    TagType,
)
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from aws_cdk.interfaces import aws_batch as batch_refs
from constructs import Construct, IValidation
from typing_extensions import Protocol, runtime_checkable

from ._batch_resource import BatchResource, CreatedBatchResource, ImportedBatchResource
from ._construct_props import (
    CONSTRUCT_PATH,
    child_path,
    errors_name_path,
    name_from_arn,
    parse_quota_share_arn,
)
from ._share_ledger import AppBookkeeping, ledger_of
from .model import (
    QuotaConfigError,
    QuotaShareSpec,
    is_unresolved,
    share_subject,
)
from .model.capacity import check_count
from .model.deployed_names import PrincipalNames
from .model.queue import share_warnings
from .model.submission import MAX_JOB_PRIORITY, MIN_JOB_PRIORITY, SHARE_TAG_KEY
from .model.tags import MAX_TAGS, RESERVED_LIBRARY_TAG_KEYS
from .nag_acknowledgments import acknowledge_grant_wildcards
from .share_options import ShareLifecycle, ShareProvisioning, check_lifecycle
from .stack_outputs import add_output, principal_names
from .wire.custom_resource import (
    CUSTOM_RESOURCE_TYPE,
    declared_tag_budget,
    declared_tag_limit,
)
from .wire.deployed_config import DEPLOYED_CONFIG_TAG_KEY
from .wire.share_arn import SHARE_PATH, quota_share_arn, quota_shares_of
from .wire.share_codec import resource_properties

if TYPE_CHECKING:
    from .share_provider import QuotaShareProvider

__all__ = [
    "CUSTOM_RESOURCE_TYPE",
    "SHARE_TAG_KEY",
    "IQuotaShare",
    "QuotaShare",
    "ShareGrant",
    "ShareLifecycle",
    "ShareProvisioning",
]

SAGEMAKER_SERVICE = "sagemaker.amazonaws.com"


# What the AWS Batch service authorization reference ("Actions, resources, and condition keys
# for AWS Batch", docs.aws.amazon.com/service-authorization/latest/reference/list_batch.html)
# says, and the grants below rely on:
# - SubmitServiceJob: resource types job-queue (required), quota-share and service-job
#   (required), each with the condition keys aws:RequestTag/${TagKey}, aws:ResourceTag/${TagKey},
#   aws:TagKeys and batch:SchedulingPriority (service-job also batch:ShareIdentifier). The
#   SubmitServiceJob operation authorizes batch:SubmitServiceJob, batch:TagResource (Tagging)
#   and iam:PassRole with iam:PassedToService sagemaker.amazonaws.com.
# - TagResource: resource type service-job, with aws:RequestTag/${TagKey},
#   aws:ResourceTag/${TagKey} and aws:TagKeys.
# - UpdateServiceJob: resource type service-job (required) only, with aws:ResourceTag/${TagKey}
#   and batch:SchedulingPriority: no job-queue or quota-share resource, so a tag on the job is
#   the only way to tell one team's jobs from another's.
# - botocore's batch service model: SubmitServiceJob takes ``tags`` ("The tags that you apply
#   to the service job request"); UpdateServiceJob takes only jobId and schedulingPriority.
# - IAM (condition operators; multivalued context keys): aws:TagKeys holds every key of the
#   request. ForAllValues:<op> is true when each request value matches under <op> — and also
#   when the key is absent or empty, which the grants never rely on: each also requires the
#   share's tag (StringEquals on aws:RequestTag, false when that key is absent), so aws:TagKeys
#   is present. A negated operator (StringNotEquals...) with several policy values matches a
#   value equal to none of them. Null "true" matches only an absent key.
_REQUEST_TAG = f"aws:RequestTag/{SHARE_TAG_KEY}"
_RESOURCE_TAG = f"aws:ResourceTag/{SHARE_TAG_KEY}"


def _submission_tag_conditions(share_name: str) -> dict[str, dict[str, Any]]:
    """The share's own tag, valued with its name, and no key the library reserves (compared
    without case); any other tag (cost allocation, experiment ids) may come along."""
    return {
        "StringEquals": {_REQUEST_TAG: share_name},
        "ForAllValues:StringNotEqualsIgnoreCase": {
            "aws:TagKeys": list(RESERVED_LIBRARY_TAG_KEYS),
        },
    }


GRANTEE_ACCOUNT_WARNING_ID: Final = "quota_constructs:grantee-account"
"""Warning id for a grant, in a stack whose account is not pinned, to a principal naming an
account (acknowledge it with ``Annotations.of(share).acknowledge_warning``)."""

PREEMPTION_BUDGET_WARNING_ID: Final = "quota_constructs:in-share-preemption-budget"
"""Id of the synth warning about a share with in-share preemption whose interruption budget is
0 (a higher-priority submission fails a running job outright); acknowledge it with
``Annotations.of(share).acknowledge_warning(...)`` when that is intended."""


@dataclass(frozen=True)
class ShareGrant:
    """One grant made on a share: who (``principal``) may do what, under which ceiling."""

    principal: str
    permission: str  # "submit" | "update_priority"
    max_priority: int | None
    names: PrincipalNames | None = field(default=None, compare=False, repr=False)
    """The principal's real name and ARN, or the stack output that holds the ARN."""
    execution_roles: tuple[PrincipalNames, ...] = field(default=(), compare=False, repr=False)
    """The SageMaker execution roles a submit grant lets the principal pass (for the
    agreement: a team needs their ARNs for its training requests)."""


Permission = Literal["submit", "update_priority"]

TeamPrincipal = iam.IRole | iam.IUser | iam.IGroup
"""What :meth:`QuotaShare.grant_team` grants to: a principal the app can attach a policy to."""

TEAM_GRANT_REASON: Final = (
    "Service jobs exist only at run time and ListServiceJobs/DescribeServiceJob take no "
    "resource; the queue, the share, its tag and the priority ceiling bound what the team can do."
)
"""The default cdk-nag acknowledgment reason of :meth:`QuotaShare.grant_team`."""


def check_share_fits_provisioning(
    spec: QuotaShareSpec, *, provisioning: ShareProvisioning, subject: str,
    lifecycle: ShareLifecycle = ShareLifecycle(),
) -> None:
    """Room for the custom resource's own tags when it manages the share (the tag budget of
    :mod:`quota_constructs.wire.custom_resource`, which depends on ``adopt_existing``)."""
    if len(spec.tags) > _tag_budget(provisioning, lifecycle):
        raise QuotaConfigError(
            subject, "tags", f"{len(spec.tags)} tags", _tag_limit_text(provisioning, lifecycle)
        )


def _tag_budget(provisioning: ShareProvisioning, lifecycle: ShareLifecycle) -> int:
    if provisioning is ShareProvisioning.CUSTOM_RESOURCE:
        return declared_tag_budget(adopt_existing=lifecycle.adopt_existing)
    return MAX_TAGS


def _tag_limit_text(provisioning: ShareProvisioning, lifecycle: ShareLifecycle) -> str:
    together = "(spec tags and Tags.of(...) tags together)"
    if provisioning is ShareProvisioning.CUSTOM_RESOURCE:
        return f"{declared_tag_limit(adopt_existing=lifecycle.adopt_existing)} {together}"
    return f"at most {MAX_TAGS} tags per share {together}"


@runtime_checkable
class IQuotaShare(batch_refs.IQuotaShareRef, IResource, Protocol):
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

    @property
    def submission_tags(self) -> Mapping[str, str]:
        """The tags every submission into this share must carry under :meth:`grant_submit`
        (``{SHARE_TAG_KEY: <share name>}``)."""
        ...

    @property
    def grants(self) -> tuple[ShareGrant, ...]:
        """The grants made on this share so far, in the order they were made."""
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
        """Change the scheduling priority of this share's service jobs."""
        ...

    def grant_team(
        self,
        grantee: TeamPrincipal,
        *,
        max_priority: int | None = None,
        execution_roles: Sequence[iam.IRole] = (),
        nag_reason: str | None = TEAM_GRANT_REASON,
    ) -> iam.Grant:
        """Everything a team's role needs on this share: submit, update priority, observe."""
        ...


def principal_label(grantee: iam.IGrantable) -> str:
    """What people recognise a grantee by: the path of a role, user or group created in the
    app, the literal ARN or name of an imported one, else the principal's own text."""
    if isinstance(grantee, (iam.Role, iam.User, iam.Group)):
        return grantee.node.path
    for attribute in ("role_arn", "role_name", "user_arn", "user_name", "group_arn"):
        value = getattr(grantee, attribute, None)
        if isinstance(value, str) and not is_unresolved(value):
            return value
    principal = grantee.grant_principal
    for attribute in ("arn", "account_id", "service", "federated"):
        value = getattr(principal, attribute, None)
        if isinstance(value, str) and not is_unresolved(value):
            return value
    # Never a Python object's repr: the path of a construct, else the principal's kind.
    node = getattr(grantee, "node", None)
    if node is not None:
        return str(node.path)
    return type(principal).__name__


def grant_queue_observe(grantee: iam.IGrantable, queue_arn: str) -> iam.Grant:
    """What a queue's ``grant_observe`` grants on the queue ``queue_arn``. Here, not in
    ``job_queue``, so that :meth:`QuotaShare.grant_team`, which knows its queue by ARN only,
    grants the same without importing the queue's module."""
    return (
        iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["batch:GetJobQueueSnapshot", "batch:ListQuotaShares"],
            resource_arns=[queue_arn],
        )
        .combine(
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=["batch:DescribeQuotaShare"],
                resource_arns=[quota_shares_of(queue_arn)],
            )
        )
        .combine(
            # The Service Authorization Reference lists no resource type for these two
            # actions, so IAM accepts only "*"; they read job metadata, never change it.
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=["batch:DescribeServiceJob", "batch:ListServiceJobs"],
                resource_arns=["*"],
            )
        )
    )


class QuotaShareBase(BatchResource):
    """What created and imported shares have alike: ARN, name, queue and the grants."""

    # A share's ARN is its queue's followed by /quota-share/<name>.
    _arn_resource_type = "job-queue"
    _subject: str
    _grants: list[ShareGrant]
    _job_queue_arn: str

    @property
    def quota_share_arn(self) -> str:
        return self._resource_arn

    @property
    def quota_share_name(self) -> str:
        return self._resource_name

    @property
    def job_queue_arn(self) -> str:
        return self._job_queue_arn

    @property
    def quota_share_ref(self) -> batch_refs.QuotaShareReference:
        return batch_refs.QuotaShareReference(quota_share_arn=self.quota_share_arn)

    @property
    def submission_tags(self) -> Mapping[str, str]:
        return {SHARE_TAG_KEY: self.quota_share_name}

    @property
    def grants(self) -> tuple[ShareGrant, ...]:
        return tuple(self._grants)

    def grant_submit(
        self,
        grantee: iam.IGrantable,
        *,
        max_priority: int | None = None,
        execution_roles: Sequence[iam.IRole] = (),
    ) -> iam.Grant:
        """``batch:SubmitServiceJob`` into this queue and this share only, for jobs tagged
        with the share (:attr:`submission_tags`).

        A request naming another share of the queue is denied, because IAM authorizes the
        quota share named in the request as a resource of its own. Every submission must carry
        the tag ``SHARE_TAG_KEY`` with the share's name (``aws:RequestTag``); it may carry other
        tags (cost allocation, experiment ids) but none of the keys the library reserves
        (``RESERVED_LIBRARY_TAG_KEYS``, ``aws:TagKeys``). The matching ``batch:TagResource`` is
        granted under the same conditions and only on a job that carries no share tag yet —
        the job being submitted — never on a job already labelled for a share (see the README
        for the one exposure IAM cannot close, and the SCP that closes it). With
        ``max_priority`` (0–9999) every submission must carry a ``schedulingPriority`` no
        higher than it; a request without one has no ``batch:SchedulingPriority`` and is
        denied. Passing any of ``execution_roles`` to SageMaker (``iam:PassRole``, only to
        ``sagemaker.amazonaws.com``) is granted too; no other role may be passed.
        """
        conditions = self._priority_ceiling(max_priority)
        roles = self._check_execution_roles(execution_roles)
        self._check_grantee_environment(grantee)
        name = self.quota_share_name
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["batch:SubmitServiceJob"],
            # The service job being created is a required resource of SubmitServiceJob; its
            # id is unknown before submission, so any service job of the queue's account and
            # region. The queue, the share and the share's tag still have to match.
            resource_arns=[self.job_queue_arn, self.quota_share_arn, self._service_jobs_arn()],
            conditions={**conditions, **_submission_tag_conditions(name)},
        ).combine(
            # The reference lists batch:TagResource among the actions the SubmitServiceJob
            # operation authorizes (tag-on-create of the tags sent with it). It is allowed only
            # with this share's own tag, valued with its name, and no reserved key (the same
            # conditions as the submission), and never on a job that already carries a share
            # tag (Null aws:ResourceTag: the job being created has no tags yet). What IAM cannot
            # tell apart is a job being created from an existing job with no share tag at all
            # (AWS Batch has no tag-on-create condition key such as ec2:CreateAction): such a
            # job, submitted without the library's grants, could be labelled by a team. The
            # README gives the SCP that makes every service job carry the tag from creation.
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=["batch:TagResource"],
                resource_arns=[self._service_jobs_arn()],
                conditions={
                    **_submission_tag_conditions(name),
                    "Null": {_RESOURCE_TAG: "true"},
                },
            )
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
        self._check_grant_applies(grant, grantee)
        self._record_grant(grantee, "submit", max_priority, roles)
        return grant

    def grant_update_priority(
        self, grantee: iam.IGrantable, *, max_priority: int | None = None
    ) -> iam.Grant:
        """``batch:UpdateServiceJob`` (which changes only ``schedulingPriority``) on this
        share's service jobs — those tagged with the share by :meth:`grant_submit` — with the
        same optional ceiling.

        AWS Batch authorizes UpdateServiceJob against the service job alone (no job-queue or
        quota-share resource type), so the share's tag on the job (``aws:ResourceTag``) is
        what keeps a team away from other teams' jobs, and the ceiling what keeps it from
        outranking them.
        """
        conditions = self._priority_ceiling(max_priority)
        self._check_grantee_environment(grantee)
        grant = iam.Grant.add_to_principal(
            grantee=grantee,
            actions=["batch:UpdateServiceJob"],
            resource_arns=[self._service_jobs_arn()],
            conditions={**conditions, "StringEquals": {_RESOURCE_TAG: self.quota_share_name}},
        )
        self._check_grant_applies(grant, grantee)
        self._record_grant(grantee, "update_priority", max_priority)
        return grant

    def grant_team(
        self,
        grantee: TeamPrincipal,
        *,
        max_priority: int | None = None,
        execution_roles: Sequence[iam.IRole] = (),
        nag_reason: str | None = TEAM_GRANT_REASON,
    ) -> iam.Grant:
        """Everything a team's role needs on this share, in one call: exactly
        :meth:`grant_submit` (with ``max_priority`` and ``execution_roles``),
        :meth:`grant_update_priority` (same ceiling) and the queue's ``grant_observe``, the
        same statements as those three calls.

        With ``nag_reason`` (a default is given; ``None`` to acknowledge nothing) each of the
        three grants' inherent wildcards is acknowledged on the grantee's own policy with
        :func:`~quota_constructs.nag_acknowledgments.acknowledge_grant_wildcards`, exactly as
        three separate calls would: only those wildcard resources, never another finding.
        Returns the three grants combined.
        """
        grants = (
            self.grant_submit(grantee, max_priority=max_priority, execution_roles=execution_roles),
            self.grant_update_priority(grantee, max_priority=max_priority),
            grant_queue_observe(grantee, self.job_queue_arn),
        )
        if nag_reason is not None:
            for grant in grants:
                acknowledge_grant_wildcards(grantee, grant, reason=nag_reason)
        return grants[0].combine(grants[1]).combine(grants[2])

    def _record_grant(
        self, grantee: iam.IGrantable, permission: Permission, max_priority: int | None,
        execution_roles: Sequence[iam.IRole] = (),
    ) -> None:
        self._grants.append(ShareGrant(
            principal_label(grantee), permission, max_priority, names=principal_names(grantee),
            execution_roles=tuple(principal_names(role) for role in execution_roles),
        ))

    def _check_execution_roles(self, execution_roles: Sequence[iam.IRole]) -> list[iam.IRole]:
        with errors_name_path(self):
            if isinstance(execution_roles, (str, bytes)) or not isinstance(
                execution_roles, Sequence
            ):
                given = (
                    principal_label(execution_roles)
                    if hasattr(execution_roles, "grant_principal") else execution_roles
                )
                raise QuotaConfigError(
                    self._subject, "execution_roles", given,
                    "a list of iam.IRole; for one role pass execution_roles=[role]",
                )
            roles = list(execution_roles)
            for index, role in enumerate(roles):
                if is_unresolved(role) or not isinstance(getattr(role, "role_arn", None), str):
                    raise QuotaConfigError(
                        self._subject, f"execution_roles[{index}]", role,
                        "an iam.IRole (iam.Role.from_role_arn(...) for an existing role)",
                    )
        return roles

    def _check_grantee_environment(self, grantee: iam.IGrantable) -> None:
        """A role in another account cannot use the share: AWS Batch has no resource
        policies, so only an identity policy in the share's own account can allow it."""
        account = self._home_account()
        env = getattr(grantee, "env", None)
        theirs = getattr(env, "account", None)
        if isinstance(theirs, str) and not is_unresolved(theirs) and is_unresolved(account):
            # An environment-agnostic stack cannot tell at synth whether a role imported by ARN
            # is of another account; CDK then attaches the policy to the role of that *name*
            # in whichever account the stack is deployed to. Say so rather than stay silent.
            Annotations.of(self).add_warning_v2(
                GRANTEE_ACCOUNT_WARNING_ID,
                f"{self._subject}: grantee {principal_label(grantee)} names account {theirs}, "
                "but this stack's account is not pinned: if it deploys elsewhere the policy "
                "goes to a same-named role of that account. Pin the stack's env=, or "
                "acknowledge this warning.",
            )
        if (
            isinstance(theirs, str) and not is_unresolved(theirs)
            and not is_unresolved(account) and theirs != account
        ):
            with errors_name_path(self):
                raise QuotaConfigError(
                    self._subject, "grantee", f"{principal_label(grantee)} (account {theirs})",
                    f"a principal in the share's account {account}: AWS Batch has no resource "
                    "policies, so another account's principals cannot be granted a share",
                )

    def _check_grant_applies(self, grant: iam.Grant, grantee: iam.IGrantable) -> None:
        """A grant that added no policy does nothing: AWS Batch has no resource policies, so
        only an identity policy this app attaches (to a role, user or group) can allow it."""
        if grant.success:
            return
        with errors_name_path(self):
            raise QuotaConfigError(
                self._subject, "grantee", principal_label(grantee),
                "a role, user or group of the share's account that this app can attach a "
                "policy to (iam.Role, iam.Role.from_role_arn(...), iam.User, iam.Group): AWS "
                "Batch has no resource policies, so a grant to a principal with no identity "
                "policy here (such as an ArnPrincipal or AccountPrincipal) would allow nothing",
            )

    def _home_account(self) -> str:
        return self.env.account

    def _priority_ceiling(self, max_priority: int | None) -> dict[str, Any]:
        if max_priority is None:
            return {}
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


@jsii.implements(batch_refs.IQuotaShareRef, ITaggable)
class QuotaShare(QuotaShareBase, CreatedBatchResource):
    """A quota share on a training job queue, provisioned as ``provisioning`` says.

    The share is checked against the queue when it is created: against the queue's other
    shares — every construct standing for that queue, imports included — (unique names, at
    most 20) and, when the environment's capacity is known, against that capacity. It must be
    declared in a stack of the queue's own account and region. The share resource is the child
    ``Resource``. Its name is its identity: renaming it (or moving it to another queue)
    replaces it, and AWS Batch terminates the jobs of a deleted share; with ``CUSTOM_RESOURCE``
    that delete is guarded.

    The share is taggable the CDK way in both modes: ``Tags.of(scope).add(...)`` reaches it,
    and its tags are the spec's ``tags`` merged with those. On a key both set, ``Tags.of``
    wins, as it does over an L1's ``tags`` prop (spec tags enter the tag manager as its initial
    tags, at priority 50; a ``Tags.of`` tag added with a lower ``priority`` lets the spec
    win). At most 50 tags; with ``CUSTOM_RESOURCE`` at most 48, since the custom resource keeps
    its ownership marker and lifecycle record on the share, and 47 with
    ``ShareLifecycle(adopt_existing=True)``, whose adoption record takes one more; more fail the
    synth.

    :param job_queue: the queue: a :class:`TrainingJobQueue` (from this stack or another) or
        one of its ``from_...`` imports.
    :param spec: the share's declaration.
    :param provisioning: Default: ``ShareProvisioning.CUSTOM_RESOURCE``.
    :param lifecycle: what deployments may do to the share and its jobs. Default:
        ``ShareLifecycle()`` — nothing unguarded, deleted when removed from the stack.
    :param provider: the custom-resource provider (CUSTOM_RESOURCE only). Default:
        ``QuotaShareProvider.for_stack(Stack.of(share))``.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        job_queue: batch_refs.IJobQueueRef,
        spec: QuotaShareSpec,
        provisioning: ShareProvisioning = ShareProvisioning.CUSTOM_RESOURCE,
        lifecycle: ShareLifecycle = ShareLifecycle(),
        provider: QuotaShareProvider | None = None,
    ) -> None:
        # The share's own props are checked before its construct exists, so such a mistake
        # leaves nothing behind in the tree; the queue's ledger records the share only if it
        # passes the queue-level checks below.
        if not isinstance(spec, QuotaShareSpec):
            raise QuotaConfigError(
                share_subject(child_path(scope, id)), "spec", spec, "a QuotaShareSpec"
            )
        subject = share_subject(spec.name)
        check_lifecycle(lifecycle, provisioning=provisioning, subject=subject)
        check_share_fits_provisioning(spec, provisioning=provisioning, subject=subject,
                                      lifecycle=lifecycle)
        ledger = ledger_of(job_queue)
        if ledger is None:
            raise QuotaConfigError(
                subject, "job_queue", job_queue,
                "a TrainingJobQueue or one of its from_... imports (other queues' shares "
                "cannot be checked against each other)",
            )
        if provider is not None:
            check_provider(provider, provisioning=provisioning, subject=subject)
        stack, account, region = _stack_environment(scope)
        _check_same_environment(
            stack, (account, region), job_queue, ledger.environment, subject=subject
        )
        allocation = ledger.check(spec)
        super().__init__(scope, id, physical_name=spec.name)
        self._subject = subject
        self._grants = []
        for warning in share_warnings(spec):
            Annotations.of(self).add_warning_v2(PREEMPTION_BUDGET_WARNING_ID, warning)
        queue_arn = job_queue.job_queue_ref.job_queue_arn
        self._job_queue_arn = queue_arn
        self.job_queue = job_queue
        self.spec = spec
        self.provisioning = provisioning
        self.lifecycle = lifecycle
        properties = resource_properties(spec, queue_arn)
        self._resource: CfnResource | CustomResource
        # One tag manager per share: with CLOUDFORMATION the L1's (which Tags.of reaches
        # directly as well), read when first needed.
        self._tags: TagManager | None = None
        if provisioning is ShareProvisioning.CLOUDFORMATION:
            self._resource = _cloudformation_quota_share(self, properties)
        else:
            self._tags = TagManager(
                TagType.MAP, CUSTOM_RESOURCE_TYPE, dict(spec.tags) or None,
                tag_property_name="Tags",
            )
            if provider is None:
                # Imported on first use: the provider brings Lambda, Step Functions and the
                # runtime asset, which an app that provisions only with CloudFormation never
                # needs.
                from .share_provider import QuotaShareProvider

                provider = QuotaShareProvider.for_stack(stack)
            provider.manage_shares_of(queue_arn)
            properties.pop("Tags", None)
            self._resource = CustomResource(
                self,
                "Resource",
                service_token=provider.service_token,
                service_timeout=provider.service_timeout,
                resource_type=CUSTOM_RESOURCE_TYPE,
                properties={
                    **properties,
                    # Rendered at synth time, after every Tags.of aspect has run.
                    "Tags": Lazy.uncached_any(_RenderedTags(self.tags)),
                    **lifecycle.guard_properties(),
                },
            )
        _TagLimits.of(stack).add(self)
        self._resource.apply_removal_policy(lifecycle.removal_policy)
        # Documented output keys (quota_constructs.stack_outputs): <path>ShareName, <path>ShareArn.
        self.name_output: Final = add_output(
            self, "ShareName", spec.name, "Name of the quota share (quotaShareName)"
        )
        self.arn_output: Final = add_output(
            self, "ShareArn", self.quota_share_arn, "ARN of the quota share"
        )
        # Last, once the share is complete: the queue's monitor (an observer of the ledger)
        # builds this share's alarms and dashboard row and tags it now.
        ledger.record(spec, allocation, share=self)

    @property
    def tags(self) -> TagManager:
        """The share's tags (spec tags, then ``Tags.of`` tags), rendered into its resource."""
        if self._tags is None:
            assert isinstance(self._resource, batch.CfnQuotaShare)
            self._tags = self._resource.cdk_tag_manager
        return self._tags

    def _cfn_arn(self) -> str:
        if isinstance(self._resource, batch.CfnQuotaShare):
            return self._resource.attr_quota_share_arn
        # The provider returns the share's ARN as the physical resource id.
        return self._resource.ref

    def _arn_resource_name(self) -> str:
        queue_name = getattr(self.job_queue, "job_queue_name", None)
        if not isinstance(queue_name, str):
            queue_name = name_from_arn(self, self._job_queue_arn)
        return quota_share_arn(queue_name, self.spec.name)

    @property
    def _resource_name(self) -> str:
        # The declared name, even a token: the ARN's last part is not the share's name alone.
        return self.spec.name

    def _home_account(self) -> str:
        queue_account = self.job_queue.env.account
        return self.env.account if is_unresolved(queue_account) else queue_account

    @staticmethod
    def from_quota_share_arn(scope: Construct, id: str, quota_share_arn: str) -> IQuotaShare:
        """An existing share, for grants:
        ``arn:<partition>:batch:<region>:<account>:job-queue/<queue>/quota-share/<share>``."""
        return _ImportedQuotaShare(scope, id, quota_share_arn)


@jsii.implements(batch_refs.IQuotaShareRef)
class _ImportedQuotaShare(QuotaShareBase, ImportedBatchResource):
    def __init__(self, scope: Construct, id: str, arn: str) -> None:
        # Checked before Resource parses the ARN, whose own error names neither resource
        # nor field.
        with errors_name_path(lambda: child_path(scope, id)):
            parsed = parse_quota_share_arn(
                arn, subject=share_subject(CONSTRUCT_PATH), field="quota_share_arn"
            )
        if parsed is None:
            # The share ARN is the queue ARN followed by /quota-share/<name>.
            queue_arn, name = Fn.split(SHARE_PATH, arn, 2)
            subject = share_subject(CONSTRUCT_PATH)
        else:
            queue_arn, name = parsed
            subject = share_subject(name)
        super().__init__(scope, id, arn=arn, name=name)
        self._job_queue_arn = queue_arn
        self._subject = subject
        self._grants = []


@jsii.implements(IAnyProducer)
class _RenderedTags:
    def __init__(self, tags: TagManager) -> None:
        self._tags = tags

    def produce(self, context: IResolveContext) -> Any:
        return self._tags.render_tags()


@jsii.implements(IValidation)
class _TagLimits:
    """Spec tags are counted when a share is declared; ``Tags.of`` tags arrive only with the
    aspects, so the total is checked at synth time — once per stack for all of its shares,
    since every validation is a call from the jsii runtime back into Python."""

    def __init__(self) -> None:
        self._shares: list[QuotaShare] = []

    @classmethod
    def of(cls, stack: Stack) -> _TagLimits:
        # Kept in the app's own tree (its bookkeeping construct), one per stack.
        records = AppBookkeeping.of(stack).stack_records(stack)
        limits = records.tag_limits
        if not isinstance(limits, _TagLimits):
            limits = cls()
            records.tag_limits = limits
            stack.node.add_validation(limits)
        return limits

    def add(self, share: QuotaShare) -> None:
        self._shares.append(share)

    def validate(self) -> list[str]:
        errors: list[str] = []
        for share in self._shares:
            limit = _tag_budget(share.provisioning, share.lifecycle)
            values = share.tags.tag_values()
            count = len(values)
            if count > limit:
                allowed = _tag_limit_text(share.provisioning, share.lifecycle)
                if DEPLOYED_CONFIG_TAG_KEY in values:
                    allowed += (
                        f"; one of them is {DEPLOYED_CONFIG_TAG_KEY}, which QuotaShareMonitoring "
                        "sets on the shares it watches to judge drift"
                    )
                error = QuotaConfigError(share._subject, "tags", f"{count} tags", allowed)
                errors.append(str(error))
        return errors


# A cache only (no behaviour depends on it): a scope's stack, account and region never change,
# remembered weakly (they go with the scope).
_STACK_ENVIRONMENTS: WeakKeyDictionary[Construct, tuple[Stack, str, str]] = WeakKeyDictionary()


def _stack_environment(scope: Construct) -> tuple[Stack, str, str]:
    """The stack of ``scope`` with its account and region, read once per scope: shares are
    often declared side by side, and each read is a round trip to the jsii runtime."""
    known = _STACK_ENVIRONMENTS.get(scope)
    if known is None:
        stack = Stack.of(scope)
        known = _STACK_ENVIRONMENTS[scope] = (stack, stack.account, stack.region)
    return known


def check_provider(
    provider: QuotaShareProvider, *, provisioning: ShareProvisioning, subject: str
) -> None:
    """An explicit provider, only where there is a custom resource to serve."""
    from .share_provider import QuotaShareProvider

    if provisioning is not ShareProvisioning.CUSTOM_RESOURCE:
        raise QuotaConfigError(
            subject, "provider", provider,
            "None with ShareProvisioning.CLOUDFORMATION (only custom-resource shares have one)",
        )
    if not isinstance(provider, QuotaShareProvider):
        raise QuotaConfigError(subject, "provider", provider, "a QuotaShareProvider or None")


def _check_same_environment(
    stack: Stack,
    environment: tuple[str, str],
    job_queue: batch_refs.IJobQueueRef,
    queue_environment: tuple[str, str] | None,
    *,
    subject: str,
) -> None:
    """A share lives in its queue's account and region: AWS Batch has no resource policies,
    so nothing can reach a queue from elsewhere. Compared only where both sides are literal."""
    if all(is_unresolved(part) for part in environment):
        return
    if queue_environment is None:
        queue_env = job_queue.env
        queue_environment = (queue_env.account, queue_env.region)
    theirs = dict(zip(("account", "region"), queue_environment, strict=True))
    ours = dict(zip(("account", "region"), environment, strict=True))
    differing = [
        part for part in ("account", "region")
        if not is_unresolved(theirs[part]) and not is_unresolved(ours[part])
        and theirs[part] != ours[part]
    ]
    if not differing:
        return
    queue = job_queue.job_queue_ref.job_queue_arn
    queue_label = queue if not is_unresolved(queue) else job_queue.node.path
    raise QuotaConfigError(
        subject, "job_queue",
        f"{queue_label} (account {theirs['account']}, region {theirs['region']})",
        f"a job queue in the share's own account and region — stack {stack.node.path} deploys "
        f"to account {ours['account']}, region {ours['region']}: AWS Batch has no resource "
        "policies, so a share and its queue must live in one account and region",
    )


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
