"""The recommendation page shows what the proposed changes cost each share in preemptions and
jobs lost to the interruption budget, from the replays (issue 23); an empty history is
refused in one line."""

from __future__ import annotations

import io
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.model import QuotaConfigError
from quota_constructs.simulation import SimJob, recommend, simulate
from quota_constructs.simulation.recommend_cli import main, summary_page
from quota_constructs.simulation.workloads import Workload, write_workload

G5 = "ml.g5.xlarge"
MODULE = "tests.simulation.test_recommend_page"
ENVIRONMENT = [CapacityLimit(G5, 4)]
SHARES = [
    # 'burst' misses its wait target unless it borrows; borrowing costs 'steady' nothing but
    # costs 'burst' preemptions when 'steady' reclaims its instances, and some of its jobs
    # may not be preempted at all (budget 0).
    QuotaShareSpec(name="burst", capacity_limits=[CapacityLimit(G5, 1)],
                   strategy=SharingStrategy.RESERVE,
                   agreement=ShareAgreement(owner="b", target_wait_p95=1800.0)),
    QuotaShareSpec(name="steady", capacity_limits=[CapacityLimit(G5, 3)],
                   strategy=SharingStrategy.LEND,
                   agreement=ShareAgreement(owner="s", target_wait_p95=4 * 3600.0)),
]
TODAY = SimpleNamespace(capacity_limits=ENVIRONMENT, shares=SHARES)


def jobs() -> list[SimJob]:
    out = [SimJob(job_id=f"b{i}", share="burst", submitted_at=(i // 4) * 20000.0,
                  duration=2400.0, instance_type=G5, preemption_retries=i % 2)
           for i in range(12)]
    out += [SimJob(job_id=f"s{i}", share="steady", submitted_at=600.0 + i * 2500.0,
                   duration=3000.0, instance_type=G5) for i in range(24)]
    return out


def test_costs_are_the_replays_of_today_and_the_recommendation() -> None:
    with ThreadPoolExecutor(2) as pool:
        rec = recommend(capacity_limits=ENVIRONMENT, shares=SHARES, jobs=jobs(), executor=pool)
    assert [c.share for c in rec.costs] == ["burst", "steady"]
    today = simulate(capacity_limits=ENVIRONMENT, shares=SHARES, jobs=jobs()).shares
    after = simulate(capacity_limits=ENVIRONMENT, shares=rec.shares, jobs=jobs()).shares
    for cost in rec.costs:
        assert cost.today is not None and cost.recommended is not None
        for score, figures in ((cost.today, today[cost.share]),
                               (cost.recommended, after[cost.share])):
            assert score.cross_share_preemptions == figures.cross_share_preemptions
            assert score.in_share_preemptions == figures.in_share_preemptions
            assert score.budget_failures == figures.failed_preemption_budget
    burst = rec.costs[0]
    assert burst.strategy_changed and "strategy RESERVE → " in burst.change
    # The trade is visible: burst's jobs are preempted under the recommendation.
    assert burst.recommended is not None and burst.recommended.cross_share_preemptions > 0
    page = summary_page(rec, TODAY, "", full_reports=False)  # type: ignore[arg-type]
    table = page.split("What the changes cost each share")[1].split("</table>")[0]
    row = re.search(r"<tr><td class='l'>burst</td>.*?</tr>", table)
    assert row is not None
    # share, change, then cross-share, in-share, budget failures, work lost
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row.group(0))
    assert cells[1].startswith("strategy RESERVE → ")
    assert cells[2] == f"0 → {burst.recommended.cross_share_preemptions}"
    assert cells[4] == f"{burst.today.budget_failures if burst.today else 0} → " \
        f"{burst.recommended.budget_failures}"
    assert "Jobs lost to the interruption budget" in table


def test_an_empty_history_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        recommend(capacity_limits=ENVIRONMENT, shares=SHARES, jobs=[], workers=1)
    assert caught.value.field == "jobs" and "at least one job" in caught.value.allowed
    path = tmp_path / "empty.csv"
    write_workload(path, Workload(jobs=[]))
    err = io.StringIO()
    code = main(["--declaration", f"{MODULE}:TODAY", "--workload", str(path), "--quiet",
                 "--out", str(tmp_path / "rec")], stdout=io.StringIO(), stderr=err)
    assert code == 2
    (line,) = err.getvalue().splitlines()
    assert line.startswith("error: recommend: jobs got 0; allowed: at least one job")
