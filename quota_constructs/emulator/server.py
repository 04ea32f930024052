"""The HTTP endpoint: AWS Batch's REST-JSON routes, and the control API under ``/_emulator/``.

Every answer's HTTP ``Date`` header is the emulated clock's time (whole seconds), as AWS's is
AWS's: the live commands take "now" from it (``QueueSnapshot.endpoint_now_ms``).

Control API (JSON in, JSON out; errors as Batch's ClientException):

- ``POST /_emulator/advance`` ``{"seconds": N}``: move the clock, run scheduling; answers
  ``{"now": <epoch ms>, "seconds": <emulated seconds since start>}``.
- ``GET /_emulator/clock``: ``{"now": <epoch ms>, "seconds": ..., "start": <epoch ms>,
  "kind": "manual" | "wall", "speed": N}``, without moving it.
- ``POST /_emulator/jobs/{jobId}/finish`` ``{"status": "SUCCEEDED" | "FAILED"}``: end a
  dispatched job now (id or ARN); answers its DescribeServiceJob.
- ``GET /_emulator/events[?since=N]``: a JSON list of the EventBridge
  events from the N-th on.
"""

from __future__ import annotations

import json
import re
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from .protocol import ApiError, BatchProtocol, bad_value, json_object
from .service import QueueService

CONTROL = "/_emulator/"
_FINISH = re.compile(r"/_emulator/jobs/(?P<job>.+)/finish/?")
"""The job's id or ARN, percent-encoded or not (an ARN's ``service-job/`` slash included)."""


class EmulatorServer:
    """Serves ``service`` on ``127.0.0.1:port`` (0: a free port) from a daemon thread."""

    def __init__(self, service: QueueService, port: int = 0, *, tick_seconds: float = 0.2) -> None:
        self.service = service
        self.protocol = BatchProtocol()
        self._tick = tick_seconds
        self._stopped = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are separate writes

            def do_GET(self) -> None:
                outer.serve(self, "GET")

            def do_POST(self) -> None:
                outer.serve(self, "POST")

            def do_DELETE(self) -> None:
                outer.serve(self, "DELETE")

            def do_PUT(self) -> None:
                outer.serve(self, "PUT")

            def log_message(self, format: str, *args: Any) -> None:
                return

            def date_time_string(self, timestamp: float | None = None) -> str:
                # The Date header every answer carries is the emulated clock's, as the times
                # in the answers are: a client judging an age by it reads the emulator's time.
                return formatdate(outer.service.clock.now_ms() / 1000, usegmt=True)

        self._http = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._http.daemon_threads = True
        self._threads = [threading.Thread(target=self._http.serve_forever,
                                          kwargs={"poll_interval": 0.05}, daemon=True)]
        if not service.clock.manual:
            self._threads.append(threading.Thread(target=self._run_clock, daemon=True))

    @property
    def endpoint_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> EmulatorServer:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._http.shutdown()
        self._http.server_close()

    def _run_clock(self) -> None:
        """Under the wall clock, scheduling runs as real time passes, not only on requests."""
        while not self._stopped.wait(self._tick):
            with self.service.lock:
                self.service.sync()

    # ------------------------------------------------------------------------- requests

    def serve(self, request: BaseHTTPRequestHandler, method: str) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        parts = urlsplit(request.path)
        try:
            if parts.path.startswith(CONTROL):
                answer = json.dumps(self.control(method, parts.path, parts.query, body))
                self._send(request, 200, {"Content-Type": "application/json"}, answer.encode())
                return
            found = self.protocol.route(method, parts.path)
            if found is None:
                raise ApiError(f"no AWS Batch operation is {method} {parts.path}", status=404,
                               code="UnknownOperationException")
            operation, labels = found
            params = self.protocol.parse(operation, labels, parts.query, body)
            result = self.service.handle(operation.name, params)
            self._send(request, 200, {"Content-Type": "application/json"},
                       self.protocol.render(operation, result))
        except ApiError as error:
            self._send(request, *self.protocol.error(error))
        except Exception as error:  # a fault of the emulator: say so, keep serving
            failure = ApiError(f"emulator error: {type(error).__name__}: {error}",
                               code="ServerException", status=500)
            self._send(request, *self.protocol.error(failure))

    def control(
        self, method: str, path: str, query: str, body: bytes
    ) -> dict[str, Any] | list[dict[str, Any]]:
        payload = json_object(body)
        service = self.service
        if method == "POST" and path.rstrip("/") == "/_emulator/advance":
            now = service.advance(payload.get("seconds", 0))
            return {"now": service.ms(now), "seconds": now}
        if method == "GET" and path.rstrip("/") == "/_emulator/clock":
            with service.lock:
                seconds = service.clock.now()
            clock = service.clock
            return {"now": clock.ms(seconds), "seconds": seconds, "start": clock.start_ms,
                    "kind": clock.kind, "speed": clock.speed}
        finish = _FINISH.fullmatch(path)
        if method == "POST" and finish is not None:
            return service.finish(unquote(finish["job"]), payload.get("status", "SUCCEEDED"))
        if method == "GET" and path.rstrip("/") == "/_emulator/events":
            since = parse_qs(query).get("since", ["0"])[0]
            if not since.isdigit():
                raise bad_value("since", since, "an event index >= 0")
            # A bare list, as EventBridge delivers events one by one and a consumer iterates
            # them; the next ?since= is the number of events read so far (since + len).
            return list(service.events_since(int(since)))
        raise ApiError(f"no control operation is {method} {path}; the emulator offers POST "
                       "/_emulator/advance, GET /_emulator/clock, POST "
                       "/_emulator/jobs/{jobId}/finish, GET /_emulator/events", status=404,
                       code="UnknownOperationException")

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, status: int, headers: dict[str, str],
              body: bytes) -> None:
        request.send_response(status)
        for key, value in headers.items():
            request.send_header(key, value)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

