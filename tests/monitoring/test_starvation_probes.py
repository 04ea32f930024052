"""Reviewer's probes of the Starved alarm: the metrics handler the template names, run against
the fake Batch, and the alarm evaluated as CloudWatch would, in situations the feature's own
tests do not build."""

from __future__ import annotations

from pathlib import Path

import pytest

from quota_constructs.wire.monitoring_contract import CAPACITY_IN_USE

from ..monitoring_runtime.conftest import G5, Monitor
from ..monitoring_runtime.emf_lines import values
from .test_alarm_evaluation import HOUR, Deployed


@pytest.fixture
def deployed(monitor: Monitor, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Deployed:
    monitor.create_shares()
    return Deployed(monitor, tmp_path, capsys)


def test_a_share_the_snapshot_leaves_out_of_its_top_list_is_not_starved_by_omission(
    deployed: Deployed,
) -> None:
    """AWS documents ``topCapacityUtilization`` as the *top* shares: a share it omits may be
    holding its whole limit. Its waiting job must not look as if it fitted idle capacity."""
    batch, queue = deployed.monitor.batch, deployed.monitor.training
    batch.add_service_job(queue, "QS2", "RUNNING", {G5: 1})  # QS2's one g5, in use
    batch.add_service_job(queue, "QS2", "RUNNABLE", {G5: 1}, age_seconds=HOUR)
    batch.add_service_job(queue, "QS1", "RUNNING", {G5: 1})
    batch.hidden_from_snapshot.add("QS2")

    points = deployed.run()

    assert values(points, CAPACITY_IN_USE, QuotaShare="QS2") == [1.0]
    assert deployed.starved("QS2", [points]) == "OK"
    assert deployed.health([points, deployed.run()]) == "OK"

    # Once its own instance is free, the same omission no longer hides starvation either.
    batch.jobs[-3].status = "SUCCEEDED"
    points = deployed.run()
    assert values(points, CAPACITY_IN_USE, QuotaShare="QS2") == [0.0]
    assert deployed.starved("QS2", [points]) == "ALARM"


def test_a_two_instance_head_job_next_to_one_idle_instance_of_its_type_is_not_starved(
    deployed: Deployed,
) -> None:
    batch, queue = deployed.monitor.batch, deployed.monitor.training
    # QS1 owns one g5 (idle) and may borrow: its head job needs two.
    batch.add_service_job(queue, "QS1", "RUNNABLE", {G5: 2}, age_seconds=3 * HOUR)

    points = deployed.run()

    assert deployed.starved("QS1", [points]) == "OK"
