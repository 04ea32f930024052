"""The ``--json`` shape of the live commands' result records (``command_line.json_of``)."""

from __future__ import annotations

from quota_constructs.live.explain import Explanation
from quota_constructs.live.preview import Change


def test_a_change_lists_its_jobs_and_names_a_rename_only_when_there_is_one() -> None:
    renamed = Change("vision", "RENAME", True, "jobs run", ("j1",), ("j2", "j3"), "old-vision")
    assert list(renamed.to_json().items()) == [
        ("share", "vision"), ("action", "RENAME"), ("refused", True), ("reason", "jobs run"),
        ("preemptible_jobs", ["j1"]), ("terminated_jobs", ["j2", "j3"]),
        ("renamed_from", "old-vision"),
    ]
    assert Change("nlp", "CREATE").to_json() == {
        "share": "nlp", "action": "CREATE", "refused": False, "reason": None,
        "preemptible_jobs": [], "terminated_jobs": [],
    }


def test_an_explanation_spreads_its_details_and_shows_history_only_when_read() -> None:
    full = Explanation("j1", "vision", "RUNNABLE", "BORROW_LIMIT", "capped", True,
                       history={"waited_seconds": 60}, details={"limit": 4, "lenders": None})
    assert list(full.to_json().items()) == [
        ("job_id", "j1"), ("share", "vision"), ("status", "RUNNABLE"),
        ("reason_code", "BORROW_LIMIT"), ("reason", "capped"), ("inferred", True),
        ("history", {"waited_seconds": 60}), ("limit", 4), ("lenders", None),
    ]
    bare = Explanation(None, "vision", None, "NO_WAITING_JOB", "nothing waits", False)
    assert "history" not in bare.to_json() and bare.to_json()["job_id"] is None
