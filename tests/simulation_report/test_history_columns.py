"""Workload CSVs may carry the columns ``quota-constructs history`` adds for people; the
simulator ignores them, and still refuses any other unknown column."""

from __future__ import annotations

import io

import pytest

from quota_constructs.simulation.workloads import WorkloadError
from quota_constructs.simulation.workloads.files import HISTORY_COLUMNS, parse_csv

ROW = "j1,vision,0,3600,ml.g5.xlarge,2,7,1"
HEADER = ("job_id,share,submitted_at,duration,instance_type,instance_count,priority,"
          "preemption_retries")


EXPORT_VALUES = {
    "submitted_at_utc": "2026-11-24T00:00:00.000+00:00", "job_name": "train-1",
    "status": "SUCCEEDED", "history": "finished", "attempts": "2", "preemptions": "1",
    "unseen_preemptions": "0",
    "attempt_runs": "2026-11-24T00:00:00.000+00:00/2026-11-24T00:30:00.000+00:00/PREEMPTED",
    "exported_at_utc": "2026-11-25T00:00:00.000+00:00",
}


def test_history_columns_are_ignored() -> None:
    # Every column the export writes, whatever it writes next: the loader must skip them all.
    values = [EXPORT_VALUES.get(name, "x") for name in HISTORY_COLUMNS]
    text = (HEADER + "," + ",".join(HISTORY_COLUMNS) + "\n"
            + ROW + "," + ",".join(values) + "\n")
    (job,) = parse_csv(io.StringIO(text)).jobs
    assert (job.job_id, job.share, job.instance_count, job.priority, job.preemption_retries) == (
        "j1", "vision", 2, 7, 1)
    assert job.submitted_at == 0.0 and job.duration == 3600.0


def test_other_unknown_columns_are_still_refused() -> None:
    with pytest.raises(WorkloadError) as caught:
        parse_csv(io.StringIO(HEADER + ",colour\n" + ROW + ",blue\n"))
    assert caught.value.value == "colour"
