"""An independent fake of the two AWS Batch calls a history export makes, over loopback.

It keeps service jobs as AWS describes them (epoch milliseconds, attempts, preemption summary
with the latest ``recent_window`` preempted attempts, capacity usage, the SageMaker request
payload) and answers ``ListServiceJobs`` (one status per
call, RUNNING when none is given, pages of ``maxResults`` capped at ``page_size``, newest
first) and ``DescribeServiceJob`` in botocore's rest-json wire format. Two throttling modes,
each refusing with HTTP 429 ``TooManyRequestsException`` as Batch throttles: every
``throttle_every``-th request whatever the pace, and, with ``rate_limit``, every request beyond
that many per second (a token bucket holding ``burst`` requests, as a service's rate limit).
``latency`` delays every answer.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from ..loopback import LoopbackServer

QUEUE = "arn:aws:batch:us-east-1:123456789012:job-queue/gpu"
CROSS_SHARE_REASON = ("PREEMPTION_IN_PROGRESS: Cross-share preemption triggered to reclaim "
                      "borrowed capacity")


@dataclass
class HeldJob:
    job_id: str
    share: str
    status: str
    created_ms: int
    instance_type: str
    instance_count: int
    priority: int | None
    budget: int | None
    attempts: list[tuple[int, int | None]]
    """(startedAt, stoppedAt) in epoch milliseconds, oldest first."""
    preempted: int
    report_capacity: bool = True
    preempted_attempts: tuple[int, ...] | None = None
    """Which attempts (indices) ended by preemption; None: the first ``preempted`` ones."""
    recent_window: int = 5
    """How many of the latest preempted attempts ``recentPreemptedAttempts`` shows (AWS keeps
    a "sliding window" of undocumented length)."""
    preempted_in_attempts: bool = True
    """Whether ``attempts`` lists the preempted attempts too (AWS documents the list as "job
    attempts", not whether preempted ones are among them): either must be read alike."""

    def preempted_indices(self) -> tuple[int, ...]:
        if self.preempted_attempts is not None:
            return self.preempted_attempts
        return tuple(range(min(self.preempted, len(self.attempts))))

    def _attempt(self, index: int, *, reason: str | None = None) -> dict[str, Any]:
        start, stop = self.attempts[index]
        item: dict[str, Any] = {
            "serviceResourceId": {"name": "TrainingJobArn", "value": f"arn:{index}"},
            "startedAt": start, **({"stoppedAt": stop} if stop else {})}
        if reason:
            item["statusReason"] = reason
        return item

    def detail(self) -> dict[str, Any]:
        preempted = self.preempted_indices()
        recent = preempted[len(preempted) - self.recent_window:] if self.recent_window else ()
        body: dict[str, Any] = {
            "jobId": self.job_id,
            "jobArn": f"arn:aws:batch:us-east-1:123456789012:service-job/{self.job_id}",
            "jobName": f"train-{self.job_id}",
            "jobQueue": QUEUE,
            "quotaShareName": self.share,
            "status": self.status,
            "createdAt": self.created_ms,
            "serviceJobType": "SAGEMAKER_TRAINING",
            "serviceRequestPayload": json.dumps({"ResourceConfig": {
                "InstanceType": self.instance_type, "InstanceCount": self.instance_count}}),
            "attempts": [
                self._attempt(i) for i in range(len(self.attempts))
                if self.preempted_in_attempts or i not in preempted
            ],
            "preemptionSummary": {"preemptedAttemptCount": self.preempted,
                                  "recentPreemptedAttempts": [
                                      self._attempt(i, reason=CROSS_SHARE_REASON)
                                      for i in recent]},
        }
        if self.report_capacity:
            body["capacityUsage"] = [{"capacityUnit": self.instance_type,
                                      "quantity": float(self.instance_count)}]
        if self.priority is not None:
            body["schedulingPriority"] = self.priority
        if self.budget is not None:
            body["preemptionConfiguration"] = {"preemptionRetriesBeforeTermination": self.budget}
        if self.attempts:
            body["startedAt"] = self.attempts[0][0]
            if self.attempts[-1][1] and self.status in ("SUCCEEDED", "FAILED"):
                body["stoppedAt"] = self.attempts[-1][1]
        return body

    def summary(self) -> dict[str, Any]:
        full = self.detail()
        return {key: full[key] for key in ("jobId", "jobArn", "jobName", "quotaShareName",
                                           "status", "createdAt", "serviceJobType")}


@dataclass
class HistoryState:
    jobs: list[HeldJob] = field(default_factory=list)
    page_size: int = 37
    throttle_every: int = 5
    rate_limit: float = 0.0
    """Requests per second the fake answers (0: no limit); beyond it, throttled."""
    burst: float = 10.0
    latency: float = 0.0
    """Seconds every answer takes."""
    requests: int = 0
    throttled: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    tokens: float = 0.0
    refilled_at: float | None = None

    def over_rate(self) -> bool:
        """Whether this request is beyond ``rate_limit`` (called with the lock held)."""
        if not self.rate_limit:
            return False
        now = time.monotonic()
        if self.refilled_at is None:
            self.tokens, self.refilled_at = self.burst, now
        self.tokens = min(self.burst, self.tokens + (now - self.refilled_at) * self.rate_limit)
        self.refilled_at = now
        if self.tokens < 1.0:
            return True
        self.tokens -= 1.0
        return False


class FakeHistoryServer(LoopbackServer):
    def __init__(self) -> None:
        super().__init__()
        self.state = HistoryState()

    def serve(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length") or 0)
        params = json.loads(request.rfile.read(length) or b"{}")
        state = self.state
        with state.lock:
            state.requests += 1
            throttled = bool(state.throttle_every
                             and state.requests % state.throttle_every == 0)
            throttled = state.over_rate() or throttled
            if throttled:
                state.throttled += 1
            else:  # counted under the lock: the export calls from several threads
                operation = {"/v1/listservicejobs": "ListServiceJobs",
                             "/v1/describeservicejob": "DescribeServiceJob"}.get(request.path)
                if operation is not None:
                    state.calls[operation] = state.calls.get(operation, 0) + 1
        if state.latency:
            time.sleep(state.latency)
        status = 200
        body: dict[str, Any] = {}
        headers: dict[str, str] = {}
        if throttled:
            status, headers = 429, {"x-amzn-ErrorType": "TooManyRequestsException"}
            body = {"__type": "TooManyRequestsException", "message": "Too Many Requests"}
        elif request.path == "/v1/listservicejobs":
            wanted = params.get("jobStatus") or "RUNNING"
            jobs = sorted((j for j in state.jobs if j.status == wanted),
                          key=lambda j: -j.created_ms)
            start = int(params.get("nextToken") or 0)
            size = min(int(params.get("maxResults") or 100), state.page_size)
            body = {"jobSummaryList": [j.summary() for j in jobs[start:start + size]]}
            if start + size < len(jobs):
                body["nextToken"] = str(start + size)
        elif request.path == "/v1/describeservicejob":
            found = [j for j in state.jobs if j.job_id == params.get("jobId")]
            if found:
                body = found[0].detail()
            else:
                status, headers = 400, {"x-amzn-ErrorType": "ClientException"}
                body = {"__type": "ClientException", "message": "job not found"}
        else:
            status, body = 404, {"__type": "UnknownOperation", "message": request.path}
        raw = json.dumps(body).encode()
        request.send_response(status)
        for name, value in {"Content-Type": "application/json", **headers}.items():
            request.send_header(name, value)
        request.send_header("Content-Length", str(len(raw)))
        request.end_headers()
        request.wfile.write(raw)
