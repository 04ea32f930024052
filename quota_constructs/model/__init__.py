"""The quota-management model: types and validation in pure Python.

Nothing here imports ``aws_cdk``: the constructs, the custom-resource Lambda and any tool read
the same rules, and the Lambda asset carries this package as it is.
"""

from .agreement import ShareAgreement, validate_agreement
from .borrow_limit import UNLIMITED_BORROW, borrow_allowance, borrow_ceiling
from .borrowing import BorrowingRules, UnitRules
from .capacity import (
    MAX_CAPACITY_LIMITS,
    CapacityLimit,
    CapacityUnit,
    training_instance_types,
    validate_capacity_limits,
)
from .errors import QuotaConfigError
from .lending import LendingParties, LentOverTime, UnitUse
from .queue import (
    MAX_SHARES_PER_QUEUE,
    JobStateTimeLimitAction,
    QuotaAllocation,
    check_queue_priority,
    check_share_set,
    queue_subject,
    validate_time_limit_actions,
)
from .report import allocation_summary
from .share import (
    QuotaShareSpec,
    SharingStrategy,
    check_share_name,
    share_subject,
)
from .tags import validate_tags
from .tokens import is_unresolved

__all__ = [
    "MAX_CAPACITY_LIMITS",
    "MAX_SHARES_PER_QUEUE",
    "UNLIMITED_BORROW",
    "BorrowingRules",
    "CapacityLimit",
    "CapacityUnit",
    "JobStateTimeLimitAction",
    "LendingParties",
    "LentOverTime",
    "QuotaAllocation",
    "QuotaConfigError",
    "QuotaShareSpec",
    "ShareAgreement",
    "SharingStrategy",
    "UnitRules",
    "UnitUse",
    "allocation_summary",
    "borrow_allowance",
    "borrow_ceiling",
    "check_queue_priority",
    "check_share_name",
    "check_share_set",
    "is_unresolved",
    "queue_subject",
    "share_subject",
    "training_instance_types",
    "validate_agreement",
    "validate_capacity_limits",
    "validate_tags",
    "validate_time_limit_actions",
]
