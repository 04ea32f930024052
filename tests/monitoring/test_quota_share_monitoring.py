"""QuotaShareMonitoring: what it deploys, what it may do, where it sends what, and its checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from tempfile import TemporaryDirectory
from types import SimpleNamespace
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Annotations, Match, Template
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs, lint

from quota_constructs import (
    CapacityLimit,
    QuotaConfigError,
    QuotaManagedTrainingQueue,
    QuotaShareMonitoring,
    QuotaShareSpec,
    ShareAgreement,
    ShareAlarmThresholds,
    SharingStrategy,
    TrainingJobQueue,
)
from quota_constructs.monitoring._asset import DECLARATION_FILE
from quota_constructs.wire import monitoring_contract as contract
from quota_constructs.wire.monitoring_declaration import monitoring_declaration_json

from ..constructs.support import G5, G6, logical_id, policy_statements, spec
from . import sample_events as events

ENV = cdk.Environment(account="123456789012", region="us-east-1")
RESEARCH = ShareAgreement(owner="research", purpose="Checkpointed sweeps", recoverable=True,
                          interruption_budget=3)
PRODUCT = ShareAgreement(owner="product", purpose="Release models")
SHARES = (
    spec("QS1", SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200,
         in_share_preemption=True, agreement=RESEARCH),
    spec("QS2", SharingStrategy.LEND, agreement=PRODUCT),
    spec("QS3", SharingStrategy.RESERVE),
)
TWO_UNITS = QuotaShareSpec(
    name="Multi", capacity_limits=[CapacityLimit(G5, 1), CapacityLimit(G6, 2)],
    strategy=SharingStrategy.LEND_AND_BORROW, agreement=RESEARCH,
)


def managed(stack: cdk.Stack, shares: Any = SHARES) -> QuotaManagedTrainingQueue:
    return QuotaManagedTrainingQueue(
        stack, "TrainingQueue",
        capacity_limits=[CapacityLimit(G5, 3), CapacityLimit(G6, 2)], shares=shares,
    )


@pytest.fixture(scope="module")
def built() -> Iterator[SimpleNamespace]:
    outdir = TemporaryDirectory()
    app = cdk.App(outdir=outdir.name)
    b = SimpleNamespace(app=app, synthesized=Path(outdir.name))
    b.watched = managed(cdk.Stack(app, "Watched", env=ENV)).add_monitoring()
    enforcing_stack = cdk.Stack(app, "Enforcing", env=ENV)
    b.operations = sns.Topic.from_topic_arn(
        enforcing_stack, "Operations", "arn:aws:sns:us-east-1:123456789012:platform-ops"
    )
    b.enforcing = managed(enforcing_stack).add_monitoring(
        enforce_interruption_budget=True,
        operations_topic=b.operations,
        metrics_schedule=cdk.Duration.minutes(10),
        share_thresholds={"QS2": ShareAlarmThresholds(max_preemptions_per_hour=None,
                                                      starved_after=cdk.Duration.minutes(5))},
    )
    imported_stack = cdk.Stack(app, "Imported", env=ENV)
    b.given_topics = {
        owner: sns.Topic.from_topic_arn(
            imported_stack, f"{owner}Topic", f"arn:aws:sns:us-east-1:123456789012:{owner}"
        )
        for owner in ("research", "product", "nobody-monitored")
    }
    b.imported = QuotaShareMonitoring(
        imported_stack, "Monitoring",
        job_queue=TrainingJobQueue.from_job_queue_arn(imported_stack, "Queue", events.QUEUE_ARN),
        shares=[*SHARES, TWO_UNITS],
        owner_topics=b.given_topics,
    )
    b.quiet = managed(cdk.Stack(app, "Quiet", env=ENV)).add_monitoring(
        metrics_enabled=False, dashboard_enabled=False
    )
    b.silent = managed(cdk.Stack(app, "Silent", env=ENV)).add_monitoring(
        job_events_enabled=False, alarms_enabled=False
    )
    with outdir:
        app.synth()
        yield b


def template(monitoring: QuotaShareMonitoring) -> Template:
    return Template.from_stack(cdk.Stack.of(monitoring))


def resources(monitoring: QuotaShareMonitoring, type_: str) -> dict[str, Any]:
    return template(monitoring).find_resources(type_)


def function_properties(function: Any) -> dict[str, Any]:
    stack = cdk.Stack.of(function)
    return Template.from_stack(stack).to_json()["Resources"][logical_id(function)]["Properties"]


def actions_of(statements: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Every allowed action with the resources it is allowed on."""
    allowed: dict[str, list[Any]] = {}
    for statement in statements:
        assert statement["Effect"] == "Allow"
        names = statement["Action"] if isinstance(statement["Action"], list) else [
            statement["Action"]]
        targets = statement["Resource"] if isinstance(statement["Resource"], list) else [
            statement["Resource"]]
        for name in names:
            allowed.setdefault(name, []).extend(targets)
    return allowed


# -- the functions -----------------------------------------------------------------------------


def test_both_functions_run_the_contract_handlers_on_python_3_14_arm64(built: Any) -> None:
    for function, handler in (
        (built.watched.metrics_function, contract.SHARE_METRICS_HANDLER),
        (built.watched.job_events_function, contract.JOB_EVENTS_HANDLER),
    ):
        props = function_properties(function)
        assert props["Handler"] == handler
        assert props["Runtime"] == "python3.14"
        assert props["Architectures"] == ["arm64"]
        assert props["TracingConfig"] == {"Mode": "Active"}


def test_functions_are_told_their_queue_declaration_and_namespace(built: Any) -> None:
    queue = built.watched.job_queue
    stack = cdk.Stack.of(queue)
    metrics_env = function_properties(built.watched.metrics_function)["Environment"]["Variables"]
    assert metrics_env[contract.JOB_QUEUE_ARN_ENV] == stack.resolve(queue.job_queue_arn)
    assert metrics_env[contract.JOB_QUEUE_NAME_ENV] == stack.resolve(queue.job_queue_name)
    assert metrics_env[contract.DECLARATION_FILE_ENV] == DECLARATION_FILE
    assert metrics_env[contract.METRIC_NAMESPACE_ENV] == contract.DEFAULT_METRIC_NAMESPACE
    assert contract.OWNER_TOPICS_ENV not in metrics_env
    events_env = function_properties(built.watched.job_events_function)["Environment"][
        "Variables"]
    assert events_env[contract.ENFORCE_BUDGET_ENV] == "false"
    enforcing_env = function_properties(built.enforcing.job_events_function)["Environment"][
        "Variables"]
    assert enforcing_env[contract.ENFORCE_BUDGET_ENV] == "true"
    # The snapshot's age bound: ten minutes unless told otherwise.
    assert metrics_env[contract.MAX_SNAPSHOT_AGE_ENV] == "600"


@pytest.mark.parametrize(("age", "told"), [
    (cdk.Duration.minutes(20), "1200"), (cdk.Duration.seconds(90), "90"), (None, "off"),
])
def test_the_snapshot_age_bound_reaches_the_metrics_function(
    age: cdk.Duration | None, told: str
) -> None:
    monitoring = scratch_queue().add_monitoring(max_snapshot_age=age)
    env = function_properties(monitoring.metrics_function)["Environment"]["Variables"]
    assert env[contract.MAX_SNAPSHOT_AGE_ENV] == told


def test_owner_topics_reach_the_events_function_as_owner_to_arn(built: Any) -> None:
    env = function_properties(built.imported.job_events_function)["Environment"]["Variables"]
    # Literal ARNs of imported topics: the JSON is a plain string.
    assert json.loads(env[contract.OWNER_TOPICS_ENV]) == {
        "product": "arn:aws:sns:us-east-1:123456789012:product",
        "research": "arn:aws:sns:us-east-1:123456789012:research",
    }


def test_the_asset_carries_the_declaration_of_the_monitored_shares(built: Any) -> None:
    code = function_properties(built.watched.metrics_function)["Code"]
    asset_hash = code["S3Key"].removesuffix(".zip")
    staged = built.synthesized / f"asset.{asset_hash}"
    assert (staged / DECLARATION_FILE).read_text() == monitoring_declaration_json(SHARES)
    assert (staged / "quota_constructs" / "wire" / "monitoring_contract.py").is_file()
    # Both functions share the one asset; monitoring constructs never travel in it.
    assert function_properties(built.watched.job_events_function)["Code"] == code
    assert not (staged / "quota_constructs" / "monitoring").exists()


def test_metrics_run_on_the_schedule_without_retries(built: Any) -> None:
    rule = function_target_rule(built.watched, built.watched.metrics_function)
    assert rule["ScheduleExpression"] == "rate(1 minute)"
    assert rule["Targets"][0]["RetryPolicy"]["MaximumRetryAttempts"] == 0
    slow = function_target_rule(built.enforcing, built.enforcing.metrics_function)
    assert slow["ScheduleExpression"] == "rate(10 minutes)"


def function_target_rule(monitoring: QuotaShareMonitoring, function: Any) -> dict[str, Any]:
    stack = cdk.Stack.of(monitoring)
    arn = stack.resolve(function.function_arn)
    rules = [
        rule["Properties"] for rule in resources(monitoring, "AWS::Events::Rule").values()
        if rule["Properties"]["Targets"][0]["Arn"] == arn
    ]
    assert len(rules) == 1
    return rules[0]


def test_log_groups_are_kept_one_month_by_default(built: Any) -> None:
    groups = resources(built.watched, "AWS::Logs::LogGroup")
    monitoring = [g for lid, g in groups.items() if "Monitoring" in lid]
    assert len(monitoring) == 2
    assert {g["Properties"]["RetentionInDays"] for g in monitoring} == {30}


# -- EventBridge: only this queue's events ----------------------------------------------------


def event_patterns(monitoring: QuotaShareMonitoring) -> dict[str, dict[str, Any]]:
    job_events = monitoring.job_events
    assert job_events is not None and monitoring.preemptions is not None
    rules = template(monitoring).to_json()["Resources"]
    return {
        name: rules[logical_id(rule)]["Properties"]["EventPattern"]
        for name, rule in (("state", job_events.state_change_rule),
                           ("preemption", monitoring.preemptions.preemption_rule),
                           ("blocked", job_events.queue_blocked_rule))
    }


def test_state_changes_of_this_queue_match_and_of_other_queues_do_not(built: Any) -> None:
    patterns = event_patterns(built.imported)
    failed = events.with_status(events.STATE_CHANGE, "FAILED")
    assert events.matches(patterns["state"], failed)
    assert not events.matches(patterns["state"], events.on_queue(failed, events.OTHER_QUEUE_ARN))
    assert not events.matches(patterns["state"], events.with_status(
        events.CLASSIC_JOB_STATE_CHANGE, "FAILED"))
    assert not events.matches(patterns["state"], events.PREEMPTION_STARTED)


@pytest.mark.parametrize("status", ["SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED",
                                    "STARTING", "RUNNING", "SUCCEEDED"])
def test_state_changes_are_filtered_by_status_in_the_pattern(built: Any, status: str) -> None:
    patterns = event_patterns(built.imported)
    assert not events.matches(patterns["state"], events.with_status(events.STATE_CHANGE, status))


def test_the_documented_queue_blocked_event_reaches_the_function(built: Any) -> None:
    patterns = event_patterns(built.imported)
    assert events.matches(patterns["blocked"], events.QUEUE_BLOCKED)
    assert not events.matches(
        patterns["blocked"], events.on_queue(events.QUEUE_BLOCKED, events.OTHER_QUEUE_ARN))
    for other in ("state", "preemption"):
        assert not events.matches(patterns[other], events.QUEUE_BLOCKED)
    rules = template(built.imported).to_json()["Resources"]
    assert built.imported.job_events is not None
    rule = rules[logical_id(built.imported.job_events.queue_blocked_rule)]["Properties"]
    assert rule["Targets"][0]["Arn"] == cdk.Stack.of(built.imported).resolve(
        built.imported.job_events.function.function_arn)


def test_preemption_events_match_the_preemption_rule_only(built: Any) -> None:
    patterns = event_patterns(built.imported)
    for event in (events.PREEMPTION_STARTED, events.PREEMPTION_COMPLETED):
        assert events.matches(patterns["preemption"], event)
        assert not events.matches(patterns["state"], event)
    assert not events.matches(patterns["preemption"], events.STATE_CHANGE)


def test_state_change_pattern_names_the_created_queue_by_arn(built: Any) -> None:
    queue = built.watched.job_queue
    patterns = event_patterns(built.watched)
    arn = cdk.Stack.of(queue).resolve(queue.job_queue_arn)
    assert patterns["state"]["detail"] == {"jobQueue": [arn], "status": ["FAILED"]}
    assert patterns["blocked"]["detail"] == {"jobQueue": [arn]}


def test_event_deliveries_retry_then_park_in_the_dead_letter_queue(built: Any) -> None:
    stack = cdk.Stack.of(built.watched)
    dlq = stack.resolve(built.watched.dead_letter_queue.queue_arn)
    for rule in resources(built.watched, "AWS::Events::Rule").values():
        target = rule["Properties"]["Targets"][0]
        assert target["DeadLetterConfig"] == {"Arn": dlq}
    configs = resources(built.watched, "AWS::Lambda::EventInvokeConfig")
    assert len(configs) == 3  # metrics, job events, the stack's preemptions
    for config in configs.values():
        assert config["Properties"]["DestinationConfig"]["OnFailure"]["Destination"] == dlq


def test_dead_letter_queue_is_encrypted_and_tls_only(built: Any) -> None:
    props = template(built.watched).to_json()["Resources"][
        logical_id(built.watched.dead_letter_queue)]["Properties"]
    assert props["SqsManagedSseEnabled"] is True
    policies = resources(built.watched, "AWS::SQS::QueuePolicy")
    statements = [s for p in policies.values() for s in p["Properties"]["PolicyDocument"][
        "Statement"]]
    assert any(
        s["Effect"] == "Deny" and s.get("Condition") == {"Bool": {"aws:SecureTransport": "false"}}
        for s in statements
    )


# -- least privilege ---------------------------------------------------------------------------


def test_metrics_function_may_only_read_this_queue(built: Any) -> None:
    share_metrics = built.watched.share_metrics
    stack = cdk.Stack.of(share_metrics)
    queue_arn = stack.resolve(built.watched.job_queue.job_queue_arn)
    allowed = actions_of(policy_statements(share_metrics.role))
    batch = {name: arns for name, arns in allowed.items() if name.startswith("batch:")}
    assert batch == {
        "batch:GetJobQueueSnapshot": [queue_arn],
        "batch:ListQuotaShares": [queue_arn],
        "batch:DescribeQuotaShare": [{"Fn::Join": ["", [queue_arn, "/quota-share/*"]]}],
        "batch:ListServiceJobs": ["*"],
        "batch:DescribeServiceJob": ["*"],
    }
    others = {name.split(":")[0] for name in allowed} - {"batch"}
    assert others == {"logs", "xray", "sqs"}
    # Failure records go to the dead-letter queue; nothing else may be done with it.
    dlq = stack.resolve(built.watched.dead_letter_queue.queue_arn)
    assert {name: arns for name, arns in allowed.items() if name.startswith("sqs:")} == {
        "sqs:SendMessage": [dlq]}
    assert not any(name.startswith("sns:") for name in allowed)


def test_events_function_publishes_only_to_the_owners_and_never_terminates_by_default(
    built: Any,
) -> None:
    job_events = built.imported.job_events
    allowed = actions_of(policy_statements(job_events.role))
    assert sorted(allowed["sns:Publish"]) == [
        "arn:aws:sns:us-east-1:123456789012:product",
        "arn:aws:sns:us-east-1:123456789012:research",
    ]
    assert allowed["batch:DescribeServiceJob"] == ["*"]
    assert "batch:TerminateServiceJob" not in allowed
    assert {name for name in allowed if name.startswith("batch:")} == {
        "batch:DescribeServiceJob"}
    watched = actions_of(policy_statements(built.watched.job_events.role))
    assert "batch:TerminateServiceJob" not in watched


def test_termination_is_granted_only_with_enforcement(built: Any) -> None:
    """Only the stack's preemptions function terminates (budgets are counted on preemptions);
    the per-queue job-events function never may, enforcement or not."""
    assert built.enforcing.preemptions is not None
    allowed = actions_of(policy_statements(built.enforcing.preemptions.role))
    assert "batch:TerminateServiceJob" not in actions_of(
        policy_statements(built.enforcing.job_events.role))
    assert allowed["batch:TerminateServiceJob"] == [
        {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                           ":batch:us-east-1:123456789012:service-job/*"]]}
    ]
    # The metrics function never gets it.
    metrics = actions_of(policy_statements(built.enforcing.share_metrics.role))
    assert "batch:TerminateServiceJob" not in metrics


def test_roles_carry_no_managed_policy(built: Any) -> None:
    for role in (built.watched.share_metrics.role, built.watched.job_events.role):
        props = template(built.watched).to_json()["Resources"][logical_id(role)]["Properties"]
        assert "ManagedPolicyArns" not in props


# -- owner topics ------------------------------------------------------------------------------


def test_one_encrypted_tls_only_topic_per_owner_is_created(built: Any) -> None:
    assert sorted(built.watched.owner_topics) == ["product", "research"]
    topics = resources(built.watched, "AWS::SNS::Topic")
    assert len(topics) == 2
    for topic in topics.values():
        assert "KmsMasterKeyId" in topic["Properties"]
    keys = resources(built.watched, "AWS::KMS::Key")
    assert [k["Properties"]["EnableKeyRotation"] for k in keys.values()] == [True]
    key_policy = next(iter(keys.values()))["Properties"]["KeyPolicy"]["Statement"]
    assert any(s["Principal"] == {"Service": "cloudwatch.amazonaws.com"} for s in key_policy)


def test_given_topics_are_used_and_none_are_created(built: Any) -> None:
    assert resources(built.imported, "AWS::SNS::Topic") == {}
    assert resources(built.imported, "AWS::KMS::Key") == {}
    assert built.imported.owner_topics == {
        "product": built.given_topics["product"], "research": built.given_topics["research"]
    }


# -- alarms ------------------------------------------------------------------------------------


def alarms_by_id(monitoring: QuotaShareMonitoring, share: str) -> dict[str, dict[str, Any]]:
    rendered = template(monitoring).to_json()["Resources"]
    return {
        alarm.node.id: rendered[logical_id(alarm)]["Properties"]
        for alarm in monitoring.alarms_of(share)
    }


def test_each_share_gets_starved_drift_and_preemption_alarms(built: Any) -> None:
    # QS1's agreement sets an interruption budget: jobs lost to it are watched too.
    assert sorted(alarms_by_id(built.watched, "QS1")) == [
        "BudgetFailures", "Drift", "OverBudget", "Preemptions", "Starved"]
    # No interruption budget: nothing to be over, nothing to lose to it.
    assert sorted(alarms_by_id(built.watched, "QS2")) == ["Drift", "Preemptions", "Starved"]


def test_alarms_notify_the_owner_topic_only(built: Any) -> None:
    stack = cdk.Stack.of(built.watched)
    research = stack.resolve(built.watched.owner_topics["research"].topic_arn)
    for props in alarms_by_id(built.watched, "QS1").values():
        assert props["AlarmActions"] == [research]
        assert props["OKActions"] == [research]


def test_a_share_without_owner_alarms_silently_and_is_warned_about(built: Any) -> None:
    for props in alarms_by_id(built.watched, "QS3").values():
        assert "AlarmActions" not in props
    warnings = cdk.assertions.Annotations.from_stack(cdk.Stack.of(built.watched)).find_warning(
        "*", cdk.assertions.Match.string_like_regexp("QS3.*no agreement")
    )
    assert len(warnings) == 1


def test_starved_is_the_head_job_waiting_while_it_fits_in_idle_own_capacity(
    built: Any,
) -> None:
    for monitoring, share in ((built.watched, "QS1"), (built.imported, "Multi")):
        starved = alarms_by_id(monitoring, share)["Starved"]
        expression = next(q["Expression"] for q in starved["Metrics"] if "Expression" in q)
        assert expression == "IF(wait > 1800 AND fits >= 1, 1, 0)"
        stats = {q["Id"]: (q["MetricStat"]["Metric"]["MetricName"], q["MetricStat"]["Stat"])
                 for q in starved["Metrics"] if "MetricStat" in q}
        assert stats == {"wait": (contract.OLDEST_RUNNABLE_JOB_AGE, "Minimum"),
                         "fits": (contract.HEAD_JOB_FITS_IDLE_OWN, "Minimum")}
        # Neither starvation nor its end when nothing was measured (or the snapshot was
        # too old to judge): the alarm keeps its state.
        assert starved["TreatMissingData"] == "ignore"
        assert starved["Threshold"] == 1


def test_drift_and_preemption_alarms(built: Any) -> None:
    alarms = alarms_by_id(built.watched, "QS1")
    drift = alarms["Drift"]
    assert (drift["MetricName"], drift["Statistic"], drift["Threshold"]) == (
        contract.SHARE_DRIFT, "Maximum", 1)
    assert drift["Period"] * drift["EvaluationPeriods"] == 15 * 60
    assert drift["TreatMissingData"] == "missing"
    preemptions = alarms["Preemptions"]
    assert (preemptions["MetricName"], preemptions["Period"], preemptions["Threshold"]) == (
        contract.PREEMPTIONS, 3600, 10)
    assert preemptions["TreatMissingData"] == "notBreaching"
    over = alarms["OverBudget"]
    assert (over["MetricName"], over["Threshold"], over["ComparisonOperator"]) == (
        contract.JOBS_OVER_BUDGET, 0, "GreaterThanThreshold")


def test_alarm_metrics_carry_the_dimensions_the_runtime_emits(built: Any) -> None:
    stack = cdk.Stack.of(built.watched)
    queue_name = stack.resolve(built.watched.job_queue.job_queue_name)
    drift = alarms_by_id(built.watched, "QS2")["Drift"]
    assert drift["Namespace"] == contract.DEFAULT_METRIC_NAMESPACE
    assert drift["Dimensions"] == [
        {"Name": contract.JOB_QUEUE_DIMENSION, "Value": queue_name},
        {"Name": contract.QUOTA_SHARE_DIMENSION, "Value": "QS2"},
    ]


def test_thresholds_are_overridable_per_share(built: Any) -> None:
    alarms = alarms_by_id(built.enforcing, "QS2")
    assert "Preemptions" not in alarms
    expression = next(q["Expression"] for q in alarms["Starved"]["Metrics"] if "Expression" in q)
    assert expression.startswith("IF(wait > 300 ")
    # A ten-minute schedule widens the period to ten minutes.
    assert alarms["Drift"]["Period"] == 600


def test_dead_letters_alarm_fires_on_messages_arriving_and_tells_operations(
    built: Any,
) -> None:
    rendered = template(built.enforcing).to_json()["Resources"]
    alarm = rendered[logical_id(built.enforcing.dead_letters_alarm)]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"], alarm["Statistic"]) == (
        "AWS/SQS", "NumberOfMessagesSent", "Sum")
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (
        1, "GreaterThanOrEqualToThreshold")
    assert alarm["AlarmActions"] == ["arn:aws:sns:us-east-1:123456789012:platform-ops"]
    assert alarm["TreatMissingData"] == "notBreaching"
    quiet = template(built.watched).to_json()["Resources"][
        logical_id(built.watched.dead_letters_alarm)]["Properties"]
    assert "AlarmActions" not in quiet


def test_each_monitored_queue_has_a_health_alarm_treating_missing_as_breaching(
    built: Any,
) -> None:
    stack = cdk.Stack.of(built.enforcing)
    alarm = template(built.enforcing).to_json()["Resources"][
        logical_id(built.enforcing.monitor_health_alarm)]["Properties"]
    assert (alarm["Namespace"], alarm["MetricName"], alarm["Statistic"]) == (
        contract.DEFAULT_METRIC_NAMESPACE, contract.MONITOR_HEALTHY, "Minimum")
    assert alarm["Dimensions"] == [{
        "Name": contract.JOB_QUEUE_DIMENSION,
        "Value": stack.resolve(built.enforcing.job_queue.job_queue_name)}]
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (1, "LessThanThreshold")
    assert alarm["TreatMissingData"] == "breaching"
    assert alarm["AlarmActions"] == ["arn:aws:sns:us-east-1:123456789012:platform-ops"]
    assert built.quiet.monitor_health_alarm is None  # no metrics function, nothing to watch


def _cloudwatch_conditions(statement: dict[str, Any], stack: cdk.Stack) -> bool:
    conditions = statement.get("Condition", {})
    account = conditions.get("StringEquals", {}).get("aws:SourceAccount")
    source = conditions.get("ArnLike", {}).get("aws:SourceArn")
    # Alarms CloudFormation names after this stack, of this account and region only.
    return account == "123456789012" and source == {"Fn::Join": ["", [
        "arn:", {"Ref": "AWS::Partition"},
        f":cloudwatch:us-east-1:123456789012:alarm:{stack.stack_name}-*"]]}


def _allows(statement: dict[str, Any], actions: set[str]) -> bool:
    granted = statement["Action"] if isinstance(statement["Action"], list) else [
        statement["Action"]]
    return (statement["Effect"] == "Allow"
            and statement.get("Principal") == {"Service": "cloudwatch.amazonaws.com"}
            and actions <= set(granted))


def test_every_alarm_can_publish_to_its_topic_and_use_its_key(built: Any) -> None:
    checked = 0
    for stack in [c for c in built.app.node.children if isinstance(c, cdk.Stack)]:
        rendered = Template.from_stack(stack).to_json()["Resources"]
        policies = [r["Properties"] for r in rendered.values()
                    if r["Type"] == "AWS::SNS::TopicPolicy"]
        for alarm in (r["Properties"] for r in rendered.values()
                      if r["Type"] == "AWS::CloudWatch::Alarm"):
            for action in alarm.get("AlarmActions", []) + alarm.get("OKActions", []):
                if isinstance(action, str):
                    continue  # an imported topic: warned about, checked below
                topic_id = action["Ref"]
                [policy] = [p for p in policies if action in p["Topics"]]
                assert any(
                    _allows(s, {"sns:Publish"}) and _cloudwatch_conditions(s, stack)
                    for s in policy["PolicyDocument"]["Statement"]), topic_id
                key_id = rendered[topic_id]["Properties"]["KmsMasterKeyId"]["Fn::GetAtt"][0]
                key = rendered[key_id]["Properties"]["KeyPolicy"]["Statement"]
                cloudwatch = [s for s in key if s.get("Principal") == {
                    "Service": "cloudwatch.amazonaws.com"}]
                assert cloudwatch and all(
                    _allows(s, {"kms:Decrypt", "kms:GenerateDataKey*"})
                    and _cloudwatch_conditions(s, stack) for s in cloudwatch), key_id
                checked += 1
    assert checked > 0


def test_a_topic_the_app_does_not_define_gets_a_warning_saying_what_to_add(
    built: Any,
) -> None:
    warnings = [
        m for m in Annotations.from_stack(
            cdk.Stack.of(built.enforcing)).find_warning("*", Match.any_value())
        if "quota_constructs:alarm-topic-not-managed" in str(m.entry.data)
    ]
    assert len(warnings) == 1
    assert "platform-ops" in str(warnings[0].entry.data)
    assert "aws:SourceAccount" in str(warnings[0].entry.data)


def test_a_topic_defined_in_the_app_gets_the_grant_on_topic_and_key() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Delivered", env=ENV)
    key = kms.Key(stack, "OpsKey", enable_key_rotation=True)
    operations = sns.Topic(stack, "Ops", master_key=key, enforce_ssl=True)
    monitoring = managed(stack).add_monitoring(operations_topic=operations)
    rendered = Template.from_stack(stack).to_json()["Resources"]
    topic_id = logical_id(operations)
    [policy] = [r["Properties"] for r in rendered.values()
                if r["Type"] == "AWS::SNS::TopicPolicy" and {"Ref": topic_id} in
                r["Properties"]["Topics"]]
    assert any(_allows(s, {"sns:Publish"}) and _cloudwatch_conditions(s, stack)
               for s in policy["PolicyDocument"]["Statement"])
    key_policy = rendered[logical_id(key)]["Properties"]["KeyPolicy"]["Statement"]
    assert any(_allows(s, {"kms:Decrypt", "kms:GenerateDataKey*"})
               and _cloudwatch_conditions(s, stack) for s in key_policy)
    assert monitoring.monitor_health_alarm is not None


def key_warnings(stack: cdk.Stack) -> list[str]:
    return [
        str(m.entry.data)
        for m in Annotations.from_stack(stack).find_warning("*", Match.any_value())
        if "quota_constructs:alarm-topic-key-not-managed" in str(m.entry.data)
    ]


def test_a_topic_encrypted_with_the_aws_managed_key_gets_a_warning_saying_what_to_do() -> None:
    stack = cdk.Stack(cdk.App(), "ManagedKey", env=ENV)
    aws_key = kms.Alias.from_alias_name(stack, "AwsSnsKey", "alias/aws/sns")
    operations = sns.Topic(stack, "Ops", master_key=aws_key, enforce_ssl=True)
    managed(stack).add_monitoring(operations_topic=operations)
    (warning,) = key_warnings(stack)
    assert "ManagedKey/Ops" in warning and "alias/aws/sns" in warning
    assert "AWS managed key" in warning and "customer managed key" in warning
    # The topic's own policy is the app's, so it still gets CloudWatch's statement.
    assert "alarm-topic-not-managed" not in str(
        Annotations.from_stack(stack).find_warning("*", Match.any_value()))


def test_an_owner_topic_with_an_imported_key_gets_a_warning_naming_the_statement() -> None:
    stack = cdk.Stack(cdk.App(), "ImportedKey", env=ENV)
    arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    key = kms.Key.from_key_arn(stack, "TeamKey", arn)
    topic = sns.Topic(stack, "ResearchTopic", master_key=key, enforce_ssl=True)
    product = sns.Topic(stack, "ProductTopic", enforce_ssl=True)  # unencrypted: nothing to warn
    managed(stack).add_monitoring(owner_topics={"research": topic, "product": product})
    (warning,) = key_warnings(stack)
    assert "ImportedKey/ResearchTopic" in warning and arn in warning
    assert "kms:Decrypt" in warning and "kms:GenerateDataKey*" in warning
    assert "aws:SourceAccount" in warning and "ImportedKey" in warning


def test_a_key_defined_in_the_app_needs_no_warning() -> None:
    stack = cdk.Stack(cdk.App(), "OwnKey", env=ENV)
    key = kms.Key(stack, "OpsKey", enable_key_rotation=True)
    alias = kms.Alias(stack, "OpsAlias", alias_name="alias/ops", target_key=key)
    operations = sns.Topic(stack, "Ops", master_key=alias, enforce_ssl=True)
    managed(stack).add_monitoring(operations_topic=operations)
    assert key_warnings(stack) == []
    key_policy = Template.from_stack(stack).to_json()["Resources"][logical_id(key)][
        "Properties"]["KeyPolicy"]["Statement"]
    assert any(_allows(s, {"kms:Decrypt", "kms:GenerateDataKey*"}) for s in key_policy)


# -- switches ----------------------------------------------------------------------------------


def test_metrics_off_means_no_schedule_no_starved_or_drift(built: Any) -> None:
    assert built.quiet.metrics_function is None
    assert built.quiet.dashboard is None
    assert resources(built.quiet, "AWS::CloudWatch::Dashboard") == {}
    # The job-events alarms stay, the agreement's among them (published on job events).
    assert sorted(alarms_by_id(built.quiet, "QS1")) == [
        "BudgetFailures", "OverBudget", "Preemptions"]
    rules = resources(built.quiet, "AWS::Events::Rule")
    assert all("ScheduleExpression" not in r["Properties"] for r in rules.values())


def test_job_events_off_means_no_rules_on_batch_events_and_no_topics(built: Any) -> None:
    assert built.silent.job_events_function is None
    assert built.silent.alarms == {}
    assert built.silent.dead_letters_alarm is None
    assert resources(built.silent, "AWS::CloudWatch::Alarm") == {}
    rules = resources(built.silent, "AWS::Events::Rule")
    assert all("EventPattern" not in r["Properties"] for r in rules.values())
    assert len(resources(built.silent, "AWS::CloudWatch::Dashboard")) == 1


# -- dashboard ---------------------------------------------------------------------------------


def dashboard_body(monitoring: QuotaShareMonitoring) -> str:
    assert monitoring.dashboard is not None
    rendered = template(monitoring).to_json()["Resources"][
        logical_id(monitoring.dashboard.resource)]
    return json.dumps(rendered["Properties"]["DashboardBody"])


def test_dashboard_shows_every_share_and_the_aws_batch_queue_metrics(built: Any) -> None:
    body = dashboard_body(built.imported)
    for name in ("JobsPreempted", "JobsMovedToRunnable", "JobSubmittedToFirstScheduledDuration"):
        assert f'\\"AWS/Batch\\",\\"{name}\\",\\"JobQueueName\\",\\"HappyPathJobQueue\\"' in body
    for share in ("QS1", "QS2", "QS3", "Multi"):
        assert f"{share}: RUNNABLE jobs" in body
    for metric in (contract.CAPACITY_IN_USE, contract.RUNNABLE_JOBS,
                   contract.OLDEST_RUNNABLE_JOB_AGE, contract.PREEMPTIONS,
                   contract.BLOCKED_JOBS):
        assert metric in body
    # The own limit and what is borrowed are derived by metric math, not published.
    assert "used1 * 0 + 2" in body  # Multi's own limit of two ml.g6.xlarge
    assert "IF(used1 > 2, used1 - 2, 0)" in body
    for kind in contract.PREEMPTION_KINDS:
        assert f'\\"{contract.PREEMPTION_KIND_DIMENSION}\\",\\"{kind}\\"' in body


# -- nag and lint ------------------------------------------------------------------------------


@pytest.mark.parametrize("pack", [AwsSolutionsChecks, ServerlessChecks])
def test_cdk_nag_reports_no_unacknowledged_finding(built: Any, pack: Any) -> None:
    report = pack(built.app).validate_scope(built.app)
    findings = [
        f"{violation.rule_name} at {[r.construct_path for r in violation.violating_resources]}"
        for violation in report.violations
    ]
    assert findings == []


@pytest.mark.parametrize("name", ["Watched", "Enforcing", "Imported", "Quiet", "Silent"])
def test_templates_pass_cfn_lint(built: Any, name: str) -> None:
    stack = built.app.node.find_child(name)
    rendered = json.dumps(Template.from_stack(stack).to_json())
    matches = lint(rendered, config=ManualArgs(regions=["us-east-1"], ignore_checks=["W3005"]))
    assert [str(match) for match in matches] == []


# -- checks ------------------------------------------------------------------------------------


def scratch_queue() -> QuotaManagedTrainingQueue:
    return managed(cdk.Stack(cdk.App(), "Scratch"))


@pytest.mark.parametrize(
    ("props", "field", "allowed_part"),
    [
        ({"enforce_interruption_budget": True, "job_events_enabled": False},
         "enforce_interruption_budget", "job_events_enabled is False"),
        ({"metrics_schedule": cdk.Duration.seconds(30)}, "metrics_schedule", "whole minutes"),
        ({"metrics_schedule": cdk.Duration.hours(2)}, "metrics_schedule", "1 to 60"),
        ({"owner_topics": {}}, "owner_topics", "missing: product, research"),
        ({"namespace": "AWS/Batch"}, "namespace", "not starting with 'AWS/'"),
        ({"alarms_enabled": "yes"}, "alarms_enabled", "True or False"),
        ({"thresholds": ShareAlarmThresholds(starved_after=cdk.Duration.seconds(90))},
         "thresholds.starved_after", "whole minutes"),
        ({"max_snapshot_age": cdk.Duration.seconds(30)}, "max_snapshot_age", "1 minute to 1 day"),
        ({"max_snapshot_age": cdk.Duration.days(2)}, "max_snapshot_age", "1 minute to 1 day"),
        ({"max_snapshot_age": 600}, "max_snapshot_age", "None (any age)"),
    ],
)
def test_bad_props_name_the_monitoring_and_the_field(
    props: dict[str, Any], field: str, allowed_part: str
) -> None:
    queue = scratch_queue()
    with pytest.raises(QuotaConfigError) as raised:
        queue.add_monitoring(**props)
    assert raised.value.subject == "monitoring Scratch/TrainingQueue/Monitoring"
    assert raised.value.field == field
    assert allowed_part in raised.value.allowed
    # Checked before anything was built.
    assert queue.node.try_find_child("Monitoring") is None


def test_a_queue_without_declared_shares_needs_them_given() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Scratch")
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", events.QUEUE_ARN)
    QuotaShareMonitoring(stack, "Monitoring", job_queue=queue)
    # Shares may still be declared after the monitor: the check is made at synthesis.
    with pytest.raises(Exception) as raised:
        app.synth()
    assert "monitoring Scratch/Monitoring" in str(raised.value)
    assert "pass shares=[...]" in str(raised.value)


def test_thresholds_of_a_share_never_declared_are_refused_at_synthesis() -> None:
    app = cdk.App()
    queue = managed(cdk.Stack(app, "Scratch"))
    queue.add_monitoring(share_thresholds={"QS9": ShareAlarmThresholds()})
    with pytest.raises(Exception) as raised:
        app.synth()
    assert "share_thresholds" in str(raised.value) and "a monitored share" in str(raised.value)


def _synthesized(app: cdk.App, stack: cdk.Stack) -> dict[str, Any]:
    assembly = app.synth()
    rendered: dict[str, Any] = assembly.get_stack_by_name(stack.stack_name).template
    return rendered


def test_a_share_added_after_the_monitoring_is_monitored(tmp_path: Path) -> None:
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Late", env=ENV)
    queue = managed(stack, shares=SHARES[:1])
    monitoring = queue.add_monitoring()
    late = spec("QS2", SharingStrategy.LEND, agreement=PRODUCT)
    queue.job_queue.add_quota_share("QS2", spec=late)
    rendered = _synthesized(app, stack)

    assert [s.name for s in monitoring.shares] == ["QS1", "QS2"]
    assert {"Starved", "Drift"} <= {a.node.id for a in monitoring.alarms_of("QS2")}
    assert "product" in monitoring.owner_topics  # the late share's owner gets a topic
    # The functions' code carries the declaration of both shares.
    props = rendered["Resources"][logical_id(monitoring.metrics_function)]["Properties"]
    asset = tmp_path / f"asset.{props['Code']['S3Key'].removesuffix('.zip')}"
    declared = json.loads((asset / DECLARATION_FILE).read_text())
    assert [share["QuotaShareName"] for share in declared["Shares"]] == ["QS1", "QS2"]
    body = json.dumps(rendered["Resources"][logical_id(monitoring.dashboard)])
    assert "QS2: RUNNABLE jobs" in body
    # The job-events function may publish to, and is told about, the late owner's topic.
    events_env = rendered["Resources"][logical_id(monitoring.job_events_function)][
        "Properties"]["Environment"]["Variables"]
    assert "product" in json.dumps(events_env[contract.OWNER_TOPICS_ENV])


def test_a_share_is_watched_as_soon_as_it_is_declared_without_synthesis() -> None:
    """One phase: the queue's ledger tells the monitor of each share as it is recorded, so a
    share declared after the monitor (in another stack too) has its alarms, dashboard row,
    owner topic and deployed-config tag before anything is synthesized."""
    from quota_constructs.wire.deployed_config import (
        DEPLOYED_CONFIG_TAG_KEY,
        config_fingerprint,
    )
    from quota_constructs.wire.share_config import ShareConfig

    app = cdk.App()
    stack = cdk.Stack(app, "Early", env=ENV)
    queue = managed(stack, shares=SHARES[:1])
    monitoring = queue.add_monitoring()
    assert [s.name for s in monitoring.shares] == ["QS1"]
    assert monitoring.alarms_of("QS2") == ()
    team = cdk.Stack(app, "Team", env=ENV)
    late = spec("QS2", SharingStrategy.LEND, agreement=PRODUCT)
    share = queue.job_queue.add_quota_share("QS2", spec=late)
    moved = TrainingJobQueue.from_job_queue_arn(team, "Queue", queue.job_queue.job_queue_arn)
    moved.add_quota_share("QS3", spec=SHARES[2])

    assert [s.name for s in monitoring.shares] == ["QS1", "QS2", "QS3"]
    assert {"Starved", "Drift"} <= {a.node.id for a in monitoring.alarms_of("QS2")}
    assert {"Starved", "Drift"} <= {a.node.id for a in monitoring.alarms_of("QS3")}
    assert "product" in monitoring.owner_topics
    assert share.tags.tag_values()[DEPLOYED_CONFIG_TAG_KEY] == config_fingerprint(
        ShareConfig.declared(late)
    )
    # Nothing was staged yet: only the late parts wait for synthesis.
    assert monitoring.node.try_find_child("Code") is None


def test_given_shares_tag_the_queues_shares_of_those_names_only() -> None:
    from quota_constructs.wire.deployed_config import DEPLOYED_CONFIG_TAG_KEY

    app = cdk.App()
    stack = cdk.Stack(app, "Given", env=ENV)
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", events.QUEUE_ARN)
    before = queue.add_quota_share("QS1", spec=SHARES[0])
    monitoring = QuotaShareMonitoring(stack, "Monitoring", job_queue=queue,
                                      shares=list(SHARES[:2]))
    after = queue.add_quota_share("QS2", spec=SHARES[1])
    other = queue.add_quota_share("QS3", spec=SHARES[2])

    assert [s.name for s in monitoring.shares] == ["QS1", "QS2"]
    assert DEPLOYED_CONFIG_TAG_KEY in before.tags.tag_values()
    assert DEPLOYED_CONFIG_TAG_KEY in after.tags.tag_values()
    assert DEPLOYED_CONFIG_TAG_KEY not in other.tags.tag_values()


def test_a_second_monitor_of_one_queue_is_refused() -> None:
    app = cdk.App()
    stack = cdk.Stack(app, "Twice", env=ENV)
    queue = managed(stack)
    queue.add_monitoring()
    with pytest.raises(QuotaConfigError) as raised:
        QuotaShareMonitoring(stack, "Again", job_queue=queue.job_queue)
    assert raised.value.field == "job_queue"
    assert "Twice/TrainingQueue/Monitoring already watches it" in raised.value.allowed
    # Also through an import of the same queue, in another stack.
    other = cdk.Stack(app, "Team", env=ENV)
    imported = TrainingJobQueue.from_job_queue_arn(other, "Queue", events.QUEUE_ARN)
    QuotaShareMonitoring(other, "Monitoring", job_queue=imported, shares=list(SHARES))
    again = TrainingJobQueue.from_job_queue_arn(other, "SameQueue", events.QUEUE_ARN)
    with pytest.raises(QuotaConfigError):
        QuotaShareMonitoring(other, "Second", job_queue=again, shares=list(SHARES))


def test_two_apps_in_one_process_do_not_see_each_others_monitors() -> None:
    for _ in range(2):
        stack = cdk.Stack(cdk.App(), "Once", env=ENV)
        queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", events.QUEUE_ARN)
        QuotaShareMonitoring(stack, "Monitoring", job_queue=queue, shares=list(SHARES))


def test_the_apps_records_are_kept_in_its_bookkeeping_construct_only() -> None:
    from quota_constructs._share_ledger import BOOKKEEPING_ID, AppBookkeeping

    app = cdk.App()
    stack = cdk.Stack(app, "Kept", env=ENV)
    queue = managed(stack)
    monitoring = queue.add_monitoring()
    bookkeeping = app.node.find_child(BOOKKEEPING_ID)
    assert isinstance(bookkeeping, AppBookkeeping)
    ledger = bookkeeping.queue_ledgers[queue.job_queue]
    assert ledger.monitor_path == monitoring.node.path
    records = bookkeeping.stack_records(stack)
    assert records.preemptions is monitoring.preemptions
    assert records.share_provider is stack.node.find_child("QuotaShareProvider")
    # Nothing is hung on other constructs' attributes.
    for construct in (queue, queue.job_queue, queue.share("QS1"), stack):
        assert not [name for name in vars(construct) if name.startswith("_quota_constructs")]
    # Another app has its own records: the same queue there gets its own monitor.
    other_stack = cdk.Stack(cdk.App(), "Kept", env=ENV)
    managed(other_stack).add_monitoring()


def test_job_queue_must_be_a_training_queue() -> None:
    stack = cdk.Stack(cdk.App(), "Scratch")
    with pytest.raises(QuotaConfigError) as raised:
        QuotaShareMonitoring(stack, "Monitoring", job_queue="my-queue")  # type: ignore[arg-type]
    assert raised.value.field == "job_queue"


def test_each_custom_resource_share_records_the_configuration_it_deploys() -> None:
    from quota_constructs.wire.deployed_config import (
        DEPLOYED_CONFIG_TAG_KEY,
        config_fingerprint,
    )
    from quota_constructs.wire.share_config import ShareConfig

    app = cdk.App()
    stack = cdk.Stack(app, "Recorded", env=ENV)
    queue = managed(stack)
    queue.add_monitoring()
    unmonitored = managed(cdk.Stack(app, "Unmonitored", env=ENV))
    app.synth()
    rendered = Template.from_stack(stack).to_json()["Resources"]
    for spec_ in SHARES:
        tags = rendered[logical_id(queue.share(spec_.name))]["Properties"]["Tags"]
        assert tags[DEPLOYED_CONFIG_TAG_KEY] == config_fingerprint(ShareConfig.declared(spec_))
    other = Template.from_stack(cdk.Stack.of(unmonitored)).to_json()["Resources"]
    tags = other[logical_id(unmonitored.share("QS1"))]["Properties"].get("Tags") or {}
    assert DEPLOYED_CONFIG_TAG_KEY not in tags
