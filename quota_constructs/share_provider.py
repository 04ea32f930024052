"""The custom-resource provider behind ``Custom::BatchQuotaShare`` resources.

A ``QuotaShareProvider`` serves every quota share given to it: two Python Lambda functions
(``on_event`` submits a change, ``is_complete`` polls until AWS Batch has applied it) behind
``aws_cdk.custom_resources.Provider``, whose waiter state machine bounds every wait by
``total_timeout``. Each stack has a default one (``QuotaShareProvider.for_stack``), created on
first use; any other can be created anywhere in a stack and handed to the shares it should serve.

Everything it deploys is its own: its IAM roles carry no AWS managed policy (unless the
functions run in a VPC, which needs AWS's VPC access policy), the handler policy may touch only
the quota shares of the job queues passed to ``manage_shares_of``, and every log group has a
retention period. The few cdk-nag findings that remain are acknowledged on the exact resource
they concern, each with the reason the permission cannot be narrowed further.

One request's whole life (``on_event``, then the waiter) is kept under CloudFormation's hour
for a custom resource, and the custom resources' ``ServiceTimeout`` is set to match
(``service_timeout``), so a slow share ends with the handler's reason rather than
CloudFormation's generic timeout.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final, TypeVar

from aws_cdk import Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import custom_resources as cr
from constructs import Construct, IConstruct

from ._l1_resources import cfn_function, default_policy
from ._library_function import library_function
from ._runtime_asset import runtime_asset_directory
from ._share_ledger import AppBookkeeping
from .model import QuotaConfigError, is_unresolved
from .nag_acknowledgments import acknowledge, acknowledge_wildcard_resource
from .wire.custom_resource import QUERY_INTERVAL_ENV, TOTAL_TIMEOUT_ENV
from .wire.share_arn import quota_shares_of

PROVIDER_ID: Final = "QuotaShareProvider"

HANDLER_MODULE: Final = "quota_constructs.runtime.quota_share_handler"
ON_EVENT_HANDLER: Final = f"{HANDLER_MODULE}.on_event"
IS_COMPLETE_HANDLER: Final = f"{HANDLER_MODULE}.is_complete"
# Children of aws_cdk.custom_resources.Provider when it has an is_complete handler.
FRAMEWORK_FUNCTION_IDS: Final = ("framework-onEvent", "framework-isComplete", "framework-onTimeout")
WAITER_ID: Final = "waiter-state-machine"

DEFAULT_TOTAL_TIMEOUT: Final = Duration.minutes(30)
DEFAULT_QUERY_INTERVAL: Final = Duration.seconds(15)
DEFAULT_LOG_RETENTION: Final = logs.RetentionDays.ONE_YEAR

# on_event submits one change and may first list the share's active jobs; throttling retries
# with backoff must fit. is_complete reads the share (and the queue snapshot) once per poll.
ON_EVENT_TIMEOUT: Final = Duration.minutes(5)
IS_COMPLETE_TIMEOUT: Final = Duration.minutes(2)
# CloudFormation waits at most one hour for a custom resource (ServiceTimeout is 1..3600 s).
# One request lives through on_event (up to its timeout), then the waiter (total_timeout, the
# last is_complete poll included) plus the framework's hand-offs: all of it must end before
# CloudFormation stops waiting, or the stack shows CloudFormation's generic timeout instead of
# the handler's reason.
CLOUDFORMATION_LIMIT: Final = Duration.hours(1)
REQUEST_MARGIN: Final = Duration.minutes(1)
"""Framework hand-offs (Lambda cold starts, starting the state machine, answering S3)."""
MAX_TOTAL_TIMEOUT: Final = Duration.seconds(
    CLOUDFORMATION_LIMIT.to_seconds()
    - ON_EVENT_TIMEOUT.to_seconds()
    - IS_COMPLETE_TIMEOUT.to_seconds()
    - REQUEST_MARGIN.to_seconds()
)
"""52 minutes: the longest ``total_timeout`` whose whole request fits in CloudFormation's hour."""
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
# These reads define no resource type: IAM accepts only "*" for them. The in-share preemption
# guard reads job priorities (DescribeServiceJob, their only source) and, for a borrowing share,
# the environment's capacity (DescribeJobQueues, DescribeServiceEnvironments).
UNSCOPED_BATCH_ACTIONS: Final = (
    "batch:DescribeJobQueues",
    "batch:DescribeServiceEnvironments",
    "batch:DescribeServiceJob",
    "batch:ListServiceJobs",
)
# Neither do X-Ray's write actions.
XRAY_WRITE_ACTIONS: Final = ("xray:PutTelemetryRecords", "xray:PutTraceSegments")
XRAY_SAMPLING_ACTIONS: Final = ("xray:GetSamplingRules", "xray:GetSamplingTargets")

VPC_ACCESS_POLICY: Final = (
    "arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"
)

_JOB_QUEUE_ARN = re.compile(
    r"^arn:aws[a-z-]*:batch:[a-z0-9-]+:\d{12}:job-queue/[A-Za-z0-9_-]{1,128}$"
)


class QuotaShareProvider(Construct):
    """Custom-resource provider giving AWS Batch quota shares a guarded lifecycle.

    Every stack has a default provider, ``QuotaShareProvider.for_stack(stack)``, which the
    quota shares of the stack use unless they are given another one. To change its settings,
    create it as ``QuotaShareProvider(stack, "QuotaShareProvider", ...)`` before the first quota
    share of the stack. Any other provider can be created with any scope and id inside a stack
    and passed to the shares it should serve (``provider=``); a share needs only
    ``manage_shares_of``, ``service_token`` and ``service_timeout``.

    :param total_timeout: longest the waiter may poll one create, update or delete. Default 30
        minutes; at most 52 minutes, so that ``on_event`` (up to 5 minutes), the waiter and the
        last poll (up to 2 minutes) end within CloudFormation's hour for a custom resource; a
        whole multiple of ``query_interval``.
    :param query_interval: time between two ``is_complete`` polls. Default 15 seconds; whole
        seconds.
    :param log_retention: how long handler, framework and waiter logs are kept. Default one year.
        The log groups are retained when the stack is deleted, so the record of a failed
        deletion outlives it.
    :param handler_layers: Lambda layers for both handlers. Default: none. Not needed for a new
        AWS Batch API: the handlers carry the AWS Batch service model of the botocore installed
        where the app is synthesized, and load it in preference to the Lambda runtime's.
    :param vpc: VPC to run every function of the provider in (handlers and framework). Default:
        none (Lambda's own network). The subnets then need a route to the AWS Batch, Lambda,
        Step Functions and CloudWatch Logs endpoints (NAT or VPC endpoints), and to S3 for the
        response to CloudFormation. Lambda's VPC access then requires AWS's
        ``AWSLambdaVPCAccessExecutionRole`` on the roles (added by aws-cdk-lib).
    :param vpc_subnets: where in ``vpc``. Default: aws-cdk-lib's choice (private subnets).
    :param security_groups: security groups of every function. Default with ``vpc``: one
        security group of the provider that allows outbound traffic only.
    :param role: role of the two handler functions. Default: a role of the provider with no AWS
        managed policy. The provider attaches its own policy (``HandlerPolicy``: the Batch
        actions on the managed queues and their shares, writing to its log group) to the given
        role; Lambda adds X-Ray's write actions for tracing. An imported immutable role must
        already allow all of these.

    Attributes: ``service_token`` and ``service_timeout`` (for ``CustomResource``: the Lambda
    that answers, and how long CloudFormation should wait for it, which covers the whole
    request), ``total_timeout``, ``query_interval``, ``on_event_function`` and
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
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        role: iam.IRole | None = None,
    ) -> None:
        _check_scope(scope, id)
        _check_timing(total_timeout, query_interval)
        if vpc is None and (vpc_subnets is not None or security_groups):
            raise QuotaConfigError(
                f"{PROVIDER_ID} {id!r}",
                "vpc_subnets" if vpc_subnets is not None else "security_groups",
                "given without vpc",
                "a vpc as well: subnets and security groups only apply to functions in a VPC",
            )
        super().__init__(scope, id)
        if id == PROVIDER_ID and Stack.is_stack(scope):
            # The stack's default provider, created directly or by for_stack: for_stack finds
            # it in the app's records.
            AppBookkeeping.of(scope).stack_records(scope).share_provider = self
        self.total_timeout: Final = total_timeout
        self.query_interval: Final = query_interval
        self.service_timeout: Final = service_timeout_for(total_timeout)
        self._managed_queues: set[str] = set()
        self._handler_layers = list(handler_layers)
        self._vpc = vpc
        self._vpc_subnets = vpc_subnets
        self.security_groups: Final[list[ec2.ISecurityGroup]] = (
            list(security_groups or []) or [
                ec2.SecurityGroup(
                    self,
                    "SecurityGroup",
                    vpc=vpc,
                    description="Quota share provider functions: no inbound; outbound to AWS APIs",
                    allow_all_outbound=True,
                )
            ]
            if vpc is not None else []
        )

        self.log_group: Final = logs.LogGroup(self, "LogGroup", retention=log_retention)

        self.handler_role: Final[iam.IRole] = role or _lambda_role(self, "HandlerRole")
        # With the user's role, the provider's statements go to a policy of its own, so that
        # what the provider adds (and acknowledges) stays on a resource the provider owns.
        self._handler_policy: Final = (
            None if role is None else iam.Policy(self, "HandlerPolicy", roles=[role])
        )
        if role is None:
            self.log_group.grant_write(self.handler_role)
        else:
            self._add_handler_statement(
                iam.PolicyStatement(
                    actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                    resources=[self.log_group.log_group_arn],
                )
            )
        self._add_handler_statement(
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
        for framework_role in (self.framework_on_event_role, self.framework_waiter_role):
            self.log_group.grant_write(framework_role)

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
            vpc=vpc,
            vpc_subnets=vpc_subnets,
            security_groups=self.security_groups or None,
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
        if vpc is not None:
            self._acknowledge_vpc_access_policy()

    @classmethod
    def for_stack(cls, stack: Stack) -> QuotaShareProvider:
        """The stack's default provider (id ``QuotaShareProvider``), created on first use."""
        records = AppBookkeeping.of(stack).stack_records(stack)
        if isinstance(records.share_provider, cls):
            return records.share_provider
        # Only to name what took the reserved id: a provider there would be in the records.
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
        shares = quota_shares_of(job_queue_arn)
        self._add_handler_statement(
            iam.PolicyStatement(actions=list(QUEUE_ACTIONS), resources=[job_queue_arn])
        )
        self._add_handler_statement(
            iam.PolicyStatement(actions=list(SHARE_ACTIONS), resources=[shares])
        )
        acknowledge_wildcard_resource(
            self._handler_policy_resource(),
            shares,
            "Quota shares are created, renamed and replaced by this custom resource at deploy "
            "time, so their names cannot be listed in advance, and AWS Batch has no "
            "quota-share-name condition key; the wildcard covers the quota shares of this one "
            "job queue only.",
        )

    # -- construction ------------------------------------------------------------------------

    def _add_handler_statement(self, statement: iam.PolicyStatement) -> None:
        if self._handler_policy is None:
            self.handler_role.add_to_principal_policy(statement)
        else:
            self._handler_policy.add_statements(statement)

    def _handler_policy_resource(self) -> IConstruct:
        if self._handler_policy is None:
            return default_policy(self.handler_role)
        return self._handler_policy.node.default_child  # type: ignore[return-value]

    def _handler_function(
        self,
        id: str,
        code: lambda_.Code,
        handler: str,
        timeout: Duration,
        environment: dict[str, str],
    ) -> lambda_.Function:
        return library_function(
            self,
            id,
            code=code,
            handler=handler,
            timeout=timeout,
            role=self.handler_role,
            log_group=self.log_group,
            environment=environment,
            layers=self._handler_layers,
            vpc=self._vpc,
            vpc_subnets=self._vpc_subnets,
            security_groups=self.security_groups or None,
            description=f"AWS Batch quota shares: {handler.rsplit('.', 1)[-1]} ({self.node.path})",
            no_dead_letter_queue=(
                "The provider framework invokes this function synchronously and reports every "
                "failure to CloudFormation; a dead-letter queue only receives failed "
                "asynchronous invocations."
            ),
        )

    def _acknowledge_handler_policy(self) -> None:
        if self._handler_policy is not None:
            # Lambda adds X-Ray's write actions (resource "*") to the given role's own default
            # policy; that finding is caused by this provider's traced functions.
            tracing_policy = self.handler_role.node.try_find_child("DefaultPolicy")
            if tracing_policy is not None and tracing_policy.node.default_child is not None:
                acknowledge(
                    tracing_policy.node.default_child,
                    "AwsSolutions-IAM5[Resource::*]",
                    "Added by aws-cdk-lib for the X-Ray tracing of the quota share provider's "
                    "handler functions: PutTraceSegments/PutTelemetryRecords define no resource "
                    "type, so IAM accepts only '*'.",
                )
        acknowledge(
            self._handler_policy_resource(),
            "AwsSolutions-IAM5[Resource::*]",
            "Only for the reads batch:ListServiceJobs, DescribeServiceJob, DescribeJobQueues "
            "and DescribeServiceEnvironments (to name the jobs a share change would preempt or "
            "terminate: their priorities, the environment's capacity) and X-Ray's "
            "PutTraceSegments/PutTelemetryRecords: these actions define "
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
            resource = cfn_function(function)
            resource.memory_size = FRAMEWORK_MEMORY_MB
            resource.tracing_config = lambda_.CfnFunction.TracingConfigProperty(mode="Active")
            function.add_to_role_policy(
                iam.PolicyStatement(actions=list(XRAY_WRITE_ACTIONS), resources=["*"])
            )
            acknowledge(
                resource,
                "Serverless-LambdaDLQ",
                "This aws-cdk-lib provider framework function catches every failure and answers "
                "CloudFormation itself; an event parked in a dead-letter queue could not be "
                "replayed to CloudFormation.",
            )
        for role in (self.framework_on_event_role, self.framework_waiter_role):
            policy = default_policy(role)
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
        waiter_policy = default_policy(waiter_role)
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

    def _acknowledge_vpc_access_policy(self) -> None:
        roles: list[iam.IRole] = [self.framework_on_event_role, self.framework_waiter_role]
        roles.append(self.handler_role)
        for role in roles:
            resource = role.node.default_child
            if resource is None:
                continue  # an imported role: nothing of it is in the template
            acknowledge(
                resource,
                f"AwsSolutions-IAM4[Policy::{VPC_ACCESS_POLICY}]",
                "Added by aws-cdk-lib to every Lambda function placed in a VPC: Lambda needs "
                "it to create and delete the functions' network interfaces, and AWS keeps it "
                "current with what Lambda's VPC networking requires.",
            )

    def _waiter_state_machine(self) -> sfn.CfnStateMachine:
        return _framework_part(
            self._provider, (WAITER_ID, "Resource"), sfn.CfnStateMachine,
            named_by=self._provider, missing=f"no waiter state machine at {WAITER_ID}/Resource",
        )

    def _framework_function(self, id: str) -> lambda_.Function:
        # Looked up by id: listing the Provider's children would cost a jsii round trip each.
        return _framework_part(
            self._provider, (id,), lambda_.Function,
            named_by=self._provider, missing=f"no framework function {id!r}",
        )

    @staticmethod
    def _waiter_role(machine: sfn.CfnStateMachine) -> iam.Role:
        return _framework_part(
            machine.node.scope, ("Role",), iam.Role,
            named_by=machine, missing="the waiter's role is not where aws-cdk-lib used to put it",
        )


_Part = TypeVar("_Part", bound=IConstruct)


def _framework_part(
    start: IConstruct | None,
    path: Sequence[str],
    kind: type[_Part],
    *,
    named_by: IConstruct,
    missing: str,
) -> _Part:
    """The ``kind`` construct at ``path`` below ``start`` in aws-cdk-lib's Provider. Every such
    lookup relies on the Provider's unpublished layout, so all of them fail the same way — the
    path of ``named_by``, what is ``missing``, and why — the day that layout changes."""
    found = start
    for id in path:
        found = found.node.try_find_child(id) if found is not None else None
    if not isinstance(found, kind):
        raise RuntimeError(f"{named_by.node.path}: {missing}; aws-cdk-lib's Provider has changed")
    return found


def service_timeout_for(total_timeout: Duration) -> Duration:
    """How long CloudFormation should wait for one request: its whole life, bounded."""
    return Duration.seconds(
        total_timeout.to_seconds()
        + ON_EVENT_TIMEOUT.to_seconds()
        + IS_COMPLETE_TIMEOUT.to_seconds()
        + REQUEST_MARGIN.to_seconds()
    )


def _check_scope(scope: Construct, id: str) -> None:
    if Stack.is_stack(scope) or _in_a_stack(scope):
        existing = scope.node.try_find_child(id)
    else:
        raise QuotaConfigError(
            f"{PROVIDER_ID} {id!r}",
            "scope",
            scope.node.path or "<app>",
            "a Stack or a construct inside one",
        )
    if existing is None:
        return
    if isinstance(existing, QuotaShareProvider) and Stack.is_stack(scope) and id == PROVIDER_ID:
        raise QuotaConfigError(
            f"{PROVIDER_ID} {id!r}",
            "scope and id",
            existing.node.path,
            "a provider created before the first quota share of the stack: the stack's default "
            "provider already exists with the default settings, created by the first QuotaShare "
            "(or by QuotaShareProvider.for_stack). Move this QuotaShareProvider(stack, "
            f"{PROVIDER_ID!r}, ...) above the first quota share, or give the provider another "
            "id and pass it to the shares it should serve (provider=...)",
        )
    raise QuotaConfigError(
        f"{PROVIDER_ID} {id!r}",
        "id",
        existing.node.path,
        "an id no other construct in the scope uses",
    )


def _in_a_stack(scope: Construct) -> bool:
    return any(Stack.is_stack(node) for node in scope.node.scopes)


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
            "custom resource after one hour, which must also cover on_event's "
            f"{ON_EVENT_TIMEOUT.to_human_string()} and the last poll's "
            f"{IS_COMPLETE_TIMEOUT.to_human_string()}) and a whole multiple of query_interval "
            f"({query_interval.to_human_string()})",
        )


def _lambda_role(scope: Construct, id: str) -> iam.Role:
    # Deliberately no AWSLambdaBasicExecutionRole: it would allow writing to every log group.
    return iam.Role(scope, id, assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
