"""The allocation agreement's machine-readable twin (``cdk.out/agreements/<stack>.json``).

Rendered from the same :class:`QueueAgreement` objects as the Markdown, so the two agree; read
by the team client (``ShareClient.from_agreement``) and by any tool. Versioned: a field's
meaning never changes within a version.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from .agreement_report import QueueAgreement, queue_names_of, queue_warnings, submission_terms
from .agreement_team import (
    alerts_json,
    borrows_from_json,
    execution_roles_json,
    instance_types,
    lends_to_json,
    owner_endpoints,
    place_json,
)
from .deployed_names import DeployedName, PrincipalNames
from .submission import share_tags

AGREEMENT_FORMAT: Final = "quota-constructs.allocation-agreement"
AGREEMENT_VERSION: Final = 1


def allocation_agreement_json(*, title: str, queues: Sequence[QueueAgreement]) -> str:
    """The whole document for one deployment, as indented JSON ending with a newline."""
    document = {
        "format": AGREEMENT_FORMAT,
        "version": AGREEMENT_VERSION,
        "stack": title,
        "queues": [_queue(queue) for queue in queues],
    }
    return json.dumps(document, indent=2, sort_keys=False) + "\n"


def _location(queue: QueueAgreement) -> dict[str, Any]:
    names = queue_names_of(queue)
    return {
        "name": names.name.value,
        "name_output": _output(names.name),
        "arn": names.arn.value,
        "arn_output": _output(names.arn),
        # null when set at deployment: then the ARN (arn_output) holds both.
        **place_json(queue.place),
    }


def _queue(queue: QueueAgreement) -> dict[str, Any]:
    names = queue_names_of(queue)
    allocation = queue.allocation
    return {
        "construct_path": names.path,
        "queue": _location(queue),
        "environment": (
            None if allocation is None
            else {limit.capacity_unit: limit.max_capacity
                  for limit in allocation.environment_limits}
        ),
        "shares": [_share(queue, spec.name) for spec in queue.shares],
        "other_shares": list(queue.other_shares),
        "warnings": list(queue_warnings(queue)),
    }


def _share(queue: QueueAgreement, name: str) -> dict[str, Any]:
    spec = next(spec for spec in queue.shares if spec.name == name)
    agreement = spec.agreement
    owner = agreement.owner if agreement is not None else None
    terms = submission_terms(queue, spec)
    allocation = queue.allocation
    return {
        "name": spec.name,
        # Repeated from the queue's entry, so one share's record stands on its own.
        "queue": _location(queue),
        "owner": agreement.owner if agreement else None,
        "purpose": agreement.purpose if agreement else None,
        "strategy": spec.strategy.value,
        "borrow_limit_percent": spec.borrow_limit_percent,
        "in_share_preemption": spec.in_share_preemption,
        "enabled": spec.enabled,
        "capacity_limits": {
            limit.capacity_unit: limit.max_capacity for limit in spec.capacity_limits
        },
        "can_reach": None if allocation is None else dict(allocation.reach(spec.name)),
        "instance_types": instance_types(spec),
        "lends_to": lends_to_json(allocation, spec),
        "borrows_from": borrows_from_json(allocation, spec),
        "recoverable": agreement.recoverable if agreement else None,
        "interruption_budget": agreement.interruption_budget if agreement else None,
        "budget_enforced": queue.budget_enforced,
        "owner_topic": (
            queue.owner_topics[agreement.owner].as_json()
            if agreement is not None and agreement.owner in queue.owner_topics else None
        ),
        "alerts": alerts_json(
            owner, monitored=queue.monitored,
            topic=queue.owner_topics.get(owner) if owner is not None else None,
            endpoints=owner_endpoints(queue.owner_endpoints, owner),
            topic_given=owner in queue.topics_given,
        ),
        "execution_roles": execution_roles_json(queue.grants.get(spec.name, ())),
        "grants": [
            {
                "principal": grant.principal,
                "permission": grant.permission,
                "max_priority": grant.max_priority,
                **_principal(getattr(grant, "names", None)),
            }
            for grant in queue.grants.get(spec.name, ())
        ],
        "submission": {
            "quota_share_name": spec.name,
            "tags": dict(queue.submission_tags.get(spec.name) or share_tags(spec.name)),
            "max_priority": terms.max_priority,
            "submit_service_job": terms.request(),
        },
    }


def _principal(names: PrincipalNames | None) -> dict[str, Any]:
    if names is None:
        return {"kind": None, "role_name": None, "role_arn": None, "arn_output": None}
    return {
        "kind": names.kind,
        "role_name": names.name.value if names.kind == "role" else None,
        "role_arn": names.arn.value if names.kind == "role" else None,
        "arn_output": _output(names.arn),
    }


def _output(name: DeployedName) -> dict[str, str] | None:
    return name.output.as_json() if name.output is not None else None
