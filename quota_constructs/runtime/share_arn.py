"""Quota-share ARNs.

The form is ``arn:<partition>:batch:<region>:<account>:job-queue/<queue>/quota-share/<name>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SHARE_ARN = re.compile(
    r"(?P<queue_arn>arn:[^:\s]+:batch:[^:\s]*:[^:\s]*:job-queue/(?P<queue>[^/\s]+))"
    r"/quota-share/(?P<name>[A-Za-z0-9_-]{1,128})"
)
_QUEUE_ARN = re.compile(r"arn:[^:\s]+:batch:[^:\s]*:[^:\s]*:job-queue/[^/\s]+")


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
        if _QUEUE_ARN.fullmatch(job_queue):
            return job_queue == self.job_queue_arn
        return job_queue == self.job_queue_name
