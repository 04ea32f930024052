"""CloudWatch embedded metric format: metrics written as log lines.

A Lambda that prints an EMF record to stdout publishes its metrics through its log group:
CloudWatch extracts them with no PutMetricData call, so there is no API throttling to handle and
no ``cloudwatch:PutMetricData`` permission to grant. One record holds one set of dimension
values and any number of metrics.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

COUNT = "Count"
SECONDS = "Seconds"
NONE = "None"


@dataclass
class MetricRecord:
    """Metrics sharing one set of dimension values; ``dimension_sets`` lists which of the
    dimensions each metric is published with (several sets publish it at several levels)."""

    namespace: str
    dimensions: Mapping[str, str]
    dimension_sets: Sequence[Sequence[str]] = ()
    values: dict[str, float] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    def put(self, name: str, value: float, unit: str = COUNT) -> None:
        self.values[name] = value
        self.units[name] = unit

    def render(self, timestamp_ms: int | None = None) -> str:
        sets = [list(s) for s in self.dimension_sets] or [list(self.dimensions)]
        document = {
            "_aws": {
                "Timestamp": int(time.time() * 1000) if timestamp_ms is None else timestamp_ms,
                "CloudWatchMetrics": [{
                    "Namespace": self.namespace,
                    "Dimensions": sets,
                    "Metrics": [{"Name": n, "Unit": self.units[n]} for n in self.values],
                }],
            },
            **{key: str(value) for key, value in self.dimensions.items()},
            **self.values,
        }
        return json.dumps(document, separators=(",", ":"), sort_keys=False)


def emit(records: Sequence[MetricRecord], stream: TextIO | None = None) -> int:
    """Write every non-empty record as one line to stdout; returns how many were written."""
    out = sys.stdout if stream is None else stream
    written = 0
    now = int(time.time() * 1000)
    for record in records:
        if record.values:
            out.write(record.render(now) + "\n")
            written += 1
    out.flush()
    return written
