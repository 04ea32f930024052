"""The fake Batch as an in-process stand-in for the boto3 client, for runs too long for HTTP.

The soak runs tens of thousands of handler invocations; building a boto3 client and crossing
loopback HTTP for each would take hours. This client calls :class:`FakeBatch` directly and
raises what botocore raises for the same answers: ``ClientError`` carrying the error code and
HTTP status (which is what the runtime's retry rules read), and ``ReadTimeoutError`` when the
fake's answer would come after the client's read timeout. The loopback tests cover the wire
format itself.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from botocore import xform_name
from botocore.exceptions import ClientError, ReadTimeoutError

from .fake_batch import ROUTES, BatchError, FakeBatch

OPERATIONS = tuple(sorted(set(ROUTES.values())))


class LambdaKilled(BaseException):
    """The Lambda stopped mid-request (timeout, out of memory): nothing the handler can catch."""


class InProcessBatchClient:
    def __init__(self, state: FakeBatch, read_timeout: float = 10.0) -> None:
        self.state = state
        self.read_timeout = read_timeout
        self.meta = SimpleNamespace(service_model=SimpleNamespace(operation_names=OPERATIONS))
        self.before_call: Callable[[str], None] | None = None
        """Runs before each call (the soak schedules faults here)."""
        self.kill_after: int | None = None
        """Calls left before the Lambda is killed, right after that call took effect."""
        self._methods = {xform_name(operation): operation for operation in OPERATIONS}

    def __getattr__(self, name: str) -> Callable[..., dict[str, Any]]:
        operation = self._methods.get(name)
        if operation is None:
            raise AttributeError(name)
        return lambda **params: self._call(operation, params)

    def _call(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        if self.before_call is not None:
            self.before_call(operation)
        try:
            response, latency = self.state.handle(operation, dict(params))
        except BatchError as error:
            self._count_down()
            raise ClientError(
                {
                    "Error": {"Code": error.code, "Message": str(error)},
                    "ResponseMetadata": {"HTTPStatusCode": error.status},
                },
                operation,
            ) from None
        self._count_down()
        if latency > self.read_timeout:
            raise ReadTimeoutError(endpoint_url=f"in-process://batch/{operation}")
        return response

    def _count_down(self) -> None:
        if self.kill_after is None:
            return
        self.kill_after -= 1
        if self.kill_after <= 0:
            self.kill_after = None
            raise LambdaKilled()
