"""What a share's owner reads: plain sentences, the facts first, then what happens next."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from quota_constructs.model import ShareAgreement
from quota_constructs.wire.monitoring_contract import CROSS_SHARE, IN_SHARE

from .notifier import OwnerMessage
from .preemption import Preemption, describe_duration

TERMINATION_REASON_PREFIX = "quota-constructs: interruption budget exceeded"
"""Starts the reason of every TerminateServiceJob the monitor sends, so the FAILED state change
that follows is recognised as already reported."""

_KIND_TEXT = {
    CROSS_SHARE: "cross-share: the share had borrowed this capacity and the share that lent it "
    "took it back",
    IN_SHARE: "in-share: a higher-priority job of the same share took its place",
}


def job_label(job: Mapping[str, Any]) -> str:
    return str(job.get("jobName") or job.get("jobId") or "a job")


def termination_reason(share: str, count: int, budget: int) -> str:
    return (
        f"{TERMINATION_REASON_PREFIX}: preempted {count} times, quota share {share} allows "
        f"{budget}"
    )


def preemption_message(
    *,
    job: Mapping[str, Any],
    job_arn: str,
    share: str,
    queue: str,
    preemption: Preemption,
    agreement: ShareAgreement | None,
    enforce_budget: bool,
    terminated: bool,
    key: str,
) -> OwnerMessage:
    name = job_label(job)
    budget = agreement.interruption_budget if agreement is not None else None
    count = preemption.attempt_count
    over = budget is not None and count > budget
    kind_text = _KIND_TEXT.get(preemption.kind) or (
        "not stated by AWS Batch"
        + (f" (its reason: {preemption.reason!r})" if preemption.reason else "")
    )
    if budget is None:
        attempt_text = f"preemption {count}; no budget (the share sets no limit, as in AWS)"
    else:
        attempt_text = f"preemption {count} of a budget of {budget}"
    lines = [
        f"Your training job {name} in quota share {share} was preempted.",
        "",
        f"Job: {name} ({job_arn})",
        f"Quota share: {share} on job queue {queue}",
        f"Kind of preemption: {kind_text}",
        f"Attempt: {attempt_text}",
        f"Time lost: {_lost_text(preemption, agreement)}",
    ]
    if preemption.training_job:
        lines.append(f"Preempted SageMaker training job: {preemption.training_job}")
    lines.append("")
    if over and terminated:
        lines.append(
            f"The job is over its share's interruption budget ({count} preemptions, "
            f"{budget} allowed), so it was terminated (the monitor enforces budgets)."
        )
    elif over and enforce_budget:
        status = job.get("status", "unknown")
        lines.append(
            f"The job is over its share's interruption budget ({count} preemptions, {budget} "
            f"allowed); it had already ended (status {status}), so nothing was terminated."
        )
    elif over:
        lines.append(
            f"The job is over its share's interruption budget ({count} preemptions, {budget} "
            "allowed). It was not terminated (the monitor does not enforce budgets): it waits "
            "to run again and may be preempted again."
        )
    else:
        lines.append("The job is back in the queue (RUNNABLE) and starts again when capacity "
                     "is free.")
    subject = f"Job {name} preempted in quota share {share} (preemption {count})"
    if over:
        subject = (f"Job {name} terminated: over the interruption budget of {share}" if terminated
                   else f"Job {name} over the interruption budget of quota share {share}")
    return OwnerMessage(
        subject=subject,
        body="\n".join(lines) + "\n",
        attributes={"QuotaShare": share, "JobQueue": queue, "Notice": "PREEMPTION",
                    "PreemptionKind": preemption.kind},
        key=key,
    )


def stuck_message(*, job: Mapping[str, Any], job_arn: str, share: str, queue: str,
                  reason: str, key: str) -> OwnerMessage:
    name = job_label(job)
    if "QUOTA_MANAGEMENT_LIMIT_EXCEEDED" in reason:
        why = (f"it needs more capacity than quota share {share} can ever reach (its own limit "
               "plus what it may borrow, or more than the other shares could lend)")
    elif "SERVICE_ENVIRONMENT_MAX_RESOURCE" in reason:
        why = "it needs more capacity than the service environment has"
    else:
        why = ("AWS Batch reports it at the front of the job queue, blocking it, for the "
               "reason below")
    return OwnerMessage(
        subject=f"Job {name} cannot start in quota share {share}",
        body="\n".join([
            f"Your training job {name} in quota share {share} is waiting and cannot start: "
            f"{why}.",
            "",
            f"Job: {name} ({job_arn})",
            f"Quota share: {share} on job queue {queue}",
            f"AWS Batch says: {reason}",
            "",
            "It waits until it is terminated or the capacity limits change: resubmit it with "
            "fewer or smaller instances, or ask for a larger allocation.",
        ]) + "\n",
        attributes={"QuotaShare": share, "JobQueue": queue, "Notice": "CANNOT_START"},
        key=key,
    )


def failed_after_preemptions_message(*, job: Mapping[str, Any], job_arn: str, share: str,
                                     queue: str, count: int, retries: int | None,
                                     key: str) -> OwnerMessage:
    name = job_label(job)
    limit = (f"it was submitted to fail after {retries} preemption retries"
             if retries is not None else "AWS Batch ended it after its preemptions")
    return OwnerMessage(
        subject=f"Job {name} failed after {count} preemptions in quota share {share}",
        body="\n".join([
            f"Your training job {name} in quota share {share} failed after being preempted "
            f"{count} times: {limit}.",
            "",
            f"Job: {name} ({job_arn})",
            f"Quota share: {share} on job queue {queue}",
            f"AWS Batch says: {job.get('statusReason') or 'no reason given'}",
            "",
            "Resubmit it when capacity is free, or submit it to a share that does not borrow.",
        ]) + "\n",
        attributes={"QuotaShare": share, "JobQueue": queue, "Notice": "FAILED_AFTER_PREEMPTIONS"},
        key=key,
    )


def _lost_text(preemption: Preemption, agreement: ShareAgreement | None) -> str:
    seconds = preemption.lost_seconds
    if seconds is None:
        text = "unknown (AWS Batch did not say when the attempt ran)"
    else:
        started = _time(preemption.started_at_ms)
        stopped = _time(preemption.stopped_at_ms)
        text = f"{describe_duration(seconds)} of run time (the attempt ran {started} – {stopped})"
    if agreement is not None and agreement.recoverable:
        text += "; the share's workloads checkpoint, so only the work since the last " \
                "checkpoint is lost"
    return text


def _time(ms: int | None) -> str:
    if ms is None:
        return "?"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
