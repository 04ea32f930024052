"""An HTTP endpoint on loopback for the fake AWS services the runtimes are tested against."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class LoopbackServer:
    """Serves on ``127.0.0.1`` on a free port, in a daemon thread; :meth:`serve` answers each
    request (GET, POST, PUT and DELETE)."""

    def __init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out as separate writes; without this, Nagle's algorithm and
            # delayed ACKs add ~40 ms to every call.
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                server.serve(self)

            def do_POST(self) -> None:
                server.serve(self)

            def do_DELETE(self) -> None:
                server.serve(self)

            def do_PUT(self) -> None:
                server.serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def endpoint(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def serve(self, request: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError
