"""The SageMaker Training job queue whose capacity quota shares divide."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

import jsii
from aws_cdk import Arn, ArnComponents, ArnFormat, IResource, Stack
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from aws_cdk.interfaces import aws_batch as batch_refs
from constructs import Construct
from typing_extensions import Protocol, runtime_checkable

from ._batch_resource import BatchResource, CreatedBatchResource, ImportedBatchResource
from ._construct_props import (
    arn_environment,
    check_batch_name,
    check_flag,
    check_import,
    child_path,
    errors_name_path,
    label,
)
from ._share_ledger import (
    ALLOCATION_WARNING_ID,
    BORROW_WARNING_ID,
    ShareLedger,
    ledger_for,
    queue_key,
    register_ledger,
)
from .live import permissions
from .model import (
    CapacityLimit,
    JobStateTimeLimitAction,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    check_queue_priority,
    is_unresolved,
    queue_subject,
    validate_tags,
    validate_time_limit_actions,
)
from .quota_share import QuotaShare, grant_queue_observe
from .scheduling_policy import IQuotaShareSchedulingPolicy
from .service_environment import ITrainingServiceEnvironment
from .share_options import ShareLifecycle, ShareProvisioning
from .stack_outputs import add_output
from .wire.share_arn import quota_shares_of

if TYPE_CHECKING:
    from .share_provider import QuotaShareProvider

__all__ = [
    "ALLOCATION_WARNING_ID",
    "BORROW_WARNING_ID",
    "JOB_QUEUE_TYPE",
    "ITrainingJobQueue",
    "TrainingJobQueue",
]

JOB_QUEUE_TYPE = "SAGEMAKER_TRAINING"


@runtime_checkable
class ITrainingJobQueue(batch_refs.IJobQueueRef, IResource, Protocol):
    """A SAGEMAKER_TRAINING job queue with a quota-share policy, created here or imported."""

    @property
    def job_queue_arn(self) -> str:
        """The ARN of the job queue."""
        ...

    @property
    def job_queue_name(self) -> str:
        """The name of the job queue."""
        ...

    @property
    def capacity_limits(self) -> tuple[CapacityLimit, ...] | None:
        """The capacity of the queue's service environment; None when this app does not know
        it, in which case shares are checked against each other but not against capacity."""
        ...

    @property
    def quota_share_specs(self) -> tuple[QuotaShareSpec, ...]:
        """The shares this app declares on the queue — through this construct or any other
        standing for the same queue — in the order they were added."""
        ...

    @property
    def allocation(self) -> QuotaAllocation | None:
        """How the environment's capacity is divided between the shares declared so far;
        None when the capacity is unknown."""
        ...

    def add_quota_share(
        self,
        id: str,
        *,
        spec: QuotaShareSpec,
        provisioning: ShareProvisioning = ShareProvisioning.CUSTOM_RESOURCE,
        lifecycle: ShareLifecycle = ShareLifecycle(),
        provider: QuotaShareProvider | None = None,
    ) -> QuotaShare:
        """Add a quota share to this queue (a child construct of the queue with ``id``); see
        :class:`QuotaShare` for the props."""
        ...

    def grant_observe(self, grantee: iam.IGrantable) -> iam.Grant:
        """Read-only access to the queue's service jobs, snapshot and quota shares."""
        ...

    def grant_read_status(self, grantee: iam.IGrantable) -> iam.Grant:
        """Exactly what ``quota-constructs status``, ``explain`` and ``preview`` read (see
        :data:`quota_constructs.live.permissions.READ_STATUS_ACTIONS`); nothing that writes."""
        ...


def check_queue_settings(
    *,
    priority: int,
    enabled: bool = True,
    job_state_time_limit_actions: Sequence[JobStateTimeLimitAction],
    tags: Mapping[str, str] | None,
    subject: str,
) -> tuple[tuple[JobStateTimeLimitAction, ...], dict[str, str]]:
    """A queue's own settings, and its time-limit actions and tags as the resource takes them.
    Shared with ``QuotaManagedTrainingQueue``, which checks them before it builds anything, so
    that both fail alike on the same mistake."""
    check_queue_priority(priority, subject=subject)
    check_flag(enabled, subject=subject, field="enabled")
    actions = validate_time_limit_actions(job_state_time_limit_actions, subject=subject)
    return actions, validate_tags(tags or {}, subject=subject)


@runtime_checkable
class IHasTrainingJobQueue(Protocol):
    """A construct built around one training job queue (``QuotaManagedTrainingQueue`` is one).

    Constructs that watch or use a queue accept this, so they depend on this module rather than
    on the construct that provides the queue (which may in turn offer them, as
    ``add_monitoring()`` does, without an import circle).
    """

    @property
    def job_queue(self) -> ITrainingJobQueue:
        """The queue."""
        ...


class TrainingJobQueueBase(BatchResource):
    """What created and imported queues share: the share ledger (one per queue, however many
    constructs stand for it), ``add_quota_share`` and ``grant_observe``."""

    _arn_resource_type = "job-queue"
    _ledger: ShareLedger

    @property
    def capacity_limits(self) -> tuple[CapacityLimit, ...] | None:
        return self._ledger.capacity_limits

    @property
    def quota_share_specs(self) -> tuple[QuotaShareSpec, ...]:
        return self._ledger.specs

    @property
    def allocation(self) -> QuotaAllocation | None:
        return self._ledger.allocation

    @property
    def job_queue_arn(self) -> str:
        return self._resource_arn

    @property
    def job_queue_name(self) -> str:
        return self._resource_name

    @property
    def job_queue_ref(self) -> batch_refs.JobQueueReference:
        return batch_refs.JobQueueReference(job_queue_arn=self.job_queue_arn)

    def add_quota_share(
        self,
        id: str,
        *,
        spec: QuotaShareSpec,
        provisioning: ShareProvisioning = ShareProvisioning.CUSTOM_RESOURCE,
        lifecycle: ShareLifecycle = ShareLifecycle(),
        provider: QuotaShareProvider | None = None,
    ) -> QuotaShare:
        return QuotaShare(
            self,
            id,
            job_queue=self,
            spec=spec,
            provisioning=provisioning,
            lifecycle=lifecycle,
            provider=provider,
        )

    def grant_observe(self, grantee: iam.IGrantable) -> iam.Grant:
        return grant_queue_observe(grantee, self.job_queue_arn)

    def grant_read_status(self, grantee: iam.IGrantable) -> iam.Grant:
        queue_arn = self.job_queue_arn
        # The stacks of the queue's partition, region and account (tokens stay tokens).
        queue = Arn.split(queue_arn, ArnFormat.SLASH_RESOURCE_NAME)
        stacks = Arn.format(ArnComponents(
            service="cloudformation", resource="stack", resource_name="*",
            partition=queue.partition, region=queue.region, account=queue.account,
            arn_format=ArnFormat.SLASH_RESOURCE_NAME))
        scopes = (
            (permissions.QUEUE_ACTIONS, [queue_arn]),
            (permissions.SHARE_ACTIONS, [quota_shares_of(queue_arn)]),
            (permissions.UNSCOPED_ACTIONS, ["*"]),
            (permissions.STACK_ACTIONS, [stacks]),
        )
        grants = [iam.Grant.add_to_principal(grantee=grantee, actions=list(actions),
                                             resource_arns=resources)
                  for actions, resources in scopes]
        combined = grants[0]
        for grant in grants[1:]:
            combined = combined.combine(grant)
        return combined


@jsii.implements(batch_refs.IJobQueueRef)
class TrainingJobQueue(TrainingJobQueueBase, CreatedBatchResource):
    """An ``AWS::Batch::JobQueue`` of type SAGEMAKER_TRAINING managed by a quota-share policy.

    Linked to exactly one service environment. Quota shares are added with
    :meth:`add_quota_share` (or by creating a :class:`QuotaShare` anywhere, even in another
    stack); each is checked against the shares already on the queue and, when the
    environment's capacity is known, against that capacity. The ``AWS::Batch::JobQueue`` is the
    child ``Resource``.

    :param service_environment: the environment whose capacity the queue divides.
    :param scheduling_policy: the quota-share policy.
    :param priority: 0–1000; higher is evaluated first among queues sharing an environment.
        Default: 1.
    :param job_queue_name: physical name (``PhysicalName.GENERATE_IF_NEEDED`` names it only
        when another environment refers to it). Default: generated by CloudFormation, so a
        replacement never collides with the queue it replaces.
    :param enabled: whether the queue accepts new jobs. Default: True.
    :param job_state_time_limit_actions: terminate jobs stuck RUNNABLE longer than a time.
        Default: none.
    :param tags: tags of the queue. Default: none.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        service_environment: ITrainingServiceEnvironment,
        scheduling_policy: IQuotaShareSchedulingPolicy,
        priority: int = 1,
        job_queue_name: str | None = None,
        enabled: bool = True,
        job_state_time_limit_actions: Sequence[JobStateTimeLimitAction] = (),
        tags: Mapping[str, str] | None = None,
    ) -> None:
        queue_label = label(job_queue_name)
        # A queue with a literal name joins the ledger of any import of it already in the app;
        # a capacity that contradicts theirs fails before the queue exists.
        environment: tuple[str, str] | None = None
        if job_queue_name is not None and not is_unresolved(job_queue_name):
            stack = Stack.of(scope)
            environment = (stack.account, stack.region)
        ledger = ledger_for(
            scope,
            key=None if environment is None else queue_key(*environment, job_queue_name),
            label=queue_label,
        )
        ledger.check_creation(lambda: child_path(scope, id))
        allocation = ledger.check_capacity(
            service_environment.capacity_limits
            if isinstance(service_environment, ITrainingServiceEnvironment) else None,
            queue=lambda: child_path(scope, id),
        )
        super().__init__(scope, id, physical_name=job_queue_name)
        with errors_name_path(self):
            subject = queue_subject(queue_label)
            check_batch_name(job_queue_name, subject=subject, field="job_queue_name")
            if not isinstance(service_environment, ITrainingServiceEnvironment):
                raise QuotaConfigError(
                    subject, "service_environment", service_environment,
                    "a TrainingServiceEnvironment or one of its from_... imports",
                )
            if not isinstance(scheduling_policy, IQuotaShareSchedulingPolicy):
                raise QuotaConfigError(
                    subject, "scheduling_policy", scheduling_policy,
                    "a QuotaShareSchedulingPolicy or "
                    "QuotaShareSchedulingPolicy.from_scheduling_policy_arn(...)",
                )
            actions, checked_tags = check_queue_settings(
                priority=priority, enabled=enabled,
                job_state_time_limit_actions=job_state_time_limit_actions, tags=tags,
                subject=subject,
            )
        self.service_environment = service_environment
        self.scheduling_policy = scheduling_policy
        self.priority = priority
        self._resource = batch.CfnJobQueue(
            self,
            "Resource",
            job_queue_type=JOB_QUEUE_TYPE,
            priority=priority,
            service_environment_order=[
                batch.CfnJobQueue.ServiceEnvironmentOrderProperty(
                    order=1, service_environment=service_environment.service_environment_arn
                )
            ],
            scheduling_policy_arn=scheduling_policy.scheduling_policy_arn,
            # The CDK's physical name: PhysicalName.GENERATE_IF_NEEDED becomes a name only when
            # another environment refers to the queue.
            job_queue_name=self._physical_name if job_queue_name is not None else None,
            state="ENABLED" if enabled else "DISABLED",
            job_state_time_limit_actions=[
                batch.CfnJobQueue.JobStateTimeLimitActionProperty(
                    action=action.action,
                    max_time_seconds=action.max_time_seconds,
                    reason=action.reason,
                    state=action.state,
                )
                for action in actions
            ]
            or None,
            tags=checked_tags or None,
        )
        self._ledger = ledger
        ledger.attach(
            self,
            environment=environment,
            capacity_limits=service_environment.capacity_limits,
            allocation=allocation,
            warnings_host=self._resource,
            creates=True,
        )
        # A team stack importing this queue by its ARN token (the reference CDK passes between
        # stacks) adds its shares to this ledger: checked with these, seen by the monitoring.
        register_ledger(self, key=self.job_queue_arn, ledger=ledger)
        # Documented output keys (quota_constructs.stack_outputs): <path>Name, <path>Arn.
        self.name_output: Final = add_output(
            self, "Name", self.job_queue_name, "Name of the SageMaker training job queue"
        )
        self.arn_output: Final = add_output(
            self, "Arn", self.job_queue_arn, "ARN of the SageMaker training job queue"
        )

    def _cfn_arn(self) -> str:
        return self._resource.attr_job_queue_arn

    @staticmethod
    def from_job_queue_arn(scope: Construct, id: str, job_queue_arn: str) -> ITrainingJobQueue:
        """An existing queue whose environment capacity this app does not know: shares added
        to it are checked against each other (names, at most 20) but not against capacity.

        Every construct standing for one queue in an app — this import, another import of the
        same ARN, the queue itself when created here with a literal name — keeps one ledger:
        a share added through any of them is checked against the shares of all of them."""
        return _ImportedTrainingJobQueue(scope, id, job_queue_arn, None)

    @staticmethod
    def from_job_queue_attributes(
        scope: Construct,
        id: str,
        *,
        job_queue_arn: str,
        service_environment: ITrainingServiceEnvironment | None = None,
        capacity_limits: Sequence[CapacityLimit] | None = None,
    ) -> ITrainingJobQueue:
        """An existing queue with what this app knows of its environment's capacity, given
        either as the (imported) ``service_environment`` or as ``capacity_limits``; shares
        added to it are then checked against that capacity as on a queue created here."""
        subject = queue_subject(job_queue_arn)
        if service_environment is not None and capacity_limits is not None:
            raise QuotaConfigError(
                subject, "capacity_limits", capacity_limits,
                "None when service_environment is given (its capacity_limits are used)",
            )
        if service_environment is not None:
            if not isinstance(service_environment, ITrainingServiceEnvironment):
                raise QuotaConfigError(
                    subject, "service_environment", service_environment,
                    "a TrainingServiceEnvironment or one of its from_... imports",
                )
            capacity_limits = service_environment.capacity_limits
        return _ImportedTrainingJobQueue(scope, id, job_queue_arn, capacity_limits)


@jsii.implements(batch_refs.IJobQueueRef)
class _ImportedTrainingJobQueue(TrainingJobQueueBase, ImportedBatchResource):
    def __init__(
        self,
        scope: Construct,
        id: str,
        arn: str,
        capacity_limits: Sequence[CapacityLimit] | None,
    ) -> None:
        name, limits = check_import(
            scope, id, arn,
            resource_type=self._arn_resource_type, field="job_queue_arn", subject_of=queue_subject,
            capacity_limits=capacity_limits,
            limits_subject_of=lambda queue: f"service environment of {queue_subject(queue)}",
        )
        # Imports of one queue share its ledger: by account, region and name for a literal
        # ARN (the ARN's own), by the token itself otherwise.
        environment = arn_environment(arn)
        key = arn if environment is None else queue_key(*environment, name)
        ledger = ledger_for(scope, key=key, label=label(name))
        allocation = ledger.check_capacity(limits, queue=lambda: child_path(scope, id))
        super().__init__(scope, id, arn=arn, name=name)
        self._ledger = ledger
        ledger.attach(
            self, environment=environment, capacity_limits=limits, allocation=allocation,
            warnings_host=self,
        )
