"""One function per stack for the account's preemption events, for every queue monitored there.

Preemption events carry no queue and no share, so EventBridge cannot route them to the monitor
of the job's queue: every preemption in the account and region must be looked up
(``DescribeServiceJob``) to learn its queue. With a function per monitored queue, N queues
would cost N lookups of every preemption. This construct, created once per stack by the first
:class:`QuotaShareMonitoring` with job events, receives them all, looks each job up once and
acts as the monitor of the job's queue would (its owners, its budgets, its namespace); jobs of
queues no monitor in the stack watches are ignored. To pay one lookup per preemption across
stacks too, watch the account's queues from one stack (a monitor accepts an imported queue).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from aws_cdk import Aspects, Lazy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .._share_ledger import AppBookkeeping
from ..wire.monitoring_contract import (
    DECLARATION_FILE_ENV,
    ENFORCE_BUDGET_ENV,
    EVENT_SOURCE,
    JOB_QUEUE_ARN_ENV,
    JOB_QUEUE_NAME_ENV,
    METRIC_NAMESPACE_ENV,
    MONITORED_QUEUES_ENV,
    OWNER_TOPICS_ENV,
    PREEMPTION_COMPLETED_DETAIL_TYPE,
    PREEMPTION_STARTED_DETAIL_TYPE,
    PREEMPTIONS_HANDLER,
)
from ._asset import LateMonitoringCode, asset_directory_with
from ._function import (
    AtSynthesis,
    LazyText,
    allow_publishing_to_owner,
    allow_terminating_service_jobs,
)
from .job_events_function import DELIVERY_MAX_AGE, DELIVERY_RETRIES, event_function

CONSTRUCT_ID: Final = "QuotaSharePreemptions"
DECLARATIONS_DIRECTORY: Final = "quota_monitor_declarations"


@dataclass(frozen=True)
class MonitoredQueue:
    """What one monitor hands the stack's preemptions function, read at synthesis."""

    job_queue_arn: str
    job_queue_name: str
    namespace: str
    enforce_interruption_budget: bool
    resolve: Callable[[], tuple[str, Mapping[str, sns.ITopic]]]
    """The monitor's final declaration (JSON) and owner topics, once its shares are resolved."""


class StackPreemptions(Construct):
    """The stack's preemption function (``Resource``, role ``Role``, log group ``LogGroup``) and
    its rule (``PreemptionRule``: ``Batch Service Job Preemption Started`` / ``Completed``).

    Its settings (log retention, layers, reserved concurrency, dead-letter queue) are those of
    the first monitor that created it. Its role may describe service jobs, publish to the
    monitored owners' topics and, only when a monitor opted in to
    ``enforce_interruption_budget``, terminate service jobs.
    """

    @classmethod
    def of_stack(
        cls,
        scope: Construct,
        *,
        dead_letter_queue: sqs.IQueue,
        log_retention: logs.RetentionDays,
        layers: Sequence[lambda_.ILayerVersion],
        concurrency: int | None,
    ) -> StackPreemptions:
        stack = Stack.of(scope)
        records = AppBookkeeping.of(stack).stack_records(stack)
        if isinstance(records.preemptions, StackPreemptions):
            return records.preemptions
        created = cls(stack, CONSTRUCT_ID, dead_letter_queue=dead_letter_queue,
                      log_retention=log_retention, layers=layers, concurrency=concurrency)
        records.preemptions = created
        return created

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        dead_letter_queue: sqs.IQueue,
        log_retention: logs.RetentionDays,
        layers: Sequence[lambda_.ILayerVersion],
        concurrency: int | None,
    ) -> None:
        super().__init__(scope, id)
        self._queues: list[MonitoredQueue] = []
        self._entries: list[dict[str, Any]] = []
        self._code = LateMonitoringCode(self)
        self.function, self.role, self.log_group = event_function(
            self,
            code=self._code.code,
            handler=PREEMPTIONS_HANDLER,
            description=f"AWS Batch quota shares: preemptions to owners ({self.node.path})",
            environment={MONITORED_QUEUES_ENV: Lazy.string(LazyText(self._environment))},
            log_retention=log_retention,
            dead_letter_queue=dead_letter_queue,
            layers=layers,
            concurrency=concurrency,
            describe_purpose="to find a preempted job's queue and share",
        )
        self._code.used_by(self.function)
        self.preemption_rule = events.Rule(
            self,
            "PreemptionRule",
            description=f"Service-job preemptions, each looked up once ({self.node.path})",
            event_pattern=events.EventPattern(
                source=[EVENT_SOURCE],
                detail_type=[PREEMPTION_STARTED_DETAIL_TYPE, PREEMPTION_COMPLETED_DETAIL_TYPE],
            ),
            targets=[targets.LambdaFunction(
                self.function,
                retry_attempts=DELIVERY_RETRIES,
                max_event_age=DELIVERY_MAX_AGE,
                dead_letter_queue=dead_letter_queue,
            )],
        )
        self._published: list[sns.ITopic] = []
        self._terminates = False
        Aspects.of(self).add(AtSynthesis(self, self.resolve))

    @property
    def monitored_queues(self) -> tuple[MonitoredQueue, ...]:
        return tuple(self._queues)

    def register(self, queue: MonitoredQueue) -> None:
        self._queues.append(queue)

    def resolve(self) -> None:
        """At synthesis: every registered monitor's final shares and topics, staged together."""
        if self._code.staged:
            return
        files: list[tuple[str, str]] = []
        for index, queue in enumerate(self._queues):
            declaration, topics = queue.resolve()
            path = f"{DECLARATIONS_DIRECTORY}/{index}.json"
            files.append((path, declaration))
            self._entries.append({
                JOB_QUEUE_ARN_ENV: queue.job_queue_arn,
                JOB_QUEUE_NAME_ENV: queue.job_queue_name,
                DECLARATION_FILE_ENV: path,
                METRIC_NAMESPACE_ENV: queue.namespace,
                OWNER_TOPICS_ENV: {owner: topic.topic_arn for owner, topic in topics.items()},
                ENFORCE_BUDGET_ENV: "true" if queue.enforce_interruption_budget else "false",
            })
            for topic in topics.values():
                self._allow_publishing(topic)
            if queue.enforce_interruption_budget:
                self._allow_terminating()
        self._code.stage(asset_directory_with(tuple(files)))

    def _environment(self) -> str:
        return Stack.of(self).to_json_string(self._entries)

    def _allow_publishing(self, topic: sns.ITopic) -> None:
        if any(topic is seen for seen in self._published):
            return
        allow_publishing_to_owner(self.role, topic, first=not self._published)
        self._published.append(topic)

    def _allow_terminating(self) -> None:
        if self._terminates:
            return
        self._terminates = True
        allow_terminating_service_jobs(
            self.role, self,
            "A monitor of this stack has enforce_interruption_budget=True: the handler "
            "terminates jobs past their share's interruption budget, only on queues whose "
            "monitor opted in.",
        )

