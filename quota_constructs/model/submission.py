"""What a submission into a quota share must carry, in one place.

The grants (``QuotaShare.grant_submit``) deny a ``SubmitServiceJob`` without the share's tag or,
under a priority ceiling, without a ``schedulingPriority`` no higher than the ceiling; the
agreement tells a team what to send; the team client (:mod:`quota_constructs.client`) sends it.
All three read the rules below, so what the page says is what the client does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from .errors import QuotaConfigError
from .tags import LIBRARY_TAG_PREFIX, is_library_tag_key, validate_tags
from .tags import SHARE_TAG_KEY as SHARE_TAG_KEY

MIN_JOB_PRIORITY: Final = 0
MAX_JOB_PRIORITY: Final = 9999
"""The range of a service job's ``schedulingPriority`` (higher runs first)."""

SAGEMAKER_TRAINING: Final = "SAGEMAKER_TRAINING"

JOB_NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")
"""SubmitServiceJob's ``jobName`` (AWS Batch API reference): "up to 128 characters long. It can
contain uppercase and lowercase letters, numbers, hyphens (-), and underscores (_)"."""
JOB_NAME_ALLOWED: Final = "1 to 128 letters, numbers, hyphens (-) and underscores (_)"


def check_job_name(name: object, *, subject: str, field: str = "job_name") -> str:
    """``name`` when AWS Batch accepts it as a service job's name; a :class:`QuotaConfigError`
    naming ``subject`` otherwise (a space, a dot, an empty name, more than 128 characters)."""
    if not isinstance(name, str) or JOB_NAME_PATTERN.fullmatch(name) is None:
        raise QuotaConfigError(subject, field, name, JOB_NAME_ALLOWED)
    return name


def share_tags(share: str) -> dict[str, str]:
    """The tags a submission into ``share`` must carry under ``grant_submit``."""
    return {SHARE_TAG_KEY: share}


def submission_tags(share: str, extra_tags: Mapping[str, str] | None) -> dict[str, str]:
    """The share's tag and ``extra_tags``: a :class:`QuotaConfigError` naming the share for
    a key in the library's namespace (``quota-constructs:``; the grants deny the keys the
    library sets, and another share's tag), a key starting with ``aws:`` or more than AWS's
    50 tags in all. The share's own tag with its own name is accepted (it is sent anyway)."""
    subject = f"quota share {share!r}"
    extra = validate_tags(extra_tags or {}, subject=subject)
    for key, value in extra.items():
        if key == SHARE_TAG_KEY and value == share:
            continue
        if is_library_tag_key(key):
            raise QuotaConfigError(
                subject, "tags key", key,
                f"a key outside {LIBRARY_TAG_PREFIX!r}, which the library reserves (the "
                f"share's own tag {SHARE_TAG_KEY}={share} is added for you)",
            )
    return validate_tags({**extra, **share_tags(share)}, subject=subject)


def check_priority(
    priority: object, *, subject: str, ceiling: int | None, field: str = "priority"
) -> int:
    """``priority`` as an int within 0–9999 and no higher than ``ceiling``; a
    :class:`QuotaConfigError` naming ``subject`` otherwise.

    Under a ceiling the priority is required: the grant's ``NumericLessThanEquals`` condition
    on ``batch:SchedulingPriority`` does not match a request that carries no priority, so
    IAM would deny it.
    """
    upper = MAX_JOB_PRIORITY if ceiling is None else ceiling
    allowed = f"a whole number from {MIN_JOB_PRIORITY} to {upper}" + (
        f" (the share's priority ceiling is {ceiling})" if ceiling is not None else ""
    )
    if priority is None:
        if ceiling is None:
            return MIN_JOB_PRIORITY
        raise QuotaConfigError(
            subject, field, None,
            allowed + "; under a ceiling every submission must carry a priority, or IAM denies it",
        )
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise QuotaConfigError(subject, field, priority, allowed)
    if not MIN_JOB_PRIORITY <= priority <= upper:
        raise QuotaConfigError(subject, field, priority, allowed)
    return priority


def preemption_configuration(budget: int | None) -> dict[str, int] | None:
    """``preemptionConfiguration`` for a job of a share whose interruption budget is
    ``budget`` (the most preemptions one job may suffer): Batch fails the job once it has been
    preempted more than ``preemptionRetriesBeforeTermination`` times, so the two are the same
    number. ``None`` (unlimited) sends nothing, which is AWS's default: requeued without limit."""
    if budget is None:
        return None
    return {"preemptionRetriesBeforeTermination": budget}


def submit_service_job_request(
    *,
    job_queue: str,
    share: str,
    job_name: str,
    training_job_request: Mapping[str, Any] | str,
    priority: int,
    budget: int | None,
    extra_tags: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of boto3's ``batch.submit_service_job`` for one job of ``share``.

    ``schedulingPriority`` is always sent, 0 included (a priority-ceiling grant denies a request
    without one). ``extra_tags`` (cost allocation, experiment ids) go with the share's tag; see
    :func:`submission_tags` for what they may not be.
    """
    check_job_name(job_name, subject=f"quota share {share!r}")
    tags = submission_tags(share, extra_tags)
    payload = (
        training_job_request if isinstance(training_job_request, str)
        else json.dumps(dict(training_job_request), separators=(",", ":"))
    )
    request: dict[str, Any] = {
        "jobName": job_name,
        "jobQueue": job_queue,
        "serviceJobType": SAGEMAKER_TRAINING,
        "quotaShareName": share,
        "schedulingPriority": priority,
        "tags": tags,
        "serviceRequestPayload": payload,
    }
    preemption = preemption_configuration(budget)
    if preemption is not None:
        request["preemptionConfiguration"] = preemption
    return request
