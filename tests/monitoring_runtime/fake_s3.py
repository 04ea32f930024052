"""A fake of the three S3 calls the job ledger makes, on loopback, path-style (as botocore
addresses a bucket on an IP endpoint): PutObject, GetObject and ListObjectsV2 (``prefix``,
``start-after``, ``continuation-token``, ``max-keys``), in S3's REST-XML wire format, so the
real boto3 clients of the Lambda and of ``usage --ledger`` parse its answers as AWS's."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

from ..loopback import LoopbackServer

NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"


@dataclass
class StoredObject:
    body: bytes
    modified: datetime


@dataclass
class FakeS3:
    buckets: dict[str, dict[str, StoredObject]] = field(default_factory=dict)
    puts: int = 0
    denied: set[str] = field(default_factory=set)
    """Buckets every call to answers AccessDenied."""
    page_size: int = 1000
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_bucket(self, name: str) -> None:
        self.buckets[name] = {}

    def keys(self, bucket: str) -> list[str]:
        return sorted(self.buckets[bucket])


class FakeS3Server(LoopbackServer):
    def __init__(self) -> None:
        super().__init__()
        self.state = FakeS3()

    def reset(self) -> FakeS3:
        self.state = FakeS3()
        return self.state

    def serve(self, request: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(request.path)
        bucket, _, key = unquote(parts.path).lstrip("/").partition("/")
        query = {name: values[0] for name, values in parse_qs(parts.query).items()}
        body = _read_body(request)
        state = self.state
        with state.lock:
            if bucket in state.denied:
                return _error(request, 403, "AccessDenied", "Access Denied")
            objects = state.buckets.get(bucket)
            if objects is None:
                return _error(request, 404, "NoSuchBucket", "The bucket does not exist")
            if request.command == "PUT" and key:
                objects[key] = StoredObject(body, datetime.now(UTC))
                state.puts += 1
                return _answer(request, 200, b"", {"ETag": '"fake"'})
            if request.command == "GET" and key:
                stored = objects.get(key)
                if stored is None:
                    return _error(request, 404, "NoSuchKey", "The key does not exist")
                return _answer(request, 200, stored.body,
                               {"Content-Type": "application/json"})
            if request.command == "GET" and query.get("list-type") == "2":
                return _answer(request, 200, _listing(objects, query, state.page_size),
                               {"Content-Type": "application/xml"})
        _error(request, 400, "NotImplemented", f"{request.command} {request.path}")


def _read_body(request: BaseHTTPRequestHandler) -> bytes:
    """The request's body, also when botocore sends it aws-chunked (with a trailing
    checksum)."""
    if request.headers.get("Transfer-Encoding") == "chunked" or "aws-chunked" in (
            request.headers.get("Content-Encoding") or ""):
        data = b""
        while True:
            size_line = request.rfile.readline().split(b";")[0].strip()
            size = int(size_line or b"0", 16)
            if size == 0:
                while request.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return data
            data += request.rfile.read(size)
            request.rfile.readline()
    return request.rfile.read(int(request.headers.get("Content-Length") or 0))


def _listing(objects: dict[str, StoredObject], query: dict[str, str], page_size: int) -> bytes:
    prefix = query.get("prefix", "")
    after = query.get("continuation-token") or query.get("start-after") or ""
    size = min(int(query.get("max-keys") or 1000), page_size)
    keys = [key for key in sorted(objects) if key.startswith(prefix) and key > after]
    page, more = keys[:size], len(keys) > size
    items = "".join(
        f"<Contents><Key>{escape(key)}</Key><LastModified>"
        f"{objects[key].modified.strftime('%Y-%m-%dT%H:%M:%S.000Z')}</LastModified>"
        f"<Size>{len(objects[key].body)}</Size><StorageClass>STANDARD</StorageClass></Contents>"
        for key in page
    )
    token = f"<NextContinuationToken>{escape(page[-1])}</NextContinuationToken>" if more else ""
    return (f'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="{NAMESPACE}">'
            f"<Prefix>{escape(prefix)}</Prefix><KeyCount>{len(page)}</KeyCount>"
            f"<MaxKeys>{size}</MaxKeys><IsTruncated>{'true' if more else 'false'}"
            f"</IsTruncated>{token}{items}</ListBucketResult>").encode()


def _answer(request: BaseHTTPRequestHandler, status: int, body: bytes,
            headers: dict[str, str]) -> None:
    request.send_response(status)
    for name, value in headers.items():
        request.send_header(name, value)
    request.send_header("Content-Length", str(len(body)))
    request.end_headers()
    request.wfile.write(body)


def _error(request: BaseHTTPRequestHandler, status: int, code: str, message: str) -> None:
    body = (f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code>'
            f"<Message>{escape(message)}</Message></Error>").encode()
    _answer(request, status, body, {"Content-Type": "application/xml"})
