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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from aws_cdk import Aspects, Lazy, Stack
from aws_cdk import aws_sns as sns
from constructs import Construct

from .._share_ledger import AppBookkeeping
from ..wire.monitoring_contract import (
    MONITORED_QUEUES_ENV,
    PREEMPTION_COMPLETED_DETAIL_TYPE,
    PREEMPTION_STARTED_DETAIL_TYPE,
    PREEMPTIONS_HANDLER,
    notification_variables,
)
from ._asset import LateMonitoringCode, asset_directory_with
from ._function import (
    AtSynthesis,
    FunctionSettings,
    LazyText,
    allow_publishing_to_owner,
    allow_terminating_service_jobs,
)
from .job_events_function import event_function, service_job_rule
from .job_ledger import JobLedger

CONSTRUCT_ID: Final = "QuotaSharePreemptions"
DECLARATIONS_DIRECTORY: Final = "quota_monitor_declarations"


@dataclass(frozen=True)
class MonitoredQueue:
    """What one monitor hands the stack's preemptions function, read at synthesis."""

    variables: Callable[[str], dict[str, str]]
    """The monitor's queue variables (``monitoring_contract.queue_variables``), given where
    this function stages the monitor's declaration file."""
    enforce_interruption_budget: bool
    resolve: Callable[[], tuple[str, Mapping[str, sns.ITopic]]]
    """The monitor's final declaration (JSON) and owner topics, once its shares are resolved."""
    job_ledger: JobLedger | None = None
    """Where the monitor keeps its jobs' terminal attempts: this function writes the
    preempted ones."""


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
        cls, scope: Construct, *, settings: FunctionSettings, concurrency: int | None
    ) -> StackPreemptions:
        stack = Stack.of(scope)
        records = AppBookkeeping.of(stack).stack_records(stack)
        if isinstance(records.preemptions, StackPreemptions):
            return records.preemptions
        created = cls(stack, CONSTRUCT_ID, settings=settings, concurrency=concurrency)
        records.preemptions = created
        return created

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        settings: FunctionSettings,
        concurrency: int | None,
    ) -> None:
        super().__init__(scope, id)
        self._queues: list[MonitoredQueue] = []
        self._entries: list[dict[str, Any]] = []
        self._code = LateMonitoringCode(self)
        self.function, self.role, self.log_group = event_function(
            self,
            settings,
            code=self._code.code,
            handler=PREEMPTIONS_HANDLER,
            description=f"AWS Batch quota shares: preemptions to owners ({self.node.path})",
            environment={MONITORED_QUEUES_ENV: Lazy.string(LazyText(self._environment))},
            concurrency=concurrency,
            describe_purpose="to find a preempted job's queue and share",
        )
        self._code.used_by(self.function)
        self.preemption_rule = service_job_rule(
            self, "PreemptionRule", self.function, settings,
            description=f"Service-job preemptions, each looked up once ({self.node.path})",
            detail_types=[PREEMPTION_STARTED_DETAIL_TYPE, PREEMPTION_COMPLETED_DETAIL_TYPE],
        )
        self._published: list[sns.ITopic] = []
        self._ledgers: list[JobLedger] = []
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
                **queue.variables(path),
                **notification_variables(
                    {owner: topic.topic_arn for owner, topic in topics.items()},
                    enforce_budget=queue.enforce_interruption_budget,
                ),
            })
            for topic in topics.values():
                self._allow_publishing(topic)
            if queue.enforce_interruption_budget:
                self._allow_terminating()
            if queue.job_ledger is not None and all(
                    queue.job_ledger is not seen for seen in self._ledgers):
                self._ledgers.append(queue.job_ledger)
                queue.job_ledger.allow_function(self.role)
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

