"""Workloads to replay: job lists read from CSV or JSON files, or generated from a seed.

See :mod:`.files` for the file format and :mod:`.synthetic` for the generator.
"""

from .defaults import default_traffic
from .files import (
    CSV_COLUMNS,
    JOB_FIELDS,
    MAX_REPORTED_PROBLEMS,
    Workload,
    WorkloadError,
    WorkloadProblems,
    parse_csv,
    parse_json,
    read_workload,
    write_workload,
)
from .synthetic import (
    Duration,
    ExponentialDuration,
    FixedDuration,
    JobSize,
    LogNormalDuration,
    ShareTraffic,
    iter_synthetic,
    synthesize,
)

__all__ = [
    "CSV_COLUMNS",
    "JOB_FIELDS",
    "MAX_REPORTED_PROBLEMS",
    "Duration",
    "ExponentialDuration",
    "FixedDuration",
    "JobSize",
    "LogNormalDuration",
    "ShareTraffic",
    "Workload",
    "WorkloadError",
    "WorkloadProblems",
    "default_traffic",
    "iter_synthetic",
    "parse_csv",
    "parse_json",
    "read_workload",
    "synthesize",
    "write_workload",
]
