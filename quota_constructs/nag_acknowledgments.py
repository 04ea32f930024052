"""cdk-nag 3 acknowledgments that stay attached to the exact finding they answer.

cdk-nag 3 is a policy-validation plugin; a finding is acknowledged with
``Validations.of(node).acknowledge(Acknowledgment(id=<rule id>, reason=...))`` on the node it
reports. Wildcard IAM findings carry the resource in their id, so these helpers compute that name
the way cdk-nag does instead of acknowledging every IAM5 finding of a policy at once.
"""

from __future__ import annotations

import json
from typing import Any
from weakref import WeakKeyDictionary

import jsii
from aws_cdk import Acknowledgment, Stack, Validations
from aws_cdk import aws_iam as iam
from constructs import IConstruct, IValidation

# Caches only (no behaviour depends on them), held weakly: each Validations.of and Stack.of is
# a round trip to the jsii runtime; the provider acknowledges several findings on the same few
# resources.
_VALIDATIONS: WeakKeyDictionary[IConstruct, Validations] = WeakKeyDictionary()
_STACKS: WeakKeyDictionary[IConstruct, Stack] = WeakKeyDictionary()


def acknowledge(node: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge one cdk-nag rule (``AwsSolutions-L1``, ``Serverless-LambdaDLQ``) on ``node``."""
    validations = _VALIDATIONS.get(node)
    if validations is None:
        validations = _VALIDATIONS[node] = Validations.of(node)
    validations.acknowledge(Acknowledgment(id=rule_id, reason=reason))


def acknowledge_wildcard_resource(
    policy: IConstruct, resource: str, reason: str, *, same_stack: bool = False
) -> None:
    """Acknowledge ``AwsSolutions-IAM5`` for exactly one wildcard ``resource`` of ``policy``.

    ``same_stack=True`` promises that ``resource`` refers to nothing in another stack, so its
    name is final now and need not be worked out again during synthesis.
    """
    _WildcardResourceAcknowledgment(policy, resource, reason, recheck_at_synth=not same_stack)


def acknowledge_grant_wildcards(
    grantee: iam.IRole | iam.IUser | iam.IGroup, grant: iam.Grant, reason: str
) -> None:
    """Acknowledge each wildcard resource ``grant`` added to ``grantee``'s policy.

    For grants whose wildcards are inherent (jobs that exist only at run time, actions IAM
    cannot scope), acknowledged on the grantee's policy — which the caller, not this library,
    owns. ``grantee`` may be created in the app (``iam.Role``, ``iam.User``, ``iam.Group``) or
    imported (``iam.Role.from_role_arn``, ``iam.User.from_user_name``,
    ``iam.Group.from_group_name`` …): CDK gives created principals and imported groups a
    ``DefaultPolicy``, imported roles and users a policy of their own (``Policy…``), and the
    acknowledgment goes on whichever the grant was added to. A grant that added no policy (to an
    immutable role, ``mutable=False``) produces no cdk-nag finding, so there is nothing to
    acknowledge. A finding on a policy this function did not find still fails cdk-nag.
    """
    wildcards = [
        arn
        for statement in grant.principal_statements
        for arn in statement.resources
        if "*" in arn
    ]
    if not wildcards:
        return
    for policy in grantee_policies(grantee):
        for arn in wildcards:
            acknowledge_wildcard_resource(policy, arn, reason)


def grantee_policies(grantee: IConstruct) -> list[iam.CfnPolicy]:
    """The ``AWS::IAM::Policy`` resources CDK created for ``grantee``'s grants.

    A created role, user or group (and an imported group) holds them in its child
    ``DefaultPolicy``; an imported role or user in a child ``Policy`` (``Policy<unique id>``
    under the feature flag ``@aws-cdk/aws-iam:importedRoleStackSafeDefaultPolicyName``, or the
    name the import gave).
    """
    found: list[iam.CfnPolicy] = []
    for child in grantee.node.children:
        if isinstance(child, iam.Policy) and isinstance(
            child.node.default_child, iam.CfnPolicy
        ):
            found.append(child.node.default_child)
    return found


@jsii.implements(IValidation)
class _WildcardResourceAcknowledgment:
    """Acknowledge ``AwsSolutions-IAM5`` for one wildcard resource of one IAM policy.

    cdk-nag names such a finding after the resource as it appears in the template, e.g.
    ``AwsSolutions-IAM5[Resource::<Queue.JobQueueArn>/quota-share/*]``, so the acknowledgment must
    carry the same name. A reference to another stack only takes its final form
    (``Fn::ImportValue``) during synthesis; the acknowledgment is therefore made at once, for a
    tree checked without synthesis, and again when the tree is validated during synthesis.
    """

    def __init__(
        self, policy: IConstruct, resource: str, reason: str, *, recheck_at_synth: bool
    ) -> None:
        self._policy = policy
        self._resource = resource
        self._reason = reason
        self._acknowledged: set[str] = set()
        self._acknowledge()
        if recheck_at_synth:
            policy.node.add_validation(self)

    def validate(self) -> list[str]:
        self._acknowledge()
        return []

    def _acknowledge(self) -> None:
        stack = _STACKS.get(self._policy)
        if stack is None:
            stack = _STACKS[self._policy] = Stack.of(self._policy)
        name = nag_resource_name(stack.resolve(self._resource))
        if name not in self._acknowledged:
            self._acknowledged.add(name)
            acknowledge(self._policy, f"AwsSolutions-IAM5[Resource::{name}]", self._reason)


def nag_resource_name(value: Any) -> str:
    """Render a resolved CloudFormation value the way cdk-nag 3 names it in a finding.

    Mirrors cdk-nag's ``flattenCfnReference``: ``Ref`` becomes ``<Id>``, ``Fn::GetAtt``
    ``<Id.Attribute>``, ``Fn::Join`` is joined, ``${x}`` becomes ``<x>``, anything else is JSON.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value.replace("${", "<").replace("}", ">")
    if isinstance(value, dict):
        if "Fn::Join" in value:
            delimiter, items = value["Fn::Join"]
            return str(delimiter).join(nag_resource_name(item) for item in items)
        if "Fn::Sub" in value:
            return nag_resource_name(value["Fn::Sub"])
        if "Fn::GetAtt" in value:
            resource, attribute = value["Fn::GetAtt"]
            return f"<{nag_resource_name(resource)}.{nag_resource_name(attribute)}>"
        if "Fn::ImportValue" in value:
            return nag_resource_name(value["Fn::ImportValue"])
        if "Ref" in value:
            return f"<{nag_resource_name(value['Ref'])}>"
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


