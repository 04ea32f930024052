"""Owners subscribed the documented way (``subscribe_owner``, ``add_chat_channel``) leave
cdk-nag AwsSolutions and Serverless clean, with no acknowledgment written by the user; the
obvious ``topic.add_subscription`` does not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_chatbot as chatbot
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs, lint

from quota_constructs import (
    CapacityLimit,
    CapacityUnit,
    QuotaConfigError,
    QuotaManagedTrainingQueue,
    QuotaShare,
    QuotaShareMonitoring,
    QuotaShareSchedulingPolicy,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
    TrainingJobQueue,
    TrainingServiceEnvironment,
    write_allocation_agreements,
)

G5 = CapacityUnit.ML_G5_XLARGE
OWNERS = ("llm-team", "vision-team", "speech-team", "eval-team")


def monitored(stack: cdk.Stack) -> QuotaShareMonitoring:
    queue = QuotaManagedTrainingQueue(
        stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 4)],
        shares=[
            QuotaShareSpec(name=owner.split("-")[0], capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND,
                           agreement=ShareAgreement(owner=owner, interruption_budget=1))
            for owner in OWNERS
        ],
    )
    return queue.add_monitoring()


def inbox(stack: cdk.Stack) -> sqs.Queue:
    """A team's own queue, nag-clean in its own right (it has its own dead-letter queue)."""
    dead = sqs.Queue(stack, "InboxDead", enforce_ssl=True,
                     encryption=sqs.QueueEncryption.SQS_MANAGED)
    cdk.Validations.of(dead).acknowledge(cdk.Acknowledgment(
        id="AwsSolutions-SQS3", reason="test: the team's own dead-letter queue"))
    cdk.Validations.of(dead).acknowledge(cdk.Acknowledgment(
        id="Serverless-SQSRedrivePolicy", reason="test: the team's own dead-letter queue"))
    return sqs.Queue(stack, "Inbox", enforce_ssl=True, encryption=sqs.QueueEncryption.SQS_MANAGED,
                     dead_letter_queue=sqs.DeadLetterQueue(max_receive_count=3, queue=dead))


@pytest.fixture(scope="module")
def built() -> Any:
    app = cdk.App()
    stack = cdk.Stack(app, "Subscribed")
    monitoring = monitored(stack)
    monitoring.subscribe_owner("llm-team", subscriptions.EmailSubscription("llm@example.com"))
    monitoring.subscribe_owner(
        "vision-team", subscriptions.UrlSubscription("https://hooks.example.com/vision"))
    monitoring.subscribe_owner("speech-team", subscriptions.SqsSubscription(inbox(stack)))
    pager = lambda_.Function.from_function_attributes(
        stack, "Pager", function_arn="arn:aws:lambda:us-east-1:123456789012:function:pager",
        same_environment=True)
    monitoring.subscribe_owner("speech-team", subscriptions.LambdaSubscription(pager))
    channel = chatbot.SlackChannelConfiguration(
        stack, "EvalSlack", slack_channel_configuration_name="eval",
        slack_workspace_id="T0000000", slack_channel_id="C0000000")
    monitoring.add_chat_channel("eval-team", channel)
    return app, stack, monitoring, channel


@pytest.mark.parametrize("pack", [AwsSolutionsChecks, ServerlessChecks])
def test_documented_subscriptions_leave_cdk_nag_clean(built: Any, pack: Any) -> None:
    app = built[0]
    report = pack(app).validate_scope(app)
    findings = [
        f"{violation.rule_name} at {[r.construct_path for r in violation.violating_resources]}"
        for violation in report.violations
    ]
    assert findings == []


def test_the_obvious_subscription_is_what_nag_refuses() -> None:
    """The reason for subscribe_owner: without it the same subscription fails the pack."""
    app = cdk.App()
    monitoring = monitored(cdk.Stack(app, "Plain"))
    monitoring.owner_topics["llm-team"].add_subscription(
        subscriptions.EmailSubscription("llm@example.com"))
    report = ServerlessChecks(app).validate_scope(app)
    assert [v.rule_name for v in report.violations] == ["Serverless-SNSRedrivePolicy"]


def test_each_subscription_has_the_dead_letter_queue_and_sns_may_use_its_key(built: Any) -> None:
    template = Template.from_stack(built[1]).to_json()
    resources = template["Resources"]
    subs = {r["Properties"]["Protocol"]: r["Properties"] for r in resources.values()
            if r["Type"] == "AWS::SNS::Subscription"}
    assert set(subs) == {"email", "https", "sqs", "lambda"}
    (dlq_id,) = [key for key, r in resources.items() if r["Type"] == "AWS::SQS::Queue"
                 and "OwnerSubscriptions" in key]
    for properties in subs.values():
        assert properties["RedrivePolicy"] == {
            "deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]}}
    dlq = resources[dlq_id]["Properties"]
    assert "KmsMasterKeyId" in dlq
    key_id = dlq["KmsMasterKeyId"]["Fn::GetAtt"][0]
    statements = resources[key_id]["Properties"]["KeyPolicy"]["Statement"]
    assert any(s.get("Principal") == {"Service": "sns.amazonaws.com"}
               and "kms:GenerateDataKey*" in s["Action"] for s in statements)
    # SNS may send to the dead-letter queue (CDK's Subscription adds the queue policy).
    policies = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::SQS::QueuePolicy"
                and {"Ref": dlq_id} in r["Properties"]["Queues"]]
    assert any("sns.amazonaws.com" in json.dumps(p) for p in policies)


def test_every_option_the_subscription_sets_reaches_the_owners_subscription() -> None:
    """Filter and delivery options of the binding are carried over, and a dead-letter queue
    the subscription brings is kept instead of the monitor's."""
    app = cdk.App()
    stack = cdk.Stack(app, "Options")
    monitoring = monitored(stack)
    own_dead_letters = sqs.Queue(stack, "OwnDeadLetters")
    monitoring.subscribe_owner("llm-team", subscriptions.SqsSubscription(
        inbox(stack),
        raw_message_delivery=True,
        filter_policy={"kind": sns.SubscriptionFilter.string_filter(allowlist=["preempted"])},
        dead_letter_queue=own_dead_letters,
    ))
    resources = Template.from_stack(stack).to_json()["Resources"]
    (properties,) = [r["Properties"] for r in resources.values()
                     if r["Type"] == "AWS::SNS::Subscription"]
    assert properties["RawMessageDelivery"] is True
    assert properties["FilterPolicy"] == {"kind": ["preempted"]}
    assert properties["RedrivePolicy"] == {"deadLetterTargetArn": {"Fn::GetAtt": [
        stack.get_logical_id(own_dead_letters.node.default_child), "Arn"]}}


def test_the_chat_channel_gets_the_owners_topic(built: Any) -> None:
    template = Template.from_stack(built[1])
    (channel,) = template.find_resources("AWS::Chatbot::SlackChannelConfiguration").values()
    topic_refs = channel["Properties"]["SnsTopicArns"]
    assert topic_refs == [{"Ref": cdk.Stack.of(built[2]).get_logical_id(
        built[2].owner_topics["eval-team"].node.default_child)}]


def test_an_owner_no_share_ever_names_fails_the_synth_naming_the_known_ones() -> None:
    app = cdk.App()
    monitoring = monitored(cdk.Stack(app, "Scratch"))
    # Accepted for now: a stack built later may still declare nlp-team's share.
    monitoring.subscribe_owner("nlp-team", subscriptions.EmailSubscription("x@example.com"))
    # Raised inside the synthesis, so jsii hands it back as a RuntimeError with the message.
    with pytest.raises((QuotaConfigError, RuntimeError), match=(
        r"owner got 'nlp-team'.*once every stack of the app is built.*"
        "eval-team, llm-team, speech-team, vision-team")):
        app.synth()


def test_with_fixed_shares_an_unknown_owner_is_refused_at_once() -> None:
    stack = cdk.Stack(cdk.App(), "Fixed")
    queue = QuotaManagedTrainingQueue(
        stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 1)],
        shares=[QuotaShareSpec(name="llm", capacity_limits=[CapacityLimit(G5, 1)],
                               strategy=SharingStrategy.LEND,
                               agreement=ShareAgreement(owner="llm-team"))],
    )
    monitoring = queue.add_monitoring(shares=queue.job_queue.quota_share_specs)
    with pytest.raises(QuotaConfigError, match=r"owner got 'nlp-team'.*llm-team"):
        monitoring.subscribe_owner("nlp-team", subscriptions.EmailSubscription("x@example.com"))


def test_the_platform_stack_subscribes_the_owner_of_a_share_a_team_stack_declares_later(
    tmp_path: Path,
) -> None:
    """As the README shows: the platform stack monitors its queue and subscribes every owner;
    the team's stack, built afterwards, declares the share. The subscription reaches the
    owner's topic, and both agreements say where the alerts go."""
    app = cdk.App(outdir=str(tmp_path))
    env = cdk.Environment(account="123456789012", region="eu-west-1")
    platform = cdk.Stack(app, "Platform", env=env)
    queue = TrainingJobQueue(
        platform, "JobQueue", job_queue_name="gpu",
        service_environment=TrainingServiceEnvironment(
            platform, "Environment", capacity_limits=[CapacityLimit(G5, 2)]),
        scheduling_policy=QuotaShareSchedulingPolicy(platform, "Policy"),
    )
    monitoring = QuotaShareMonitoring(platform, "Monitoring", job_queue=queue)
    monitoring.subscribe_owner("llm-team", subscriptions.EmailSubscription("llm@example.com"))
    team = cdk.Stack(app, "TeamLlm", env=env)
    QuotaShare(team, "Share", job_queue=queue, spec=QuotaShareSpec(
        name="llm", capacity_limits=[CapacityLimit(G5, 2)], strategy=SharingStrategy.LEND,
        agreement=ShareAgreement(owner="llm-team")))
    app.synth()

    template = Template.from_stack(platform)
    (subscription,) = template.find_resources(
        "AWS::SNS::Subscription", {"Properties": {"Endpoint": "llm@example.com"}}).values()
    topic = monitoring.owner_topics["llm-team"]
    assert subscription["Properties"]["TopicArn"] == {
        "Ref": platform.get_logical_id(topic.node.default_child)}
    assert [spec.name for spec in monitoring.shares] == ["llm"]
    written = write_allocation_agreements(app)
    assert [path.stem for path in written] == ["Platform", "TeamLlm"]
    for path in written:
        assert "delivered to email `llm@example.com`." in path.read_text()
        [share] = json.loads(path.with_suffix(".json").read_text())["queues"][0]["shares"]
        # A named queue of a pinned stack: its whole ARN is known (the region gives the
        # partition), and so are its account and region.
        location = share["queue"]
        assert (location["name"], location["account"], location["region"]) == (
            "gpu", "123456789012", "eu-west-1")
        assert location["arn"] == "arn:aws:batch:eu-west-1:123456789012:job-queue/gpu"
        assert share["alerts"]["subscriptions"] == [{
            "protocol": "email", "endpoint": "llm@example.com",
            "described": "email `llm@example.com`"}]


def test_the_template_passes_cfn_lint(built: Any) -> None:
    rendered = json.dumps(Template.from_stack(built[1]).to_json())
    matches = lint(rendered, config=ManualArgs(regions=["us-east-1"], ignore_checks=["W3005"]))
    assert [str(match) for match in matches] == []


def test_an_owner_of_a_share_declared_after_the_monitor_can_be_subscribed() -> None:
    """Shares are resolved at synthesis; an owner whose share comes later is still reachable,
    its subscription attached and its topic named in the stack's outputs."""
    app = cdk.App()
    stack = cdk.Stack(app, "Late")
    queue = QuotaManagedTrainingQueue(
        stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 2)],
        shares=[QuotaShareSpec(name="llm", capacity_limits=[CapacityLimit(G5, 1)],
                               strategy=SharingStrategy.LEND,
                               agreement=ShareAgreement(owner="llm-team"))],
    )
    monitoring = queue.add_monitoring()
    queue.job_queue.add_quota_share(
        "Nlp", spec=QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 1)],
                                   strategy=SharingStrategy.LEND,
                                   agreement=ShareAgreement(owner="nlp-team")),
    )
    monitoring.subscribe_owner("nlp-team", subscriptions.EmailSubscription("nlp@example.com"))
    template = Template.from_stack(stack)
    (subscription,) = template.find_resources(
        "AWS::SNS::Subscription", {"Properties": {"Endpoint": "nlp@example.com"}}
    ).values()
    topic = monitoring.owner_topics["nlp-team"]
    assert subscription["Properties"]["TopicArn"] == {
        "Ref": stack.get_logical_id(topic.node.default_child)
    }
    outputs = template.to_json()["Outputs"]
    assert any(key.endswith("OwnerTopicNlpTeamArn") for key in outputs), sorted(outputs)
    assert set(monitoring.owner_topic_names) == {"llm-team", "nlp-team"}
