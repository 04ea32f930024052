"""Which instance types a SageMaker ``CreateTrainingJob`` request asks for, and the check that
each is one the share can run.

A job needing an instance type its share has no limit for is accepted by AWS Batch and then
waits in RUNNABLE forever, so the client refuses it before any call. The request shape is
botocore's SageMaker ``CreateTrainingJob``: ``ResourceConfig.InstanceType`` (one homogeneous
cluster), ``ResourceConfig.InstanceGroups[].InstanceType`` (a heterogeneous cluster, every
group started) and ``ResourceConfig.InstancePreferences[].InstanceType`` (SageMaker picks one).
Assumption (AWS Batch documents no quota accounting for preferences): every type a request
names must be one the share can run, preferences included, since any of them may be chosen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..model.errors import QuotaConfigError

LISTS = ("InstanceGroups", "InstancePreferences")
"""The ``ResourceConfig`` lists whose items each name an ``InstanceType``."""


def requested_instance_types(
    request: Mapping[str, Any] | str, *, subject: str
) -> list[tuple[str, str]]:
    """Every ``(field, instance type)`` the request names, in request order."""
    parsed: object = request
    if isinstance(request, str):
        try:
            parsed = json.loads(request)
        except ValueError:
            parsed = None
    if not isinstance(parsed, Mapping):
        raise QuotaConfigError(
            subject, "training_job_request", _short(request),
            "a SageMaker CreateTrainingJob request: a mapping, or its JSON",
        )
    config = parsed.get("ResourceConfig")
    if not isinstance(config, Mapping):
        return []
    found: list[tuple[str, str]] = []
    if isinstance(config.get("InstanceType"), str):
        found.append(("ResourceConfig.InstanceType", config["InstanceType"]))
    for name in LISTS:
        items = config.get(name)
        if not isinstance(items, Sequence) or isinstance(items, str):
            continue
        for index, item in enumerate(items):
            if isinstance(item, Mapping) and isinstance(item.get("InstanceType"), str):
                found.append((f"ResourceConfig.{name}[{index}].InstanceType",
                              item["InstanceType"]))
    return found


def check_instance_types(
    request: Mapping[str, Any] | str, runnable: Sequence[str], *, subject: str
) -> None:
    """Raise :class:`QuotaConfigError` unless every instance type the request names is one of
    ``runnable`` (the types the share has a limit for), and it names at least one."""
    allowed = (
        f"an instance type the share can run: {', '.join(runnable)} (a job needing any other "
        "type waits in RUNNABLE forever)"
    )
    asked = requested_instance_types(request, subject=subject)
    if not asked:
        raise QuotaConfigError(
            subject, "training_job_request.ResourceConfig.InstanceType", None, allowed
        )
    for field, instance_type in asked:
        if instance_type not in runnable:
            raise QuotaConfigError(subject, f"training_job_request.{field}", instance_type,
                                   allowed)


def _short(value: object) -> object:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."
