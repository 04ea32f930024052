"""Provider-framework entry points for the ``Custom::BatchQuotaShare`` resource.

``on_event`` takes the decisive step of a Create, Update or Delete (after its guards) and
returns at once; ``is_complete`` is then polled by the framework until the share is VALID or
gone, so every wait is bounded by the provider's total timeout rather than by sleeping here.
Whatever either raises reaches CloudFormation as the failure reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quota_constructs.model import QuotaConfigError
from quota_constructs.wire.share_arn import QuotaShareArn

from .batch_gateway import BatchConnection, BatchGateway
from .clock import WALL_CLOCK, Clock
from .deletion import ShareDeleter
from .errors import QuotaShareLifecycleError
from .provisioning import ShareProvisioner
from .share_request import ShareEvent
from .structured_log import log
from .wait_budget import STARTED_AT_KEY, WaitBudget, started_now


def on_event(event: Mapping[str, Any], context: Any, connection: BatchConnection | None = None,
             clock: Clock = WALL_CLOCK) -> dict[str, Any]:
    """Lambda's entry point (``connection``: how to reach AWS Batch, ``clock``: the time the
    wait budget is measured by; the defaults in Lambda)."""
    return _run("on_event", event, _Invocation(_gateways(context, connection), clock), _on_event)


def is_complete(event: Mapping[str, Any], context: Any,
                connection: BatchConnection | None = None,
                clock: Clock = WALL_CLOCK) -> dict[str, Any]:
    return _run("is_complete", event, _Invocation(_gateways(context, connection), clock),
                _is_complete)


@dataclass(frozen=True)
class EntryPoints:
    """``on_event`` and ``is_complete`` over one connection to AWS Batch and one clock (what
    the Provider framework calls are the module's functions, over the default ones)."""

    connection: BatchConnection
    clock: Clock = WALL_CLOCK

    def on_event(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        return on_event(event, context, self.connection, self.clock)

    def is_complete(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        return is_complete(event, context, self.connection, self.clock)


Gateways = Callable[[], BatchGateway]
"""Opens a gateway for this invocation (its client, retry policy and time left)."""


@dataclass(frozen=True)
class _Invocation:
    """What one call of an entry point works with: its gateways and its clock."""

    gateways: Gateways
    clock: Clock


def _gateways(context: Any, connection: BatchConnection | None) -> Gateways:
    return lambda: BatchGateway.from_context(context, connection)


def _on_event(request: ShareEvent, invocation: _Invocation) -> dict[str, Any]:
    gateways = invocation.gateways
    if request.request_type == "Delete":
        deleter = _deleter(request, gateways)
        if deleter is not None:
            deleter.start()
        return {"PhysicalResourceId": request.physical_id, **started_now(invocation.clock)}
    declaration = request.declaration()
    provisioner = ShareProvisioner(gateways(), declaration)
    physical = request.physical
    if request.request_type == "Update" and physical is not None and physical.is_share(
        declaration.job_queue, declaration.name
    ):
        arn = provisioner.update_in_place(physical)
    else:
        # Create, or a rename / queue move: a new share; CloudFormation then deletes the old
        # physical id, which goes through the delete guard.
        arn = provisioner.create()
    return {"PhysicalResourceId": arn.arn, "Data": _data(arn), **started_now(invocation.clock)}


def _is_complete(request: ShareEvent, invocation: _Invocation) -> dict[str, Any]:
    gateways, clock = invocation.gateways, invocation.clock
    if request.request_type == "Delete":
        deleter = _deleter(request, gateways)
        if deleter is None or deleter.wait():
            return {"IsComplete": True}
        _fail_if_out_of_time(request, deleter.last_status, "deleting", clock())
        return {"IsComplete": False}
    physical = request.physical
    if physical is None:
        raise QuotaShareLifecycleError(
            f"is_complete received physical resource id {request.physical_id!r}, which is not "
            "a quota share ARN; on_event did not create a share"
        )
    provisioner = ShareProvisioner(gateways(), request.declaration())
    if not provisioner.wait(physical, may_be_unseen=_recent(request, clock())):
        _fail_if_out_of_time(request, provisioner.last_status, "settling", clock())
        return {"IsComplete": False}
    return {"IsComplete": True, "Data": _data(physical)}


UNSEEN_GRACE_SECONDS = 300
"""How long after ``on_event`` a share it created (or was told exists) may still be missing
from reads. AWS documents no read-after-write consistency for quota shares; this is the
library's stated assumption of how long "not seen yet" may last before it means "gone"."""


def _recent(request: ShareEvent, now: float) -> bool:
    try:
        started = float(request.event[STARTED_AT_KEY])
    except (KeyError, TypeError, ValueError):
        return False
    return now - started < UNSEEN_GRACE_SECONDS


def _fail_if_out_of_time(request: ShareEvent, status: str, doing: str, now: float) -> None:
    budget = WaitBudget.of(request.event)
    if budget is None or not budget.exhausted(now) or request.physical is None:
        return
    arn = request.physical
    raise QuotaShareLifecycleError(
        f"quota share {arn.share_name!r} on job queue {arn.job_queue_name!r} is still {status} "
        f"after {budget.elapsed(now)} s, close to the provider's total timeout of "
        f"{budget.total_seconds} s; AWS Batch has not finished {doing} it. Nothing more is "
        "changed: a create is undone by CloudFormation's rollback, an update is rolled back, "
        "and a delete can be retried once AWS Batch has finished."
    )


def _deleter(request: ShareEvent, gateways: Gateways) -> ShareDeleter | None:
    if request.physical is None:
        # A create that failed before a share existed leaves a non-ARN physical id.
        log("delete_without_share", physical_resource_id=request.physical_id)
        return None
    opt_ins = request.opt_ins()
    return ShareDeleter(
        gateways(),
        request.physical,
        owner=request.owner,
        terminate_active_jobs=opt_ins.terminate_active_jobs_on_delete,
        delete_adopted_share=opt_ins.delete_adopted_share_on_delete,
    )


def _data(arn: QuotaShareArn) -> dict[str, str]:
    return {"QuotaShareArn": arn.arn, "QuotaShareName": arn.share_name}


def _run(
    entry_point: str,
    event: Mapping[str, Any],
    invocation: _Invocation,
    step: Callable[[ShareEvent, _Invocation], dict[str, Any]],
) -> dict[str, Any]:
    properties = event.get("ResourceProperties")
    fields = {
        "entry_point": entry_point,
        "request_type": event.get("RequestType"),
        "logical_resource_id": event.get("LogicalResourceId"),
        "physical_resource_id": event.get("PhysicalResourceId"),
        "request_id": event.get("RequestId"),
        "quota_share_name": properties.get("QuotaShareName")
        if isinstance(properties, Mapping) else None,
    }
    log("request", **fields)
    try:
        result = step(ShareEvent.parse(event), invocation)
    except (QuotaShareLifecycleError, QuotaConfigError) as error:
        log("failed", **fields, reason=str(error))
        raise
    except Exception as error:
        log("failed", **fields, reason=repr(error))
        raise QuotaShareLifecycleError(
            f"unexpected {type(error).__name__} in {entry_point} for a {fields['request_type']} "
            f"of quota share {fields['quota_share_name']!r}: {error}"
        ) from error
    log("result", **fields, result=result)
    return result
