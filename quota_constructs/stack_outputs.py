"""Stack outputs with names a team can rely on.

A CloudFormation output's key is its logical id. The CDK derives one from the construct path
plus a hash, which changes when the tree is refactored and means nothing to a reader, so every
output here gets a documented key instead: the construct's path inside its stack with each
segment reduced to letters and digits and capitalised (``TrainingQueue/JobQueue`` ->
``TrainingQueueJobQueue``), followed by what it holds (``Name``, ``Arn``, ...). The same path
always gives the same key; :func:`output_key` computes it.
"""

from __future__ import annotations

import re
from typing import Final, cast

from aws_cdk import CfnOutput, Stack
from constructs import Construct, IConstruct

from .model.deployed_names import DeployedName, OutputRef, PrincipalNames
from .model.tokens import is_unresolved

_NOT_ALPHANUMERIC: Final = re.compile(r"[^A-Za-z0-9]")
_MAX_LOGICAL_ID: Final = 255


def key_part(text: str) -> str:
    """``text`` as part of an output key: ``-``/``_``-separated words capitalised and joined
    (``llm-research`` -> ``LlmResearch``), other characters dropped."""
    words = re.split(r"[-_\s./:]+", text)
    return "".join(word[:1].upper() + word[1:] for word in (_NOT_ALPHANUMERIC.sub("", w)
                                                           for w in words) if word)


def output_key(construct: IConstruct, suffix: str) -> str:
    """The documented key of ``construct``'s output ``suffix`` (see the module's docstring)."""
    stack = Stack.of(construct)
    relative = construct.node.path[len(stack.node.path):].strip("/")
    key = "".join(key_part(segment) for segment in relative.split("/") if segment) + suffix
    if not key[:1].isalpha():
        key = "Output" + key
    return key[:_MAX_LOGICAL_ID]


def add_output(
    construct: IConstruct, suffix: str, value: str, description: str
) -> OutputRef:
    """An output of ``construct`` under its documented key; adding it again returns the one
    already there. An import that is not a construct class of its own (``Role.from_role_arn``
    gives an interface proxy) gets its output beside it, on its stack, under the same key."""
    stack = Stack.of(construct)
    key = output_key(construct, suffix)
    scope: Construct = construct if isinstance(construct, Construct) else stack
    child_id = f"{suffix}Output" if scope is construct else f"{key}Output"
    if scope.node.try_find_child(child_id) is None:
        output = CfnOutput(scope, child_id, value=value, description=description)
        output.override_logical_id(key)
    return OutputRef(stack=stack.stack_name, output_key=key)


def deployed_name(value: str, output: OutputRef) -> DeployedName:
    """``value`` itself when the declaration fixes it, otherwise the output that holds it."""
    if isinstance(value, str) and not is_unresolved(value):
        return DeployedName(value=value, output=output)
    return DeployedName(output=output)


def principal_names(grantee: object) -> PrincipalNames:
    """What a grantee is called once deployed. A role's ARN also becomes an output of the
    role's own stack (``<path>Arn``), so a team can read it even when CloudFormation names
    the role."""
    for kind in ("role", "user", "group"):
        arn = getattr(grantee, f"{kind}_arn", None)
        if not isinstance(arn, str):
            continue
        name = getattr(grantee, f"{kind}_name", None)
        if not isinstance(name, str) or is_unresolved(name):
            # A role created with role_name=...: its attribute is a reference, the name given
            # is the resource's physical name.
            name = getattr(grantee, "_physical_name", None)
        literal_name = name if isinstance(name, str) and not is_unresolved(name) else None
        output = (
            # Created and imported principals alike are constructs of the tree (the import
            # as an interface proxy, hence the cast).
            add_output(cast(IConstruct, grantee), "Arn", arn,
                       f"ARN of the {kind} granted a quota share")
            if hasattr(grantee, "node") else None
        )
        arn_name = deployed_name(arn, output) if output else DeployedName(
            value=None if is_unresolved(arn) else arn
        )
        return PrincipalNames(kind=kind, name=DeployedName(value=literal_name), arn=arn_name)
    return PrincipalNames(kind="principal", name=DeployedName(), arn=DeployedName())
