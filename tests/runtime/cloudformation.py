"""CloudFormation and the CDK Provider framework, as far as the runtime can tell them apart.

``run_provider`` calls ``on_event`` and then ``is_complete`` until it completes (bounded), and
turns exceptions into FAILED responses exactly as ``custom_resources.Provider``'s framework
does (a failed Create answers with a marker physical id; the next poll sees the event merged
with ``on_event``'s result). ``StackResource`` plays CloudFormation around it: properties as
strings, cleanup deletes after replacements, and rollbacks with old and new properties swapped.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from quota_constructs.model import QuotaShareSpec
from quota_constructs.runtime import quota_share_handler
from quota_constructs.wire.share_codec import resource_properties

CREATE_FAILED_MARKER = "AWSCDK::CustomResourceProviderFramework::CREATE_FAILED"
SERVICE_TOKEN = "arn:aws:lambda:us-east-1:123456789012:function:QuotaShareProvider-framework"
STACK_ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/platform/0a1b2c3d-0000-4000-8000"


def stringify(value: Any) -> Any:
    """What CloudFormation does to custom-resource properties: numbers and booleans → strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, dict):
        return {key: stringify(item) for key, item in value.items()}
    if isinstance(value, list):
        return [stringify(item) for item in value]
    return value


def share_properties(
    spec: QuotaShareSpec,
    job_queue: str,
    *,
    adopt_existing: bool = False,
    allow_preemption_on_shrink: bool = False,
    terminate_active_jobs_on_delete: bool = False,
    allow_preemption_on_in_share_enable: bool = False,
    delete_adopted_share_on_delete: bool = False,
) -> dict[str, Any]:
    """The properties a ``Custom::BatchQuotaShare`` delivers, as CloudFormation delivers them.

    As ``ShareLifecycle.guard_properties`` renders them: the in-share opt-in and the opt-in to
    delete adopted shares only when set.
    """
    properties: dict[str, Any] = stringify({
        "ServiceToken": SERVICE_TOKEN,
        **resource_properties(spec, job_queue),
        "AdoptExisting": adopt_existing,
        "AllowPreemptionOnShrink": allow_preemption_on_shrink,
        "TerminateActiveJobsOnDelete": terminate_active_jobs_on_delete,
        **({"AllowPreemptionOnInShareEnable": True} if allow_preemption_on_in_share_enable
           else {}),
        **({"DeleteAdoptedShareOnDelete": True} if delete_adopted_share_on_delete else {}),
    })
    return properties


class Handler(Protocol):
    """The two entry points, in this process (the module) or elsewhere (another interpreter)."""

    def on_event(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]: ...

    def is_complete(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]: ...


@dataclass
class Outcome:
    """What the Provider framework would send back to CloudFormation."""

    status: str
    physical_id: str
    data: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    polls: int = 0
    rollback: Outcome | None = None
    cleanup: Outcome | None = None

    @property
    def ok(self) -> bool:
        return self.status == "SUCCESS"


def run_provider(
    event: dict[str, Any], max_polls: int = 25, handler: Handler | None = None
) -> Outcome:
    """One custom-resource request through on_event and bounded is_complete polling."""
    entry_points: Handler = handler or quota_share_handler
    request_type = event["RequestType"]
    if request_type == "Delete" and event.get("PhysicalResourceId") == CREATE_FAILED_MARKER:
        return Outcome("SUCCESS", CREATE_FAILED_MARKER)
    try:
        result = entry_points.on_event(copy.deepcopy(event), None) or {}
    except Exception as error:
        physical = event.get("PhysicalResourceId") or CREATE_FAILED_MARKER
        return Outcome("FAILED", physical, reason=str(error))
    physical = result.get("PhysicalResourceId") or (
        event["RequestId"] if request_type == "Create" else event["PhysicalResourceId"]
    )
    if request_type == "Delete" and physical != event["PhysicalResourceId"]:
        return Outcome("FAILED", event["PhysicalResourceId"], reason="physical id changed")
    merged = {**event, **result, "PhysicalResourceId": physical}
    for poll in range(1, max_polls + 1):
        try:
            answer = entry_points.is_complete(copy.deepcopy(merged), None)
        except Exception as error:
            return Outcome("FAILED", physical, reason=str(error), polls=poll)
        if answer["IsComplete"]:
            data = {**merged.get("Data", {}), **answer.get("Data", {})}
            return Outcome("SUCCESS", physical, data=data, polls=poll)
        assert not answer.get("Data"), "Data is not allowed while IsComplete is false"
    return Outcome("FAILED", physical, reason="Operation timed out", polls=max_polls)


def cfn_event(
    request_type: str,
    properties: dict[str, Any],
    *,
    old_properties: dict[str, Any] | None = None,
    physical_id: str | None = None,
    logical_id: str = "TeamShare",
    stack_id: str = STACK_ID,
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "RequestType": request_type,
        "ServiceToken": SERVICE_TOKEN,
        "ResponseURL": "https://cloudformation-custom-resource-response.example/presigned?X=1",
        "StackId": stack_id,
        "RequestId": str(uuid.uuid4()),
        "LogicalResourceId": logical_id,
        "ResourceType": "Custom::BatchQuotaShare",
        "ResourceProperties": properties,
    }
    if old_properties is not None:
        event["OldResourceProperties"] = old_properties
    if physical_id is not None:
        event["PhysicalResourceId"] = physical_id
    return event


@dataclass
class StackResource:
    """One ``Custom::BatchQuotaShare`` in a stack, driven as CloudFormation drives it."""

    logical_id: str = "TeamShare"
    stack_id: str = STACK_ID
    properties: dict[str, Any] | None = None
    physical_id: str | None = None
    max_polls: int = 25
    handler: Handler | None = None
    """None: the runtime imported in this process."""

    def send(self, request_type: str, properties: dict[str, Any], **kwargs: Any) -> Outcome:
        event = cfn_event(
            request_type, properties, logical_id=self.logical_id, stack_id=self.stack_id, **kwargs
        )
        return run_provider(event, self.max_polls, self.handler)

    def create(self, properties: dict[str, Any]) -> Outcome:
        outcome = self.send("Create", properties)
        if outcome.ok:
            self.properties, self.physical_id = properties, outcome.physical_id
        else:
            # Stack creation rolls back: CloudFormation deletes what the failed create reported.
            outcome.rollback = self.send("Delete", properties, physical_id=outcome.physical_id)
        return outcome

    def update(self, properties: dict[str, Any], *, later_failure: bool = False) -> Outcome:
        """Update; ``later_failure`` makes another resource fail afterwards, forcing rollback."""
        assert self.properties is not None and self.physical_id is not None
        old_properties, old_physical = self.properties, self.physical_id
        outcome = self.send(
            "Update", properties, old_properties=old_properties, physical_id=old_physical
        )
        if outcome.ok and not later_failure:
            if outcome.physical_id != old_physical:
                outcome.cleanup = self.send("Delete", old_properties, physical_id=old_physical)
            self.properties, self.physical_id = properties, outcome.physical_id
            return outcome
        # Rollback: the previous properties come back as an Update of what CloudFormation now
        # records (the physical id of the response, failed or not); a replacement made by the
        # failed update is deleted in the rollback's cleanup.
        current = outcome.physical_id
        rollback = self.send(
            "Update", old_properties, old_properties=properties, physical_id=current
        )
        outcome.rollback = rollback
        if rollback.ok:
            if rollback.physical_id != current:
                outcome.cleanup = self.send("Delete", properties, physical_id=current)
            self.properties, self.physical_id = old_properties, rollback.physical_id
        return outcome

    def delete(self) -> Outcome:
        assert self.properties is not None and self.physical_id is not None
        return self.send("Delete", self.properties, physical_id=self.physical_id)
