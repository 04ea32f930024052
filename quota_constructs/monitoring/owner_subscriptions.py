"""Subscriptions to owner topics that come with their dead-letter queue.

``topic.add_subscription(EmailSubscription(...))`` leaves a subscription without a redrive
policy (cdk-nag ``Serverless-SNSRedrivePolicy``), and the obvious dead-letter queue added to it
then fails ``AwsSolutions-SQS3`` / ``AwsSolutions-SQS4`` and ``Serverless-SQSRedrivePolicy``.
Here every subscription gets one dead-letter queue per monitor, encrypted with a customer
managed key SNS may use (AWS: an encrypted SNS dead-letter queue needs one), TLS only, and
acknowledged for what a dead-letter queue cannot have (a dead-letter queue of its own).
"""

from __future__ import annotations

import inspect
from typing import Final

from aws_cdk import Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct

from ..model.agreement_team import AlertEndpoint
from ..model.tokens import is_unresolved
from ..nag_acknowledgments import acknowledge
from .owner_topics import notification_key

SUBSCRIPTION_OPTIONS: Final = tuple(inspect.signature(sns.SubscriptionOptions).parameters)
"""Every option a subscription's binding may set (endpoint, protocol, filter and delivery
policies, ...), read from aws-cdk-lib itself: the subscription made here carries each one over,
including any a later release adds."""


class OwnerSubscriptions(Construct):
    """The dead-letter queue (``DeadLetterQueue``, key ``Key``) shared by the subscriptions
    made through :meth:`subscribe`, and the subscriptions themselves."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.key: Final = notification_key(
            self, f"Encrypts undeliverable owner notifications of {scope.node.path}"
        )
        # AWS SNS developer guide, "Amazon SNS dead-letter queues": an encrypted queue used as
        # a subscription's dead-letter queue needs a customer managed key whose policy lets
        # the SNS service principal use it.
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("sns.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],
                conditions={"StringEquals": {"aws:SourceAccount": Stack.of(self).account}},
            )
        )
        self.dead_letter_queue: Final = sqs.Queue(
            self,
            "DeadLetterQueue",
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=self.key,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        resource = self.dead_letter_queue.node.default_child
        assert resource is not None
        for rule, reason in (
            ("AwsSolutions-SQS3", "This queue is itself the dead-letter queue of the owner "
             "topics' subscriptions."),
            ("Serverless-SQSRedrivePolicy", "This queue is itself a dead-letter queue: "
             "notifications that could not be delivered wait here to be read."),
        ):
            acknowledge(resource, rule, reason)
        self._count = 0
        self.endpoints: dict[str, list[AlertEndpoint]] = {}
        """By owner, where each subscription made here delivers (for the agreement)."""

    def subscribe(
        self, topic: sns.ITopic, subscription: sns.ITopicSubscription, *, owner: str
    ) -> sns.Subscription:
        """Subscribe ``subscription`` (``aws_sns_subscriptions.EmailSubscription``,
        ``SqsSubscription``, ``LambdaSubscription``, ``UrlSubscription``, ...) to ``topic``,
        ``owner``'s, with this construct's dead-letter queue, unless it brings its own."""
        config = subscription.bind(topic)
        self.endpoints.setdefault(owner, []).append(
            _endpoint(self, config.protocol.value, config.endpoint)
        )
        self._count += 1
        options = {name: getattr(config, name) for name in SUBSCRIPTION_OPTIONS}
        # This construct's dead-letter queue, unless the binding brings its own.
        options["dead_letter_queue"] = config.dead_letter_queue or self.dead_letter_queue
        created = sns.Subscription(self, f"Subscription{self._count}", topic=topic, **options)
        if config.subscription_dependency is not None:
            created.node.add_dependency(config.subscription_dependency)
        return created


def _endpoint(scope: IConstruct, protocol: str, endpoint: str) -> AlertEndpoint:
    """The endpoint itself when literal (an address, a URL, an imported ARN); otherwise the
    resource CloudFormation resolves it from (a queue or function of the app)."""
    protocol = protocol.lower()
    if not is_unresolved(endpoint):
        return AlertEndpoint(protocol, endpoint, endpoint)
    resolved = Stack.of(scope).resolve(endpoint)
    logical = None
    if isinstance(resolved, dict):
        if "Ref" in resolved:
            logical = resolved["Ref"]
        elif "Fn::GetAtt" in resolved:
            logical = resolved["Fn::GetAtt"][0]
        elif "Fn::ImportValue" in resolved:
            return AlertEndpoint(protocol, None, "exported by another stack of this app")
    described = (
        f"`{logical}` of stack `{Stack.of(scope).stack_name}`" if isinstance(logical, str)
        else "set at deployment"
    )
    return AlertEndpoint(protocol, None, described)


def chat_endpoint(channel: IConstruct) -> AlertEndpoint:
    """An AWS Chatbot channel: its configuration's name where literal, else its path."""
    name = getattr(channel, "slack_channel_configuration_name", None)
    if isinstance(name, str) and not is_unresolved(name):
        return AlertEndpoint("chatbot", None, f"Slack channel configuration `{name}`")
    return AlertEndpoint("chatbot", None, f"Slack channel configuration `{channel.node.path}`")
