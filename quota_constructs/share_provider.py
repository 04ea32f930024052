"""The custom-resource provider behind every ``Custom::BatchQuotaShare`` of a stack.

One ``QuotaShareProvider`` per stack (``QuotaShareProvider.for_stack``) serves every quota share in
it: two Python Lambda functions (``on_event`` submits a change, ``is_complete`` polls until AWS
Batch has applied it) behind ``aws_cdk.custom_resources.Provider``, whose waiter state machine
bounds every wait by ``total_timeout``.

Everything it deploys is its own: its IAM roles carry no AWS managed policy, the handler role may
touch only the quota shares of the job queues passed to ``manage_shares_of``, and every log group
has a retention period. The few cdk-nag findings that remain are acknowledged on the exact
resource they concern, each with the reason the permission cannot be narrowed further.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import custom_resources as cr
from constructs import Construct, IConstruct

from ._runtime_asset import runtime_asset_directory
from .model import QuotaConfigError, is_unresolved
from .nag_acknowledgments import acknowledge, acknowledge_wildcard_resource
from .runtime.wait_budget import QUERY_INTERVAL_ENV, TOTAL_TIMEOUT_ENV

PROVIDER_ID: Final = "QuotaShareProvider"

HANDLER_MODULE: Final = "quota_constructs.runtime.quota_share_handler"
ON_EVENT_HANDLER: Final = f"{HANDLER_MODULE}.on_event"
IS_COMPLETE_HANDLER: Final = f"{HANDLER_MODULE}.is_complete"
HANDLER_RUNTIME: Final = lambda_.Runtime.PYTHON_3_14
# Children of aws_cdk.custom_resources.Provider when it has an is_complete handler.
FRAMEWORK_FUNCTION_IDS: Final = ("framework-onEvent", "framework-isComplete", "framework-onTimeout")
WAITER_ID: Final = "waiter-state-machine"

DEFAULT_TOTAL_TIMEOUT: Final = Duration.minutes(30)
DEFAULT_QUERY_INTERVAL: Final = Duration.seconds(15)
DEFAULT_LOG_RETENTION: Final = logs.RetentionDays.ONE_YEAR
# CloudFormation waits at most one hour for a custom resource to answer (ServiceTimeout is
# 1..3600 s): a waiter allowed to poll longer would be cut off with CloudFormation's generic
# "did not receive a response" instead of the handler's own reason.
MAX_TOTAL_TIMEOUT: Final = Duration.hours(1)

# The handlers only call boto3, but 256 MB roughly halves the cold-start import of boto3
# compared with 128 MB (Lambda allots CPU in proportion to memory).
HANDLER_MEMORY_MB: Final = 256
# on_event submits one change and may first list the share's active jobs; throttling retries
# with backoff must fit. is_complete reads the share (and the queue snapshot) once per poll.
ON_EVENT_TIMEOUT: Final = Duration.minutes(5)
IS_COMPLETE_TIMEOUT: Final = Duration.minutes(2)
# The framework's Node.js functions only relay events: the smallest size, set explicitly so
# that it is a decision rather than Lambda's default.
FRAMEWORK_MEMORY_MB: Final = 128

# Resource types per action, from the AWS Batch service authorization reference.
# Actions on the job queue itself (CreateQuotaShare requires both the queue and the share).
QUEUE_ACTIONS: Final = (
    "batch:CreateQuotaShare",
    "batch:GetJobQueueSnapshot",
    "batch:ListQuotaShares",
)
# Actions on the queue's quota shares (the runtime tags the shares it owns and syncs tags).
SHARE_ACTIONS: Final = (
    "batch:CreateQuotaShare",
    "batch:DeleteQuotaShare",
    "batch:DescribeQuotaShare",
    "batch:ListTagsForResource",
    "batch:TagResource",
    "batch:UntagResource",
    "batch:UpdateQuotaShare",
)
# ListServiceJobs defines no resource type: IAM accepts only "*" for it.
UNSCOPED_BATCH_ACTIONS: Final = ("batch:ListServiceJobs",)
# Neither do X-Ray's write actions.
XRAY_WRITE_ACTIONS: Final = ("xray:PutTelemetryRecords", "xray:PutTraceSegments")
XRAY_SAMPLING_ACTIONS: Final = ("xray:GetSamplingRules", "xray:GetSamplingTargets")

_JOB_QUEUE_ARN = re.compile(
    r"^arn:aws[a-z-]*:batch:[a-z0-9-]+:\d{12}:job-queue/[A-Za-z0-9_-]{1,128}$"
)


class QuotaShareProvider(Construct):
    """Custom-resource provider giving the AWS Batch quota shares of a stack a guarded lifecycle.

    Obtain it with ``QuotaShareProvider.for_stack(stack)``. Create it yourself, as
    ``QuotaShareProvider(stack, "QuotaShareProvider", ...)`` before the first quota share, only to
    change a default:

    :param total_timeout: longest one create, update or delete may take, polling included.
        Default 30 minutes; at most 1 hour (CloudFormation's limit for a custom resource); a
        whole multiple of ``query_interval``.
    :param query_interval: time between two ``is_complete`` polls. Default 15 seconds; whole
        seconds.
    :param log_retention: how long handler, framework and waiter logs are kept. Default one year.
        The log groups are retained when the stack is deleted, so the record of a failed
        deletion outlives it.
    :param handler_layers: Lambda layers for both handlers. Default: none. The handlers use the
        boto3 of the Lambda runtime, which must know the quota-share API (botocore >= 1.42.72);
        if a region's runtime lags behind, add a layer carrying a newer boto3 (its
        ``python/`` directory takes precedence over the runtime's). A handler with an older
        botocore fails every request, naming the version it needs.

    Attributes: ``service_token`` (for ``CustomResource``), ``on_event_function`` and
    ``is_complete_function`` (Python 3.14, arm64, traced; they receive ``total_timeout`` and
    ``query_interval`` in seconds as ``QUOTA_SHARE_TOTAL_TIMEOUT_SECONDS`` and
    ``QUOTA_SHARE_QUERY_INTERVAL_SECONDS``), ``handler_role``, ``log_group`` (functions) and
    ``waiter_log_group`` (the waiter state machine, every event, no execution data).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        total_timeout: Duration = DEFAULT_TOTAL_TIMEOUT,
        query_interval: Duration = DEFAULT_QUERY_INTERVAL,
        log_retention: logs.RetentionDays = DEFAULT_LOG_RETENTION,
        handler_layers: Sequence[lambda_.ILayerVersion] = (),
    ) -> None:
        if not Stack.is_stack(scope) or id != PROVIDER_ID:
            # for_stack looks for exactly this child; a provider anywhere else would be a second
            # one that no quota share uses.
            raise QuotaConfigError(
                PROVIDER_ID,
                "scope and id",
                f"{scope.node.path or '<app>'}/{id}",
                f"a Stack as scope and the id {PROVIDER_ID!r}, "
                "or QuotaShareProvider.for_stack(stack)",
            )
        _check_timing(total_timeout, query_interval)
        super().__init__(scope, id)
        self.total_timeout: Final = total_timeout
        self.query_interval: Final = query_interval
        self._managed_queues: set[str] = set()
        self._handler_layers = list(handler_layers)

        self.log_group: Final = logs.LogGroup(self, "LogGroup", retention=log_retention)

        self.handler_role: Final = _lambda_role(self, "HandlerRole")
        self.log_group.grant_write(self.handler_role)
        self.handler_role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(UNSCOPED_BATCH_ACTIONS), resources=["*"])
        )
        code = lambda_.Code.from_asset(runtime_asset_directory())
        environment = {
            # The runtime then fails with its own reason shortly before the waiter gives up
            # with the framework's bare "Operation timed out".
            TOTAL_TIMEOUT_ENV: str(int(total_timeout.to_seconds())),
            QUERY_INTERVAL_ENV: str(int(query_interval.to_seconds())),
        }
        self.on_event_function: Final = self._handler_function(
            "OnEventFunction", code, ON_EVENT_HANDLER, ON_EVENT_TIMEOUT, environment
        )
        self.is_complete_function: Final = self._handler_function(
            "IsCompleteFunction", code, IS_COMPLETE_HANDLER, IS_COMPLETE_TIMEOUT, environment
        )
        self._acknowledge_handler_policy()

        # The framework needs two roles: one role for all its functions would be a circular
        # dependency between the onEvent function and the waiter state machine it starts.
        self.framework_on_event_role: Final = _lambda_role(self, "FrameworkOnEventRole")
        self.framework_waiter_role: Final = _lambda_role(self, "FrameworkCompleteAndTimeoutRole")
        for role in (self.framework_on_event_role, self.framework_waiter_role):
            self.log_group.grant_write(role)

        self.waiter_log_group: Final = logs.LogGroup(
            self,
            "WaiterLogGroup",
            # Step Functions logs through CloudWatch Logs vended delivery: a group under
            # /aws/vendedlogs/ does not grow the account's size-limited log resource policy.
            # The (generated) function name keeps the name unique per deployment, so a retained
            # group never blocks re-creating the stack.
            log_group_name=f"/aws/vendedlogs/states/{self.is_complete_function.function_name}",
            retention=log_retention,
        )
        self._provider: Final = cr.Provider(
            self,
            "Provider",
            on_event_handler=self.on_event_function,
            is_complete_handler=self.is_complete_function,
            total_timeout=total_timeout,
            query_interval=query_interval,
            framework_on_event_role=self.framework_on_event_role,
            framework_complete_and_timeout_role=self.framework_waiter_role,
            log_group=self.log_group,
            disable_waiter_state_machine_logging=False,
            waiter_state_machine_log_options=cr.LogOptions(
                destination=self.waiter_log_group,
                level=sfn.LogLevel.ALL,
                # The execution data is the CloudFormation event, whose ResponseURL lets anyone
                # holding it answer CloudFormation for the resource; the handlers log the rest.
                include_execution_data=False,
            ),
        )
        self.service_token: Final[str] = self._provider.service_token
        self._complete_framework()

    @classmethod
    def for_stack(cls, stack: Stack) -> QuotaShareProvider:
        """The stack's provider, created with the defaults on first use."""
        existing = stack.node.try_find_child(PROVIDER_ID)
        if existing is None:
            return cls(stack, PROVIDER_ID)
        if not isinstance(existing, cls):
            raise TypeError(
                f"{existing.node.path} is a {type(existing).__name__}, not a {cls.__name__}: "
                f"the construct id {PROVIDER_ID!r} is reserved for the quota share provider"
            )
        return existing

    def manage_shares_of(self, job_queue_arn: str) -> None:
        """Let the handlers manage the quota shares of this job queue. Idempotent per ARN.

        Grants the queue-level actions on the job queue and the share-level actions on
        ``{job_queue_arn}/quota-share/*``: shares are created, renamed and replaced at deploy
        time, so their names cannot be listed here.
        """
        if not is_unresolved(job_queue_arn) and not _JOB_QUEUE_ARN.match(job_queue_arn):
            raise QuotaConfigError(
                PROVIDER_ID,
                "job_queue_arn",
                job_queue_arn,
                "a job queue ARN, arn:<partition>:batch:<region>:<account>:job-queue/<name>",
            )
        # Tokens compare by what they resolve to: two tokens for the same queue are one queue.
        key = json.dumps(Stack.of(self).resolve(job_queue_arn), sort_keys=True)
        if key in self._managed_queues:
            return
        self._managed_queues.add(key)
        shares = f"{job_queue_arn}/quota-share/*"
        self.handler_role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(QUEUE_ACTIONS), resources=[job_queue_arn])
        )
        self.handler_role.add_to_principal_policy(
            iam.PolicyStatement(actions=list(SHARE_ACTIONS), resources=[shares])
        )
        acknowledge_wildcard_resource(
            _default_policy(self.handler_role),
            shares,
            "Quota shares are created, renamed and replaced by this custom resource at deploy "
            "time, so their names cannot be listed in advance, and AWS Batch has no "
            "quota-share-name condition key; the wildcard covers the quota shares of this one "
            "job queue only.",
        )

    # -- construction ------------------------------------------------------------------------

    def _handler_function(
        self,
        id: str,
        code: lambda_.Code,
        handler: str,
        timeout: Duration,
        environment: dict[str, str],
    ) -> lambda_.Function:
        function = lambda_.Function(
            self,
            id,
            code=code,
            handler=handler,
            runtime=HANDLER_RUNTIME,
            architecture=lambda_.Architecture.ARM_64,
            memory_size=HANDLER_MEMORY_MB,
            timeout=timeout,
            role=self.handler_role,
            log_group=self.log_group,
            tracing=lambda_.Tracing.ACTIVE,
            environment=environment,
            layers=self._handler_layers or None,
            description=f"AWS Batch quota shares: {handler.rsplit('.', 1)[-1]} ({self.node.path})",
        )
        acknowledge(
            _cfn_function(function),
            "Serverless-LambdaDLQ",
            "The provider framework invokes this function synchronously and reports every "
            "failure to CloudFormation; a dead-letter queue only receives failed asynchronous "
            "invocations.",
        )
        return function

    def _acknowledge_handler_policy(self) -> None:
        acknowledge(
            _default_policy(self.handler_role),
            "AwsSolutions-IAM5[Resource::*]",
            "Only for batch:ListServiceJobs (to name the jobs a share change would preempt or "
            "terminate) and X-Ray's PutTraceSegments/PutTelemetryRecords: these actions define "
            "no resource type, so IAM accepts only '*'. Every other action is scoped to a job "
            "queue or its quota shares.",
        )

    def _complete_framework(self) -> None:
        """Tracing, explicit memory and scoped acknowledgments for the framework's resources.

        ``custom_resources.Provider`` exposes none of these settings, so they are set on its
        CloudFormation resources. Tracing end to end (CloudFormation -> onEvent -> waiter ->
        isComplete -> handler) shows where a slow deployment spends its time.
        """
        framework_functions = [
            self._framework_function(id) for id in FRAMEWORK_FUNCTION_IDS
        ]
        for function in framework_functions:
            cfn_function = _cfn_function(function)
            cfn_function.memory_size = FRAMEWORK_MEMORY_MB
            cfn_function.tracing_config = lambda_.CfnFunction.TracingConfigProperty(mode="Active")
            function.add_to_role_policy(
                iam.PolicyStatement(actions=list(XRAY_WRITE_ACTIONS), resources=["*"])
            )
            acknowledge(
                cfn_function,
                "Serverless-LambdaDLQ",
                "This aws-cdk-lib provider framework function catches every failure and answers "
                "CloudFormation itself; an event parked in a dead-letter queue could not be "
                "replayed to CloudFormation.",
            )
        for role in (self.framework_on_event_role, self.framework_waiter_role):
            policy = _default_policy(role)
            for handler in (self.on_event_function, self.is_complete_function):
                acknowledge_wildcard_resource(
                    policy,
                    f"{handler.function_arn}:*",
                    "Added by the aws-cdk-lib provider framework (grantInvoke) to invoke this "
                    "construct's own handler function and its versions; it covers that one "
                    "function only.",
                    same_stack=True,
                )
            acknowledge(
                policy,
                "AwsSolutions-IAM5[Resource::*]",
                "Only for X-Ray's PutTraceSegments/PutTelemetryRecords, which define no "
                "resource type, so IAM accepts only '*'.",
            )

        machine = self._waiter_state_machine()
        machine.tracing_configuration = sfn.CfnStateMachine.TracingConfigurationProperty(
            enabled=True
        )
        waiter_role = self._waiter_role(machine)
        waiter_role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=[*XRAY_WRITE_ACTIONS, *XRAY_SAMPLING_ACTIONS], resources=["*"]
            )
        )
        waiter_policy = _default_policy(waiter_role)
        for function in framework_functions:
            if function.role is self.framework_waiter_role:
                acknowledge_wildcard_resource(
                    waiter_policy,
                    f"{function.function_arn}:*",
                    "Added by the aws-cdk-lib provider framework (grantInvoke) for the waiter to "
                    "invoke its own framework function and its versions; it covers that one "
                    "function only.",
                    same_stack=True,
                )
        acknowledge(
            waiter_policy,
            "AwsSolutions-IAM5[Resource::*]",
            "Only for Step Functions log delivery (logs:CreateLogDelivery and related actions, "
            "added by the aws-cdk-lib provider framework when waiter logging is on) and X-Ray "
            "tracing: these actions define no resource type, so IAM accepts only '*'.",
        )

    def _waiter_state_machine(self) -> sfn.CfnStateMachine:
        waiter = self._provider.node.try_find_child(WAITER_ID)
        machine = waiter.node.try_find_child("Resource") if waiter is not None else None
        if not isinstance(machine, sfn.CfnStateMachine):
            raise RuntimeError(
                f"{self._provider.node.path}: no waiter state machine at {WAITER_ID}/Resource; "
                "aws-cdk-lib's Provider has changed"
            )
        return machine

    def _framework_function(self, id: str) -> lambda_.Function:
        # Looked up by id: listing the Provider's children would cost a jsii round trip each.
        function = self._provider.node.try_find_child(id)
        if not isinstance(function, lambda_.Function):
            raise RuntimeError(
                f"{self._provider.node.path}: no framework function {id!r}; aws-cdk-lib's "
                "Provider has changed"
            )
        return function

    @staticmethod
    def _waiter_role(machine: sfn.CfnStateMachine) -> iam.Role:
        waiter = machine.node.scope
        role = waiter.node.try_find_child("Role") if waiter is not None else None
        if not isinstance(role, iam.Role):
            raise RuntimeError(
                f"{machine.node.path}: the waiter's role is not where aws-cdk-lib used to put "
                "it; aws-cdk-lib's Provider has changed"
            )
        return role


def _check_timing(total_timeout: Duration, query_interval: Duration) -> None:
    interval = query_interval.to_seconds(integral=False)
    total = total_timeout.to_seconds(integral=False)
    if interval < 1 or interval != int(interval):
        raise QuotaConfigError(
            PROVIDER_ID,
            "query_interval",
            query_interval.to_human_string(),
            "whole seconds, at least 1 second",
        )
    if total > MAX_TOTAL_TIMEOUT.to_seconds() or total < interval or total % interval:
        raise QuotaConfigError(
            PROVIDER_ID,
            "total_timeout",
            total_timeout.to_human_string(),
            f"at most {MAX_TOTAL_TIMEOUT.to_human_string()} (CloudFormation stops waiting for a "
            "custom resource after one hour) and a whole multiple of query_interval "
            f"({query_interval.to_human_string()})",
        )


def _lambda_role(scope: Construct, id: str) -> iam.Role:
    # Deliberately no AWSLambdaBasicExecutionRole: it would allow writing to every log group.
    return iam.Role(scope, id, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))


def _cfn_function(function: lambda_.Function) -> lambda_.CfnFunction:
    cfn_function = function.node.default_child
    if not isinstance(cfn_function, lambda_.CfnFunction):
        raise RuntimeError(f"{function.node.path} has no CfnFunction")
    return cfn_function


def _default_policy(role: iam.Role) -> IConstruct:
    """The CloudFormation resource of the role's default policy (cdk-nag reports on it)."""
    policy = role.node.try_find_child("DefaultPolicy")
    resource = policy.node.try_find_child("Resource") if policy is not None else None
    if resource is None:
        raise RuntimeError(f"{role.node.path} has no default policy yet")
    return resource
