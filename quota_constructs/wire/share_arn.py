"""Quota-share and job-queue ARNs: the one parser and the one builder every part of the library
uses (constructs, runtimes, live commands, emulator).

The forms are ``arn:<partition>:batch:<region>:<account>:job-queue/<queue>`` and
``arn:<partition>:batch:<region>:<account>:job-queue/<queue>/quota-share/<name>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SHARE_PATH = "/quota-share/"
"""What joins a job queue's ARN and a share's name in the share's ARN."""
_SHARE_ARN = re.compile(
    r"(?P<queue_arn>arn:[^:\s]+:batch:[^:\s]*:[^:\s]*:job-queue/(?P<queue>[^/\s]+))"
    r"/quota-share/(?P<name>[^/]+)"
)
_SHARE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
_QUEUE_ARN = re.compile(r"arn:[^:\s]+:batch:[^:\s]*:[^:\s]*:job-queue/(?P<queue>[^/\s]+)")


def quota_share_arn(job_queue: str, share_name: str) -> str:
    """The ARN of ``share_name`` on the queue whose ARN is ``job_queue`` (given the queue's
    name instead, the ARN's resource name, as ``Stack.format_arn`` takes it)."""
    return f"{job_queue}{SHARE_PATH}{share_name}"


def quota_shares_of(job_queue_arn: str) -> str:
    """The IAM resource pattern for every quota share of a queue."""
    return quota_share_arn(job_queue_arn, "*")


def share_name_of(reference: object) -> str:
    """A share named by name or by ARN: its name."""
    return str(reference or "").rsplit(SHARE_PATH, 1)[-1]


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
        parsed = cls.split(value)
        if parsed is None or _SHARE_NAME.fullmatch(parsed.share_name) is None:
            return None
        return parsed

    @classmethod
    def split(cls, value: object) -> QuotaShareArn | None:
        """The ARN's parts whatever its share name holds (for a caller that checks the name
        itself, to say what is wrong with it); None when it is not shaped as a share ARN."""
        match = _SHARE_ARN.fullmatch(value) if isinstance(value, str) else None
        if match is None:
            return None
        return cls(match.string, match["queue_arn"], match["queue"], match["name"])

    def is_share(self, job_queue: str, share_name: str) -> bool:
        """Whether ``share_name`` on ``job_queue`` (a queue name or ARN) is this share."""
        if share_name != self.share_name:
            return False
        if is_job_queue_arn(job_queue):
            return job_queue == self.job_queue_arn
        return job_queue == self.job_queue_name
