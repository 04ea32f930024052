"""CloudFormation's DescribeStacks, faked beside the fake Batch on the same loopback endpoint.

It speaks the query protocol botocore uses for ``cloudformation`` (``POST /`` with a form body
``Action=DescribeStacks&StackName=...``, XML answers, errors as ``ErrorResponse``), so
``preview`` finds the deploying stack's id exactly as it does against AWS. A stack exists once
a custom-resource event of it was delivered (CloudFormation creates the stack before its
resources), or once a test adds it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape

NAMESPACE = "http://cloudformation.amazonaws.com/doc/2010-05-15/"


@dataclass
class FakeStack:
    stack_id: str
    name: str
    status: str = "UPDATE_COMPLETE"


def stack_name_of(stack_id: str) -> str:
    """``platform`` for ``arn:aws:cloudformation:<region>:<account>:stack/platform/<uuid>``."""
    return stack_id.split(":stack/", 1)[-1].split("/", 1)[0]


@dataclass
class FakeCloudFormation:
    stacks: dict[str, FakeStack] = field(default_factory=dict)
    """By name."""
    denied: bool = False
    """DescribeStacks answers AccessDenied (the caller lacks cloudformation:DescribeStacks)."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def add_stack(self, stack_id: str, status: str = "UPDATE_COMPLETE") -> str:
        """The stack ``stack_id`` exists (under the name its ARN carries); returns the name."""
        name = stack_name_of(stack_id)
        with self.lock:
            self.stacks.setdefault(name, FakeStack(stack_id, name, status))
        return name

    def handle(self, params: dict[str, str]) -> tuple[int, str]:
        """One query-protocol request: HTTP status and XML body."""
        with self.lock:
            self.calls.append(params)
            action = params.get("Action")
            if action != "DescribeStacks":
                return _error(400, "InvalidAction", f"{action} is not faked")
            if self.denied:
                return _error(403, "AccessDenied", "User: arn:aws:sts::123456789012:assumed-"
                              "role/operator/cli is not authorized to perform: "
                              "cloudformation:DescribeStacks")
            wanted = params.get("StackName", "")
            found = [s for s in self.stacks.values() if wanted in (s.name, s.stack_id)]
            if not found:
                return _error(400, "ValidationError", f"Stack with id {wanted} does not exist")
            members = "".join(
                f"<member><StackId>{escape(s.stack_id)}</StackId>"
                f"<StackName>{escape(s.name)}</StackName>"
                "<CreationTime>2026-01-01T00:00:00.000Z</CreationTime>"
                f"<StackStatus>{escape(s.status)}</StackStatus></member>"
                for s in found
            )
            return 200, (
                f'<DescribeStacksResponse xmlns="{NAMESPACE}"><DescribeStacksResult>'
                f"<Stacks>{members}</Stacks></DescribeStacksResult>"
                "<ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata>"
                "</DescribeStacksResponse>"
            )


def _error(status: int, code: str, message: str) -> tuple[int, str]:
    kind = "Sender" if status < 500 else "Receiver"
    return status, (
        f'<ErrorResponse xmlns="{NAMESPACE}"><Error><Type>{kind}</Type><Code>{code}</Code>'
        f"<Message>{escape(message)}</Message></Error><RequestId>fake</RequestId>"
        "</ErrorResponse>"
    )
