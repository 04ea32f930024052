"""Bounded retries with exponential backoff: the one loop every AWS call of the library backs
off in (:func:`with_backoff`).

botocore's own retries are switched off for the Batch and SNS clients and this policy is
applied instead, so the backoff is injectable (tests pass a policy that records its sleeps) and
can stop early when the Lambda is about to run out of time. Each caller says, attempt by
attempt, what an answer means: :func:`call_with_retries` retries throttling and transient
errors; the custom resource's writes (``BatchGateway._write``) re-read the share after an
ambiguous answer and send again only while it shows the change did not happen; its reads retry
a share listed but not yet described, or not yet visible. Long waits never happen here: waiting
for a share to settle is the Provider framework's ``is_complete`` polling.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, NoReturn, TypeVar

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


@dataclass(frozen=True)
class ClientTimeouts:
    """Per attempt. AWS answers in well under a second; a hung attempt is better retried."""

    connect: float = 5.0
    read: float = 10.0


TIME_MARGIN_SECONDS = 5.0
"""A retry starts only if its backoff leaves this much of the caller's time afterwards."""


@dataclass(frozen=True)
class Again(Generic[T]):
    """An attempt's answer: worth another try after a backoff. ``give_up`` ends the loop when no
    attempt or time is left (it raises the last error, or returns what "not yet" means)."""

    give_up: Callable[[], T]
    note: Callable[[int, float], None] | None = None
    """Told ``(attempt, delay)`` just before the backoff, to log why it retries."""


def with_backoff(
    attempt: Callable[[int], T | Again[T]],
    policy: RetryPolicy,
    seconds_left: Callable[[], float] | None = None,
) -> T:
    """Call ``attempt(1)``, ``attempt(2)``, … until one answers other than :class:`Again`,
    sleeping :meth:`RetryPolicy.delay` in between, within ``policy.max_attempts`` and the time
    ``seconds_left`` reports."""
    number = 1
    while True:
        outcome = attempt(number)
        if not isinstance(outcome, Again):
            return outcome
        if number >= policy.max_attempts:
            return outcome.give_up()
        delay = policy.delay(number)
        if seconds_left is not None and seconds_left() < delay + TIME_MARGIN_SECONDS:
            return outcome.give_up()
        if outcome.note is not None:
            outcome.note(number, delay)
        policy.sleep(delay)
        number += 1


def raise_again(error: BaseException) -> Callable[[], NoReturn]:
    """A ``give_up`` that raises ``error`` (kept beyond its ``except`` block)."""

    def give_up() -> NoReturn:
        raise error

    return give_up


def _retry_note(operation: str, error: BaseException) -> Callable[[int, float], None]:
    def note(number: int, delay: float) -> None:
        log("retry", operation=operation, attempt=number, delay=round(delay, 3),
            error=type(error).__name__, detail=str(error)[:300])

    return note


def call_with_retries(
    operation: str,
    call: Callable[[], T],
    policy: RetryPolicy,
    seconds_left: Callable[[], float] | None = None,
) -> T:
    """Run ``call``; retry what :func:`is_retryable` accepts, within attempts and time left."""

    def attempt(_: int) -> T | Again[T]:
        try:
            return call()
        except Exception as error:
            if not is_retryable(error):
                raise
            return Again(raise_again(error), _retry_note(operation, error))

    return with_backoff(attempt, policy, seconds_left)
