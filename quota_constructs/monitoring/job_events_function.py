"""The Lambda that tells owners of this queue's failed and blocked jobs, the EventBridge rules
that feed it, and how every event function (this one and the stack's preemptions function) is
built: invocation retries, timeout, the DescribeServiceJob grant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from constructs import Construct

from .._l1_resources import default_policy
from ..wire.monitoring_contract import (
    EVENT_SOURCE,
    JOB_EVENTS_HANDLER,
    JOB_STARTED_STATUSES,
    QUEUE_BLOCKED_DETAIL_TYPE,
    STATE_CHANGE_DETAIL_TYPE,
    STATE_CHANGE_STATUSES,
)
from ._function import (
    FunctionSettings,
    Invocation,
    QueueFunctionProps,
    Retries,
    acknowledge_xray,
    allow_publishing_to_owner,
    monitoring_function,
)

# DescribeServiceJob defines no resource type: IAM accepts only "*" for it.
DESCRIBE_ACTIONS: Final = ("batch:DescribeServiceJob",)

EVENT_INVOCATION: Final = Invocation(
    timeout=Duration.seconds(30),
    # EventBridge retries delivery to Lambda with backoff; past this the event goes to the DLQ.
    delivery=Retries(attempts=8, max_age=Duration.hours(2)),
    # Lambda retries a failed asynchronous invocation (a throttled Batch or SNS call) this
    # often; the handler is idempotent per event, so a retry never notifies twice for one
    # preemption.
    invoke=Retries(attempts=2, max_age=Duration.hours(1)),
)
DEFAULT_CONCURRENCY: Final = 2
"""Reserved concurrency: a preemption storm queues invocations (Lambda keeps asynchronous
events up to ``EVENT_INVOCATION.invoke.max_age``) instead of calling DescribeServiceJob
hundreds of times at once and throttling the account's Batch API."""


def event_function(
    scope: Construct,
    settings: FunctionSettings,
    *,
    code: lambda_.Code,
    handler: str,
    description: str,
    environment: Mapping[str, str],
    concurrency: int | None,
    describe_purpose: str,
) -> tuple[lambda_.Function, iam.Role, logs.LogGroup]:
    """A monitoring function fed by EventBridge that looks jobs up (``DescribeServiceJob``, for
    ``describe_purpose``); returns the function, its role and its log group."""
    function, role, log_group = monitoring_function(
        scope, settings, EVENT_INVOCATION, code=code, handler=handler, description=description,
        environment=environment, reserved_concurrency=concurrency,
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=list(DESCRIBE_ACTIONS), resources=["*"])
    )
    acknowledge_xray(
        default_policy(role),
        f"batch:DescribeServiceJob (read-only, {describe_purpose}) defines no resource type "
        "either.",
    )
    return function, role, log_group


def service_job_rule(
    scope: Construct,
    id: str,
    function: lambda_.IFunction,
    settings: FunctionSettings,
    *,
    description: str,
    detail_types: Sequence[str],
    detail: Mapping[str, Any] | None = None,
) -> events.Rule:
    """A rule delivering AWS Batch's service-job events of ``detail_types`` (and ``detail``) to
    an event function, as :data:`EVENT_INVOCATION` says; every event rule of the monitoring is
    one."""
    return events.Rule(
        scope,
        id,
        description=description,
        event_pattern=events.EventPattern(
            source=[EVENT_SOURCE], detail_type=list(detail_types), detail=detail
        ),
        targets=[EVENT_INVOCATION.target(function, settings)],
    )


class JobEventsFunction(Construct):
    """Receives this queue's service-job events and tells the shares' owners.

    Rules (each delivering with retries, then to the monitor's dead-letter queue):

    - ``StateChangeRule``: ``Batch Service Job State Change`` events whose ``detail.jobQueue``
      is this queue's ARN and whose ``detail.status`` is FAILED; other queues' jobs and other
      statuses never reach the function.
    - ``QueueBlockedRule``: ``Batch Service Job Queue Blocked`` events of this queue
      (``detail.jobQueue``): a job at the front that can never start.
    - ``JobStartedRule`` (added by :meth:`watch_starts`, once a monitored share declares a wait
      target): ``Batch Service Job State Change`` events of this queue whose ``detail.status``
      is RUNNING, so each started job's wait reaches ``WaitTime``.
    Preemption events carry no queue: they go to the stack's one preemptions function
    (:class:`StackPreemptions`), which looks each job up once for every queue the stack
    monitors.

    The function runs at most ``concurrency`` invocations at once (reserved concurrency;
    None = unreserved, for accounts whose concurrency quota cannot spare it). ``statuses``:
    the state changes the rule delivers (FAILED; with a job ledger, SUCCEEDED too).

    The role (``Role``) may describe service jobs and publish to ``owner_topics``; it never
    terminates a job (budgets are enforced on preemptions, by the stack's preemptions function).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        props: QueueFunctionProps,
        owner_topics: Mapping[str, sns.ITopic],
        concurrency: int | None = DEFAULT_CONCURRENCY,
        statuses: Sequence[str] = STATE_CHANGE_STATUSES,
    ) -> None:
        super().__init__(scope, id)
        self.function, self.role, self.log_group = event_function(
            self,
            props.settings,
            code=props.code,
            handler=JOB_EVENTS_HANDLER,
            description=f"AWS Batch quota shares: job events to owners ({self.node.path})",
            environment=props.environment,
            concurrency=concurrency,
            describe_purpose="to find a failed or blocked job's queue and share",
        )
        self._published = 0
        for topic in owner_topics.values():
            self.allow_publishing(topic)
        self.state_change_rule = service_job_rule(
            self, "StateChangeRule", self.function, props.settings,
            description=f"Failed service jobs of this queue only ({self.node.path})",
            detail_types=[STATE_CHANGE_DETAIL_TYPE],
            # The documented sample event carries the queue's ARN in detail.jobQueue; only
            # the statuses an owner is told about invoke the function.
            detail={"jobQueue": [props.job_queue_arn], "status": list(statuses)},
        )
        self.queue_blocked_rule = service_job_rule(
            self, "QueueBlockedRule", self.function, props.settings,
            description=f"Jobs blocking this queue ({self.node.path})",
            detail_types=[QUEUE_BLOCKED_DETAIL_TYPE],
            # The documented sample carries the queue's ARN in detail.jobQueue.
            detail={"jobQueue": [props.job_queue_arn]},
        )
        self._props = props
        self.job_started_rule: events.Rule | None = None
        """The rule delivering this queue's jobs starting; None until :meth:`watch_starts`."""

    def watch_starts(self) -> events.Rule:
        """Deliver this queue's jobs becoming RUNNING (``JobStartedRule``, created once): one
        invocation and one ``DescribeServiceJob`` per start, whatever the backlog. The event
        names the queue but (documented) not the share, so every start of the queue comes;
        the function publishes the waits of the shares that declare a target."""
        if self.job_started_rule is None:
            self.job_started_rule = service_job_rule(
                self, "JobStartedRule", self.function, self._props.settings,
                description=f"Jobs of this queue starting, for their waits ({self.node.path})",
                detail_types=[STATE_CHANGE_DETAIL_TYPE],
                detail={"jobQueue": [self._props.job_queue_arn],
                        "status": list(JOB_STARTED_STATUSES)},
            )
        return self.job_started_rule

    def allow_publishing(self, topic: sns.ITopic) -> None:
        """Let the function publish to an owner's topic (and use its key)."""
        allow_publishing_to_owner(self.role, topic, first=self._published == 0)
        self._published += 1
