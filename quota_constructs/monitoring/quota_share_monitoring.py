"""Watch a quota-managed training queue in production: per-share metrics, job events told to
the shares' owners, one dashboard, alarms per share."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from aws_cdk import Annotations, Aspects, Duration, Lazy, Stack
from aws_cdk import aws_chatbot as chatbot
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from .._construct_props import check_flag, child_path
from .._share_ledger import AppBookkeeping, RecordedShare, ledger_of
from ..job_queue import IHasTrainingJobQueue, ITrainingJobQueue
from ..model import (
    QuotaAllocation,
    QuotaConfigError,
    QuotaShareSpec,
    is_unresolved,
    share_subject,
)
from ..model.agreement_team import AlertEndpoint
from ..model.capacity import check_count
from ..model.deployed_names import DeployedName
from ..nag_acknowledgments import acknowledge
from ..quota_share import QuotaShare
from ..share_options import ShareProvisioning
from ..stack_outputs import add_output
from ..wire.deployed_config import DEPLOYED_CONFIG_TAG_KEY, config_fingerprint
from ..wire.job_ledger import STATE_CHANGE_STATUSES as LEDGER_STATE_CHANGES
from ..wire.listing import MAX_LISTING_PAGES, MAX_PAGE_SIZE
from ..wire.monitoring_contract import (
    DEFAULT_MAX_SNAPSHOT_AGE_SECONDS,
    DEFAULT_METRIC_NAMESPACE,
    DEFAULT_RUNNABLE_COUNT_CAP,
    agreement_variables,
    notification_variables,
    queue_variables,
)
from ..wire.monitoring_declaration import monitoring_declaration_json
from ..wire.share_config import ShareConfig
from ._asset import DECLARATION_FILE, LateMonitoringCode, monitoring_asset_directory
from ._function import AtSynthesis, FunctionSettings, LazyText, QueueFunctionProps
from .alarm_delivery import allow_alarms_to_publish
from .dashboard import QuotaShareDashboard
from .job_events_function import DEFAULT_CONCURRENCY, JobEventsFunction
from .job_ledger import JobLedger
from .metrics import ShareMetricMethods, ShareMetrics
from .outputs import add_monitoring_outputs
from .owner_subscriptions import OwnerSubscriptions, chat_endpoint
from .owner_topics import OwnerTopics
from .share_alarms import ShareAlarms
from .share_metrics_function import ShareMetricsFunction
from .stack_preemptions import MonitoredQueue, StackPreemptions
from .thresholds import (
    DEAD_LETTERS,
    DEAD_LETTERS_PERIOD,
    MIN_PERIOD,
    MONITOR_HEALTH,
    ShareAlarmThresholds,
)

DEFAULT_SCHEDULE: Final = Duration.minutes(1)
DEFAULT_LOG_RETENTION: Final = logs.RetentionDays.ONE_MONTH
MAX_SCHEDULE_MINUTES: Final = 60
DEFAULT_MAX_SNAPSHOT_AGE: Final = Duration.seconds(DEFAULT_MAX_SNAPSHOT_AGE_SECONDS)
MIN_SNAPSHOT_AGE_SECONDS: Final = 60
MAX_SNAPSHOT_AGE_SECONDS: Final = 86_400
MAX_JOB_EVENTS_CONCURRENCY: Final = 100
NO_OWNER_WARNING_ID: Final = "quota_constructs:monitoring-no-owner"
_NAMESPACE_ALLOWED = "1 to 255 characters, not starting with 'AWS/'"


class QuotaShareMonitoring(Construct, ShareMetricMethods):
    """Per-share metrics, owner notifications, a dashboard and alarms for one job queue.

    Works for a :class:`QuotaManagedTrainingQueue`, a :class:`TrainingJobQueue`, or a queue
    created elsewhere or imported (``TrainingJobQueue.from_job_queue_arn``) given its shares.
    Each share's owner comes from its spec's ``agreement`` (:class:`ShareAgreement`); a share
    without one is measured and shown, but nobody is told about it (a synth warning says so).

    Children (construct ids are part of the contract): ``DeadLetterQueue`` (SQS, SQS-managed
    encryption, TLS only: events EventBridge could not deliver and invocations that failed
    after their retries), ``OwnerTopics`` (when topics are created here), ``ShareMetrics``
    (:class:`ShareMetricsFunction`), ``JobEvents`` (:class:`JobEventsFunction`),
    ``Dashboard`` (:class:`QuotaShareDashboard`), ``Alarms/<share>`` (:class:`ShareAlarms`),
    ``DeadLetters`` (an alarm: something new arrived in the dead-letter queue),
    ``MonitorHealth`` (an alarm: the metrics function could not read AWS Batch or did not
    run; missing data breaching) and ``Code`` (the functions' code, staged at synthesis).

    :param job_queue: the monitored queue.
    :param shares: the shares to watch. Default: every share the app declares on the queue,
        each watched as soon as it is declared (a share added after this construct too: the
        queue's share ledger tells this construct of it); required for a queue whose shares
        this app does not declare. One queue has one monitor: a second one of the same queue
        is refused.
    :param owner_topics: the topic that reaches each owner, by owner name; must cover every
        owner of ``shares``. Default: one topic per owner, created here (``OwnerTopics``).
    :param metrics_schedule: time between two per-share measurements. Default 1 minute;
        whole minutes, at most 60.
    :param enforce_interruption_budget: terminate (``TerminateServiceJob``, with a reason; the
        owner is told) a job preempted more often than its share's budget. Default False: the
        owner is only told the job is over budget. Only this switch grants the job-events
        function ``batch:TerminateServiceJob``.
    :param metrics_enabled: deploy the scheduled metrics function. Default True. Off: no
        per-share capacity, waiting or drift metrics, no Starved/Drift alarms.
    :param job_events_enabled: deploy the job-events function and its rules. Default True.
        Off: no preemption counts, no notifications, no budget enforcement.
    :param dashboard_enabled: deploy the dashboard. Default True.
    :param alarms_enabled: deploy the per-share alarms. Default True.
    :param thresholds: alarm thresholds of every share. Default :class:`ShareAlarmThresholds`.
    :param share_thresholds: thresholds of particular shares, by share name, instead of
        ``thresholds``. Default: none.
    :param namespace: CloudWatch namespace of the custom metrics. Default
        ``QuotaConstructs/Batch``.
    :param log_retention: how long both functions' logs are kept. Default one month.
    :param operations_topic: where ``DeadLetters`` (something failed after every retry) and
        ``MonitorHealth`` (the metrics function could not read AWS Batch, or did not run)
        notify, into ALARM and back to OK. Default: nowhere; the alarms still show on the
        dashboard.
    :param handler_layers: Lambda layers for both functions. Default: none (not needed for
        the quota-share API: the functions carry the AWS Batch model they were synthesized
        with, whatever the runtime's botocore).
    :param runnable_count_cap: the most RUNNABLE jobs counted per share and run (one
        ListServiceJobs call per 100, only for shares with a waiting job). Default 100; a
        ``RunnableJobs`` value equal to the cap means at least that many. 0: not counted (no
        ``RunnableJobs`` metric, no ListServiceJobs call).
    :param job_ledger: keep every terminal attempt of the queue's jobs in a bucket of the app
        (:class:`JobLedger`, child ``JobLedger``), for ``quota-constructs usage --ledger``
        (AWS Batch lists a finished job for about a week): True for one made here, or a
        ``JobLedger`` several monitors share. Default False. Needs job events; the job-events
        function then also receives SUCCEEDED state changes. Its cost is in the cost guide.
    :param max_snapshot_age: how old a ``GetJobQueueSnapshot`` (each part's ``lastUpdatedAt``)
        may be for the shares to be judged by it. An older one, or one without
        ``lastUpdatedAt``, is not judged: no capacity, wait or fit is published (``Starved``
        keeps its state) and ``MonitorHealthy`` is 0. Default 10 minutes; whole seconds, 1
        minute to 1 day; None: any age is judged.
    :param job_events_concurrency: reserved concurrency of the job-events function, so a
        preemption storm queues rather than throttles the account's AWS Batch API. Default 2;
        None: unreserved (for accounts whose concurrency quota cannot spare it).
    :param agreement_metrics_enabled: watch the agreements live (needs the job-events
        function). For each share whose agreement declares ``target_wait_p95``: every started
        job's wait to its first start is published (``WaitTime``, from a ``JobStartedRule``
        delivering the queue's jobs becoming RUNNING: one invocation and one
        ``DescribeServiceJob`` per start) and the ``WaitTarget`` alarm reads its p95; for each
        share whose agreement declares ``interruption_budget``: every job that FAILED by
        exhausting its preemption retries counts in ``BudgetFailures`` and the
        ``BudgetFailures`` alarm reads its sum. Both over the thresholds'
        ``agreement_window`` (one day). Default True; a queue none of whose shares declares
        either deploys nothing more. False: neither metric, alarm, nor the rule.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        job_queue: ITrainingJobQueue | IHasTrainingJobQueue,
        shares: Sequence[QuotaShareSpec] | None = None,
        owner_topics: Mapping[str, sns.ITopic] | None = None,
        metrics_schedule: Duration = DEFAULT_SCHEDULE,
        enforce_interruption_budget: bool = False,
        metrics_enabled: bool = True,
        job_events_enabled: bool = True,
        dashboard_enabled: bool = True,
        alarms_enabled: bool = True,
        thresholds: ShareAlarmThresholds | None = None,
        share_thresholds: Mapping[str, ShareAlarmThresholds] | None = None,
        namespace: str = DEFAULT_METRIC_NAMESPACE,
        log_retention: logs.RetentionDays = DEFAULT_LOG_RETENTION,
        operations_topic: sns.ITopic | None = None,
        handler_layers: Sequence[lambda_.ILayerVersion] = (),
        runnable_count_cap: int = DEFAULT_RUNNABLE_COUNT_CAP,
        job_events_concurrency: int | None = DEFAULT_CONCURRENCY,
        max_snapshot_age: Duration | None = DEFAULT_MAX_SNAPSHOT_AGE,
        agreement_metrics_enabled: bool = True,
        job_ledger: bool | JobLedger = False,
    ) -> None:
        # Checks: everything before the construct exists, so a mistake leaves nothing behind.
        subject = f"monitoring {child_path(scope, id)}"
        if job_ledger is not False and not job_events_enabled:
            raise QuotaConfigError(subject, "job_ledger", job_ledger,
                                   "False when job_events_enabled=False (the job-events "
                                   "functions write the ledger)")
        queue = _training_job_queue(job_queue, subject=subject)
        checked = _CheckedProps.of(
            queue, subject=subject, shares=shares, owner_topics=owner_topics,
            metrics_schedule=metrics_schedule,
            enforce_interruption_budget=enforce_interruption_budget,
            metrics_enabled=metrics_enabled, job_events_enabled=job_events_enabled,
            dashboard_enabled=dashboard_enabled, alarms_enabled=alarms_enabled,
            thresholds=thresholds, share_thresholds=share_thresholds, namespace=namespace,
            operations_topic=operations_topic, runnable_count_cap=runnable_count_cap,
            job_events_concurrency=job_events_concurrency, max_snapshot_age=max_snapshot_age,
            agreement_metrics_enabled=agreement_metrics_enabled,
        )
        _claim_queue(queue, subject=subject, path=child_path(scope, id))
        super().__init__(scope, id)

        self.job_queue: Final = queue
        self.shares: tuple[QuotaShareSpec, ...] = ()
        """The monitored shares: ``shares``, or every share the app declares on the queue so
        far (each is watched as soon as it is declared)."""
        self.enforces_interruption_budget: Final[bool | None] = (
            enforce_interruption_budget if job_events_enabled else None
        )
        """True: jobs past their budget are terminated; False: only their owner is told;
        None: budgets are not watched (job events are off)."""
        self._subject = subject
        self._explicit_shares = checked.explicit
        self._given_topics = owner_topics
        self._thresholds = checked.thresholds
        self._share_thresholds = checked.share_thresholds
        self._watched: dict[str, QuotaShareSpec] = {}
        self._owner_topics_construct: OwnerTopics | None = None
        self.owner_topics: Final[dict[str, sns.ITopic]] = {}
        """The topic reaching each owner of a monitored share."""
        self._owner_topic_names: dict[str, DeployedName] = {}
        self._awaited_owners: dict[str, None] = {}
        """Owners subscribed before any share of theirs was declared: checked at synthesis."""
        self._chat_endpoints: dict[str, list[AlertEndpoint]] = {}
        self._period = Duration.minutes(
            max(checked.schedule_minutes, int(MIN_PERIOD.to_minutes()))
        )
        self._share_metrics = ShareMetrics(namespace, queue.job_queue_name, self._period)
        self._share_metrics_on = metrics_enabled
        self._job_events_on = job_events_enabled
        self._agreement_metrics_on = agreement_metrics_enabled and job_events_enabled

        self.dead_letter_queue: Final = self._create_dead_letter_queue()
        # The code (runtime + declaration of the monitored shares) is staged when the app is
        # synthesized, once every share of the queue is declared.
        self._code = LateMonitoringCode(self)
        settings = FunctionSettings(
            dead_letter_queue=self.dead_letter_queue, log_retention=log_retention,
            layers=handler_layers,
        )
        props = self._function_props(settings)
        self.job_ledger: Final[JobLedger | None] = (
            job_ledger if isinstance(job_ledger, JobLedger)
            else JobLedger(self, "JobLedger") if job_ledger else None
        )
        """Where every terminal attempt of the queue's jobs is kept (None: no ledger)."""
        self.share_metrics: Final[ShareMetricsFunction | None] = (
            self._create_metrics_function(checked, props) if metrics_enabled else None
        )
        self.job_events: Final[JobEventsFunction | None] = (
            self._create_job_events_function(props, concurrency=job_events_concurrency)
            if job_events_enabled else None
        )
        self.preemptions: StackPreemptions | None = (
            self._join_stack_preemptions(settings, concurrency=job_events_concurrency)
            if job_events_enabled else None
        )
        """The stack's preemptions function, shared by every monitor of the stack (None when
        job events are off)."""
        self.dashboard: Final[QuotaShareDashboard | None] = (
            QuotaShareDashboard(
                self, "Dashboard", metrics=self._share_metrics, shares=(), period=self._period,
                agreement_metrics=self._agreement_metrics_on,
            )
            if dashboard_enabled
            else None
        )
        self.alarms: Final[dict[str, ShareAlarms]] = {}
        self._alarms_scope = (
            Construct(self, "Alarms")
            if alarms_enabled and (metrics_enabled or job_events_enabled) else None
        )
        self._operations_alarms: list[cloudwatch.Alarm] = []
        self.monitor_health_alarm: cloudwatch.Alarm | None = None
        self.dead_letters_alarm: cloudwatch.Alarm | None = None
        if self._alarms_scope is not None:
            self._create_operations_alarms(operations_topic)
        self._grant_alarms_on_given_topics(owner_topics, operations_topic)
        self._subscribe_to_shares()
        # Late, and only for what needs every share of the app (see resolve_shares).
        Aspects.of(self).add(AtSynthesis(self, self.resolve_shares))

    def _create_dead_letter_queue(self) -> sqs.Queue:
        queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        resource = queue.node.default_child
        assert resource is not None
        for rule, reason in (
            ("AwsSolutions-SQS3", "This queue is itself the dead-letter queue: of the "
             "monitor's EventBridge rule targets and the on-failure destination of its "
             "functions."),
            ("Serverless-SQSRedrivePolicy", "This queue is itself the dead-letter queue of the "
             "monitor; nothing consumes it automatically, so there is nothing to redrive to."),
        ):
            acknowledge(resource, rule, reason)
        return queue

    def _function_props(self, settings: FunctionSettings) -> QueueFunctionProps:
        return QueueFunctionProps(
            code=self._code.code,
            job_queue_arn=self.job_queue.job_queue_arn,
            environment=self._queue_variables(DECLARATION_FILE),
            settings=settings,
        )

    def _queue_variables(self, declaration_file: str) -> dict[str, str]:
        """Which queue this monitor watches, where ``declaration_file`` is and the namespace:
        for its own functions and for its entry in the stack's preemptions function."""
        return queue_variables(
            job_queue_arn=self.job_queue.job_queue_arn,
            job_queue_name=self.job_queue.job_queue_name,
            declaration_file=declaration_file,
            namespace=self._share_metrics.namespace,
        )

    def _create_metrics_function(
        self, checked: _CheckedProps, props: QueueFunctionProps
    ) -> ShareMetricsFunction:
        function = ShareMetricsFunction(
            self,
            "ShareMetrics",
            props=props,
            schedule=Duration.minutes(checked.schedule_minutes),
            runnable_count_cap=checked.runnable_count_cap,
            max_snapshot_age_seconds=checked.snapshot_age_seconds,
        )
        self._code.used_by(function.function)
        return function

    def _create_job_events_function(
        self, props: QueueFunctionProps, *, concurrency: int | None
    ) -> JobEventsFunction:
        stack = Stack.of(self)
        # Late: the owner topics of shares declared after this construct too.
        owner_topics = Lazy.string(LazyText(lambda: stack.to_json_string(
            {owner: topic.topic_arn for owner, topic in self.owner_topics.items()}
        )))
        notified = {
            **notification_variables(
                owner_topics, enforce_budget=self.enforces_interruption_budget is True
            ),
            **agreement_variables(enabled=self._agreement_metrics_on),
        }
        ledger = self.job_ledger
        function = JobEventsFunction(
            self,
            "JobEvents",
            props=replace(props, environment={**props.environment, **notified,
                                              **(ledger.variables() if ledger else {})}),
            owner_topics={},
            concurrency=concurrency,
            **({"statuses": LEDGER_STATE_CHANGES} if ledger else {}),
        )
        if ledger is not None:
            ledger.allow_function(function.role)
        self._code.used_by(function.function)
        return function

    def _join_stack_preemptions(
        self, settings: FunctionSettings, *, concurrency: int | None
    ) -> StackPreemptions:
        preemptions = StackPreemptions.of_stack(
            self, settings=settings, concurrency=concurrency
        )
        ledger = self.job_ledger
        preemptions.register(MonitoredQueue(
            variables=lambda path: {**self._queue_variables(path),
                                    **(ledger.variables() if ledger else {})},
            enforce_interruption_budget=self.enforces_interruption_budget is True,
            resolve=self._final_declaration,
            job_ledger=ledger,
        ))
        return preemptions

    def _create_operations_alarms(self, operations_topic: sns.ITopic | None) -> None:
        """``DeadLetters`` and (with the metrics function) ``MonitorHealth``, notifying
        ``operations_topic`` when given."""
        queue_path = self.job_queue.node.path
        # Messages *arriving* (SendMessage by EventBridge or Lambda), not messages sitting:
        # nobody drains this queue, so a visible-count alarm would stay in ALARM for the 14
        # days of retention and never fire again.
        self.dead_letters_alarm = DEAD_LETTERS.create(
            self.dead_letter_queue.metric_number_of_messages_sent(
                period=DEAD_LETTERS_PERIOD, statistic="Sum"
            ),
            self,
            "DeadLetters",
            description=(
                f"The quota-share monitoring of {queue_path} failed after every retry "
                "(an undeliverable event or a failed invocation): owners may not have been "
                "told. Read the dead-letter queue's messages and the functions' logs."
            ),
        )
        self._operations_alarms.append(self.dead_letters_alarm)
        if self._share_metrics_on:
            self.monitor_health_alarm = MONITOR_HEALTH.create(
                self._share_metrics.monitor_healthy(period=self._period),
                self,
                "MonitorHealth",
                description=(
                    f"The quota-share monitoring of {queue_path} could not read AWS Batch "
                    "(access denied, sustained throttling, a timeout) or did not run at all: "
                    "per-share metrics are missing, so the Starved and Drift alarms cannot "
                    "fire. Read the ShareMetrics function's log (share_metrics_call_failed)."
                ),
            )
            self._operations_alarms.append(self.monitor_health_alarm)
        if operations_topic is not None:
            for alarm in self._operations_alarms:
                alarm.add_alarm_action(actions.SnsAction(operations_topic))
                alarm.add_ok_action(actions.SnsAction(operations_topic))

    def _grant_alarms_on_given_topics(
        self, owner_topics: Mapping[str, sns.ITopic] | None, operations_topic: sns.ITopic | None
    ) -> None:
        """Topics this construct did not create: add CloudWatch's grant where the app owns
        them, warn (saying what to add) where it does not."""
        given = list((owner_topics or {}).values()) + (
            [operations_topic] if operations_topic is not None else []
        )
        granted: list[sns.ITopic] = []
        for topic in given:
            if not any(topic is seen for seen in granted):
                granted.append(topic)
                allow_alarms_to_publish(topic, self)

    def _subscribe_to_shares(self) -> None:
        """Watch the shares: given ones now; else the queue's, each as soon as it is declared
        (the queue's ledger tells this monitor of every share already recorded and of each
        later one). Either way the ledger's shares that are watched get their deployed-config
        tag from here."""
        ledger = ledger_of(self.job_queue)
        explicit = self._explicit_shares
        if explicit is not None:
            for spec in explicit:
                self._watch(spec)
            if ledger is not None:
                ledger.observe(self._given_share_recorded)
        elif ledger is not None:
            ledger.observe(self._share_recorded)
        else:
            # A queue of another implementation: this library is not told of its shares.
            for spec in self.job_queue.quota_share_specs:
                self._watch(spec)

    def _given_share_recorded(self, recorded: RecordedShare) -> None:
        """With ``shares=``: the queue's shares of those names are tagged, not watched again."""
        if self._explicit_shares is not None and recorded.spec.name in {
            spec.name for spec in self._explicit_shares
        }:
            _tag_deployed_config(recorded)

    def _share_recorded(self, recorded: RecordedShare) -> None:
        if self._code.staged:
            # Declared after this monitor's final declaration was written (a share added
            # after synthesis): as before, not monitored.
            return
        self._watch(recorded.spec)
        _tag_deployed_config(recorded)

    def _watch(self, spec: QuotaShareSpec) -> None:
        """Measure, show, alarm on and tell the owner of one more share."""
        self._watched[spec.name] = spec
        self.shares = (*self.shares, spec)
        topic: sns.ITopic | None = None
        if spec.agreement is None:
            Annotations.of(self).add_warning_v2(
                NO_OWNER_WARNING_ID,
                f"{share_subject(spec.name)} has no agreement (owner): it is measured, "
                "but nobody is told when its jobs are preempted or it is starved.",
            )
        else:
            topic = self._owner_topic(spec.agreement.owner)
        if self.dashboard is not None:
            self.dashboard.add_share(spec)
        if (self.job_events is not None and self._agreement_metrics_on
                and spec.agreement is not None and spec.agreement.target_wait_p95 is not None):
            self.job_events.watch_starts()
        if self._alarms_scope is not None:
            self.alarms[spec.name] = ShareAlarms(
                self._alarms_scope,
                spec.name,
                spec=spec,
                metrics=self._share_metrics,
                thresholds=self._share_thresholds.get(spec.name, self._thresholds),
                period=self._period,
                share_metrics=self._share_metrics_on,
                job_events=self._job_events_on,
                owner_topic=topic,
                agreement_metrics=self._agreement_metrics_on,
            )

    def _owner_topic(self, owner: str) -> sns.ITopic:
        if owner in self.owner_topics:
            return self.owner_topics[owner]
        if self._given_topics is not None:
            _check_owner_topics(self._given_topics, [owner], subject=self._subject)
            topic = self._given_topics[owner]
        else:
            if self._owner_topics_construct is None:
                self._owner_topics_construct = OwnerTopics(self, "OwnerTopics", owners=())
            topic = self._owner_topics_construct.add(owner)
        self.owner_topics[owner] = topic
        if self.job_events is not None:
            # Only the owners of monitored shares: the function may publish to no other topic.
            self.job_events.allow_publishing(topic)
        return topic

    def _declared_specs(self) -> Sequence[QuotaShareSpec]:
        return self._explicit_shares or tuple(self.job_queue.quota_share_specs)

    def _metrics_subject(self) -> str:
        return self._subject

    def _queue_allocation(self) -> QuotaAllocation | None:
        return self.job_queue.allocation

    def _agreement_window(self, share: str) -> Duration:
        return self._share_thresholds.get(share, self._thresholds).agreement_window

    def _final_declaration(self) -> tuple[str, Mapping[str, sns.ITopic]]:
        self.resolve_shares()
        return monitoring_declaration_json(self.shares), dict(self.owner_topics)

    def resolve_shares(self) -> None:
        """Run this monitor's late parts now; synthesis runs them (once). Each share's alarms,
        dashboard row, owner topic and deployed-config tag exist as soon as both the share and
        this monitor do; only what needs *every* share of the app waits for synthesis, because
        a stack built later (a team's) may still declare one:

        - the checks that a share exists at all, that ``share_thresholds`` names monitored
          shares, and that each awaited owner (``subscribe_owner`` before its share) got one;
        - the functions' code asset, which holds the declaration of every monitored share (an
          asset's content is fixed once it is created);
        - the dashboard's alarm-status row, the last row, listing every share's alarms;
        - the outputs naming every owner topic.
        """
        if self._code.staged:
            return
        final = self._final_shares()
        for spec in final:
            if spec.name not in self._watched:
                # Only a queue of another implementation, whose shares nobody records here.
                self._watch(spec)
        self.shares = final
        self._code.stage(monitoring_asset_directory(monitoring_declaration_json(final)))
        if self.dashboard is not None:
            self.dashboard.add_alarms(
                [alarm for group in self.alarms.values() for alarm in group.alarms]
                + self._operations_alarms
            )
        # Last: the outputs name every owner topic, those of shares added late included.
        self._owner_topic_names = add_monitoring_outputs(
            self, self.dashboard, self.owner_topics
        )
        if self.job_ledger is not None:
            add_output(self, "JobLedgerUrl", self.job_ledger.url_of(self.job_queue.job_queue_name),
                       "Where this queue's job ledger is: quota-constructs usage --ledger URL")

    def _final_shares(self) -> tuple[QuotaShareSpec, ...]:
        """Every monitored share once the app is built, checked (see :meth:`resolve_shares`)."""
        final = tuple(self._declared_specs())
        if not final:
            raise QuotaConfigError(
                self._subject, "shares", [],
                "at least one QuotaShareSpec: the app declares no share on the monitored queue "
                "(declare its shares, or pass shares=[...])",
            )
        _check_share_thresholds(self._share_thresholds, final, subject=self._subject)
        owners = _owners(final)
        for owner in self._awaited_owners:
            if owner not in owners:
                raise QuotaConfigError(
                    self._subject, "owner", owner,
                    "the owner of a share of the monitored queue once every stack of the app "
                    "is built (subscribe_owner / add_chat_channel); owners: "
                    f"{', '.join(owners) or 'none'}",
                )
        return final

    @property
    def owner_topic_names(self) -> Mapping[str, DeployedName]:
        """Each owner topic's ARN, or the stack output that holds it (for the agreement); the
        monitored shares are resolved first, as synthesis would."""
        self.resolve_shares()
        return self._owner_topic_names

    @property
    def metrics_function(self) -> lambda_.IFunction | None:
        """The scheduled per-share metrics function; None when ``metrics_enabled`` is False."""
        return self.share_metrics.function if self.share_metrics is not None else None

    @property
    def job_events_function(self) -> lambda_.IFunction | None:
        """The job-events function; None when ``job_events_enabled`` is False."""
        return self.job_events.function if self.job_events is not None else None

    def subscribe_owner(
        self, owner: str, subscription: sns.ITopicSubscription
    ) -> sns.Subscription:
        """Subscribe ``subscription`` (``aws_sns_subscriptions.EmailSubscription``,
        ``SqsSubscription``, ``LambdaSubscription``, ``UrlSubscription``) to ``owner``'s
        topic, with a dead-letter queue that passes cdk-nag (``OwnerSubscriptions``)."""
        topic = self._declared_owner_topic(owner)
        return self._subscriptions().subscribe(topic, subscription, owner=owner)

    def add_chat_channel(
        self, owner: str, channel: chatbot.SlackChannelConfiguration
    ) -> None:
        """Let AWS Chatbot post ``owner``'s notifications to ``channel`` (the topic is added
        to the channel's notification topics; Chatbot subscribes itself, no dead-letter
        queue is involved)."""
        topic = self._declared_owner_topic(owner)
        channel.add_notification_topic(topic)
        self._chat_endpoints.setdefault(owner, []).append(chat_endpoint(channel))

    @property
    def owner_endpoints(self) -> Mapping[str, tuple[AlertEndpoint, ...]]:
        """By owner, where the owner's topic delivers, as subscribed through this construct
        (``subscribe_owner``, ``add_chat_channel``); for the agreement."""
        found: dict[str, list[AlertEndpoint]] = {}
        subscriptions = self.node.try_find_child("OwnerSubscriptions")
        if isinstance(subscriptions, OwnerSubscriptions):
            for owner, endpoints in subscriptions.endpoints.items():
                found.setdefault(owner, []).extend(endpoints)
        for owner, endpoints in self._chat_endpoints.items():
            found.setdefault(owner, []).extend(endpoints)
        return {owner: tuple(endpoints) for owner, endpoints in found.items()}

    @property
    def given_topic_owners(self) -> frozenset[str]:
        """Owners whose topic was passed in (``owner_topics=``): subscribed, if at all, where
        the topic is managed."""
        return frozenset(self._given_topics or {})

    def _declared_owner_topic(self, owner: str) -> sns.ITopic:
        """The topic of ``owner``: a watched share's owner has one already (the declared-shares
        test below matters only for a queue of another implementation, whose shares nobody
        records); an owner whose share a stack built later may still declare gets its topic
        now, so a subscription can be attached to it."""
        if isinstance(owner, str) and owner not in self.owner_topics and not self._code.staged:
            declared = self._explicit_shares or tuple(self.job_queue.quota_share_specs)
            if any(s.agreement is not None and s.agreement.owner == owner for s in declared):
                self._owner_topic(owner)
            elif self._may_await(owner):
                # A stack built later (a team's) may still declare this owner's share: its
                # topic exists now so the subscription can attach; synthesis checks that the
                # owner does own a monitored share by then.
                self._awaited_owners[owner] = None
                self._owner_topic(owner)
        topic = self.owner_topics.get(owner) if isinstance(owner, str) else None
        if topic is None:
            raise QuotaConfigError(
                f"monitoring {self.node.path}", "owner", owner,
                f"one of the monitored shares' owners: {', '.join(sorted(self.owner_topics))}",
            )
        return topic

    def _may_await(self, owner: str) -> bool:
        """Whether a share of ``owner`` could still be declared: the monitored shares are the
        queue's (not a fixed ``shares=``), the topic can be made here (or was given), and the
        name is one an agreement could carry."""
        if self._explicit_shares is not None or not owner.strip() or not owner.isprintable():
            return False
        return self._given_topics is None or owner in self._given_topics

    def _subscriptions(self) -> OwnerSubscriptions:
        found = self.node.try_find_child("OwnerSubscriptions")
        if isinstance(found, OwnerSubscriptions):
            return found
        return OwnerSubscriptions(self, "OwnerSubscriptions")

    def alarms_of(self, share: str) -> tuple[cloudwatch.IAlarm, ...]:
        """The alarms of ``share`` (empty when alarms are off)."""
        group = self.alarms.get(share)
        return tuple(group.alarms) if group is not None else ()


def _claim_queue(queue: ITrainingJobQueue, *, subject: str, path: str) -> None:
    """Record that the monitor at ``path`` watches ``queue``; refuse a second monitor: it would
    tell every owner everything twice. A queue is the same queue through its share ledger (the
    queue created here and every import of it share one); a queue without one (another
    ``ITrainingJobQueue`` implementation) by its resolved ARN within the app. Both records are
    the app's (:class:`AppBookkeeping`), so two apps in one process never see each other's."""
    ledger = ledger_of(queue)
    key = None
    if ledger is not None:
        existing = ledger.monitor_path
    else:
        key = json.dumps(Stack.of(queue).resolve(queue.job_queue_arn), sort_keys=True)
        existing = AppBookkeeping.of(queue).monitors.get(key)
    if existing is not None and existing != path:
        raise QuotaConfigError(
            subject, "job_queue", queue.node.path,
            f"a job queue no other QuotaShareMonitoring watches: {existing} already watches "
            "it, and a second monitor would send every owner each notice twice (give the one "
            "monitor every share, or watch another queue)",
        )
    if ledger is not None:
        ledger.monitor_path = path
    elif key is not None:
        AppBookkeeping.of(queue).monitors[key] = path


def _tag_deployed_config(recorded: RecordedShare) -> None:
    """Tag a monitored share the custom resource provisions (in any stack of the app) with the
    fingerprint of the configuration its own deployment declares, so the metrics function
    judges drift against what was last deployed, not only against this stack's declaration
    (see :mod:`quota_constructs.wire.deployed_config`). Shares provisioned natively by
    CloudFormation are left alone: a tag change there may replace the share."""
    share = recorded.construct
    if isinstance(share, QuotaShare) and share.provisioning is ShareProvisioning.CUSTOM_RESOURCE:
        share.tags.set_tag(
            DEPLOYED_CONFIG_TAG_KEY, config_fingerprint(ShareConfig.declared(share.spec))
        )


@dataclass(frozen=True)
class _CheckedProps:
    """The monitor's props that need checking, checked, before its construct exists."""

    explicit: tuple[QuotaShareSpec, ...] | None
    schedule_minutes: int
    runnable_count_cap: int
    snapshot_age_seconds: int | None
    thresholds: ShareAlarmThresholds
    share_thresholds: dict[str, ShareAlarmThresholds]

    @classmethod
    def of(
        cls,
        queue: ITrainingJobQueue,
        *,
        subject: str,
        shares: Sequence[QuotaShareSpec] | None,
        owner_topics: Mapping[str, sns.ITopic] | None,
        metrics_schedule: Duration,
        enforce_interruption_budget: bool,
        metrics_enabled: bool,
        job_events_enabled: bool,
        dashboard_enabled: bool,
        alarms_enabled: bool,
        thresholds: ShareAlarmThresholds | None,
        share_thresholds: Mapping[str, ShareAlarmThresholds] | None,
        namespace: str,
        operations_topic: sns.ITopic | None,
        runnable_count_cap: int,
        job_events_concurrency: int | None,
        max_snapshot_age: Duration | None,
        agreement_metrics_enabled: bool,
    ) -> _CheckedProps:
        explicit = None if shares is None else tuple(shares)
        if explicit is not None:
            if not explicit:
                raise QuotaConfigError(subject, "shares", [], "at least one QuotaShareSpec")
            monitoring_declaration_json(explicit)  # every value literal, names unique
        specs = explicit if explicit is not None else tuple(queue.quota_share_specs)
        for name, value in (
            ("enforce_interruption_budget", enforce_interruption_budget),
            ("metrics_enabled", metrics_enabled),
            ("job_events_enabled", job_events_enabled),
            ("dashboard_enabled", dashboard_enabled),
            ("alarms_enabled", alarms_enabled),
            ("agreement_metrics_enabled", agreement_metrics_enabled),
        ):
            check_flag(value, subject=subject, field=name)
        if enforce_interruption_budget and not job_events_enabled:
            raise QuotaConfigError(
                subject, "enforce_interruption_budget", True,
                "False when job_events_enabled is False (budgets are enforced on job events)",
            )
        schedule_minutes = _check_schedule(metrics_schedule, subject=subject)
        check_count(runnable_count_cap, subject=subject, field="runnable_count_cap", minimum=0,
                    maximum=MAX_LISTING_PAGES * MAX_PAGE_SIZE)
        snapshot_age_seconds = _check_snapshot_age(max_snapshot_age, subject=subject)
        if job_events_concurrency is not None:
            check_count(job_events_concurrency, subject=subject, field="job_events_concurrency",
                        minimum=1, maximum=MAX_JOB_EVENTS_CONCURRENCY)
        if not isinstance(namespace, str) or not 1 <= len(namespace) <= 255 or (
            namespace.startswith("AWS/")
        ):
            raise QuotaConfigError(subject, "namespace", namespace, _NAMESPACE_ALLOWED)
        if thresholds is not None and not isinstance(thresholds, ShareAlarmThresholds):
            raise QuotaConfigError(subject, "thresholds", thresholds, "a ShareAlarmThresholds")
        default_thresholds = (thresholds or ShareAlarmThresholds()).validate(subject=subject)
        per_share = _check_share_thresholds(share_thresholds or {}, explicit, subject=subject)
        _check_owner_topics(owner_topics, _owners(specs), subject=subject)
        if operations_topic is not None:
            _check_topic(operations_topic, subject=subject, field="operations_topic")
        return cls(
            explicit=explicit, schedule_minutes=schedule_minutes,
            runnable_count_cap=runnable_count_cap, snapshot_age_seconds=snapshot_age_seconds,
            thresholds=default_thresholds, share_thresholds=per_share,
        )


def _check_topic(topic: object, *, subject: str, field: str) -> None:
    if is_unresolved(topic) or not isinstance(getattr(topic, "topic_arn", None), str):
        raise QuotaConfigError(
            subject, field, topic,
            "an sns.ITopic (sns.Topic.from_topic_arn(...) for an existing topic)",
        )


def _check_owner_topics(
    given: object, owners: Sequence[str], *, subject: str
) -> None:
    if given is None:
        return
    if not isinstance(given, Mapping):
        raise QuotaConfigError(
            subject, "owner_topics", given, "a mapping of owner name to sns.ITopic"
        )
    missing = [owner for owner in owners if owner not in given]
    if missing:
        raise QuotaConfigError(
            subject, "owner_topics", sorted(given),
            f"a topic for every owner of the monitored shares; missing: {', '.join(missing)}",
        )
    for owner, topic in given.items():
        _check_topic(topic, subject=subject, field=f"owner_topics[{owner!r}]")


def _training_job_queue(job_queue: object, *, subject: str) -> ITrainingJobQueue:
    if isinstance(job_queue, ITrainingJobQueue):
        return job_queue
    if isinstance(job_queue, IHasTrainingJobQueue) and isinstance(
        job_queue.job_queue, ITrainingJobQueue
    ):
        return job_queue.job_queue
    raise QuotaConfigError(
        subject, "job_queue", job_queue,
        "a QuotaManagedTrainingQueue, a TrainingJobQueue or one of its from_... imports",
    )


def _check_snapshot_age(age: object, *, subject: str) -> int | None:
    if age is None:
        return None
    if isinstance(age, Duration):
        seconds = age.to_seconds(integral=False)
        if seconds == int(seconds) and MIN_SNAPSHOT_AGE_SECONDS <= seconds <= (
            MAX_SNAPSHOT_AGE_SECONDS
        ):
            return int(seconds)
    shown = age.to_human_string() if isinstance(age, Duration) else age
    raise QuotaConfigError(
        subject, "max_snapshot_age", shown,
        "None (any age) or a Duration of whole seconds from 1 minute to 1 day",
    )


def _check_schedule(schedule: object, *, subject: str) -> int:
    if isinstance(schedule, Duration):
        seconds = schedule.to_seconds(integral=False)
        if seconds % 60 == 0 and 1 <= seconds // 60 <= MAX_SCHEDULE_MINUTES:
            return int(seconds // 60)
    shown = schedule.to_human_string() if isinstance(schedule, Duration) else schedule
    raise QuotaConfigError(
        subject, "metrics_schedule", shown,
        f"a Duration of whole minutes, 1 to {MAX_SCHEDULE_MINUTES}",
    )


def _check_share_thresholds(
    given: Mapping[str, ShareAlarmThresholds],
    specs: Sequence[QuotaShareSpec] | None,
    *,
    subject: str,
) -> dict[str, ShareAlarmThresholds]:
    """Each value checked; the names too once the monitored shares are known (``specs``)."""
    names = {spec.name for spec in specs or ()}
    checked: dict[str, ShareAlarmThresholds] = {}
    for name, value in given.items():
        if specs is not None and name not in names:
            raise QuotaConfigError(
                subject, "share_thresholds", name,
                f"the name of a monitored share ({', '.join(sorted(names))})",
            )
        if not isinstance(value, ShareAlarmThresholds):
            raise QuotaConfigError(
                share_subject(name), "share_thresholds", value, "a ShareAlarmThresholds"
            )
        checked[name] = value.validate(subject=share_subject(name), field="share_thresholds")
    return checked


def _owners(specs: Sequence[QuotaShareSpec]) -> list[str]:
    return sorted({spec.agreement.owner for spec in specs if spec.agreement is not None})
