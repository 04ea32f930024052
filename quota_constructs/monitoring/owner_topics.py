"""One SNS topic per share owner: where the owner hears about its shares."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from constructs import Construct

from ..model import QuotaConfigError
from .alarm_delivery import alarm_key_statement, alarm_publish_statement

MAX_DISPLAY_NAME: Final = 100


def notification_key(scope: Construct, description: str) -> kms.Key:
    """The customer managed key (child ``Key``) of owner notifications, on their topics and in
    their subscriptions' dead-letter queue; shared so both keys live and die alike: rotated
    yearly, deleted 7 days after the monitoring is removed."""
    return kms.Key(
        scope,
        "Key",
        enable_key_rotation=True,
        description=description,
        # It only encrypts notifications in flight or undeliverable, which nobody needs once
        # the monitoring is gone: a key kept after that would cost 1 USD a month for nothing.
        removal_policy=RemovalPolicy.DESTROY,
        pending_window=Duration.days(7),
    )


class OwnerTopics(Construct):
    """A topic per owner (child id: the owner's name), encrypted with one customer managed key
    (``Key``, rotated yearly) and accepting only TLS publishers.

    The key is scheduled for deletion (after 7 days) when the monitoring is removed.
    A customer managed key rather than AWS's ``alias/aws/sns``: CloudWatch alarms can publish
    to an encrypted topic only when the key's policy lets ``cloudwatch.amazonaws.com`` use it,
    and the AWS managed key's policy cannot be changed. Each topic's policy and the key's
    policy let only this stack's alarms of this account publish (see :mod:`.alarm_delivery`).
    Subscribe people or a chat integration to ``topics[owner]`` after deploying.
    """

    def __init__(self, scope: Construct, id: str, *, owners: Iterable[str]) -> None:
        super().__init__(scope, id)
        self.key = notification_key(
            self, f"Encrypts the quota-share owner topics of {self.node.path}"
        )
        # Only this stack's alarms, of this account: the key serves no other CloudWatch use.
        self.key.add_to_resource_policy(alarm_key_statement(Stack.of(self)))
        self.topics: dict[str, sns.ITopic] = {}
        self._ids: dict[str, str] = {}
        for owner in owners:
            self.add(owner)

    def add(self, owner: str) -> sns.ITopic:
        """The owner's topic, created on first use."""
        if owner in self.topics:
            return self.topics[owner]
        # "/" separates construct paths; every other character may stay.
        topic_id = owner.replace("/", "-")
        if topic_id in self._ids:
            raise QuotaConfigError(
                f"owner {owner!r}", "agreement.owner", owner,
                f"a name that differs from {self._ids[topic_id]!r} in more than '/' and '-' "
                "(each owner's topic is named after the owner)",
            )
        self._ids[topic_id] = owner
        topic = sns.Topic(
            self,
            topic_id,
            display_name=f"Quota shares: {owner}"[:MAX_DISPLAY_NAME],
            master_key=self.key,
            enforce_ssl=True,
        )
        # The topic policy replaces SNS's default one: without this, no alarm could publish.
        topic.add_to_resource_policy(alarm_publish_statement(topic.topic_arn, Stack.of(self)))
        self.topics[owner] = topic
        return topic
