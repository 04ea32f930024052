"""A fake of SNS Publish on loopback, speaking the query protocol botocore uses for ``sns``.

Requests are form-encoded ``Action=Publish&TopicArn=...``; answers are the XML documents SNS
sends (``PublishResponse`` / ``ErrorResponse``), so the runtime's real boto3 client parses them
as it would parse AWS's. Topics must exist; faults are injected per call.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

from ..loopback import LoopbackServer

NAMESPACE = "http://sns.amazonaws.com/doc/2010-03-31/"
_ATTRIBUTE = re.compile(
    r"MessageAttributes\.entry\.(\d+)\.(Name|Value\.DataType|Value\.StringValue)"
)


@dataclass(frozen=True)
class Published:
    topic_arn: str
    subject: str
    message: str
    attributes: dict[str, str]
    deduplication_id: str | None
    message_id: str


@dataclass
class SnsFault:
    code: str
    status: int
    message: str


@dataclass
class FakeSns:
    topics: set[str] = field(default_factory=set)
    published: list[Published] = field(default_factory=list)
    failed_calls: int = 0
    faults: deque[SnsFault] = field(default_factory=deque)
    lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def add_topic(self, name: str) -> str:
        arn = f"arn:aws:sns:us-east-1:123456789012:{name}"
        self.topics.add(arn)
        return arn

    def to(self, topic_arn: str) -> list[Published]:
        return [p for p in self.published if p.topic_arn == topic_arn]

    def fail_next(self, times: int = 1, code: str = "Throttling", status: int = 400,
                  message: str = "Rate exceeded") -> None:
        self.faults.extend(SnsFault(code, status, message) for _ in range(times))

    def handle(self, form: dict[str, str]) -> tuple[int, str]:
        with self.lock:
            if self.faults:
                fault = self.faults.popleft()
                self.failed_calls += 1
                return fault.status, _error(fault)
            if form.get("Action") != "Publish":
                return 400, _error(SnsFault("InvalidAction", 400, form.get("Action", "")))
            topic = form.get("TopicArn", "")
            if topic not in self.topics:
                return 404, _error(SnsFault("NotFound", 404, "Topic does not exist"))
            subject = form.get("Subject", "")
            if len(subject) >= 100 or any(not " " <= c <= "~" for c in subject):
                return 400, _error(SnsFault("InvalidParameter", 400, "Invalid subject"))
            entries: dict[str, dict[str, str]] = {}
            for key, value in form.items():
                match = _ATTRIBUTE.fullmatch(key)
                if match:
                    entries.setdefault(match[1], {})[match[2]] = value
            message_id = f"0000{next(self._ids):04d}-fake-sns"
            self.published.append(Published(
                topic_arn=topic,
                subject=subject,
                message=form.get("Message", ""),
                attributes={e["Name"]: e.get("Value.StringValue", "") for e in entries.values()},
                deduplication_id=form.get("MessageDeduplicationId"),
                message_id=message_id,
            ))
        return 200, (
            f'<PublishResponse xmlns="{NAMESPACE}"><PublishResult>'
            f"<MessageId>{message_id}</MessageId></PublishResult>"
            "<ResponseMetadata><RequestId>fake-request</RequestId></ResponseMetadata>"
            "</PublishResponse>"
        )


def _error(fault: SnsFault) -> str:
    kind = "Receiver" if fault.status >= 500 else "Sender"
    return (
        f'<ErrorResponse xmlns="{NAMESPACE}"><Error><Type>{kind}</Type>'
        f"<Code>{escape(fault.code)}</Code><Message>{escape(fault.message)}</Message></Error>"
        "<RequestId>fake-request</RequestId></ErrorResponse>"
    )


class FakeSnsServer(LoopbackServer):
    """Serves one :class:`FakeSns` on ``127.0.0.1`` on a free port, in a daemon thread."""

    def __init__(self) -> None:
        super().__init__()
        self.state = FakeSns()

    def reset(self) -> FakeSns:
        self.state = FakeSns()
        return self.state

    def serve(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length).decode("utf-8") if length else ""
        form = {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
        status, xml = self.state.handle(form)
        payload = xml.encode("utf-8")
        request.send_response(status)
        request.send_header("Content-Type", "text/xml")
        request.send_header("Content-Length", str(len(payload)))
        request.end_headers()
        request.wfile.write(payload)
