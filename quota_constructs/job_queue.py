"""The SageMaker Training job queue whose capacity quota shares divide."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property

import jsii
from aws_cdk import Annotations, Aspects, IAspect, IResource, RemovalPolicy, Resource
from aws_cdk import aws_batch as batch
from aws_cdk import aws_iam as iam
from constructs import Construct, IConstruct
from typing_extensions import Protocol, runtime_checkable

from ._construct_props import (
    CONSTRUCT_PATH,
    check_batch_name,
    check_flag,
    check_import,
    errors_name_path,
    label,
    name_from_arn,
    with_path,
)
from .model import (
    CapacityLimit,
    JobStateTimeLimitAction,
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    check_queue_priority,
    check_share_set,
    queue_subject,
    validate_tags,
    validate_time_limit_actions,
)
from .quota_share import QuotaShare, ShareProvisioning
from .scheduling_policy import IQuotaSharePolicy
from .service_environment import ITrainingServiceEnvironment

JOB_QUEUE_TYPE = "SAGEMAKER_TRAINING"
ALLOCATION_WARNING_ID = "quota_constructs:allocation"
"""Id of the synth warnings about how a queue's capacity is divided (over-allocation, capacity
no share owns); acknowledge them with ``Annotations.of(queue).acknowledge_warning(...)``."""


@runtime_checkable
class ITrainingJobQueue(IResource, Protocol):
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
        """The shares this app declares on the queue, in the order they were added."""
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
        adopt_existing: bool = False,
        allow_preemption_on_shrink: bool = False,
        terminate_active_jobs_on_delete: bool = False,
        removal_policy: RemovalPolicy = RemovalPolicy.DESTROY,
    ) -> QuotaShare:
        """Add a quota share to this queue (a child construct of the queue with ``id``)."""
        ...

    def grant_observe(self, grantee: iam.IGrantable) -> iam.Grant:
        """Read-only access to the queue's service jobs, snapshot and quota shares."""
        ...

    def _register_quota_share(self, spec: QuotaShareSpec) -> None:
        """Internal: called by :class:`QuotaShare` to check a new share against the queue."""
        ...


class _TrainingJobQueueBase(Resource):
    """What created and imported queues share: the share ledger, its checks and warnings,
    ``add_quota_share`` and ``grant_observe``."""

    def _start_ledger(
        self,
        *,
        label: str,
        capacity_limits: tuple[CapacityLimit, ...] | None,
        warnings_host: IConstruct,
    ) -> None:
        """Start recording shares; ``label`` names the queue in messages."""
        self._label = label
        self._capacity_limits = capacity_limits
        self._specs: list[QuotaShareSpec] = []
        self._allocation: QuotaAllocation | None = None
        if capacity_limits is not None:
            self._allocation = QuotaAllocation.check(
                environment_limits=capacity_limits, shares=(), queue_name=label
            )
            # Warnings describe the finished allocation, which exists only once every share
            # (including those declared in other stacks) has been added; an aspect runs at
            # synth time, after construction, so each warning is reported once and only if
            # it still holds. It is hosted on a leaf where there is one (the L1), because
            # every node it visits is a call from the jsii runtime back into Python.
            Aspects.of(warnings_host).add(_AllocationWarnings(self, warnings_host))

    @property
    def capacity_limits(self) -> tuple[CapacityLimit, ...] | None:
        return self._capacity_limits

    @property
    def quota_share_specs(self) -> tuple[QuotaShareSpec, ...]:
        return tuple(self._specs)

    @property
    def allocation(self) -> QuotaAllocation | None:
        allocation = self._allocation
        if allocation is None or not any(CONSTRUCT_PATH in w for w in allocation.warnings):
            return allocation
        return replace(allocation, warnings=tuple(with_path(w, self) for w in allocation.warnings))

    @property
    def job_queue_arn(self) -> str:
        raise NotImplementedError

    @property
    def job_queue_name(self) -> str:
        raise NotImplementedError

    def add_quota_share(
        self,
        id: str,
        *,
        spec: QuotaShareSpec,
        provisioning: ShareProvisioning = ShareProvisioning.CUSTOM_RESOURCE,
        adopt_existing: bool = False,
        allow_preemption_on_shrink: bool = False,
        terminate_active_jobs_on_delete: bool = False,
        removal_policy: RemovalPolicy = RemovalPolicy.DESTROY,
    ) -> QuotaShare:
        return QuotaShare(
            self,
            id,
            job_queue=self,
            spec=spec,
            provisioning=provisioning,
            adopt_existing=adopt_existing,
            allow_preemption_on_shrink=allow_preemption_on_shrink,
            terminate_active_jobs_on_delete=terminate_active_jobs_on_delete,
            removal_policy=removal_policy,
        )

    def grant_observe(self, grantee: iam.IGrantable) -> iam.Grant:
        queue_arn = self.job_queue_arn
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
                    resource_arns=[f"{queue_arn}/quota-share/*"],
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

    def _register_quota_share(self, spec: QuotaShareSpec) -> None:
        shares = (*self._specs, spec)
        with errors_name_path(self):
            if self._capacity_limits is not None:
                allocation: QuotaAllocation | None = QuotaAllocation.check(
                    environment_limits=self._capacity_limits, shares=shares,
                    queue_name=self._label,
                )
            else:
                check_share_set(shares, subject=queue_subject(self._label))
                allocation = None
        # Recorded only once checked, so a rejected share leaves the ledger as it was.
        self._specs.append(spec)
        self._allocation = allocation

    def _report_allocation(self) -> None:
        allocation = self.allocation
        if allocation is None:
            return
        for warning in allocation.warnings:
            Annotations.of(self).add_warning_v2(ALLOCATION_WARNING_ID, warning)


@jsii.implements(IAspect)
class _AllocationWarnings:
    def __init__(self, queue: _TrainingJobQueueBase, host: IConstruct) -> None:
        self._queue = queue
        self._host = host

    def visit(self, node: IConstruct) -> None:
        if node is self._host:
            self._queue._report_allocation()


class TrainingJobQueue(_TrainingJobQueueBase):
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
    :param job_queue_name: physical name. Default: generated by CloudFormation, so a
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
        scheduling_policy: IQuotaSharePolicy,
        priority: int = 1,
        job_queue_name: str | None = None,
        enabled: bool = True,
        job_state_time_limit_actions: Sequence[JobStateTimeLimitAction] = (),
        tags: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(scope, id, physical_name=job_queue_name)
        queue_label = label(job_queue_name)
        with errors_name_path(self):
            subject = queue_subject(queue_label)
            check_batch_name(job_queue_name, subject=subject, field="job_queue_name")
            if not isinstance(service_environment, ITrainingServiceEnvironment):
                raise QuotaConfigError(
                    subject, "service_environment", service_environment,
                    "a TrainingServiceEnvironment or one of its from_... imports",
                )
            if not isinstance(scheduling_policy, IQuotaSharePolicy):
                raise QuotaConfigError(
                    subject, "scheduling_policy", scheduling_policy,
                    "a QuotaSharePolicy or QuotaSharePolicy.from_scheduling_policy_arn(...)",
                )
            check_queue_priority(priority, subject=subject)
            check_flag(enabled, subject=subject, field="enabled")
            actions = validate_time_limit_actions(job_state_time_limit_actions, subject=subject)
            checked_tags = validate_tags(tags or {}, subject=subject)
        self._given_name = job_queue_name
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
            job_queue_name=job_queue_name,
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
        self._start_ledger(
            label=queue_label,
            capacity_limits=service_environment.capacity_limits,
            warnings_host=self._resource,
        )

    @cached_property
    def job_queue_arn(self) -> str:
        # The plain attribute: a queue and its shares share one account and region, so there
        # is no cross-environment reference for CDK to rewrite.
        return self._resource.attr_job_queue_arn

    @cached_property
    def job_queue_name(self) -> str:
        if self._given_name is not None:
            return self._given_name
        return name_from_arn(self, self._resource.attr_job_queue_arn)

    @staticmethod
    def from_job_queue_arn(scope: Construct, id: str, job_queue_arn: str) -> ITrainingJobQueue:
        """An existing queue whose environment capacity this app does not know: shares added
        to it are checked against each other (names, at most 20) but not against capacity."""
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


class _ImportedTrainingJobQueue(_TrainingJobQueueBase):
    def __init__(
        self,
        scope: Construct,
        id: str,
        arn: str,
        capacity_limits: Sequence[CapacityLimit] | None,
    ) -> None:
        name, limits = check_import(
            scope, id, arn,
            resource_type="job-queue", field="job_queue_arn", subject_of=queue_subject,
            capacity_limits=capacity_limits,
            limits_subject_of=lambda queue: f"service environment of {queue_subject(queue)}",
        )
        super().__init__(scope, id, environment_from_arn=arn)
        self._arn = arn
        self._name = name
        self._start_ledger(label=label(name), capacity_limits=limits, warnings_host=self)

    @property
    def job_queue_arn(self) -> str:
        return self._arn

    @cached_property
    def job_queue_name(self) -> str:
        return self._name if self._name is not None else name_from_arn(self, self._arn)
