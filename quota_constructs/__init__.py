"""Typed AWS CDK constructs for AWS Batch quota management of SageMaker Training jobs.

The model (``quota_constructs.model``) is plain Python. The constructs import ``aws_cdk`` and are
loaded on first use, so the custom-resource Lambda, which ships this package without aws_cdk,
can import the model through it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# The release's version, written here only: pyproject.toml reads it (setuptools' dynamic
# version), so the wheel's metadata and this attribute cannot disagree. A literal, not
# importlib.metadata: the custom-resource Lambda ships this file without any metadata.
__version__ = "0.1.0"

from .model import (
    CapacityLimit,
    CapacityUnit,
    JobStateTimeLimitAction,
    QuotaConfigError,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)

if TYPE_CHECKING:
    from .agreements import write_allocation_agreements
    from .job_queue import (
        ALLOCATION_WARNING_ID,
        BORROW_WARNING_ID,
        ITrainingJobQueue,
        TrainingJobQueue,
    )
    from .monitoring import QuotaShareMonitoring, ShareAlarmThresholds
    from .quota_managed_queue import QuotaManagedTrainingQueue
    from .quota_share import (
        GRANTEE_ACCOUNT_WARNING_ID,
        SHARE_TAG_KEY,
        IQuotaShare,
        QuotaShare,
        ShareGrant,
    )
    from .scheduling_policy import (
        IQuotaSharePolicy,
        IQuotaShareSchedulingPolicy,
        QuotaSharePolicy,
        QuotaShareSchedulingPolicy,
    )
    from .service_environment import ITrainingServiceEnvironment, TrainingServiceEnvironment
    from .share_options import ShareLifecycle, ShareProvisioning
    from .share_provider import QuotaShareProvider
    from .summary import allocation_summary

_CONSTRUCTS = {
    "QuotaSharePolicy": "scheduling_policy",
    "QuotaShareSchedulingPolicy": "scheduling_policy",
    "IQuotaShareSchedulingPolicy": "scheduling_policy",
    "BORROW_WARNING_ID": "job_queue",
    "IQuotaSharePolicy": "scheduling_policy",
    "TrainingServiceEnvironment": "service_environment",
    "ITrainingServiceEnvironment": "service_environment",
    "TrainingJobQueue": "job_queue",
    "ALLOCATION_WARNING_ID": "job_queue",
    "ITrainingJobQueue": "job_queue",
    "QuotaShare": "quota_share",
    "IQuotaShare": "quota_share",
    "ShareGrant": "quota_share",
    "SHARE_TAG_KEY": "quota_share",
    "GRANTEE_ACCOUNT_WARNING_ID": "quota_share",
    "ShareLifecycle": "share_options",
    "ShareProvisioning": "share_options",
    "QuotaShareProvider": "share_provider",
    "QuotaManagedTrainingQueue": "quota_managed_queue",
    "QuotaShareMonitoring": "monitoring",
    "ShareAlarmThresholds": "monitoring",
    "write_allocation_agreements": "agreements",
    "allocation_summary": "summary",
}


def __getattr__(name: str) -> Any:
    module = _CONSTRUCTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)


__all__ = [
    "ALLOCATION_WARNING_ID",
    "BORROW_WARNING_ID",
    "GRANTEE_ACCOUNT_WARNING_ID",
    "SHARE_TAG_KEY",
    "CapacityLimit",
    "CapacityUnit",
    "IQuotaShare",
    "IQuotaSharePolicy",
    "IQuotaShareSchedulingPolicy",
    "ITrainingJobQueue",
    "ITrainingServiceEnvironment",
    "JobStateTimeLimitAction",
    "QuotaConfigError",
    "QuotaManagedTrainingQueue",
    "QuotaShare",
    "QuotaShareMonitoring",
    "QuotaSharePolicy",
    "QuotaShareProvider",
    "QuotaShareSchedulingPolicy",
    "QuotaShareSpec",
    "ShareAgreement",
    "ShareAlarmThresholds",
    "ShareGrant",
    "ShareLifecycle",
    "ShareProvisioning",
    "SharingStrategy",
    "TrainingJobQueue",
    "TrainingServiceEnvironment",
    "allocation_summary",
    "write_allocation_agreements",
]
