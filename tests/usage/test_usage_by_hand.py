"""quota-constructs usage on small histories whose every figure is worked out by hand."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.cli import main

from .exports import Row, write_export

LN2 = math.log(2)

# Case A (environment 4 × ml.g5.xlarge; L LEND 2, B LEND_AND_BORROW 1, R RESERVE 1):
# b1 (B, 3 instances) runs 0-1 h and is preempted when l1 (L, 2 instances) arrives at 1 h;
# l1 runs 1-3 h; b1 runs again 3-4 h and succeeds.
CASE_A = [
    Row("b1", "B", 0.0, "SUCCEEDED", ((0.0, 1.0, "PREEMPTED"), (3.0, 4.0, "SUCCEEDED")),
        count=3),
    Row("l1", "L", 1.0, "SUCCEEDED", ((1.0, 3.0, "SUCCEEDED"),), count=2),
]


def run_usage(*args: str) -> tuple[int, str]:
    import contextlib
    import io
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["usage", "--quiet", *args])
    return code, err.getvalue()


def usage_of(out: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((out / "usage.json").read_text())
    return document


def test_case_a_borrowing_lending_preemption_cost_and_fair_share(
        tmp_path: Path, hand_declaration: Path) -> None:
    export = write_export(tmp_path / "jobs.csv", CASE_A, exported_h=5.0)
    prices = tmp_path / "prices.csv"
    prices.write_text("instance_type,price_per_hour\nml.g5.xlarge,1.5\n")
    code, err = run_usage("--history", str(export), "--declaration",
                          f"{hand_declaration}:A", "--prices", str(prices), "--half-life",
                          "1h", "--out", str(tmp_path / "out"))
    assert code == 0, err
    got = usage_of(tmp_path / "out")
    # First submission (0 h) to the last attempt's end (4 h); the export's moment (5 h) does
    # not matter: nothing was running.
    assert got["window"] == {"start": "2026-11-01T00:00:00Z", "end": "2026-11-01T04:00:00Z",
                             "hours": 4.0}
    b = got["shares"]["B"]
    # B: 3 instances for 1 h and again for 1 h; 1 own, 2 borrowed each time.
    assert b["instance_types"]["ml.g5.xlarge"] == {
        "own_capacity": 1, "used_hours": 6.0, "own_used_hours": 2.0, "borrowed_hours": 4.0,
        "idle_own_hours": 2.0, "lent_hours": 0.0, "preempted_hours": 3.0, "cost": 9.0}
    assert (b["jobs"], b["preemptions"], b["budget_failures"]) == (1, 1, 0)
    assert (b["wait_p50_seconds"], b["wait_p95_seconds"], b["target_wait_p95_seconds"]) == (
        0.0, 0.0, 300.0)
    # L: its 2 idle instances carried B's 2 borrowed ones in 0-1 h and 3-4 h.
    assert got["shares"]["L"]["instance_types"]["ml.g5.xlarge"] == {
        "own_capacity": 2, "used_hours": 4.0, "own_used_hours": 4.0, "borrowed_hours": 0.0,
        "idle_own_hours": 4.0, "lent_hours": 4.0, "preempted_hours": 0.0, "cost": 6.0}
    assert got["shares"]["L"]["wait_p95_seconds"] == 0.0
    # R (RESERVE) lends nothing, however idle.
    assert got["shares"]["R"]["instance_types"]["ml.g5.xlarge"]["idle_own_hours"] == 4.0
    assert got["shares"]["R"]["instance_types"]["ml.g5.xlarge"]["lent_hours"] == 0.0
    assert got["shares"]["R"]["jobs"] == 0 and got["shares"]["R"]["wait_p50_seconds"] is None
    assert got["queue"] == {"ml.g5.xlarge": {"capacity": 4, "used_hours": 10.0,
                                             "idle_hours": 6.0}}
    # Half-life 1 h, end 4 h: ∫ 0.5^(4 - t) dt over [a, b] = (0.5^(4-b) - 0.5^(4-a)) / ln 2.
    fair = got["fair_share"]
    assert fair["half_life_hours"] == 1.0
    assert fair["shares"]["B"] == pytest.approx({
        "decayed_used_hours": 3 * ((0.125 - 0.0625) + (1 - 0.5)) / LN2,
        "decayed_own_hours": 1 * (1 - 0.0625) / LN2, "ratio": 1.8})
    assert fair["shares"]["L"] == pytest.approx({
        "decayed_used_hours": 2 * (0.5 - 0.125) / LN2,
        "decayed_own_hours": 2 * (1 - 0.0625) / LN2, "ratio": 0.4})
    assert fair["shares"]["R"]["ratio"] == 0.0

    rows = list(csv.DictReader((tmp_path / "out" / "usage.csv").open()))
    assert [(r["share"], r["instance_type"]) for r in rows] == [
        ("L", "ml.g5.xlarge"), ("B", "ml.g5.xlarge"), ("R", "ml.g5.xlarge")]
    assert float(rows[1]["borrowed_hours"]) == 4.0 and float(rows[0]["lent_hours"]) == 4.0


def test_case_a_narrowed_window_clips_attempts_and_counts_jobs_submitted_in_it(
        tmp_path: Path, hand_declaration: Path) -> None:
    export = write_export(tmp_path / "jobs.csv", CASE_A, exported_h=5.0)
    code, err = run_usage("--history", str(export), "--declaration", f"{hand_declaration}:A",
                          "--since", "2026-11-01T00:30:00Z", "--until", "2026-11-01T03:30:00Z",
                          "--out", str(tmp_path / "out"))
    assert code == 0, err
    got = usage_of(tmp_path / "out")
    assert got["window"] == {"start": "2026-11-01T00:30:00Z", "end": "2026-11-01T03:30:00Z",
                             "hours": 3.0}
    b = got["shares"]["B"]
    assert b["instance_types"]["ml.g5.xlarge"]["used_hours"] == 3.0     # 0.5 h + 0.5 h, × 3
    assert b["instance_types"]["ml.g5.xlarge"]["preempted_hours"] == 1.5  # 0.5-1 h, × 3
    assert b["instance_types"]["ml.g5.xlarge"]["borrowed_hours"] == 2.0
    assert got["shares"]["L"]["instance_types"]["ml.g5.xlarge"]["lent_hours"] == 2.0
    # b1 was submitted before the window: its job, preemption and wait are not this window's.
    assert (b["jobs"], b["preemptions"], b["wait_p95_seconds"]) == (0, 0, None)
    assert got["shares"]["L"]["jobs"] == 1
    assert got["shares"]["L"]["instance_types"]["ml.g5.xlarge"]["cost"] is None  # no prices


# Case B (environment 3 × ml.g5.xlarge; L LEND 1, B LEND_AND_BORROW 1; 1 instance no share
# owns): b1 (B, 2) runs 0-2 h, b2 (B, 1) 1-2 h; x (L, budget 0) runs 0.5-1 h, is preempted
# and fails; l1 (L) runs from 2 h and is still running when the history is exported at 3 h;
# w (B) waits, never started.
CASE_B = [
    Row("b1", "B", 0.0, "SUCCEEDED", ((0.0, 2.0, "SUCCEEDED"),), count=2),
    Row("x", "L", 0.5, "FAILED", ((0.5, 1.0, "PREEMPTED"),), retries=0),
    Row("b2", "B", 1.0, "SUCCEEDED", ((1.0, 2.0, "SUCCEEDED"),)),
    Row("l1", "L", 2.0, "RUNNING", ((2.0, None, "RUNNING"),)),
    Row("w", "B", 2.5, "RUNNABLE"),
]


def test_case_b_unowned_capacity_first_a_running_attempt_and_a_budget_failure(
        tmp_path: Path, hand_declaration: Path) -> None:
    export = write_export(tmp_path / "jobs.csv", CASE_B, exported_h=3.0)
    code, err = run_usage("--history", str(export), "--declaration", f"{hand_declaration}:B",
                          "--out", str(tmp_path / "out"))
    assert code == 0, err
    got = usage_of(tmp_path / "out")
    # l1 still runs: the window ends at the export's moment.
    assert got["window"]["end"] == "2026-11-01T03:00:00Z" and got["window"]["hours"] == 3.0
    b = got["shares"]["B"]["instance_types"]["ml.g5.xlarge"]
    assert (b["used_hours"], b["own_used_hours"], b["borrowed_hours"], b["idle_own_hours"]) == (
        5.0, 2.0, 3.0, 1.0)
    lender = got["shares"]["L"]["instance_types"]["ml.g5.xlarge"]
    # B borrowed 1 from 0 to 1 h (capacity no share owns), 2 from 1 to 2 h (the unowned one,
    # then L's idle one): L lent 1 instance-hour of B's 3 borrowed.
    assert (lender["used_hours"], lender["idle_own_hours"], lender["lent_hours"],
            lender["preempted_hours"]) == (1.5, 1.5, 1.0, 0.5)
    share_l = got["shares"]["L"]
    assert (share_l["jobs"], share_l["preemptions"], share_l["budget_failures"]) == (2, 1, 1)
    # Every job submitted counts, w never started: 3 jobs, 2 waits (both 0).
    assert got["shares"]["B"]["jobs"] == 3 and got["shares"]["B"]["wait_p95_seconds"] == 0.0
    assert got["queue"]["ml.g5.xlarge"] == {"capacity": 3, "used_hours": 6.5,
                                            "idle_hours": 2.5}


def test_an_export_made_before_history_kept_attempts_is_refused_naming_what_it_lacks(
        tmp_path: Path, hand_declaration: Path) -> None:
    old = tmp_path / "old.csv"
    old.write_text(
        "job_id,share,submitted_at,duration,instance_type,instance_count,priority,"
        "preemption_retries,submitted_at_utc,job_name,status,history,attempts,preemptions\n"
        "j1,B,0.0,60.0,ml.g5.xlarge,1,0,,2026-11-01T00:00:00.000+00:00,j1,SUCCEEDED,finished,"
        "1,0\n")
    code, err = run_usage("--history", str(old), "--declaration", f"{hand_declaration}:A",
                          "--out", str(tmp_path / "out"))
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("quota-constructs usage: error: ")
    assert "attempt_runs" in line and "exported_at_utc" in line and "history" in line
    assert not (tmp_path / "out").exists()

    as_json = tmp_path / "old.json"
    as_json.write_text(json.dumps({"jobs": [{
        "job_id": "j1", "share": "B", "submitted_at": 0.0, "duration": 60.0,
        "instance_type": "ml.g5.xlarge", "instance_count": 1, "priority": 0,
        "preemption_retries": None}]}))
    code, err = run_usage("--history", str(as_json), "--declaration", f"{hand_declaration}:A",
                          "--out", str(tmp_path / "out"))
    assert code == 2 and "attempt_runs" in err and "exported_at" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("option", "value", "named"), [
    ("--since", "2026-11-01", "--since"),
    ("--until", "2026-11-01T25:00:00Z", "--until"),
    ("--half-life", "soon", "--half-life"),
    ("--half-life", "0h", "--half-life"),
    ("--ledger", "https://bucket/x", "--ledger"),
])
def test_a_bad_option_is_one_line_naming_it_before_anything_is_read(
        tmp_path: Path, hand_declaration: Path, option: str, value: str, named: str) -> None:
    code, err = run_usage("--history", str(tmp_path / "missing.csv"), "--declaration",
                          f"{hand_declaration}:A", option, value, "--out", str(tmp_path / "o"))
    assert code == 2
    (line,) = err.strip().splitlines()
    assert named in line and repr(value) in line and "allowed" in line


def test_window_and_prices_mistakes_are_one_line(tmp_path: Path,
                                                 hand_declaration: Path) -> None:
    export = write_export(tmp_path / "jobs.csv", CASE_A, exported_h=5.0)
    base = ["--history", str(export), "--declaration", f"{hand_declaration}:A",
            "--out", str(tmp_path / "o")]
    code, err = run_usage(*base, "--since", "2026-11-02T00:00:00Z",
                          "--until", "2026-11-01T00:00:00Z")
    assert code == 2 and "--until" in err and "after" in err
    prices = tmp_path / "prices.csv"
    for text, named in (("type,price\nml.g5.xlarge,1\n", "header"),
                        ("instance_type,price_per_hour\nml.g5.xlarge,-1\n", "-1"),
                        ("instance_type,price_per_hour\nml.g5.xlarge,1\nml.g5.xlarge,2\n",
                         "again"),
                        ("instance_type,price_per_hour\nml.p5.48xlarge,9\n", "ml.p5.48xlarge")):
        prices.write_text(text)
        code, err = run_usage(*base, "--prices", str(prices))
        assert code == 2 and named in err and len(err.strip().splitlines()) == 1, err
    code, err = run_usage("--declaration", f"{hand_declaration}:A", "--out", str(tmp_path))
    assert code == 2 and "--history" in err and "--ledger" in err
