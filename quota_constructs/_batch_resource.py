"""A Batch resource known by its ARN and name, created here or imported with ``from_…_arn``.

aws-cdk-lib's style for a kind of resource: an ``I…`` protocol; a construct that creates one
around its ``Cfn*`` child; ``from_…_arn`` imports; and both answering ``…_arn`` and ``…_name``.
The scheduling policy, the service environment, the job queue and the quota share follow it,
and read the two here, one way for every kind.
"""

from __future__ import annotations

from functools import cached_property
from typing import ClassVar

from aws_cdk import ArnFormat, Resource
from constructs import Construct

from ._construct_props import name_from_arn
from .model import is_unresolved


class BatchResource(Resource):
    """The ARN and the name of a Batch resource, which each kind publishes under its own names
    (``job_queue_arn``, ``job_queue_name``): shared so that a created resource and an import,
    of any kind, answer them alike."""

    _arn_resource_type: ClassVar[str]
    """The kind's resource type in its ARNs: ``arn:…:batch:<region>:<account>:<type>/<name>``."""

    @property
    def _resource_arn(self) -> str:
        raise NotImplementedError

    @property
    def _resource_name(self) -> str:
        raise NotImplementedError


class CreatedBatchResource(BatchResource):
    """A Batch resource created here: its ``Cfn*`` child is the ``Resource``."""

    def __init__(self, scope: Construct, id: str, *, physical_name: str | None) -> None:
        super().__init__(scope, id, physical_name=physical_name)
        self._given_name = physical_name

    def _cfn_arn(self) -> str:
        """The ARN attribute of the ``Cfn*`` child."""
        raise NotImplementedError

    def _arn_resource_name(self) -> str | None:
        """What follows ``<type>/`` in the ARN, for a reference from another environment; None
        when the resource was given no name (its name is then generated only if needed)."""
        # Read only when named: each read is a round trip to the jsii runtime.
        return self._physical_name if self._given_name is not None else None

    @cached_property
    def _resource_arn(self) -> str:
        # Through the CDK's machinery, so a reference from another environment gets the
        # (generated) physical name instead of a reference CloudFormation cannot resolve.
        return self._get_resource_arn_attribute(
            self._cfn_arn(),
            service="batch",
            resource=self._arn_resource_type,
            resource_name=self._arn_resource_name(),
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )

    @cached_property
    def _resource_name(self) -> str:
        if self._given_name is not None and not is_unresolved(self._given_name):
            return self._given_name
        # No Batch resource has a name attribute; the name is its ARN's last part.
        return self._get_resource_name_attribute(name_from_arn(self, self._cfn_arn()))


class ImportedBatchResource(BatchResource):
    """A Batch resource imported by its ARN (its caller has checked it); its name is ``name``
    when the caller knows it, else read from the ARN in the template."""

    def __init__(self, scope: Construct, id: str, *, arn: str, name: str | None) -> None:
        super().__init__(scope, id, environment_from_arn=arn)
        self._arn = arn
        self._name = name

    @property
    def _resource_arn(self) -> str:
        return self._arn

    @cached_property
    def _resource_name(self) -> str:
        return self._name if self._name is not None else name_from_arn(self, self._arn)
