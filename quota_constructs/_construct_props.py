"""Checks of construct props that are not quota rules (switches, Batch names and ARNs), and how
messages name a construct.

The quota rules themselves live in :mod:`quota_constructs.model`; these helpers only make the
constructs' own props fail with the same kind of :class:`QuotaConfigError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from aws_cdk import ArnFormat, Stack
from constructs import Construct, IConstruct

from .model import (
    CapacityLimit,
    QuotaConfigError,
    check_share_name,
    is_unresolved,
    validate_capacity_limits,
)
from .wire.share_arn import QuotaShareArn

CONSTRUCT_PATH = "<construct path>"
"""Stands for a construct's path in a message until the message is raised or shown.

Reading a path is a round trip to the jsii runtime; paid on every construct it would make the
library markedly slower to synthesize than raw ``Cfn*`` resources, so only an error or a
warning pays it (see :func:`errors_name_path` and :func:`with_path`).
"""

PathSource = IConstruct | Callable[[], str]

_BATCH_ARN = re.compile(
    r"arn:(?P<partition>[a-z-]+):batch:(?P<region>[a-z0-9-]+):(?P<account>[0-9]{12}):"
    r"(?P<resource>[a-z-]+)/(?P<name>.+)"
)


def check_flag(value: object, *, subject: str, field: str) -> bool:
    """A real bool: ``"false"`` or ``0`` would otherwise read as a decision the user never made."""
    if not isinstance(value, bool):
        raise QuotaConfigError(subject, field, value, "True or False")
    return value


def check_batch_name(name: str | None, *, subject: str, field: str) -> None:
    """AWS Batch names its scheduling policies, service environments, job queues and quota
    shares under one rule (1–128 letters, digits, ``-`` and ``_``), which the model owns."""
    if name is not None:
        check_share_name(name, subject=subject, field=field)


def label(name: str | None) -> str:
    """What messages call a resource: its physical name when known, else its construct path."""
    return name if name is not None and not is_unresolved(name) else CONSTRUCT_PATH


def with_path(text: str, where: PathSource) -> str:
    """``text`` with the construct path in place of :data:`CONSTRUCT_PATH`."""
    if CONSTRUCT_PATH not in text:
        return text
    path = where() if callable(where) else where.node.path
    return text.replace(CONSTRUCT_PATH, path)


@contextmanager
def errors_name_path(where: PathSource) -> Iterator[None]:
    """Re-raise a :class:`QuotaConfigError` whose subject stands for a construct path with the
    actual path of ``where`` (a construct, or a function giving the path of one not yet built).
    """
    try:
        yield
    except QuotaConfigError as error:
        if CONSTRUCT_PATH not in error.subject:
            raise
        raise QuotaConfigError(
            with_path(error.subject, where), error.field, error.value, error.allowed
        ) from None


def child_path(scope: Construct, id: str) -> str:
    """The path a child ``id`` of ``scope`` will have, for errors raised before it exists."""
    return f"{scope.node.path}/{id}" if scope.node.path else id


def batch_arn_name(arn: str, *, resource_type: str, subject: str, field: str) -> str | None:
    """The resource name in a literal AWS Batch ARN of ``resource_type``; None for a token.

    A malformed literal ARN fails here, at synth time, instead of as an IAM or
    CloudFormation error at deploy time.
    """
    if is_unresolved(arn):
        return None
    match = _BATCH_ARN.fullmatch(arn) if isinstance(arn, str) else None
    if match is None or match["resource"] != resource_type or "/" in match["name"]:
        raise QuotaConfigError(
            subject, field, arn,
            f"arn:<partition>:batch:<region>:<account>:{resource_type}/<name>",
        )
    return match["name"]


def arn_environment(arn: str) -> tuple[str, str] | None:
    """``(account, region)`` of a literal AWS Batch ARN; None for a token or another ARN."""
    if is_unresolved(arn) or not isinstance(arn, str):
        return None
    match = _BATCH_ARN.fullmatch(arn)
    return None if match is None else (match["account"], match["region"])


def parse_quota_share_arn(arn: str, *, subject: str, field: str) -> tuple[str, str] | None:
    """``(job queue ARN, share name)`` of a literal quota share ARN; None for a token."""
    if is_unresolved(arn):
        return None
    literal = _BATCH_ARN.fullmatch(arn) if isinstance(arn, str) else None
    parsed = QuotaShareArn.split(arn) if literal is not None else None
    if parsed is None:
        raise QuotaConfigError(
            subject, field, arn,
            "arn:<partition>:batch:<region>:<account>:job-queue/<queue>/quota-share/<share>",
        )
    check_share_name(parsed.share_name, subject=subject, field=f"{field} (quota share name)")
    return parsed.job_queue_arn, parsed.share_name


def name_from_arn(scope: Construct, arn: str) -> str:
    """The name in a ``<type>/<name>`` Batch ARN, as a CloudFormation expression for a token."""
    return Stack.of(scope).split_arn(arn, ArnFormat.SLASH_RESOURCE_NAME).resource_name or ""


def check_import(
    scope: Construct,
    id: str,
    arn: str,
    *,
    resource_type: str,
    field: str,
    subject_of: Callable[[str], str],
    capacity_limits: Sequence[CapacityLimit] | None,
    limits_subject_of: Callable[[str], str],
) -> tuple[str | None, tuple[CapacityLimit, ...] | None]:
    """The name in an imported resource's ARN and its validated capacity limits, checked before
    the construct exists (``Resource`` would otherwise parse the ARN with an error that names
    neither the resource nor the field). ``subject_of`` turns a name or path into the subject
    of a message."""
    with errors_name_path(lambda: child_path(scope, id)):
        name = batch_arn_name(
            arn, resource_type=resource_type, subject=subject_of(CONSTRUCT_PATH), field=field
        )
        limits = (
            None
            if capacity_limits is None
            else validate_capacity_limits(capacity_limits, subject=limits_subject_of(label(name)))
        )
    return name, limits
