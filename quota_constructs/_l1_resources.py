"""The CloudFormation resources under the library's L2 functions and roles.

cdk-nag reports on L1 resources (``AWS::Lambda::Function``, ``AWS::IAM::Policy``), so an
acknowledgment has to reach them; the custom-resource provider and the monitoring functions
find them the same way.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import IConstruct


def cfn_function(function: lambda_.Function) -> lambda_.CfnFunction:
    """The ``AWS::Lambda::Function`` of ``function``."""
    resource = function.node.default_child
    if not isinstance(resource, lambda_.CfnFunction):
        raise RuntimeError(f"{function.node.path} has no CfnFunction")
    return resource


# A cache only (no behaviour depends on it): see default_policy.
_DEFAULT_POLICIES: WeakKeyDictionary[iam.IRole, IConstruct] = WeakKeyDictionary()


def default_policy(role: iam.IRole) -> IConstruct:
    """The ``AWS::IAM::Policy`` of ``role``'s default policy; it exists once something was
    granted to the role.

    Remembered per role: a provider acknowledges several findings on the same policies, and
    each lookup is four round trips to the jsii runtime.
    """
    known = _DEFAULT_POLICIES.get(role)
    if known is not None:
        return known
    policy = role.node.try_find_child("DefaultPolicy")
    resource = policy.node.try_find_child("Resource") if policy is not None else None
    if resource is None:
        raise RuntimeError(f"{role.node.path} has no default policy yet")
    _DEFAULT_POLICIES[role] = resource
    return resource
