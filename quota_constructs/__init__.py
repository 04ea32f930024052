"""Typed AWS CDK constructs for AWS Batch quota management of SageMaker Training jobs.

The model (``quota_constructs.model``) is plain Python. The constructs import ``aws_cdk`` and are
loaded on first use, so the custom-resource Lambda, which ships this package without aws_cdk,
can import the model through it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .model import (
    CapacityLimit,
    CapacityUnit,
    JobStateTimeLimitAction,
    QuotaConfigError,
    QuotaShareSpec,
    SharingStrategy,
)

if TYPE_CHECKING:
    from .job_queue import ALLOCATION_WARNING_ID, ITrainingJobQueue, TrainingJobQueue
    from .quota_managed_queue import QuotaManagedTrainingQueue
    from .quota_share import IQuotaShare, QuotaShare, ShareProvisioning
    from .scheduling_policy import IQuotaSharePolicy, QuotaSharePolicy
    from .service_environment import ITrainingServiceEnvironment, TrainingServiceEnvironment
    from .summary import allocation_summary

_CONSTRUCTS = {
    "QuotaSharePolicy": "scheduling_policy",
    "IQuotaSharePolicy": "scheduling_policy",
    "TrainingServiceEnvironment": "service_environment",
    "ITrainingServiceEnvironment": "service_environment",
    "TrainingJobQueue": "job_queue",
    "ALLOCATION_WARNING_ID": "job_queue",
    "ITrainingJobQueue": "job_queue",
    "QuotaShare": "quota_share",
    "IQuotaShare": "quota_share",
    "ShareProvisioning": "quota_share",
    "QuotaManagedTrainingQueue": "quota_managed_queue",
    "allocation_summary": "summary",
}


def __getattr__(name: str) -> Any:
    module = _CONSTRUCTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __name__), name)


__all__ = [
    "ALLOCATION_WARNING_ID",
    "CapacityLimit",
    "CapacityUnit",
    "IQuotaShare",
    "IQuotaSharePolicy",
    "ITrainingJobQueue",
    "ITrainingServiceEnvironment",
    "JobStateTimeLimitAction",
    "QuotaConfigError",
    "QuotaManagedTrainingQueue",
    "QuotaShare",
    "QuotaSharePolicy",
    "QuotaShareSpec",
    "ShareProvisioning",
    "SharingStrategy",
    "TrainingJobQueue",
    "TrainingServiceEnvironment",
    "allocation_summary",
]
