"""quota-constructs history against an independent fake Batch: thousands of jobs over many
pages, throttling injected; the file, read by the simulator's loader, holds what the fake holds."""

from __future__ import annotations

import io
import json
import random
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.live import history
from quota_constructs.runtime.retry import RetryPolicy
from quota_constructs.simulation.workloads import read_workload

from .fake_job_history import QUEUE, FakeHistoryServer, HeldJob

UNITS = ("ml.g5.xlarge", "ml.p4d.24xlarge", "ml.g5.12xlarge")
BASE_MS = 1_790_000_000_000


def run_history(argv: list[str], **streams: Any) -> int:
    """The command with backoff that does not sleep (the fake throttles on purpose)."""
    return history.main(argv, read_retry=RetryPolicy(max_attempts=5, sleep=lambda _: None),
                        describe_retry=RetryPolicy(max_attempts=10, sleep=lambda _: None),
                        **streams)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHistoryServer]:
    fake = FakeHistoryServer().start()
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", fake.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    # Exports start fast here; the climb from a slow start is the rate's own tests' subject.
    monkeypatch.setattr(history, "DEFAULT_START_RATE", 500.0)
    yield fake
    fake.stop()


def held_jobs(n: int, seed: int = 3) -> list[HeldJob]:
    rng = random.Random(seed)
    jobs = []
    for i in range(n):
        created = BASE_MS + i * 60_000 + rng.randrange(1000)
        status = rng.choices(["SUCCEEDED", "FAILED", "RUNNING", "RUNNABLE", "SUBMITTED"],
                             weights=[80, 5, 5, 8, 2])[0]
        attempts: list[tuple[int, int | None]] = []
        preempted = 0
        if status in ("SUCCEEDED", "FAILED", "RUNNING"):
            start = created + rng.randrange(1, 3_600_000)
            for _ in range(rng.choice((0, 0, 0, 1, 2))):  # preempted attempts first
                stop = start + rng.randrange(60_000, 900_000)
                attempts.append((start, stop))
                preempted += 1
                start = stop + rng.randrange(1000, 600_000)
            end = None if status == "RUNNING" else start + rng.randrange(1000, 7_200_000)
            attempts.append((start, end))
        jobs.append(HeldJob(
            job_id=f"j{i:05d}", share=f"team-{rng.randrange(8)}", status=status,
            created_ms=created, instance_type=rng.choice(UNITS),
            instance_count=rng.choice((1, 1, 2, 4)),
            priority=rng.choice((None, 0, 10, 500, 9999)),
            budget=rng.choice((None, 0, 1, 3)), attempts=attempts, preempted=preempted,
            report_capacity=bool(attempts) and status != "FAILED",
        ))
    return jobs


def test_export_reads_back_as_the_fake_holds_it(server: FakeHistoryServer,
                                                tmp_path: Path) -> None:
    server.state.jobs = held_jobs(3000)
    out = tmp_path / "jobs.csv"
    stdout, stderr = io.StringIO(), io.StringIO()
    code = run_history(["--queue", QUEUE, "--out", str(out), "--max-rate", "0"],
                        stdout=stdout, stderr=stderr)
    assert code == 0, stderr.getvalue()
    assert server.state.throttled > 100  # throttling was injected and survived
    assert server.state.calls["ListServiceJobs"] > 80  # many pages (37 jobs each)
    assert "described 3,000 of 3,000 jobs" in stderr.getvalue()

    workload = read_workload(out)
    by_id = {job.job_id: job for job in workload.jobs}
    assert len(by_id) == 3000
    first = min(j.created_ms for j in server.state.jobs)
    for held in server.state.jobs:
        job = by_id[held.job_id]
        assert job.share == held.share
        assert job.instance_type == held.instance_type
        assert job.instance_count == held.instance_count
        assert job.priority == (held.priority or 0)
        assert job.preemption_retries == held.budget
        assert job.submitted_at == pytest.approx((held.created_ms - first) / 1000.0)
        if held.status == "SUCCEEDED":
            start, stop = held.attempts[-1]
            assert stop is not None
            assert job.duration == pytest.approx((stop - start) / 1000.0)
        elif held.status in ("RUNNABLE", "SUBMITTED"):
            assert job.duration == 0.0
        elif held.status == "FAILED":
            ran = sum(((stop or 0) - start) / 1000.0 for start, stop in held.attempts)
            assert job.duration == pytest.approx(ran)

    rows = {row["job_id"]: row for row in _rows(out)}
    for held in server.state.jobs:
        row = rows[held.job_id]
        assert row["status"] == held.status
        expected = {"SUCCEEDED": "finished", "FAILED": "failed", "RUNNING": "running"}.get(
            held.status, "never_ran")
        assert row["history"] == expected
        assert int(row["preemptions"]) == held.preempted
        assert row["submitted_at_utc"].startswith("2026-")


def test_since_keeps_only_newer_jobs(server: FakeHistoryServer, tmp_path: Path) -> None:
    server.state.jobs = held_jobs(200)
    server.state.throttle_every = 0
    out = tmp_path / "jobs.csv"
    cutoff_ms = BASE_MS + 100 * 60_000 + 1000
    from datetime import UTC, datetime
    since = datetime.fromtimestamp(cutoff_ms / 1000, UTC).isoformat()
    assert run_history(["--queue", QUEUE, "--out", str(out), "--max-rate", "0", "--since", since,
                         "--quiet"], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    kept = {job.job_id for job in read_workload(out).jobs}
    assert kept == {j.job_id for j in server.state.jobs if j.created_ms >= cutoff_ms}
    assert server.state.calls["DescribeServiceJob"] == len(kept)  # older ones never described


class SimulatedService:
    """A service answering at most ``capacity`` calls per second (a token bucket of ``burst``)
    and refusing every ``every``-th call whatever the pace, on the rate's injected clock."""

    def __init__(self, capacity: float = 0.0, every: int = 0, burst: float = 5.0) -> None:
        self.capacity, self.every, self.burst = capacity, every, burst
        self.clock = 0.0
        self.tokens, self.refilled = burst, 0.0
        self.calls = self.answered = 0

    def sleep(self, seconds: float) -> None:
        self.clock += seconds

    def call(self) -> bool:
        """Whether the call made now is answered (False: throttled)."""
        self.calls += 1
        if self.every and self.calls % self.every == 0:
            return False
        if self.capacity:
            self.tokens = min(self.burst,
                              self.tokens + (self.clock - self.refilled) * self.capacity)
            self.refilled = self.clock
            if self.tokens < 1:
                return False
            self.tokens -= 1
        self.answered += 1
        return True


def drive(service: SimulatedService, rate: history.AdaptiveRate, answers: int) -> float:
    """Calls until ``answers`` were answered (a throttled call is retried); the seconds taken."""
    while service.answered < answers:
        rate.acquire()
        rate.answered(throttled=not service.call())
    return service.clock


def adaptive(service: SimulatedService, **kwargs: float) -> history.AdaptiveRate:
    return history.AdaptiveRate(clock=lambda: service.clock, sleep=service.sleep, **kwargs)


def test_without_throttling_the_rate_climbs_to_its_ceiling() -> None:
    service = SimulatedService()
    rate = adaptive(service, start=5.0, ceiling=40.0)
    seconds = drive(service, rate, 8000)
    assert rate.rate == 40.0
    assert 8000 / 40 <= seconds < 8000 / 40 + 10  # the climb from 5 costs seconds, not minutes


def test_a_service_rate_is_followed_and_its_capacity_used() -> None:
    service = SimulatedService(capacity=20.0)
    rate = adaptive(service, start=5.0, ceiling=50.0)
    drive(service, rate, 2000)
    started, answered = service.clock, service.answered
    drive(service, rate, 10_000)
    throughput = (service.answered - answered) / (service.clock - started)
    assert 0.9 * 20 <= throughput <= 20.5  # what the service allows is used
    assert rate.rate < 2 * 20  # and the pace stays near it, far below the ceiling


def test_throttles_at_a_fixed_share_whatever_the_pace_do_not_sink_the_rate() -> None:
    service = SimulatedService(every=5)  # 20 % refused however slowly it is called
    rate = adaptive(service, start=5.0, ceiling=40.0)
    seconds = drive(service, rate, 8000)
    assert rate.rate == 40.0
    assert seconds < 8000 / 0.8 / 40 + 10


def test_a_service_that_lowers_its_rate_is_followed_down_and_back_up() -> None:
    service = SimulatedService(capacity=30.0)
    rate = adaptive(service, start=30.0, ceiling=50.0)
    drive(service, rate, 3000)
    service.capacity = 5.0
    drive(service, rate, service.answered + 1000)
    assert rate.rate < 2 * 5
    service.capacity = 0.0
    drive(service, rate, service.answered + 1000)
    assert rate.rate == 50.0


def test_json_out_is_the_workload_json_and_reads_back(
    server: FakeHistoryServer, tmp_path: Path
) -> None:
    server.state.jobs = held_jobs(300)
    out = tmp_path / "jobs.json"
    assert run_history(["--queue", QUEUE, "--out", str(out), "--quiet", "--max-rate", "0"],
                        stdout=io.StringIO(), stderr=io.StringIO()) == 0
    document = json.loads(out.read_text())
    # The workload's jobs, and the export's moment (which the workload loader ignores).
    assert set(document) == {"jobs", "exported_at"} and len(document["jobs"]) == 300
    csv_out = tmp_path / "jobs.csv"
    assert run_history(["--queue", QUEUE, "--out", str(csv_out), "--quiet", "--max-rate", "0"],
                        stdout=io.StringIO(), stderr=io.StringIO()) == 0
    running = {j.job_id for j in server.state.jobs if j.status == "RUNNING"}  # "now" moved

    def settled(path: Path) -> list[object]:
        return [job for job in read_workload(path).jobs if job.job_id not in running]

    assert settled(out) == settled(csv_out) and len(settled(out)) > 250


@pytest.mark.parametrize("name", ["jobs.txt", "jobs", "jobs.csv.gz"])
def test_an_unknown_out_extension_is_refused_before_any_call(
    server: FakeHistoryServer, tmp_path: Path, name: str
) -> None:
    server.state.jobs = held_jobs(10)
    stderr = io.StringIO()
    assert run_history(["--queue", QUEUE, "--out", str(tmp_path / name)],
                        stdout=io.StringIO(), stderr=stderr) == 2
    (line,) = stderr.getvalue().strip().splitlines()
    assert line.startswith("quota-constructs history: error: --out got ")
    assert "allowed: a file ending in .csv or .json" in line
    assert server.state.requests == 0
    assert not (tmp_path / name).exists()


def test_a_rate_limited_service_is_followed_every_job_exported(
    server: FakeHistoryServer, tmp_path: Path
) -> None:
    server.state.jobs = held_jobs(600)
    server.state.throttle_every = 0
    server.state.rate_limit, server.state.burst = 150.0, 20.0
    out = tmp_path / "jobs.csv"
    stderr = io.StringIO()
    assert run_history(["--queue", QUEUE, "--out", str(out), "--max-rate", "0",
                         "--workers", "8"], stdout=io.StringIO(), stderr=stderr) == 0
    assert server.state.throttled > 0  # the limit was reached, and followed
    assert {job.job_id for job in read_workload(out).jobs} == {
        j.job_id for j in server.state.jobs}
    assert server.state.calls["DescribeServiceJob"] == 600  # each described once answered
    assert "described 600 of 600 jobs" in stderr.getvalue()
    assert "throttled and retried" in stderr.getvalue()


def test_errors_are_one_line(server: FakeHistoryServer, tmp_path: Path) -> None:
    server.state.throttle_every = 1  # every call throttled: retries run out
    stderr = io.StringIO()
    code = run_history(["--queue", QUEUE, "--out", str(tmp_path / "x.csv"), "--max-rate", "0"],
                        stdout=io.StringIO(), stderr=stderr)
    assert code == 2
    lines = [line for line in stderr.getvalue().splitlines() if "error:" in line]
    assert len(lines) == 1 and lines[0].startswith("quota-constructs history: error:")
    assert "TooManyRequests" in lines[0] or "Too Many Requests" in lines[0], lines[0]


def _rows(path: Path) -> list[dict[str, str]]:
    import csv
    with path.open(newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def test_the_python_api_takes_a_reader_or_a_bare_read_function(
    server: FakeHistoryServer, tmp_path: Path
) -> None:
    from quota_constructs.live.queue_reader import QueueReader

    server.state.jobs = held_jobs(120)
    reader = QueueReader.connect(policy=RetryPolicy(max_attempts=5, sleep=lambda _: None))
    by_reader = history.export_history(reader, QUEUE, tmp_path / "a.json", rate=0)
    by_function = history.export_history(reader.read, QUEUE, tmp_path / "b.csv", rate=0)
    assert [j.job_id for j in by_reader] == [j.job_id for j in by_function]
    assert len(by_reader) == 120


def test_every_attempt_is_kept_with_how_it_ended_and_the_exports_moment(
        server: FakeHistoryServer, tmp_path: Path) -> None:
    server.state.throttle_every = 0
    base = BASE_MS
    server.state.jobs = [
        # Preempted twice (AWS's window shows only the latest), then succeeded.
        HeldJob("a", "vision", "SUCCEEDED", base, UNITS[0], 2, 5, None,
                [(base + 10, base + 20), (base + 30, base + 40), (base + 50, base + 90)], 2,
                recent_window=1),
        # Failed by its budget of 1: the second preemption; attempts lists no preempted one.
        HeldJob("b", "nlp", "FAILED", base + 1, UNITS[1], 1, None, 1,
                [(base + 11, base + 21), (base + 31, base + 41)], 2,
                preempted_attempts=(0, 1), preempted_in_attempts=False),
        HeldJob("c", "nlp", "RUNNING", base + 2, UNITS[1], 1, None, None,
                [(base + 12, base + 22), (base + 32, None)], 1),
        HeldJob("d", "vision", "RUNNABLE", base + 3, UNITS[0], 1, None, None, [], 0),
        # Preempted 3 times; AWS shows the latest and attempts no longer lists any of them.
        HeldJob("e", "vision", "SUCCEEDED", base + 4, UNITS[0], 1, None, None,
                [(base + 14, base + 24), (base + 34, base + 44), (base + 54, base + 64),
                 (base + 74, base + 99)], 3, recent_window=1, preempted_in_attempts=False),
    ]
    out = tmp_path / "jobs.csv"
    before = time.time()
    assert run_history(["--queue", QUEUE, "--out", str(out), "--quiet"],
                        stdout=io.StringIO(), stderr=io.StringIO()) == 0
    after = time.time()
    rows = {row["job_id"]: row for row in _rows(out)}
    b = base
    assert rows["a"]["attempt_runs"] == (f"{b + 10}/{b + 20}/PREEMPTED;{b + 30}/{b + 40}/"
                                         f"PREEMPTED;{b + 50}/{b + 90}/SUCCEEDED")
    assert rows["b"]["attempt_runs"] == f"{b + 11}/{b + 21}/PREEMPTED;{b + 31}/{b + 41}/PREEMPTED"
    assert rows["c"]["attempt_runs"] == f"{b + 12}/{b + 22}/PREEMPTED;{b + 32}//RUNNING"
    assert rows["d"]["attempt_runs"] == ""
    assert rows["e"]["attempt_runs"] == f"{b + 54}/{b + 64}/PREEMPTED;{b + 74}/{b + 99}/SUCCEEDED"
    assert [rows[j]["unseen_preemptions"] for j in "abcde"] == ["0", "0", "0", "0", "2"]
    assert [rows[j]["preemptions"] for j in "abcde"] == ["2", "2", "1", "0", "3"]
    moments = {row["exported_at_utc"] for row in rows.values()}
    assert len(moments) == 1
    moment = datetime.fromisoformat(moments.pop()).timestamp()
    assert before - 0.001 <= moment <= after + 0.001

    as_json = tmp_path / "jobs.json"
    assert run_history(["--queue", QUEUE, "--out", str(as_json), "--quiet"],
                        stdout=io.StringIO(), stderr=io.StringIO()) == 0
    document = json.loads(as_json.read_text())
    assert {job["job_id"]: job["attempt_runs"] for job in document["jobs"]} == {
        job_id: row["attempt_runs"] for job_id, row in rows.items()}
    assert datetime.fromisoformat(document["exported_at"]).timestamp() >= moment
