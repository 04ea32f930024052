"""An impossible --pin is refused, in one line naming the share, the field, the value and what
is allowed (issue 23: a pin above the environment was silently ignored)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy
from quota_constructs.model import QuotaConfigError
from quota_constructs.simulation import Pin, SimJob, recommend
from quota_constructs.simulation.recommend_cli import main
from quota_constructs.simulation.workloads import Workload, write_workload

G5 = "ml.g5.xlarge"
MODULE = "tests.simulation.test_recommend_pins"
SHARES = [
    QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 1)],
                   strategy=SharingStrategy.RESERVE,
                   agreement=ShareAgreement(owner="vision", target_wait_p95=3600.0)),
    QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 3)],
                   strategy=SharingStrategy.LEND),
]
TODAY = {"capacity_limits": [CapacityLimit(G5, 4)], "shares": SHARES}
# nlp's largest job needs two instances: it must keep at least two.
JOBS = [SimJob(job_id=f"v{i}", share="vision", submitted_at=i * 900.0, duration=600.0,
               instance_type=G5) for i in range(4)]
JOBS += [SimJob(job_id="n0", share="nlp", submitted_at=0.0, duration=600.0, instance_type=G5,
                instance_count=2)]


def refused(*pins: Pin) -> QuotaConfigError:
    with pytest.raises(QuotaConfigError) as caught:
        recommend(capacity_limits=TODAY["capacity_limits"], shares=SHARES, jobs=JOBS,
                  pins=pins, workers=1)
    return caught.value


def test_a_minimum_above_the_environment_is_refused() -> None:
    error = refused(Pin("vision", minimum={G5: 9}))
    assert error.subject == "pin for 'vision'" and error.field == f"minimum[{G5}]"
    assert error.value == 9
    # What is allowed: the environment's 4 less nlp's largest job (2).
    assert error.allowed.startswith("at most 2: the environment has 4 x ml.g5.xlarge")
    assert "nlp 2" in error.allowed


def test_a_minimum_the_other_shares_leave_no_room_for_is_refused() -> None:
    error = refused(Pin("vision", minimum={G5: 3}))
    assert error.value == 3 and error.allowed.startswith("at most 2")


def test_two_pins_that_together_exceed_the_environment_are_refused() -> None:
    error = refused(Pin("vision", minimum={G5: 2}), Pin("nlp", minimum={G5: 3}))
    assert "at most" in error.allowed


def test_a_minimum_above_pinned_limits_is_refused() -> None:
    error = refused(Pin("vision", limits=True, minimum={G5: 2}))
    assert error.allowed.startswith("at most 1: its limits are pinned")


def test_a_satisfiable_pin_is_honoured() -> None:
    rec = recommend(capacity_limits=TODAY["capacity_limits"], shares=SHARES, jobs=JOBS,
                    pins=[Pin("vision", minimum={G5: 2})], workers=1)
    assert rec.shares[0].limit_of(G5) >= 2


def test_the_command_refuses_it_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    write_workload(path, Workload(JOBS))
    out, err = io.StringIO(), io.StringIO()
    code = main(["--declaration", f"{MODULE}:TODAY", "--workload", str(path), "--pin",
                 f"vision:min:{G5}=9", "--workers", "1", "--quiet", "--out",
                 str(tmp_path / "rec")], stdout=out, stderr=err)
    assert code == 2
    (line,) = err.getvalue().splitlines()
    assert line.startswith("error: pin for 'vision': minimum[ml.g5.xlarge] got 9; allowed: "
                           "at most 2")
    assert not (tmp_path / "rec").exists()
