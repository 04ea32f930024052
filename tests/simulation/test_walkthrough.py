"""The AWS walkthrough (seeds/001): three shares of one ml.g5.xlarge in an environment of three.

QS1 (LEND_AND_BORROW, borrow 200, in-share preemption) gets jobs of priority 3, 2 and 1: the
first runs on QS1's own instance, the second borrows QS2's idle one, the third waits (QS3
reserves its instance). A QS2 job arrives: the borrowing QS1 job is preempted (cross-share).
Raising QS1's waiting job to priority 4 preempts QS1's running priority-3 job (in-share).
"""

from __future__ import annotations

import pytest

from quota_constructs.simulation import PriorityChange, SimulationResult

from .support import LEND, LEND_AND_BORROW, RESERVE, job, run, share

HOUR = 3600.0
SHARES = [
    share("QS1", LEND_AND_BORROW, borrow=200, in_share=True),
    share("QS2", LEND),
    share("QS3", RESERVE),
]


def replay(submitted: tuple[float, float, float]) -> SimulationResult:
    high, med, low = submitted
    return run(
        3,
        SHARES,
        [
            job("qs1_job_high", "QS1", high, HOUR, priority=3),
            job("qs1_job_med", "QS1", med, HOUR, priority=2),
            job("qs1_job_low", "QS1", low, HOUR, priority=1),
            job("qs2_job_1", "QS2", 600.0, HOUR, priority=1),
        ],
        [PriorityChange(at=900.0, job_id="qs1_job_low", priority=4)],
    )


# Submitted together, or one after another as the notebook does.
@pytest.mark.parametrize("submitted", [(0.0, 0.0, 0.0), (0.0, 1.0, 2.0)])
def test_walkthrough(submitted: tuple[float, float, float]) -> None:
    result = replay(submitted)
    high = result.jobs["qs1_job_high"].attempts
    med = result.jobs["qs1_job_med"].attempts
    low = result.jobs["qs1_job_low"].attempts
    qs2 = result.jobs["qs2_job_1"].attempts

    # The first runs on QS1's own instance, the second borrows QS2's idle one.
    assert high[0].started_at == submitted[0]
    assert high[0].borrowed is False
    assert med[0].started_at == submitted[1]
    assert med[0].borrowed is True
    # The third waits: QS3 reserves its instance.
    assert low[0].started_at == 900.0

    # QS2's job takes its instance back from the borrowing QS1 job.
    assert qs2[0].started_at == 600.0
    assert qs2[0].borrowed is False
    assert (med[0].ended_at, med[0].ended_by) == (600.0, "PREEMPTED")
    assert (med[0].preemption, med[0].preempted_by) == ("CROSS_SHARE", "qs2_job_1")

    # Raised to priority 4, the waiting job preempts the running priority-3 job in QS1.
    assert (high[0].ended_at, high[0].ended_by) == (900.0, "PREEMPTED")
    assert (high[0].preemption, high[0].preempted_by) == ("IN_SHARE", "qs1_job_low")
    assert low[0].borrowed is False
    assert result.jobs["qs1_job_low"].priority == 4

    # Nothing else was preempted, and everything finishes.
    assert len(low) == 1 and len(qs2) == 1
    assert all(j.status == "SUCCEEDED" for j in result.jobs.values())
    figures = result.shares
    assert figures["QS1"].cross_share_preemptions == 1
    assert figures["QS1"].in_share_preemptions == 1
    assert figures["QS2"].cross_share_preemptions == 0
    assert figures["QS3"].used_capacity_hours == 0.0


def test_nobody_uses_the_reserved_instance() -> None:
    result = replay((0.0, 0.0, 0.0))
    for name in ("QS1", "QS2"):
        timeline = result.capacity_timeline(name)
        assert all(
            total <= 2 for total in timeline.in_use
        ), f"{name} can never hold QS3's reserved instance"
    qs1 = result.capacity_timeline("QS1", "ml.g5.xlarge")
    # QS1 holds two (one borrowed) until QS2 reclaims its instance at 600.
    assert (list(qs1.times[:2]), list(qs1.in_use[:2]), list(qs1.borrowed[:2])) == (
        [0.0, 600.0], [2, 1], [1, 0]
    )
