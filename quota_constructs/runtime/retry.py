"""Bounded retries with exponential backoff for throttled and transient AWS Batch calls.

botocore's own retries are switched off for the Batch client and this policy is applied
instead, so the backoff is injectable (tests run it without sleeping) and can stop early when
the Lambda is about to run out of time. Long waits never happen here: waiting for a share to
settle is the Provider framework's ``is_complete`` polling.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from .structured_log import log

T = TypeVar("T")

THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "SlowDown",
    }
)
TRANSIENT_CODES = frozenset(
    {"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete"}
)
TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` tries in all, sleeping up to ``base_delay * 2**n`` (capped) in between."""

    max_attempts: int = 6
    base_delay: float = 0.25
    max_delay: float = 4.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)
    jitter: Callable[[], float] = field(default=random.random, compare=False)

    def delay(self, retry_number: int) -> float:
        """Full-jitter backoff before retry ``retry_number`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (retry_number - 1))
        return ceiling * (0.5 + 0.5 * self.jitter())


def is_retryable(error: BaseException) -> bool:
    """Throttling, 5xx and connection trouble are worth another try; anything else is not."""
    if isinstance(error, (BotocoreConnectionError, HTTPClientError)):
        return True
    if not isinstance(error, ClientError):
        return False
    details = error.response.get("Error", {})
    code = str(details.get("Code", ""))
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    # AWS Batch has answered throttling as a ClientException "Too Many Requests" (HTTP 429).
    message = str(details.get("Message", "")).lower()
    return (
        code in THROTTLING_CODES
        or code in TRANSIENT_CODES
        or status in TRANSIENT_STATUS
        or "too many requests" in message
        or "rate exceeded" in message
    )


def call_with_retries(
    operation: str,
    call: Callable[[], T],
    policy: RetryPolicy,
    seconds_left: Callable[[], float] | None = None,
) -> T:
    """Run ``call``; retry what :func:`is_retryable` accepts, within attempts and time left."""
    attempt = 1
    while True:
        try:
            return call()
        except Exception as error:
            if not is_retryable(error) or attempt >= policy.max_attempts:
                raise
            delay = policy.delay(attempt)
            if seconds_left is not None and seconds_left() < delay + 5.0:
                raise
            log("retry", operation=operation, attempt=attempt, delay=round(delay, 3),
                error=type(error).__name__, detail=str(error)[:300])
            policy.sleep(delay)
            attempt += 1
