"""Which CloudFormation stack a ``preview`` judges the deployment of.

The custom resource recognises its own shares by markers that hash the deploying stack's id
(:func:`~quota_constructs.runtime.ownership.owner_marker`, and the stack marker in each share's
lifecycle record), so preview needs that id to tell the stack's own shares from other stacks'
on the same queue. It finds it, in this order:

1. ``--stack-id`` (the stack's ARN), as given;
2. otherwise the stack's *name*: ``--stack NAME``; else, for a synthesized template, the
   ``stackName`` the cloud assembly's ``manifest.json`` beside it records for that template
   (or the artifact's id, which is the stack's name when the manifest gives none), else the
   template's file name (``NAME.template.json``); for a declaration, its ``stack_name``;
   and asks CloudFormation's ``DescribeStacks`` for the id (the standard boto3 configuration,
   ``AWS_ENDPOINT_URL_CLOUDFORMATION`` included).

Where it truly cannot tell — no name to ask with, ``DescribeStacks`` denied or failing, or no
stack of that name in the queue's region and account (not created yet, or not visible to these
credentials, or named otherwise) — it says why, and ``preview`` reports the changes whose verdict
depends on it as "cannot tell" (its own exit status), never as refused.

One call at most: ``DescribeStacks(StackName=NAME)``, read-only (``cloudformation:DescribeStacks``
on the stack; without it, pass ``--stack-id``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quota_constructs.runtime.retry import ClientTimeouts

from .queue_reader import region_of

TEMPLATE_SUFFIX = ".template.json"
MANIFEST = "manifest.json"
STACK_ARTIFACT = "aws:cloudformation:stack"
DENIED_CODES = frozenset({"AccessDenied", "AccessDeniedException", "UnauthorizedOperation"})
ID_HINT = ("pass --stack-id with the deploying stack's ARN, or --stack NAME (--new-stack for a "
           "stack not created yet)")
NOT_CREATED_ID = "quota-constructs-preview:stack-not-created-yet"
"""The id preview judges a new stack's deployment with: no stack has it."""


@dataclass(frozen=True)
class DeployingStack:
    """The deploying stack as far as preview could find it."""

    stack_id: str | None = None
    name: str | None = None
    found_by: str = ""
    """How the id (or the name) was found, for the reader of the result."""
    unknown: str = ""
    """Why preview cannot tell the stack's own shares from others' ("" when the id is known)."""
    new: bool = False
    """The stack is not created yet (``--new-stack``): none of the live shares is its own, and
    ``stack_id`` is one no stack has, so that no owner marker matches."""

    @property
    def known(self) -> bool:
        return self.stack_id is not None

    @classmethod
    def not_created(cls, name: str | None) -> DeployingStack:
        return cls(NOT_CREATED_ID, name, "--new-stack: not created yet", new=True)

    @classmethod
    def given(cls, stack_id: str) -> DeployingStack:
        return cls(stack_id, _name_in(stack_id), "--stack-id")

    @classmethod
    def not_found(cls, why: str, name: str | None = None, found_by: str = "") -> DeployingStack:
        return cls(None, name, found_by, f"{why}; {ID_HINT}")

    def to_json(self) -> dict[str, Any]:
        return {"id": None if self.new else self.stack_id, "name": self.name,
                "new": self.new, "found_by": self.found_by or None,
                "cannot_tell_why": self.unknown or None}


def _name_in(stack_id: str) -> str | None:
    # arn:aws:cloudformation:<region>:<account>:stack/<name>/<uuid>
    parts = stack_id.split(":", 5)
    if len(parts) == 6 and parts[5].startswith("stack/"):
        return parts[5].split("/")[1] or None
    return None


def stack_name_of_template(path: Path) -> tuple[str, str] | None:
    """The stack name a synthesized template belongs to, and where it was read: the cloud
    assembly's manifest beside it, else the file's name; None when neither says."""
    manifest = path.parent / MANIFEST
    try:
        artifacts = json.loads(manifest.read_text(encoding="utf-8")).get("artifacts") or {}
    except (OSError, ValueError, AttributeError):
        artifacts = {}
    for artifact_id, artifact in artifacts.items() if isinstance(artifacts, Mapping) else ():
        if not isinstance(artifact, Mapping) or artifact.get("type") != STACK_ARTIFACT:
            continue
        properties = artifact.get("properties") or {}
        if properties.get("templateFile") == path.name:
            # The CDK writes stackName only when it differs from the artifact's id.
            name = properties.get("stackName") or artifact_id
            return str(name), f"{manifest}"
    if path.name.endswith(TEMPLATE_SUFFIX) and len(path.name) > len(TEMPLATE_SUFFIX):
        return path.name[: -len(TEMPLATE_SUFFIX)], f"the template's file name {path.name}"
    return None


def deploying_stack(
    stack_id: str | None, name: str | None, name_from: str, *,
    missing: str = "no stack id or name was given", profile: str | None = None,
    region: str | None = None, new: bool = False,
) -> DeployingStack:
    """The stack ``stack_id`` names, else (``new``) a stack not created yet, else the one
    called ``name`` (told by ``name_from``) as DescribeStacks reports it, else none
    (``missing`` says why)."""
    if stack_id is not None:
        return DeployingStack.given(stack_id)
    if new:
        return DeployingStack.not_created(name)
    if name is not None:
        return find_stack(name, name_from, profile=profile, region=region)
    return DeployingStack.not_found(missing)


def find_stack(name: str, found_by: str, *, client: Any = None, profile: str | None = None,
               region: str | None = None) -> DeployingStack:
    """The stack called ``name`` (found by ``found_by``) as DescribeStacks reports it."""
    from botocore.exceptions import BotoCoreError, ClientError

    where = f"stack name {name!r} ({found_by})"
    try:
        client = client or connect(profile=profile, region=region)
        stacks = client.describe_stacks(StackName=name).get("Stacks") or []
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code", ""))
        message = str(error.response.get("Error", {}).get("Message", ""))
        if code in DENIED_CODES:
            return DeployingStack.not_found(
                f"CloudFormation DescribeStacks is denied to these credentials ({code}), so "
                f"the id of {where} is unknown", name, found_by)
        if code == "ValidationError" and "does not exist" in message:
            region_name = getattr(getattr(client, "meta", None), "region_name", None)
            return DeployingStack.not_found(
                f"CloudFormation has no {where} in region {region_name}: either the stack is "
                "not created yet (then none of the queue's shares is its own) or it is not "
                "visible to these credentials, or is named otherwise", name, found_by)
        return DeployingStack.not_found(
            f"CloudFormation DescribeStacks of {where} failed ({code}: {message})", name,
            found_by)
    except BotoCoreError as error:
        return DeployingStack.not_found(
            f"CloudFormation DescribeStacks of {where} failed ({error})", name, found_by)
    found = [stack for stack in stacks if isinstance(stack, Mapping) and stack.get("StackId")]
    if not found:
        return DeployingStack.not_found(f"CloudFormation reports no stack for {where}", name,
                                        found_by)
    return DeployingStack(str(found[0]["StackId"]), name, f"DescribeStacks of {where}")


def connect(*, profile: str | None = None, region: str | None = None) -> Any:
    """A CloudFormation client with the standard boto3 configuration (as the Batch reader's:
    profile, region, ``AWS_ENDPOINT_URL_CLOUDFORMATION``), a few standard retries."""
    import boto3
    from botocore.config import Config

    timeouts = ClientTimeouts()
    config = Config(connect_timeout=timeouts.connect, read_timeout=timeouts.read,
                    retries={"mode": "standard", "total_max_attempts": 3},
                    user_agent_extra="quota-constructs-cli")
    session = boto3.Session(profile_name=profile, region_name=region_of(region))
    return session.client("cloudformation", config=config)
