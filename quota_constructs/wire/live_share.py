"""A quota share as AWS Batch reports it right now."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .share_config import ShareConfig

SETTLED_STATUSES = frozenset({"VALID", "INVALID"})
"""Statuses in which a share accepts UpdateQuotaShare / DeleteQuotaShare."""


@dataclass(frozen=True)
class LiveShare:
    arn: str
    name: str
    job_queue_arn: str
    status: str
    config: ShareConfig
    tags: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_api(
        cls, fields: Mapping[str, Any], tags: Mapping[str, str] | None = None
    ) -> LiveShare:
        return cls(
            arn=str(fields["quotaShareArn"]),
            name=str(fields.get("quotaShareName", "")),
            job_queue_arn=str(fields.get("jobQueueArn", "")),
            status=str(fields.get("status", "")),
            config=ShareConfig.from_api(fields),
            tags=dict(tags if tags is not None else fields.get("tags") or {}),
        )

    @property
    def settled(self) -> bool:
        return self.status in SETTLED_STATUSES

    @property
    def enabled(self) -> bool:
        return self.config.state == "ENABLED"
