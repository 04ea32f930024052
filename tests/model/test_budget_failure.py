"""The budget-failure rule (model/budget_failure.py)."""

from __future__ import annotations

from quota_constructs.model.budget_failure import is_budget_failure


def test_a_failed_job_preempted_more_often_than_its_retries_is_a_budget_failure() -> None:
    assert is_budget_failure("FAILED", 1, 0)       # 0 retries: fails on its first preemption
    assert is_budget_failure("FAILED", 3, 2)
    assert not is_budget_failure("FAILED", 2, 2)   # failed for another reason
    assert not is_budget_failure("FAILED", 5, None)  # unlimited: never lost to a budget
    assert not is_budget_failure("SUCCEEDED", 3, 0)
    assert not is_budget_failure("RUNNABLE", 3, 0)
