"""The file ``quota-constructs history`` writes, as far as its readers need to agree on it.

It is a workload file (``quota_constructs.simulation.workloads.files``: the workload's fields,
which ``simulate`` and ``recommend`` replay) with more columns for people and for
``quota-constructs usage``, named here once: the writer writes them, the workload loader
ignores them and ``usage`` reads them.

- CSV: the header names the workload's columns and :data:`HISTORY_COLUMNS`; every row carries
  :data:`EXPORTED_AT` (the same moment on every row: a CSV has no other place for it).
- JSON: ``{"exported_at": ..., "jobs": [...]}``: each job record has the workload's keys and
  :data:`HISTORY_COLUMNS` but :data:`EXPORTED_AT`, which is the document's
  :data:`EXPORTED_AT_KEY`.

Times are ISO 8601 in UTC with milliseconds (``2026-11-24T09:15:00.000+00:00``);
``attempt_runs`` is :func:`quota_constructs.wire.job_record.encode_runs`' text.
"""

from __future__ import annotations

from typing import Final

SUBMITTED_AT_UTC: Final = "submitted_at_utc"
ATTEMPT_RUNS: Final = "attempt_runs"
UNSEEN_PREEMPTIONS: Final = "unseen_preemptions"
EXPORTED_AT: Final = "exported_at_utc"
EXPORTED_AT_KEY: Final = "exported_at"
"""The JSON document's key for the export's moment."""

HISTORY_COLUMNS: Final = (
    SUBMITTED_AT_UTC, "job_name", "status", "history", "attempts", "preemptions",
    UNSEEN_PREEMPTIONS, ATTEMPT_RUNS, EXPORTED_AT,
)
"""Columns after the workload's, in the order the export writes them."""
ATTEMPTS_KEPT: Final = (ATTEMPT_RUNS, EXPORTED_AT)
"""What an export made before attempts were kept lacks (``usage`` refuses it, naming them)."""
