"""Tell a share's owner something, through the SNS topic that reaches them.

The client is a plain boto3 ``sns`` client (``AWS_ENDPOINT_URL_SNS`` applies) from the same
session as the Batch client (:func:`boto3_session`, whose data path leads with the service models
the asset carries), with the same bounded retries as the Batch calls. A FIFO topic gets a
deduplication id derived from what the message is about, so SNS itself drops a second copy sent
within its five-minute window.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from botocore.config import Config

from .retry import RetryPolicy, call_with_retries
from .service_models import boto3_session
from .structured_log import log

MAX_SUBJECT_LENGTH = 99
"""SNS subjects are ASCII, one line, under 100 characters."""

# Module-level so tests (and only tests) can make backoff instant.


@dataclass(frozen=True)
class OwnerMessage:
    subject: str
    body: str
    attributes: Mapping[str, str]
    """SNS message attributes, so a subscription can filter (by share, by kind of message)."""
    key: str
    """What the message is about, stable across duplicate deliveries (the dedup id's source)."""


def create_sns_client() -> Any:
    config = Config(
        connect_timeout=5,
        read_timeout=10,
        retries={"mode": "standard", "total_max_attempts": 1},
        user_agent_extra="quota-constructs-monitoring",
    )
    # The function's one session: a second (boto3's default) would load its models again and
    # would not look in the models the asset carries.
    return boto3_session().client("sns", config=config)


class Notifier:
    def __init__(self, client: Any, policy: RetryPolicy | None = None) -> None:
        self._client = client
        self._policy = policy or RetryPolicy()

    def publish(self, topic_arn: str, message: OwnerMessage) -> str:
        """Publish; raise when SNS keeps failing (the invocation is then retried)."""
        params: dict[str, Any] = {
            "TopicArn": topic_arn,
            "Subject": ascii_subject(message.subject),
            "Message": message.body,
            "MessageAttributes": {
                name: {"DataType": "String", "StringValue": value}
                for name, value in message.attributes.items() if value
            },
        }
        if topic_arn.endswith(".fifo"):
            params["MessageGroupId"] = message.attributes.get("QuotaShare") or "quota-share"
            params["MessageDeduplicationId"] = hashlib.sha256(
                message.key.encode("utf-8")
            ).hexdigest()[:128]
        response = call_with_retries(
            "Publish", lambda: self._client.publish(**params), self._policy
        )
        message_id = str(response.get("MessageId", ""))
        log("owner_notified", topic_arn=topic_arn, key=message.key, message_id=message_id)
        return message_id


def ascii_subject(text: str) -> str:
    """A subject SNS accepts: printable ASCII, one line, at most 99 characters."""
    cleaned = "".join(c if " " <= c <= "~" else "?" for c in " ".join(text.split()))
    if len(cleaned) > MAX_SUBJECT_LENGTH:
        cleaned = cleaned[: MAX_SUBJECT_LENGTH - 3] + "..."
    return cleaned or "Quota share notice"
