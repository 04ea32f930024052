"""What a team lead needs from the agreement to act on it alone: where the share lives (region,
account, queue ARN or the stack output holding them), which instance types it can run, which
execution roles the team may pass to SageMaker, and where the owner's alerts are delivered.

Rendered for both the Markdown and the JSON twin from the same inputs, so the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .deployed_names import DeployedName, PrincipalNames, QueueNames
from .queue import QuotaAllocation
from .share import QuotaShareSpec


@dataclass(frozen=True)
class AlertEndpoint:
    """One place an owner's notifications are delivered.

    ``protocol`` is SNS's (``email``, ``https``, ``sqs``, ``lambda``, ``sms``, ...) or
    ``chatbot`` for an AWS Chatbot channel; ``endpoint`` the address or ARN when the
    declaration fixes it; ``described`` what to call it otherwise (the resource that receives
    them, e.g. "`AlertsQueue` of stack `Ops`").
    """

    protocol: str
    endpoint: str | None
    described: str

    def describe(self) -> str:
        return f"{self.protocol} `{self.endpoint}`" if self.endpoint else (
            f"{self.protocol} {self.described}"
        )

    def as_json(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "endpoint": self.endpoint,
                "described": self.describe()}


@dataclass(frozen=True)
class QueuePlace:
    """The queue's account and region: literal when the declaration fixes them (a pinned
    stack, an imported ARN), else None (the queue's ARN, an output, holds them)."""

    account: str | None = None
    region: str | None = None


def partition_of(region: str) -> str:
    """The AWS partition a region belongs to (by its documented name prefix)."""
    for prefix, partition in (("cn-", "aws-cn"), ("us-gov-", "aws-us-gov"),
                              ("us-iso-", "aws-iso"), ("us-isob-", "aws-iso-b"),
                              ("eu-isoe-", "aws-iso-e"), ("us-isof-", "aws-iso-f")):
        if region.startswith(prefix):
            return partition
    return "aws"


def literal_queue_arn(name: str | None, place: QueuePlace) -> str | None:
    """The queue's ARN when its name, account and region are all fixed by the declaration
    (CloudFormation would only have filled in the partition, which the region gives)."""
    if name is None or place.account is None or place.region is None:
        return None
    return (f"arn:{partition_of(place.region)}:batch:{place.region}:{place.account}:"
            f"job-queue/{name}")


def instance_types(spec: QuotaShareSpec) -> list[str]:
    """The instance types the share can run: those it has a limit for, in declaration order.
    A job needing any other type is never scheduled in the share."""
    return [limit.capacity_unit for limit in spec.capacity_limits if limit.max_capacity]


def where_markdown(names: QueueNames, place: QueuePlace) -> str:
    """The queue's name, account, region and ARN in one sentence; where a value is set only at
    deployment, the stack output that holds it (the ARN names the account and region)."""
    queue = names.name.describe("job queue `{}`", "job queue named at deployment ({})",
                                "job queue (name unknown in this app)")
    arn_text = names.arn.describe("ARN `{}`", "ARN: {}", "ARN unknown in this app")
    if place.account and place.region:
        return f"{queue} in account `{place.account}`, region `{place.region}`; {arn_text}."
    known = [f"account `{place.account}`"] if place.account else []
    known += [f"region `{place.region}`"] if place.region else []
    fixed = f" ({', '.join(known)})" if known else ""
    return (f"{queue}, in the account and region its stack deploys to{fixed}; {arn_text} "
            "(the ARN names both).")


def place_json(place: QueuePlace) -> dict[str, str | None]:
    return {"account": place.account, "region": place.region}


def execution_roles(grants: Sequence[object]) -> list[tuple[str, PrincipalNames]]:
    """Each execution role a submit grant lets its grantee pass to SageMaker, once, with the
    grantee's label: ``(granted_to, role names)``."""
    found: list[tuple[str, PrincipalNames]] = []
    seen: set[tuple[str | None, str | None]] = set()
    for grant in grants:
        if getattr(grant, "permission", None) != "submit":
            continue
        for role in getattr(grant, "execution_roles", ()) or ():
            key = (role.arn.value, role.arn.output.output_key if role.arn.output else None)
            if key in seen:
                continue
            seen.add(key)
            found.append((str(getattr(grant, "principal", "")), role))
    return found


def role_text(role: PrincipalNames) -> str:
    """A role as a team passes it (``RoleArn``): its ARN, or the stack output that holds it."""
    if role.arn.value is not None:
        return f"`{role.arn.value}`"
    if role.arn.output is not None:
        named = f" (`{role.name.value}`)" if role.name.value else ""
        return f"the role whose ARN is {role.arn.output.describe()}{named}"
    return f"`{role.name.value}`" if role.name.value else "a role unknown in this app"


def execution_roles_markdown(grants: Sequence[object]) -> str:
    roles = execution_roles(grants)
    if not roles:
        return ("none granted in this app (`grant_submit(..., execution_roles=[...])`): a "
                "training request's `RoleArn` can be passed only if IAM allows it elsewhere.")
    return "; ".join(role_text(role) for _, role in roles) + (
        " (as the request's `RoleArn`; `iam:PassRole` to SageMaker only)."
    )


def execution_roles_json(grants: Sequence[object]) -> list[dict[str, Any]]:
    return [
        {
            "granted_to": granted_to,
            "role_name": role.name.value,
            "role_arn": role.arn.value,
            "arn_output": role.arn.output.as_json() if role.arn.output is not None else None,
        }
        for granted_to, role in execution_roles(grants)
    ]


def alerts_markdown(
    owner: str | None,
    *,
    monitored: bool,
    topic: DeployedName | None,
    endpoints: Sequence[AlertEndpoint],
    topic_given: bool,
) -> str:
    """Where the owner's alerts (preemptions, starvation, drift, blocked jobs) actually go."""
    if not monitored:
        return ("none: the queue is not monitored in this app (`QuotaShareMonitoring`), so "
                "nobody is told about preemptions or starvation.")
    if owner is None:
        return ("none: the share has no owner (`ShareAgreement(owner=...)`), so its alerts "
                "go nowhere.")
    where = f"SNS topic {topic.describe()}" if topic is not None else "the owner's SNS topic"
    if endpoints:
        delivered = "; ".join(endpoint.describe() for endpoint in endpoints)
        extra = (" (and whatever is subscribed to the topic outside this app)"
                 if topic_given else "")
        return f"{where}, delivered to {delivered}{extra}."
    if topic_given:
        return (f"{where}, given to the monitoring: its subscriptions are made outside this app, "
                "so they are not listed here.")
    return (f"{where}, but nobody is subscribed in this app, so nobody receives them: "
            f"`monitoring.subscribe_owner({owner!r}, ...)`.")


def alerts_json(
    owner: str | None,
    *,
    monitored: bool,
    topic: DeployedName | None,
    endpoints: Sequence[AlertEndpoint],
    topic_given: bool,
) -> dict[str, Any]:
    return {
        "monitored": monitored,
        "topic": topic.as_json() if topic is not None and owner is not None else None,
        "subscriptions": [endpoint.as_json() for endpoint in endpoints],
        "subscribed_outside_app": topic_given,
    }


def lends_to_json(allocation: QuotaAllocation | None, spec: QuotaShareSpec) -> (
    dict[str, list[str]] | None
):
    """By instance type, the shares that can borrow this share's idle capacity (the Markdown's
    "Lends to"); None when the environment's capacity is unknown."""
    if allocation is None:
        return None
    return {rule.unit: list(rule.borrowers) for rule in allocation.rules.units_of(spec.name)}


def borrows_from_json(allocation: QuotaAllocation | None, spec: QuotaShareSpec) -> (
    dict[str, dict[str, Any]] | None
):
    """By instance type it can borrow: the lending shares, how many instances of capacity no
    share owns it may use (``unowned``, the Markdown's "capacity no share owns") and how many
    it can hold above its own limit (``up_to``), as the Markdown's "Borrows from" says; None
    when the environment's capacity is unknown."""
    if allocation is None:
        return None
    found: dict[str, dict[str, Any]] = {}
    for rule in allocation.rules.units_of(spec.name):
        if not rule.borrows:
            continue
        found[rule.unit] = {
            "lenders": list(rule.lenders),
            "unowned": rule.borrows_unowned,
            "up_to": rule.borrowable,
        }
    return found


def owner_endpoints(
    endpoints: Mapping[str, Sequence[AlertEndpoint]], owner: str | None
) -> tuple[AlertEndpoint, ...]:
    return tuple(endpoints.get(owner, ())) if owner is not None else ()
