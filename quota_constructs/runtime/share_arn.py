"""Quota-share and job-queue ARNs, read the one way every runtime of the library reads them.

The forms are ``arn:<partition>:batch:<region>:<account>:job-queue/<queue>`` and
``arn:<partition>:batch:<region>:<account>:job-queue/<queue>/quota-share/<name>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SHARE_ARN = re.compile(
    r"(?P<queue_arn>arn:[^:\s]+:batch:[^:\s]*:[^:\s]*:job-queue/(?P<queue>[^/\s]+))"
    r"/quota-share/(?P<name>[A-Za-z0-9_-]{1,128})"
)
_QUEUE_ARN = re.compile(r"arn:[^:\s]+:batch:[^:\s]*:[^:\s]*:job-queue/(?P<queue>[^/\s]+)")


def is_job_queue_arn(value: str) -> bool:
    """Whether ``value`` is a job-queue ARN (rather than a queue's name)."""
    return _QUEUE_ARN.fullmatch(value) is not None


def job_queue_name_of(reference: str) -> str:
    """``training`` for ``arn:aws:batch:…:job-queue/training``, and for ``training``."""
    match = _QUEUE_ARN.fullmatch(reference)
    return match["queue"] if match is not None else reference


@dataclass(frozen=True)
class QuotaShareArn:
    """A parsed quota-share ARN: the one thing that says which share a resource manages."""

    arn: str
    job_queue_arn: str
    job_queue_name: str
    share_name: str

    @classmethod
    def parse(cls, value: object) -> QuotaShareArn | None:
        """The ARN, or None when ``value`` is not a quota-share ARN (e.g. a failed create's id)."""
        if not isinstance(value, str):
            return None
        match = _SHARE_ARN.fullmatch(value)
        if match is None:
            return None
        return cls(value, match["queue_arn"], match["queue"], match["name"])

    def is_share(self, job_queue: str, share_name: str) -> bool:
        """Whether ``share_name`` on ``job_queue`` (a queue name or ARN) is this share."""
        if share_name != self.share_name:
            return False
        if is_job_queue_arn(job_queue):
            return job_queue == self.job_queue_arn
        return job_queue == self.job_queue_name
