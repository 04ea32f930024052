"""One JSON object per log line, so CloudWatch Logs Insights can filter on any field."""

from __future__ import annotations

import json
import logging
from typing import Any

logger = logging.getLogger("quota_constructs.runtime")
logger.setLevel(logging.INFO)


def log(event: str, **fields: Any) -> None:
    """Log ``event`` with ``fields``; callers pass identifiers and states, never credentials."""
    logger.info(json.dumps({"event": event, **fields}, default=str, sort_keys=True))
