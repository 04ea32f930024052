"""history then usage, through the console script, against an independent fake AWS Batch
holding a queue's jobs with known attempts; every figure compared with an independent
computation from the fake's ground truth (``truth.py``).

The queue: three instance types (one with capacity no share owns and no lender), a RESERVE, a
LEND and two LEND_AND_BORROW shares; jobs that borrow, are preempted (some until their budget
fails them), still run at the export, are requeued after a preemption, never start, or were
cancelled; preempted attempts shown in AWS's window of recent ones, or only counted.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.cli import main

from ..live.fake_job_history import QUEUE, FakeHistoryServer, HeldJob
from .truth import TrueAttempt, TrueJob, TrueShare, assert_matches, expected

G5, P4D, G5_12 = "ml.g5.xlarge", "ml.p4d.24xlarge", "ml.g5.12xlarge"
ENVIRONMENT = {G5: 10, P4D: 4, G5_12: 3}
PRICES = {G5: 1.41, P4D: 37.69, G5_12: 7.09}
SHARES = [
    TrueShare("vision", "LEND_AND_BORROW", {G5: 3, P4D: 1}, {G5: True, P4D: True},
              target_wait_p95=4 * 3600.0),
    TrueShare("nlp", "LEND_AND_BORROW", {G5: 2, P4D: 1, G5_12: 1},
              {G5: True, P4D: True, G5_12: True}),
    TrueShare("speech", "LEND", {G5: 2, P4D: 1}),
    TrueShare("research", "RESERVE", {G5: 2, G5_12: 1}),
]
DECLARATION = '''
from datetime import timedelta
from types import SimpleNamespace
from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy

G5, P4D, G5_12 = "ml.g5.xlarge", "ml.p4d.24xlarge", "ml.g5.12xlarge"
PROD = SimpleNamespace(
    capacity_limits=[CapacityLimit(G5, 10), CapacityLimit(P4D, 4), CapacityLimit(G5_12, 3)],
    shares=[
        QuotaShareSpec(name="vision", strategy=SharingStrategy.LEND_AND_BORROW,
                       capacity_limits=[CapacityLimit(G5, 3), CapacityLimit(P4D, 1)],
                       agreement=ShareAgreement(owner="vision-team",
                                                target_wait_p95=timedelta(hours=4))),
        QuotaShareSpec(name="nlp", strategy=SharingStrategy.LEND_AND_BORROW,
                       borrow_limit_percent=200,
                       capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(P4D, 1),
                                        CapacityLimit(G5_12, 1)]),
        QuotaShareSpec(name="speech", strategy=SharingStrategy.LEND,
                       capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(P4D, 1)]),
        QuotaShareSpec(name="research", strategy=SharingStrategy.RESERVE,
                       capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(G5_12, 1)]),
    ],
)
'''
MINUTE, HOUR = 60_000, 3_600_000


def job_pair(job_id: str, share: str, unit: str, count: int, created: int, status: str,
             runs: list[tuple[int, int | None, str]], *, retries: int | None = None,
             window: int = 5, listed: bool = True, hidden: int = 0) -> tuple[HeldJob, TrueJob]:
    """The fake's job and its ground truth. ``hidden`` preempted attempts ran before ``runs``
    but AWS shows neither in ``attempts`` (``listed=False``) nor in its window: only counted."""
    preempted = [i for i, (_, _, ended) in enumerate(runs) if ended == "PREEMPTED"]
    held = HeldJob(
        job_id=job_id, share=share, status=status, created_ms=created, instance_type=unit,
        instance_count=count, priority=None, budget=retries,
        attempts=[(a, b) for a, b, _ in runs], preempted=len(preempted) + hidden,
        report_capacity=status != "FAILED", preempted_attempts=tuple(preempted),
        recent_window=window, preempted_in_attempts=listed,
    )
    truth = TrueJob(job_id, share, unit, count, created, status,
                    tuple(TrueAttempt(a, b, e) for a, b, e in runs), retries,
                    len(preempted) + hidden)
    return held, truth


def scenario(now: int, seed: int = 11, n: int = 220) -> list[tuple[HeldJob, TrueJob]]:
    rng = random.Random(seed)
    base = now - 3 * 24 * HOUR
    units = {s.name: [u for u in ENVIRONMENT if s.own.get(u)] for s in SHARES}
    jobs = []
    for i in range(n):
        share = rng.choice([s.name for s in SHARES])
        unit = rng.choice(units[share])
        count = rng.choice((1, 1, 2, 3, 4))
        created = base + rng.randrange(0, 60 * HOUR)
        kind = rng.choices(["ok", "budget", "failed", "running", "requeued", "waiting",
                            "cancelled"], weights=[50, 8, 5, 12, 6, 6, 3])[0]
        t = created + rng.randrange(0, 2 * HOUR)
        runs: list[tuple[int, int | None, str]] = []
        retries = rng.choice((None, None, 1, 3))
        preemptions = rng.choice((0, 0, 0, 1, 2, 3))
        if kind == "budget":
            retries = rng.choice((0, 1, 2))
            preemptions = retries + 1
        elif kind == "requeued":
            preemptions = max(1, preemptions)
        elif retries is not None:
            preemptions = min(preemptions, retries)
        if kind in ("waiting", "cancelled"):
            preemptions = 0
        for _ in range(preemptions):
            stop = t + rng.randrange(5 * MINUTE, 3 * HOUR)
            runs.append((t, stop, "PREEMPTED"))
            t = stop + rng.randrange(MINUTE, 30 * MINUTE)
        status = {"ok": "SUCCEEDED", "budget": "FAILED", "failed": "FAILED",
                  "running": "RUNNING", "requeued": "RUNNABLE", "waiting": "RUNNABLE",
                  "cancelled": "FAILED"}[kind]
        if kind in ("ok", "failed"):
            runs.append((t, t + rng.randrange(MINUTE, 5 * HOUR), status))
        elif kind == "running":
            runs.append((t, None, "RUNNING"))
        window = rng.choice((5, 5, 2, 1))  # AWS's window of recent preemptions, varied
        jobs.append(job_pair(f"j{i:04d}", share, unit, count, created, status, runs,
                             retries=retries, window=window))
    # Preempted 4 times, AWS shows the last one only and lists none in attempts: 3 unseen.
    jobs.append(job_pair("unseen", "speech", G5, 1, base + HOUR, "SUCCEEDED",
                         [(base + 9 * HOUR, base + 10 * HOUR, "PREEMPTED"),
                          (base + 11 * HOUR, base + 12 * HOUR, "SUCCEEDED")],
                         window=1, listed=False, hidden=3))
    return jobs


@pytest.fixture
def fake_batch(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHistoryServer]:
    fake = FakeHistoryServer().start()
    fake.state.throttle_every = 7  # the export retries throttles: it must not change a figure
    for name, value in {"AWS_ENDPOINT_URL_BATCH": fake.endpoint, "AWS_ACCESS_KEY_ID": "x",
                        "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    from quota_constructs.live import history
    from quota_constructs.runtime.retry import RetryPolicy
    monkeypatch.setattr(history, "DEFAULT_START_RATE", 500.0)
    monkeypatch.setattr(history, "DESCRIBE_RETRY", RetryPolicy(max_attempts=10,
                                                               sleep=lambda _: None))
    yield fake
    fake.stop()


def console(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(args))
    return code, err.getvalue()


def exported_moment(export: Path) -> int:
    if export.suffix == ".json":
        text = json.loads(export.read_text())["exported_at"]
    else:
        with export.open(newline="") as stream:
            text = next(csv.DictReader(stream))["exported_at_utc"]
    return round(datetime.fromisoformat(text).timestamp() * 1000)


def invariants(got: dict[str, Any]) -> None:
    """What the lending rule promises whatever the history."""
    for unit in ENVIRONMENT:
        figures = {name: share["instance_types"][unit] for name, share in got["shares"].items()}
        lent = sum(f["lent_hours"] for f in figures.values())
        borrowed = sum(f["borrowed_hours"] for f in figures.values())
        assert lent <= borrowed + 1e-6, unit
        for name, f in figures.items():
            assert f["lent_hours"] <= f["idle_own_hours"] + 1e-6, (name, unit)
        assert figures["research"]["lent_hours"] == 0.0


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_history_then_usage_matches_the_fakes_ground_truth(
        fake_batch: FakeHistoryServer, tmp_path: Path, suffix: str) -> None:
    now = int(time.time() * 1000)
    pairs = scenario(now)
    fake_batch.state.jobs = [held for held, _ in pairs]
    truth = [true for _, true in pairs]
    declaration = tmp_path / "platform.py"
    declaration.write_text(DECLARATION)
    prices = tmp_path / "prices.csv"
    prices.write_text("instance_type,price_per_hour\n"
                      + "".join(f"{u},{p}\n" for u, p in PRICES.items()))
    export = tmp_path / f"jobs{suffix}"

    code, err = console("history", "--queue", QUEUE, "--out", str(export), "--quiet")
    assert code == 0, err
    assert fake_batch.state.throttled > 10
    moment = exported_moment(export)
    assert now <= moment <= int(time.time() * 1000) + 1

    out = tmp_path / "out"
    code, err = console("usage", "--history", str(export), "--declaration",
                        f"{declaration}:PROD", "--prices", str(prices), "--half-life", "36h",
                        "--out", str(out), "--quiet")
    assert code == 0, err
    got = json.loads((out / "usage.json").read_text())
    start = min(job.created for job in truth)
    # Jobs still run at the export: the window ends at its moment.
    assert any(a.stop is None for job in truth for a in job.attempts)
    want = expected(truth, ENVIRONMENT, SHARES, start=start, end=moment, exported=moment,
                    half_life_hours=36.0, prices=PRICES)
    assert_matches(got, want)
    assert set(got["shares"]) == {s.name for s in SHARES}
    assert all(set(share["instance_types"]) == set(ENVIRONMENT)
               for share in got["shares"].values())
    invariants(got)
    # The ground truth does exercise what the check is for.
    borrowed = {u: sum(s["instance_types"][u]["borrowed_hours"] for s in got["shares"].values())
                for u in ENVIRONMENT}
    assert all(hours > 1 for hours in borrowed.values())
    assert got["shares"]["nlp"]["instance_types"][G5_12]["lent_hours"] == 0.0  # nobody lends it
    assert sum(s["budget_failures"] for s in got["shares"].values()) >= 5
    assert got["shares"]["speech"]["preemptions"] >= 4  # the unseen job's 4 among them
    rows = list(csv.DictReader((out / "usage.csv").open()))
    assert len(rows) == len(SHARES) * len(ENVIRONMENT)
    assert "<svg" in (out / "report.html").read_text()


def test_a_narrowed_window_through_the_installed_console_script(
        fake_batch: FakeHistoryServer, tmp_path: Path) -> None:
    now = int(time.time() * 1000)
    pairs = scenario(now, seed=5, n=120)
    fake_batch.state.jobs = [held for held, _ in pairs]
    truth = [true for _, true in pairs]
    declaration = tmp_path / "platform.py"
    declaration.write_text(DECLARATION)
    export = tmp_path / "jobs.csv"
    code, err = console("history", "--queue", QUEUE, "--out", str(export), "--quiet")
    assert code == 0, err
    moment = exported_moment(export)
    base = now - 3 * 24 * HOUR
    since = (base // 1000 + 20 * 3600) * 1000
    until = since + 30 * HOUR
    iso = [datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
           for ms in (since, until)]
    out = tmp_path / "out"
    # A process of its own, as a user runs it (python -m is the console script's entry).
    result = subprocess.run(
        [sys.executable, "-m", "quota_constructs", "usage", "--history", str(export),
         "--declaration", f"{declaration}:PROD", "--since", iso[0], "--until", iso[1],
         "--half-life", "2d", "--out", str(out)],
        capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stdout
    got = json.loads((out / "usage.json").read_text())
    want = expected(truth, ENVIRONMENT, SHARES, start=since, end=until, exported=moment,
                    half_life_hours=48.0, prices=None, closed=False)
    assert_matches(got, want)
    assert got["window"]["start"] == iso[0] and got["window"]["end"] == iso[1]
    invariants(got)
