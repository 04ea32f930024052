"""Read back the EMF records a handler printed, checking each is one CloudWatch would accept."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from quota_constructs.wire.monitoring_contract import (
    CAPACITY_UNIT_DIMENSION,
    JOB_QUEUE_DIMENSION,
    PREEMPTION_KIND_DIMENSION,
    QUOTA_SHARE_DIMENSION,
)

DIMENSIONS = (JOB_QUEUE_DIMENSION, QUOTA_SHARE_DIMENSION, CAPACITY_UNIT_DIMENSION,
              PREEMPTION_KIND_DIMENSION)


@dataclass(frozen=True)
class DataPoint:
    namespace: str
    dimensions: tuple[tuple[str, str], ...]
    """Every dimension set the metric is published with, flattened to (name, value) pairs of
    the record; ``sets`` says which combinations."""
    sets: tuple[tuple[str, ...], ...]
    name: str
    value: float
    unit: str

    def dimension(self, name: str) -> str | None:
        return dict(self.dimensions).get(name)


def data_points(stdout: str) -> list[DataPoint]:
    points: list[DataPoint] = []
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        record: dict[str, Any] = json.loads(line)
        if "_aws" not in record:
            continue
        meta = record["_aws"]
        assert isinstance(meta["Timestamp"], int)
        for directive in meta["CloudWatchMetrics"]:
            sets = tuple(tuple(s) for s in directive["Dimensions"])
            for dimension_set in sets:
                for name in dimension_set:
                    assert isinstance(record[name], str), (name, record)
            dims = tuple(
                (name, record[name]) for name in DIMENSIONS if name in record
            )
            for metric in directive["Metrics"]:
                value = record[metric["Name"]]
                assert isinstance(value, (int, float)) and not isinstance(value, bool)
                points.append(DataPoint(directive["Namespace"], dims, sets, metric["Name"],
                                        float(value), metric["Unit"]))
    return points


def values(points: list[DataPoint], name: str, **dims: str) -> list[float]:
    """The values of metric ``name`` on records whose dimensions include ``dims``."""
    return [p.value for p in points if p.name == name
            and all(p.dimension(k) == v for k, v in dims.items())]
