"""Constructs that watch quota shares in production: per-share metrics, job events told to the
shares' owners, a dashboard per queue and alarms per share.

The Lambdas they deploy live in :mod:`quota_constructs.runtime` (no aws_cdk); what both sides
agree on is :mod:`quota_constructs.wire.monitoring_contract`.
"""

from ._function import FunctionSettings, QueueFunctionProps
from .dashboard import QuotaShareDashboard
from .job_events_function import JobEventsFunction
from .job_ledger import JobLedger
from .owner_topics import OwnerTopics
from .quota_share_monitoring import QuotaShareMonitoring
from .share_alarms import ShareAlarms
from .share_metrics_function import ShareMetricsFunction
from .stack_preemptions import StackPreemptions
from .thresholds import ShareAlarmThresholds

__all__ = [
    "FunctionSettings",
    "JobEventsFunction",
    "JobLedger",
    "OwnerTopics",
    "QueueFunctionProps",
    "QuotaShareDashboard",
    "QuotaShareMonitoring",
    "ShareAlarmThresholds",
    "ShareAlarms",
    "ShareMetricsFunction",
    "StackPreemptions",
]
