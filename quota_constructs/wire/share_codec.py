"""The quota share as AWS sees it: CloudFormation properties and Batch API requests.

One rendering serves both provisioning modes: the custom resource receives exactly the
properties ``AWS::Batch::QuotaShare`` takes, so moving between the modes changes no value.
CloudFormation hands custom-resource properties over with every number and boolean turned into
a string; :func:`spec_from_properties` parses them back strictly (``"1"`` is 1, ``"1.0"`` and
``"yes"`` are errors) and re-runs every model rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from quota_constructs.model.capacity import CapacityLimit
from quota_constructs.model.errors import QuotaConfigError
from quota_constructs.model.share import QuotaShareSpec, share_subject

from .share_config import DISABLED, ENABLED, Casing, ShareConfig, borrow_limit_percent

_INTEGER = re.compile(r"-?[0-9]+")


def resource_properties(spec: QuotaShareSpec, job_queue: str) -> dict[str, Any]:
    """The ``AWS::Batch::QuotaShare`` properties (PascalCase) for ``spec`` on ``job_queue``."""
    props: dict[str, Any] = {
        "QuotaShareName": spec.name,
        "JobQueue": job_queue,
        **ShareConfig.declared(spec).fields(Casing.CLOUDFORMATION),
    }
    if spec.tags:
        props["Tags"] = dict(spec.tags)
    return props


def api_configuration(spec: QuotaShareSpec) -> dict[str, Any]:
    """The configuration fields shared by CreateQuotaShare and UpdateQuotaShare (camelCase)."""
    return ShareConfig.declared(spec).fields(Casing.API)


def spec_from_properties(props: Mapping[str, Any]) -> tuple[QuotaShareSpec, str]:
    """Parse ``AWS::Batch::QuotaShare``-shaped properties back into ``(spec, job_queue)``."""
    name = props.get("QuotaShareName")
    subject = share_subject(name)
    job_queue = props.get("JobQueue")
    if not isinstance(job_queue, str) or not job_queue:
        raise QuotaConfigError(subject, "JobQueue", job_queue, "a job queue ARN or name")
    raw_limits = props.get("CapacityLimits")
    if not isinstance(raw_limits, list):
        raise QuotaConfigError(subject, "CapacityLimits", raw_limits, "a list of capacity limits")
    limits = []
    for index, raw in enumerate(raw_limits):
        if not isinstance(raw, Mapping):
            raise QuotaConfigError(
                subject, f"CapacityLimits[{index}]", raw, "{CapacityUnit, MaxCapacity}"
            )
        limits.append(
            CapacityLimit(
                raw.get("CapacityUnit"),  # type: ignore[arg-type]
                parse_int(
                    raw.get("MaxCapacity"),
                    subject=subject,
                    field=f"CapacityLimits[{index}].MaxCapacity",
                ),
            )
        )
    sharing = _mapping(
        props.get("ResourceSharingConfiguration"), subject, "ResourceSharingConfiguration"
    )
    strategy = sharing.get("Strategy")
    borrow_raw = sharing.get("BorrowLimit")
    borrow: int | None = None
    if borrow_raw is not None:
        borrow = borrow_limit_percent(str(strategy), parse_int(
            borrow_raw, subject=subject, field="ResourceSharingConfiguration.BorrowLimit"
        ))
    preemption = _mapping(
        props.get("PreemptionConfiguration", {}), subject, "PreemptionConfiguration"
    )
    spec = QuotaShareSpec(
        name=name,  # type: ignore[arg-type]
        capacity_limits=limits,
        strategy=strategy,  # type: ignore[arg-type]
        borrow_limit_percent=borrow,
        in_share_preemption=_parse_switch(
            preemption.get("InSharePreemption", DISABLED),
            subject,
            "PreemptionConfiguration.InSharePreemption",
        ),
        enabled=_parse_switch(props.get("State", ENABLED), subject, "State"),
        tags=_mapping(props.get("Tags", {}), subject, "Tags"),
    )
    return spec, job_queue


def parse_int(value: Any, *, subject: str, field: str) -> int:
    """An integer given as an int or as CloudFormation's decimal string (``"-1"``, ``"200"``)."""
    if isinstance(value, bool):
        raise QuotaConfigError(subject, field, value, "an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    raise QuotaConfigError(subject, field, value, 'an integer (such as 1 or "1")')


def parse_bool(value: Any, *, subject: str, field: str) -> bool:
    """A boolean given as a bool or as CloudFormation's ``"true"`` / ``"false"``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise QuotaConfigError(subject, field, value, "true or false")


def _parse_switch(value: Any, subject: str, field: str) -> bool:
    if value in (ENABLED, DISABLED):
        return bool(value == ENABLED)
    raise QuotaConfigError(subject, field, value, f"{ENABLED} or {DISABLED}")


def _mapping(value: Any, subject: str, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise QuotaConfigError(subject, field, value, "an object")
    return value
