"""When a job counts as lost to its interruption budget: the one definition every part reads.

AWS Batch (API reference, ``ServiceJobPreemptionConfiguration``): "The number of times a service
job can be retried after it is preempted. A job will be terminated when preemption retries have
been exhausted." With ``preemptionRetriesBeforeTermination`` N a job survives N preemptions and
fails on its next one, so a job lost to its budget is one that ended FAILED having been
preempted more often than N. Without N (unset: "requeued an unlimited number of times") no
failure is a budget failure. The usage report counts them (``budget_failures``) and the
monitoring alarms on them; both read :func:`is_budget_failure`.
"""

from __future__ import annotations

FAILED = "FAILED"


def is_budget_failure(status: str, preempted_attempts: int,
                      preemption_retries: int | None) -> bool:
    """Whether a job with this final ``status``, preempted ``preempted_attempts`` times and
    submitted with ``preemption_retries`` (None: unlimited) was lost to its budget."""
    return (status == FAILED and preemption_retries is not None
            and preempted_attempts > preemption_retries)
