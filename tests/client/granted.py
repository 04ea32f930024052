"""The team's identity policy exactly as the library synthesizes it: ``grant_submit`` and
``grant_update_priority`` of a share of the fake's queue, on a role, read back from the
template, for the fake's IAM stand-in to evaluate the client's real requests against."""

from __future__ import annotations

from functools import cache
from typing import Any

from tests.runtime.fake_batch import ACCOUNT, REGION

PARTITION = "aws"


@cache
def team_policy(share: str, ceiling: int | None, *,
                queue: str = "gpu-prod") -> tuple[dict[str, Any], ...]:
    """The statements of the role granted submit and update-priority on ``share``."""
    from aws_cdk import App, Environment, Stack
    from aws_cdk import aws_iam as iam
    from aws_cdk.assertions import Template

    from quota_constructs import QuotaShare

    stack = Stack(App(), "Team", env=Environment(account=ACCOUNT, region=REGION))
    imported = QuotaShare.from_quota_share_arn(
        stack, "Share",
        f"arn:{PARTITION}:batch:{REGION}:{ACCOUNT}:job-queue/{queue}/quota-share/{share}",
    )
    role = iam.Role(stack, "Submitter", assumed_by=iam.AccountRootPrincipal())
    imported.grant_submit(role, max_priority=ceiling)
    imported.grant_update_priority(role, max_priority=ceiling)
    template = Template.from_stack(stack).to_json()
    (policy,) = [resource["Properties"]["PolicyDocument"]
                 for resource in template["Resources"].values()
                 if resource["Type"] == "AWS::IAM::Policy"]
    return tuple(_resolved(statement) for statement in policy["Statement"])


def _resolved(value: Any) -> Any:
    """The template's values as deployed: ``Fn::Join`` joined, ``AWS::Partition`` resolved;
    anything else CloudFormation would compute fails the test rather than pass unresolved."""
    if isinstance(value, list):
        return [_resolved(item) for item in value]
    if not isinstance(value, dict):
        return value
    if set(value) == {"Fn::Join"}:
        separator, parts = value["Fn::Join"]
        return str(separator).join(str(_resolved(part)) for part in parts)
    if set(value) == {"Ref"}:
        pseudo = {"AWS::Partition": PARTITION, "AWS::Region": REGION, "AWS::AccountId": ACCOUNT}
        if value["Ref"] in pseudo:
            return pseudo[value["Ref"]]
        raise AssertionError(f"unresolvable reference in a grant: {value}")
    if any(key.startswith("Fn::") for key in value):
        raise AssertionError(f"unresolvable intrinsic in a grant: {value}")
    return {key: _resolved(item) for key, item in value.items()}
