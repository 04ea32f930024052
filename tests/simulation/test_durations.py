"""Durations read the same way in recommend's reasons and pages and in the simulation report:
hours and minutes, never raw seconds (issue 23: "92,142 s")."""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.simulation import SimJob, recommend
from quota_constructs.simulation.durations import human_duration
from quota_constructs.simulation.report.summary import human_seconds
from quota_constructs.simulation.targets import ServiceTarget, TargetOutcome

G5 = "ml.g5.xlarge"


@pytest.mark.parametrize(("seconds", "text"), [
    (0.0, "0 s"), (45.0, "45 s"), (60.0, "60 s"), (150.0, "2 min 30 s"), (1500.0, "25 min"),
    (3599.9, "59 min"), (7200.0, "2 h"), (92142.0, "25 h 35 min"), (3 * 86400.0, "3 d"),
    (3 * 86400.0 + 4 * 3600 + 59, "3 d 4 h"), (None, "n/a"), (math.inf, "never"),
])
def test_durations_in_words(seconds: float | None, text: str) -> None:
    assert human_duration(seconds) == text
    assert human_seconds(seconds) == text  # the report says it the same way


def test_target_outcomes_say_hours_and_minutes() -> None:
    outcome = TargetOutcome("vision", ServiceTarget("vision", wait_p95=4 * 3600.0), 92142.0,
                            0, 10)
    assert outcome.describe() == "wait p95 25 h 35 min (target 4 h: missed)"
    assert ServiceTarget("vision", wait_p95=92142.0).describe() == "wait p95 <= 25 h 35 min"


def test_recommend_reasons_say_hours_and_minutes() -> None:
    shares = [QuotaShareSpec(name="A", capacity_limits=[CapacityLimit(G5, 1)],
                             strategy=SharingStrategy.LEND,
                             agreement=ShareAgreement(owner="a", target_wait_p95=600.0))]
    jobs = [SimJob(job_id=f"a{i}", share="A", submitted_at=0.0, duration=30000.0,
                   instance_type=G5) for i in range(6)]
    with ThreadPoolExecutor(1) as pool:
        rec = recommend(capacity_limits=[CapacityLimit(G5, 2)], shares=shares, jobs=jobs,
                        executor=pool)
    (reason,) = rec.reasons.values()
    assert "wait p95 " in reason and "against a target of 10 min" in reason
    assert not re.search(r"[0-9,]{3,} s\b", reason), reason
