"""How long ``quota-constructs history`` takes to export 8,000 jobs from a throttling endpoint.

    PYTHONPATH=. python -m tests.live.benchmark_history [--jobs 8000] [--throttle-every 5]
        [--rate-limit 0] [--latency 0.02]

The repository's fake (``fake_job_history``) answers over loopback with ``--latency`` per call,
refusing every ``--throttle-every``-th request and, with ``--rate-limit``, every request beyond
that many per second. The export runs with its defaults (``--max-rate``, ``--workers``) and
real backoff; the script prints the wall time and the calls. A benchmark, not a test: nothing
asserts on time.
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time
from pathlib import Path

from quota_constructs.live import history

from .fake_job_history import QUEUE, FakeHistoryServer
from .test_history import held_jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8000)
    parser.add_argument("--throttle-every", type=int, default=5)
    parser.add_argument("--rate-limit", type=float, default=0.0)
    parser.add_argument("--latency", type=float, default=0.02)
    options = parser.parse_args()
    server = FakeHistoryServer().start()
    server.state.jobs = held_jobs(options.jobs)
    server.state.page_size = 100
    server.state.throttle_every = options.throttle_every
    server.state.rate_limit = options.rate_limit
    server.state.latency = options.latency
    os.environ.update(AWS_ENDPOINT_URL_BATCH=server.endpoint, AWS_ACCESS_KEY_ID="x",
                      AWS_SECRET_ACCESS_KEY="x", AWS_REGION="us-east-1")
    try:
        with tempfile.TemporaryDirectory() as where:
            out = Path(where) / "jobs.csv"
            err = io.StringIO()
            started = time.monotonic()
            code = history.main(["--queue", QUEUE, "--out", str(out)], stdout=io.StringIO(),
                                stderr=err)
            seconds = time.monotonic() - started
    finally:
        server.stop()
    state = server.state
    print(err.getvalue().strip().splitlines()[-1])
    print(f"exit {code}: {options.jobs:,} jobs in {seconds:.0f} s ({seconds / 60:.1f} min); "
          f"{state.requests:,} requests, {state.throttled:,} throttled "
          f"(refusing every {options.throttle_every or 'no'} n-th call, rate limit "
          f"{options.rate_limit or 'none'}/s, latency {options.latency * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
