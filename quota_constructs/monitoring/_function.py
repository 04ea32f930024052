"""How the monitoring Lambdas are built: own role, own log group, the library's function
(:mod:`quota_constructs._library_function`), failures to the monitor's dead-letter queue; the
grants both event functions need; and when the late parts of a monitor (those needing every
share of the app) are resolved: at synthesis."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import jsii
from aws_cdk import Duration, IAspect, IStableStringProducer, Stack
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct

from .._l1_resources import default_policy
from .._library_function import library_function
from ..nag_acknowledgments import acknowledge, acknowledge_wildcard_resource

XRAY_WRITE_ACTIONS: Final = ("xray:PutTelemetryRecords", "xray:PutTraceSegments")
TERMINATE_ACTIONS: Final = ("batch:TerminateServiceJob",)


@dataclass(frozen=True)
class FunctionSettings:
    """What a monitor gives every function it deploys (the stack's preemptions function takes
    its first monitor's): where failures go, how long logs are kept, which layers are added."""

    dead_letter_queue: sqs.IQueue
    log_retention: logs.RetentionDays
    layers: Sequence[lambda_.ILayerVersion] = ()


@dataclass(frozen=True)
class QueueFunctionProps:
    """What a monitor gives each function of its queue: shared by the metrics and the
    job-events function, which differ only in what they add to it."""

    code: lambda_.Code
    job_queue_arn: str
    environment: Mapping[str, str]
    settings: FunctionSettings


@dataclass(frozen=True)
class Invocation:
    """How one kind of monitoring function runs: its ``timeout``, EventBridge's ``delivery``
    retries (then the dead-letter queue) and Lambda's retries of a failed asynchronous
    ``invoke`` (then the on-failure destination); one value per kind, so that a rule and its
    function are tuned together."""

    timeout: Duration
    delivery: Retries
    invoke: Retries

    def target(
        self, function: lambda_.IFunction, settings: FunctionSettings
    ) -> targets.LambdaFunction:
        """A rule's delivery to ``function``: retried as :attr:`delivery` says, then recorded
        in the monitor's dead-letter queue."""
        return targets.LambdaFunction(
            function,
            retry_attempts=self.delivery.attempts,
            max_event_age=self.delivery.max_age,
            dead_letter_queue=settings.dead_letter_queue,
        )


@dataclass(frozen=True)
class Retries:
    """How often a failed delivery or invocation is tried again, and for how long."""

    attempts: int
    max_age: Duration


def monitoring_function(
    scope: Construct,
    settings: FunctionSettings,
    invocation: Invocation,
    *,
    code: lambda_.Code,
    handler: str,
    description: str,
    environment: Mapping[str, str],
    reserved_concurrency: int | None = None,
) -> tuple[lambda_.Function, iam.Role, logs.LogGroup]:
    """The function (child ``Resource``, so it is the construct's default child), its role
    (``Role``) and its log group (``LogGroup``).

    The role carries no AWS managed policy (AWSLambdaBasicExecutionRole would allow writing to
    every log group); the caller grants exactly what the handler calls.
    """
    role = iam.Role(scope, "Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    log_group = logs.LogGroup(scope, "LogGroup", retention=settings.log_retention)
    log_group.grant_write(role)
    function = library_function(
        scope,
        "Resource",
        code=code,
        handler=handler,
        timeout=invocation.timeout,
        role=role,
        log_group=log_group,
        environment=environment,
        layers=settings.layers,
        description=description,
        retry_attempts=invocation.invoke.attempts,
        max_event_age=invocation.invoke.max_age,
        on_failure=_SendOnlyQueueDestination(settings.dead_letter_queue),
        reserved_concurrent_executions=reserved_concurrency,
        no_dead_letter_queue=(
            "Failed asynchronous invocations go to this monitor's SQS queue as an on-failure "
            "destination, whose record carries the request, the response and the error; a "
            "dead-letter queue as well would receive every failure twice."
        ),
    )
    return function, role, log_group


@jsii.implements(lambda_.IDestination)
class _SendOnlyQueueDestination:
    """An SQS on-failure destination granting only ``sqs:SendMessage``: Lambda sends the failure
    record and nothing else (``aws_lambda_destinations.SqsDestination`` also grants
    ``GetQueueAttributes`` and ``GetQueueUrl``, which delivery does not use)."""

    def __init__(self, queue: sqs.IQueue) -> None:
        self._queue = queue

    def bind(
        self, scope: Construct, fn: lambda_.IFunction, *, type: lambda_.DestinationType
    ) -> lambda_.DestinationConfig:
        fn.add_to_role_policy(
            iam.PolicyStatement(actions=["sqs:SendMessage"], resources=[self._queue.queue_arn])
        )
        return lambda_.DestinationConfig(destination=self._queue.queue_arn)


def acknowledge_xray(policy: IConstruct, extra: str = "") -> None:
    """X-Ray's write actions define no resource type: IAM accepts only '*' for them."""
    acknowledge(
        policy,
        "AwsSolutions-IAM5[Resource::*]",
        "X-Ray's PutTraceSegments/PutTelemetryRecords define no resource type, so IAM accepts "
        "only '*'" + (f"; {extra}" if extra else "."),
    )


def allow_publishing_to_owner(role: iam.IRole, topic: sns.ITopic, *, first: bool) -> None:
    """Let an event function's role publish to an owner's topic (and use its key); ``first``:
    the first topic of this role, whose grant brings the KMS data-key finding to acknowledge."""
    topic.grant_publish(role)
    if first:
        acknowledge(
            default_policy(role),
            "AwsSolutions-IAM5[Action::kms:GenerateDataKey*]",
            "Added by sns.Topic.grant_publish for an owner topic's KMS key: publishing to "
            "an encrypted topic needs a data key (GenerateDataKey and its no-plaintext "
            "variant), on that topic's key only.",
        )


def allow_terminating_service_jobs(role: iam.IRole, scope: Construct, reason: str) -> None:
    """``batch:TerminateServiceJob`` on the account's and region's service jobs: they exist
    only at run time and AWS Batch has no job-queue condition key, so no narrower resource
    exists; ``reason`` says which opt-in asked for it."""
    service_jobs = Stack.of(scope).format_arn(
        service="batch", resource="service-job", resource_name="*"
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=list(TERMINATE_ACTIONS), resources=[service_jobs])
    )
    acknowledge_wildcard_resource(
        default_policy(role),
        service_jobs,
        f"{reason} Service jobs exist only at run time and AWS Batch has no job-queue "
        "condition key, so any service job of this account and region.",
    )


@jsii.implements(IStableStringProducer)
class LazyText:
    """A ``Lazy.string`` producer: the text is computed when the template is written."""

    def __init__(self, produce: Callable[[], str]) -> None:
        self._produce = produce

    def produce(self) -> str:
        return self._produce()


@jsii.implements(IAspect)
class AtSynthesis:
    """An aspect that calls ``callback`` once it visits ``target``: when the app is synthesized,
    after every construct was declared and before the template is written."""

    def __init__(self, target: IConstruct, callback: Callable[[], None]) -> None:
        self._target = target
        self._callback = callback

    def visit(self, node: IConstruct) -> None:
        if node is self._target:
            self._callback()
