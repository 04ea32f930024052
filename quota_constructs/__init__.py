"""Typed AWS CDK constructs for AWS Batch quota management of SageMaker Training jobs.

The model (``quota_constructs.model``) is plain Python. The constructs import ``aws_cdk`` and are
loaded on first use, so the custom-resource Lambda, which ships this package without aws_cdk,
can import the model through it.
"""

from __future__ import annotations

import ast as _ast
from importlib import import_module as _import_module
from pathlib import Path as _Path
from typing import TYPE_CHECKING, Any

# The release's version, written here only: pyproject.toml reads it (setuptools' dynamic
# version), so the wheel's metadata and this attribute cannot disagree. A literal, not
# importlib.metadata: the custom-resource Lambda ships this file without any metadata.
__version__ = "0.1.0"

# isort: off
# Each export once, as "import X as X" (the re-export type checkers read), one statement per
# module; isort would split such statements into one per name.
from .model import (
    CapacityLimit as CapacityLimit,
    CapacityUnit as CapacityUnit,
    JobStateTimeLimitAction as JobStateTimeLimitAction,
    QuotaConfigError as QuotaConfigError,
    QuotaShareSpec as QuotaShareSpec,
    ShareAgreement as ShareAgreement,
    SharingStrategy as SharingStrategy,
)

if TYPE_CHECKING:
    from .agreements import write_allocation_agreements as write_allocation_agreements
    from .job_queue import (
        ALLOCATION_WARNING_ID as ALLOCATION_WARNING_ID,
        BORROW_WARNING_ID as BORROW_WARNING_ID,
        ITrainingJobQueue as ITrainingJobQueue,
        TrainingJobQueue as TrainingJobQueue,
    )
    from .monitoring import (
        JobLedger as JobLedger,
        QuotaShareMonitoring as QuotaShareMonitoring,
        ShareAlarmThresholds as ShareAlarmThresholds,
    )
    from .quota_managed_queue import QuotaManagedTrainingQueue as QuotaManagedTrainingQueue
    from .quota_share import (
        GRANTEE_ACCOUNT_WARNING_ID as GRANTEE_ACCOUNT_WARNING_ID,
        PREEMPTION_BUDGET_WARNING_ID as PREEMPTION_BUDGET_WARNING_ID,
        SHARE_TAG_KEY as SHARE_TAG_KEY,
        IQuotaShare as IQuotaShare,
        QuotaShare as QuotaShare,
        ShareGrant as ShareGrant,
    )
    from .scheduling_policy import (
        IQuotaSharePolicy as IQuotaSharePolicy,
        IQuotaShareSchedulingPolicy as IQuotaShareSchedulingPolicy,
        QuotaSharePolicy as QuotaSharePolicy,
        QuotaShareSchedulingPolicy as QuotaShareSchedulingPolicy,
    )
    from .service_environment import (
        ITrainingServiceEnvironment as ITrainingServiceEnvironment,
        TrainingServiceEnvironment as TrainingServiceEnvironment,
    )
    from .share_options import (
        ShareLifecycle as ShareLifecycle,
        ShareProvisioning as ShareProvisioning,
    )
    from .share_provider import QuotaShareProvider as QuotaShareProvider
    from .summary import allocation_summary as allocation_summary
# isort: on


def _exports() -> tuple[dict[str, str], list[str]]:
    """The facade's exports, read from this file's own imports: the one list of them.

    Returns the constructs' names with their modules (the ``TYPE_CHECKING`` block: type
    checkers read it as written, and at run time the names load on first use, because the
    constructs import ``aws_cdk``, which the Lambdas that ship this file do not have) and the
    model's names (imported at once: plain Python)."""
    lazy: dict[str, str] = {}
    eager: list[str] = []
    for node in _ast.parse(_Path(__file__).read_text(encoding="utf-8")).body:
        if isinstance(node, _ast.ImportFrom) and node.level == 1:
            eager += [alias.asname or alias.name for alias in node.names]
        elif isinstance(node, _ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            lazy |= {
                alias.asname or alias.name: str(statement.module)
                for statement in node.body if isinstance(statement, _ast.ImportFrom)
                for alias in statement.names
            }
    return lazy, eager


_LAZY_EXPORTS, _EAGER_EXPORTS = _exports()


def __getattr__(name: str) -> Any:
    module = _LAZY_EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_import_module(f".{module}", __name__), name)


__all__ = sorted([*_EAGER_EXPORTS, *_LAZY_EXPORTS])
