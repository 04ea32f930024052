"""``status``: figures per share and instance type equal the fake's, at a bounded cost."""

from __future__ import annotations

import json
import random

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.live.status import read_status, render_table

from ..runtime.cloudformation import StackResource, share_properties
from ..runtime.conftest import G5, G5_2X, Batch
from ..runtime.declarations import share_spec


def arrange_borrowing(batch: Batch) -> dict[str, str]:
    """vision borrows 2 g5 above its limit of 2 from research (LEND, 4 idle → 2 lent); the
    environment's g5 are all owned, so they can come from nowhere else."""
    state = batch.state
    state.queues[batch.training].environment = {G5: 8, G5_2X: 8}
    vision = state.add_share(batch.training, "vision", {G5: 2, G5_2X: 1}, "LEND_AND_BORROW", 200)
    research = state.add_share(batch.training, "research", {G5: 4}, "LEND")
    reserved = state.add_share(batch.training, "reserved", {G5: 2}, "RESERVE", state="DISABLED")
    for _ in range(4):
        state.add_job(vision, "RUNNING", {G5: 1})
    state.add_job(vision, "STARTING", {G5_2X: 1})
    state.add_job(research, "RUNNING", {G5: 2})
    head = state.add_job(research, "RUNNABLE", {G5: 4}, priority=5, front_since=1_000)
    state.add_job(research, "RUNNABLE", {G5: 1}, priority=1)
    state.add_job(vision, "SUCCEEDED", {G5: 1})
    return {"vision": vision, "research": research, "reserved": reserved, "head": head}


def test_status_figures_are_the_fakes_per_share_and_type(batch: Batch) -> None:
    arranged = arrange_borrowing(batch)

    status = read_status("training", reader=QueueReader.connect(), now_ms=61_000).to_json()

    assert status["queue"] == "training"
    shares = {share["name"]: share for share in status["shares"]}
    assert sorted(shares) == ["research", "reserved", "vision"]
    vision = {u["instance_type"]: u for u in shares["vision"]["units"]}
    assert vision[G5] == {"instance_type": G5, "limit": 2, "in_use": 4, "borrowed": 2,
                          "lent": 0, "idle_own": 0}
    assert vision[G5_2X] == {"instance_type": G5_2X, "limit": 1, "in_use": 1, "borrowed": 0,
                             "lent": 0, "idle_own": 0}
    assert shares["research"]["units"] == [{"instance_type": G5, "limit": 4, "in_use": 2,
                                            "borrowed": 0, "lent": 2, "idle_own": 2}]
    # RESERVE never lends: its idle capacity is idle, not lent.
    assert shares["reserved"]["units"] == [{"instance_type": G5, "limit": 2, "in_use": 0,
                                            "borrowed": 0, "lent": 0, "idle_own": 2}]
    assert (shares["research"]["runnable"], shares["research"]["runnable_capped"]) == (2, False)
    assert shares["research"]["head_job"] == {"job_id": arranged["head"],
                                              "waiting_seconds": 60.0}
    assert shares["vision"]["head_job"] is None and shares["vision"]["runnable"] == 0
    assert shares["reserved"]["state"] == "DISABLED"
    assert shares["vision"]["lifecycle"] is None  # put in place by hand: no record


def test_status_shows_the_lifecycle_record_a_delete_is_judged_by(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(share_spec(), batch.training,
                                            terminate_active_jobs_on_delete=True)).ok
    (share,) = read_status("training", reader=QueueReader.connect()).to_json()["shares"]
    assert share["lifecycle"] == {"allow_preemption_on_shrink": False,
                                  "terminate_active_jobs_on_delete": True}


def test_status_calls_do_not_grow_with_the_backlog(batch: Batch) -> None:
    batch.state.page_size = 100
    vision = batch.state.add_share(batch.training, "vision", {G5: 2}, "LEND_AND_BORROW")
    research = batch.state.add_share(batch.training, "research", {G5: 2}, "LEND")
    small = QueueReader.connect()
    read_status("training", reader=small)
    for _ in range(20_000):
        batch.state.add_job(vision, "RUNNABLE", {G5: 1})
    for _ in range(150):
        batch.state.add_job(research, "RUNNABLE", {G5: 1})
    large = QueueReader.connect()

    status = read_status("training", reader=large, runnable_pages=10).to_json()

    shares = {share["name"]: share for share in status["shares"]}
    assert (shares["vision"]["runnable"], shares["vision"]["runnable_capped"]) == (1000, True)
    assert (shares["research"]["runnable"], shares["research"]["runnable_capped"]) == (150, False)
    # Per share at most 10 listing pages; everything else is one call per queue or share.
    assert large.calls <= small.calls + 10 + 1
    assert batch.state.count("DescribeServiceJob") == 0


def test_status_command_prints_a_table_and_json(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    arrange_borrowing(batch)
    assert cli(["status", "--queue", "training"]) == 0
    table = capsys.readouterr().out
    assert "SHARE" in table and "research" in table and "LEND" not in table.split("\n")[0]
    assert cli(["status", "--queue", batch.training, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["queue"] == "training"


@pytest.mark.parametrize(
    ("arrange", "expected"),
    [
        (lambda b: None, "job queue 'nowhere' not found in region us-east-1"),
        (lambda b: setattr(b.state.queues[b.training], "queue_type", "EC2"),
         "is a EC2 queue; quota shares exist only on SAGEMAKER_TRAINING queues"),
        (lambda b: b.state.fail_next("DescribeJobQueues", code="AccessDeniedException",
                                     status=403, message="not authorized"),
         "access denied: these credentials may not call batch:DescribeJobQueues"),
        (lambda b: b.state.fail_next("GetJobQueueSnapshot", times=10, code="InternalError",
                                     status=500),
         "GetJobQueueSnapshot kept failing after retries"),
    ],
)
def test_errors_are_one_line_a_person_can_act_on(
    batch: Batch, capsys: pytest.CaptureFixture[str], arrange: object, expected: str
) -> None:
    arrange(batch)  # type: ignore[operator]
    queue = "nowhere" if "nowhere" in expected else "training"
    assert cli(["status", "--queue", queue]) == 2
    err = capsys.readouterr().err.strip()
    assert expected in err and "\n" not in err, err


def test_missing_region_and_credentials_are_named(
    batch: Batch, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    assert cli(["status", "--queue", "training"]) == 2
    assert "no AWS region configured" in capsys.readouterr().err
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    assert cli(["status", "--queue", "training"]) == 2
    assert "no AWS credentials found" in capsys.readouterr().err


def test_throttling_is_retried_and_long_reads_report_progress(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    batch.state.page_size = 100
    vision = batch.state.add_share(batch.training, "vision", {G5: 2}, "LEND_AND_BORROW")
    for _ in range(250):
        batch.state.add_job(vision, "RUNNABLE", {G5: 1})
    batch.state.fail_next("GetJobQueueSnapshot", times=2)
    batch.state.fail_next("ListServiceJobs", times=1, code="InternalServerError", status=500)

    # The reader the command builds, over the test's connection (backoff recorded, not slept).
    notes: list[str] = []
    reader = QueueReader(batch.connection.client(), batch.connection.policy, notes.append)

    status = read_status("training", reader=reader)

    assert status.to_json()["shares"][0]["runnable"] == 250
    assert any("counting RUNNABLE jobs of quota share vision" in note for note in notes)
    assert len(batch.sleeps) == 3


@pytest.mark.parametrize("seed", range(8))
def test_random_queues_report_what_their_jobs_hold(batch: Batch, seed: int) -> None:
    """Figures recomputed here from the jobs placed, not from the snapshot the command reads."""
    rng = random.Random(seed)
    placed: dict[str, dict[str, float]] = {}
    limits: dict[str, dict[str, int]] = {}
    waiting: dict[str, int] = {}
    strategies: dict[str, str] = {}
    for index in range(rng.randint(1, 5)):
        name = f"team-{index}"
        limits[name] = {unit: rng.randint(1, 4) for unit in rng.sample([G5, G5_2X], 2)}
        strategy = rng.choice(["RESERVE", "LEND", "LEND_AND_BORROW"])
        strategies[name] = strategy
        arn = batch.state.add_share(batch.training, name, limits[name], strategy)
        placed[name], waiting[name] = {}, 0
        for _ in range(rng.randint(0, 8)):
            unit = rng.choice([G5, G5_2X])
            status = rng.choice(["RUNNING", "STARTING", "SCHEDULED", "RUNNABLE", "SUCCEEDED"])
            batch.state.add_job(arn, status, {unit: 1.0})
            if status in ("RUNNING", "STARTING", "SCHEDULED"):
                placed[name][unit] = placed[name].get(unit, 0.0) + 1
            waiting[name] += status == "RUNNABLE"

    status = read_status("training", reader=QueueReader.connect()).to_json()

    environment = batch.state.queues[batch.training].environment

    def could_take_now(name: str, unit: str) -> float:
        """Of its unused own limit, what the share could take now (the rules model's
        assumption 4): free capacity, less what other RESERVE shares keep idle, plus what
        borrowers hold; never what other shares hold within their own limits."""
        def unused(other: str) -> float:
            return max(0.0, limits[other].get(unit, 0) - placed[other].get(unit, 0.0))
        held = sum(placed[other].get(unit, 0.0) for other in placed)
        kept = sum(unused(other) for other in placed
                   if other != name and strategies[other] == "RESERVE")
        borrowed = sum(max(0.0, placed[other].get(unit, 0.0) - limits[other].get(unit, 0))
                       for other in placed)
        free = max(0.0, max(0.0, environment[unit] - held) - kept)
        return min(unused(name), free + borrowed)

    for share in status["shares"]:
        name = share["name"]
        assert (share["runnable"], share["runnable_capped"]) == (waiting[name], False)
        for unit in share["units"]:
            own = limits[name].get(unit["instance_type"], 0)
            used = placed[name].get(unit["instance_type"], 0.0)
            assert (unit["limit"], unit["in_use"]) == (own, used)
            assert unit["borrowed"] == max(0.0, used - own)
            assert unit["idle_own"] == pytest.approx(could_take_now(name, unit["instance_type"]))
            assert 0 <= unit["lent"] <= unit["idle_own"] + 1e-9
        assert {u["instance_type"] for u in share["units"]} == set(limits[name]) | set(
            placed[name])
    # Lenders together lend what borrowers borrow beyond the capacity no share owns, as far as
    # their idle capacity goes; RESERVE shares lend nothing.
    for unit in (G5, G5_2X):
        rows = [(s["name"], u) for s in status["shares"] for u in s["units"]
                if u["instance_type"] == unit]
        borrowed = sum(u["borrowed"] for _, u in rows)
        idle = sum(u["idle_own"] for name, u in rows if strategies[name] != "RESERVE")
        unowned = max(0, environment[unit] - sum(u["limit"] for _, u in rows))
        (total,) = [t for t in status["totals"] if t["instance_type"] == unit] or [None]
        assert total is None or total["unowned"] == unowned
        assert sum(u["lent"] for _, u in rows) == pytest.approx(
            min(max(0.0, borrowed - unowned), idle))
        assert all(u["lent"] == 0 for name, u in rows if strategies[name] == "RESERVE")


def test_shares_the_snapshot_leaves_out_are_counted_from_their_jobs(batch: Batch) -> None:
    arrange_borrowing(batch)
    batch.state.hidden_from_snapshot.add("vision")  # not among the "top" shares
    reader = QueueReader.connect()

    status = read_status("training", reader=reader).to_json()

    vision = next(s for s in status["shares"] if s["name"] == "vision")
    assert {u["instance_type"]: u["in_use"] for u in vision["units"]} == {G5: 4, G5_2X: 1}
    before = batch.state.count("ListServiceJobs")
    batch.state.hidden_from_snapshot.clear()
    read_status("training", reader=QueueReader.connect())
    # When the listed shares add up to the total, nobody's jobs are listed for usage.
    assert batch.state.count("ListServiceJobs") - before == 3  # the RUNNABLE counts only


def test_a_denied_environment_read_is_noted_and_leaves_only_its_figures_out(
    batch: Batch,
) -> None:
    arrange_borrowing(batch)
    batch.state.fail_next("DescribeServiceEnvironments", code="AccessDeniedException",
                          status=403, message="not authorized")
    notes: list[str] = []

    status = read_status("training", reader=QueueReader.connect(progress=notes.append)).to_json()

    assert notes == [
        "note: the service environment's capacity is unknown (access denied: these credentials "
        "may not call batch:DescribeServiceEnvironments (not authorized); grant the read-only "
        "status policy (TrainingJobQueue.grant_read_status, or the README's JSON policy)); "
        "queue totals and what a share can reach are left out"
    ]
    assert {t["instance_type"]: (t["capacity"], t["unowned"]) for t in status["totals"]} == {
        G5: (0, None), G5_2X: (0, None)}
    shares = {share["name"]: share for share in status["shares"]}
    assert shares["research"]["units"][0]["lent"] == 2  # by strategy alone


@pytest.mark.parametrize(("waited", "shown"), [
    (0.4, "0s"), (59.9, "59s"), (61, "1m 1s"), (3600, "1h 0m"), (90_061, "1d 1h"),
])
def test_the_table_shows_the_head_jobs_wait_in_its_two_largest_units(
    batch: Batch, waited: float, shown: str
) -> None:
    arranged = arrange_borrowing(batch)
    now_ms = 1_000 + int(waited * 1000)
    status = read_status("training", reader=QueueReader.connect(), now_ms=now_ms)
    assert f"{arranged['head']} ({shown})" in render_table(status)


@pytest.mark.parametrize(
    ("now_ms", "max_age", "warned"),
    [
        (600_000, 600, False),  # exactly the limit: recent enough
        (600_001, 600, True),
        (60_001, 60, True),
        (10**12, None, False),  # no limit: any age is shown without a word
    ],
)
def test_a_snapshot_older_than_the_limit_is_shown_with_a_warning(
    batch: Batch, now_ms: int, max_age: int | None, warned: bool
) -> None:
    """The fake's snapshot was last updated at 0 ms: its age is ``now_ms``."""
    arrange_borrowing(batch)

    status = read_status("training", reader=QueueReader.connect(), now_ms=now_ms,
                         max_snapshot_age_seconds=max_age)

    assert (status.snapshot_warning is not None) is warned
    assert status.to_json()["snapshot_warning"] == status.snapshot_warning
    table = render_table(status)
    assert ("snapshot may be out of date" in table) is warned
    if warned:
        assert f"more than the {max_age} s allowed" in table
    # The figures are shown either way: the warning says how far to trust them.
    assert [s.name for s in status.shares] == ["research", "reserved", "vision"]


def test_the_snapshot_age_limit_is_a_positive_number_of_seconds(
    batch: Batch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["status", "--queue", "training", "--max-snapshot-age", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("--max-snapshot-age got 0; allowed: a whole number of seconds, "
                        "at least 1"), err
    assert "\n" not in err
