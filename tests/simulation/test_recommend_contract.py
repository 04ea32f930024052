"""recommend keeps every share's agreement (issue 30, item 1): no advice, allocation or
environment, fails more of a share's jobs by its declared interruption budget than today's
declaration, or misses a target today's declaration meets, unless the user allows that trade,
and then the advice names it. What recommend writes is a declaration the commands load as it
is (item 12): the checks here replay it with ``simulate --compare``, independently of the
search."""

from __future__ import annotations

import io
import json
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.model import QuotaConfigError
from quota_constructs.simulation import Recommendation, SimJob, recommend
from quota_constructs.simulation.cli import main as simulate_main
from quota_constructs.simulation.recommend_cli import main as recommend_main
from quota_constructs.simulation.workloads import Workload, write_workload

G5, P4 = "ml.g5.xlarge", "ml.p4d.24xlarge"
ENVIRONMENT = [CapacityLimit(G5, 6), CapacityLimit(P4, 4)]
BUDGETS = {"nlp": 0, "vision": 2}
"""The shares declaring an interruption budget; their jobs are submitted with it as their
preemptionRetriesBeforeTermination, as ShareClient does."""


def shares() -> list[QuotaShareSpec]:
    """nlp (no preemption allowed) misses its wait target today: lending only, its bursts
    wait for its own two instances. Borrowing would meet it, at the price of its jobs being
    preempted when the lenders take their capacity back."""
    def agreement(name: str, wait: float | None) -> ShareAgreement:
        return ShareAgreement(owner=name, interruption_budget=BUDGETS.get(name),
                              target_wait_p95=wait)

    return [
        QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(P4, 1)],
                       strategy=SharingStrategy.LEND, agreement=agreement("nlp", 1800.0)),
        QuotaShareSpec(name="vision",
                       capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(P4, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW,
                       agreement=agreement("vision", 3600.0)),
        QuotaShareSpec(name="llm", capacity_limits=[CapacityLimit(P4, 2)],
                       strategy=SharingStrategy.LEND, agreement=agreement("llm", 7200.0)),
        QuotaShareSpec(name="batch", capacity_limits=[CapacityLimit(G5, 2)],
                       strategy=SharingStrategy.LEND, agreement=agreement("batch", None)),
    ]


def jobs(seed: int = 0) -> list[SimJob]:
    """Six days; each share busy in its own part of the day."""
    rng = random.Random(seed)
    units = {"nlp": (G5, P4), "vision": (G5, P4), "llm": (P4,), "batch": (G5,)}
    phase = {"nlp": 0.0, "vision": 20000.0, "llm": 40000.0, "batch": 60000.0}
    out = []
    for i in range(240):
        name = rng.choice(["nlp", "nlp", "vision", "llm", "batch"])
        out.append(SimJob(
            job_id=f"{name}-{i}", share=name,
            submitted_at=rng.randrange(6) * 86400.0 + phase[name] + rng.uniform(0, 20000),
            duration=rng.uniform(1800, 7200), instance_type=rng.choice(units[name]),
            priority=rng.randrange(3), preemption_retries=BUDGETS.get(name),
        ))
    return out


def advised(allow_trades: tuple[str, ...] = ()) -> Recommendation:
    with ThreadPoolExecutor(2) as pool:
        return recommend(capacity_limits=ENVIRONMENT, shares=shares(), jobs=jobs(),
                         executor=pool, allow_trades=allow_trades)


def test_allowed_to_trade_the_search_gives_a_budget_up_and_names_it() -> None:
    """The case is one where the trade pays: allowed to, recommend lets nlp borrow and loses
    its jobs to the budget it declared (what it did silently before)."""
    rec = advised(("*",))
    nlp = next(spec for spec in rec.shares if spec.name == "nlp")
    assert nlp.strategy is SharingStrategy.LEND_AND_BORROW
    trades = rec.trades
    named = {(t.share, t.line, t.measure): (t.today, t.recommended, t.allowed) for t in trades}
    assert named[("nlp", "interruption_budget=0", "budget_failures")][0] == "0"
    assert int(named[("nlp", "interruption_budget=0", "budget_failures")][1]) > 0
    assert all(t.allowed for t in trades)
    assert "nlp: interruption_budget=0: jobs lost to the interruption budget 0 → " \
        in trades[0].describe()


def test_without_an_opt_in_no_advice_breaks_a_budget_or_a_target_met_today() -> None:
    rec = advised()
    assert rec.trades == [] and rec.environment_trades == []
    scores = {c.share: c for c in rec.costs}
    for name in BUDGETS:
        today, after = scores[name].today, scores[name].recommended
        assert today is not None and after is not None
        assert after.budget_failures <= today.budget_failures
        assert after.over_budget <= today.over_budget
    met_today = {o.share for o in rec.today_outcomes if o.met}
    assert met_today <= {o.share for o in rec.outcomes if o.met}


def test_an_unknown_share_to_trade_is_refused() -> None:
    with pytest.raises(QuotaConfigError, match=r"allow_trades.*'nope'.*a declared share"):
        recommend(capacity_limits=ENVIRONMENT, shares=shares(), jobs=jobs(), workers=1,
                  allow_trades=["nope"])


# --- the held-out way: recommend's files replayed by simulate --compare -------------------
DECLARATION = '''
from quota_constructs import (CapacityLimit, QuotaShareSpec, ShareAgreement,
                              SharingStrategy)
from tests.simulation.test_recommend_contract import ENVIRONMENT, shares

DECLARATION = {"capacity_limits": ENVIRONMENT, "shares": shares(), "queue_name": "gpu-q"}
'''


def recommend_files(tmp_path: Path, *extra: str) -> tuple[Path, Path, int, str]:
    workload = tmp_path / "jobs.csv"
    write_workload(workload, Workload(jobs()))
    (tmp_path / "today.py").write_text(DECLARATION)
    out = tmp_path / "rec"
    said = io.StringIO()
    code = recommend_main(["--declaration", f"{tmp_path / 'today.py'}:DECLARATION",
                           "--workload", str(workload), "--out", str(out), "--workers", "1",
                           "--no-report", "--quiet", *extra], stdout=said, stderr=said)
    return workload, out, code, said.getvalue()


def replayed(tmp_path: Path, workload: Path, *compared: Path) -> dict[str, dict[str, object]]:
    """Today's declaration and each compared file's DECLARATION through simulate --compare:
    every arrangement's per-share figures from metrics.json."""
    report = tmp_path / "replayed"
    err = io.StringIO()
    code = simulate_main(
        ["--declaration", f"{tmp_path / 'today.py'}:DECLARATION", "--workload", str(workload),
         *(arg for path in compared for arg in ("--compare", f"{path.stem}={path}:DECLARATION")),
         "--out", str(report), "--quiet"], stdout=io.StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    metrics = json.loads((report / "metrics.json").read_text())
    return {name: arrangement["shares"] for name, arrangement in metrics["arrangements"].items()}


def kept(today: dict[str, object], other: dict[str, object]) -> list[str]:
    """Lines of the agreements ``other`` breaks against ``today``, judged from the replays."""
    broken = []
    for spec in shares():
        before, after = today[spec.name], other[spec.name]
        assert isinstance(before, dict) and isinstance(after, dict)
        if spec.name in BUDGETS and (after["failed_preemption_budget"]
                                     > before["failed_preemption_budget"]):
            broken.append(f"{spec.name} budget")
        target = spec.agreement.target_wait_p95_seconds if spec.agreement else None
        if target is not None and before["wait_p95"] <= target < after["wait_p95"]:
            broken.append(f"{spec.name} wait")
    return broken


def test_the_written_declarations_replayed_by_simulate_keep_every_budget(
    tmp_path: Path,
) -> None:
    workload, out, code, said = recommend_files(tmp_path)
    assert code in (0, 1), said
    recommended = out / "recommended.py"
    files = [recommended]
    environment = out / "advised_environment.py"
    if environment.exists():
        files.append(environment)
    figures = replayed(tmp_path, workload, *files)
    today = figures["declared"]
    assert kept(today, figures["recommended"]) == []
    if environment.exists():
        assert kept(today, figures["advised_environment"]) == []
    assert "gives up" not in said
    assert "replays: " in said and " run (demand analysis " in said
    search = json.loads((out / "search.json").read_text())
    assert search["trades"] == [] and search["replays"]["demand analysis"] > 0
    # The queue name rode along, as preview reads it.
    assert "'queue_name': 'gpu-q'" in recommended.read_text().replace('"', "'")


def test_with_the_opt_in_the_replay_shows_the_trade_the_advice_names(tmp_path: Path) -> None:
    workload, out, code, said = recommend_files(tmp_path, "--allow-trade", "nlp")
    assert code in (0, 1), said
    figures = replayed(tmp_path, workload, out / "recommended.py")
    broken = kept(figures["declared"], figures["recommended"])
    assert "nlp budget" in broken
    lines = [line for line in said.splitlines() if "gives up" in line]
    assert any(line.strip().startswith("gives up nlp: interruption_budget=0: jobs lost to "
                                       "the interruption budget 0 → ") for line in lines), said
    search = json.loads((out / "search.json").read_text())
    assert {t["share"] for t in search["trades"]} == {"nlp"}
    assert all(t["allowed"] for t in search["trades"])


def test_the_written_declaration_loads_as_preview_reads_it_with_todays_switches(
    tmp_path: Path,
) -> None:
    from quota_constructs.cli.declarations import declaration_of

    (tmp_path / "today.py").write_text(
        DECLARATION.replace('"queue_name": "gpu-q"}', '"queue_name": "gpu-q", '
                            '"lifecycle_by_share": {"nlp": {"allow_preemption_on_shrink": '
                            'True}}}'))
    workload = tmp_path / "jobs.csv"
    write_workload(workload, Workload(jobs()[:40]))
    out = tmp_path / "rec"
    said = io.StringIO()
    code = recommend_main(["--declaration", f"{tmp_path / 'today.py'}:DECLARATION",
                           "--workload", str(workload), "--out", str(out), "--workers", "1",
                           "--no-report", "--quiet"], stdout=said, stderr=said)
    assert code in (0, 1), said.getvalue()
    today = declaration_of(f"{tmp_path / 'today.py'}:DECLARATION", "today", command="preview")
    written = declaration_of(f"{out / 'recommended.py'}:DECLARATION", "rec", command="preview")
    document = json.loads((out / "recommendation.json").read_text())
    assert [spec.name for spec in written.shares] == [s["name"] for s in document["shares"]]
    for spec, entry in zip(written.shares, document["shares"], strict=True):
        assert spec.strategy.value == entry["strategy"]
        assert {str(c.unit): c.max_capacity for c in spec.capacity_limits} == \
            entry["capacity_limits"]
    assert [spec.agreement for spec in written.shares] == [s.agreement for s in today.shares]
    assert list(written.capacity_limits) == list(today.capacity_limits)
    assert written.queue_name == "gpu-q"
    assert written.lifecycles == today.lifecycles
    assert written.lifecycle_of("nlp").allow_preemption_on_shrink


def test_the_command_refuses_a_trade_of_an_unknown_share_in_one_line(tmp_path: Path) -> None:
    _, out, code, said = recommend_files(tmp_path, "--allow-trade", "nope")
    assert code == 2
    (error,) = [line for line in said.splitlines() if line.startswith("error:")]
    assert "allow_trades got 'nope'" in error and "nlp" in error and "'*'" in error
    assert "Traceback" not in said and not out.exists()


def test_jobs_preempted_beyond_the_budget_count_even_when_requeued() -> None:
    """A job without a retry limit is requeued, not failed, after a preemption; its share's
    budget of 0 is broken all the same, and the contract counts it (as simulate's own job
    outcomes show)."""
    from quota_constructs.simulation import simulate

    today = [
        QuotaShareSpec(name="lender", capacity_limits=[CapacityLimit(G5, 2)],
                       strategy=SharingStrategy.LEND,
                       agreement=ShareAgreement(owner="lender", target_wait_p95=86400.0)),
        QuotaShareSpec(name="borrower", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW,
                       agreement=ShareAgreement(owner="borrower", interruption_budget=0)),
    ]
    environment = [CapacityLimit(G5, 3)]
    work = [SimJob(job_id=f"b{i}", share="borrower", submitted_at=i * 10.0, duration=7200.0,
                   instance_type=G5) for i in range(3)]
    work += [SimJob(job_id=f"l{i}", share="lender", submitted_at=600.0 + i, duration=600.0,
                    instance_type=G5) for i in range(2)]
    result = simulate(capacity_limits=environment, shares=today, jobs=work)
    preempted = sum(1 for job in result.jobs.values()
                    if job.share == "borrower" and job.preemptions > 0)
    assert preempted > 0 and result.shares["borrower"].failed_preemption_budget == 0
    with ThreadPoolExecutor(2) as pool:
        rec = recommend(capacity_limits=environment, shares=today, jobs=work, executor=pool)
    (borrower,) = [c for c in rec.costs if c.share == "borrower"]
    assert borrower.today is not None and borrower.recommended is not None
    assert borrower.today.over_budget == preempted
    assert borrower.today.budget_failures == 0
    assert borrower.recommended.over_budget <= preempted and rec.trades == []
