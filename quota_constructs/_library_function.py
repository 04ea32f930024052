"""How every Lambda function of the library is built: Python 3.14 on arm64, 256 MB, traced,
with the role and log group its construct made for it, and a stated reason for having no
dead-letter queue. The custom-resource provider and the monitoring both build theirs here, so
their functions cannot drift apart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from aws_cdk import Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from ._l1_resources import cfn_function
from .nag_acknowledgments import acknowledge

RUNTIME: Final = lambda_.Runtime.PYTHON_3_14
# The handlers only call boto3, but 256 MB roughly halves the cold-start import of boto3
# compared with 128 MB (Lambda allots CPU in proportion to memory); more would only cost.
MEMORY_MB: Final = 256


def library_function(
    scope: Construct,
    id: str,
    *,
    code: lambda_.Code,
    handler: str,
    timeout: Duration,
    role: iam.IRole,
    log_group: logs.ILogGroup,
    environment: Mapping[str, str],
    layers: Sequence[lambda_.ILayerVersion],
    description: str,
    no_dead_letter_queue: str,
    **options: Any,
) -> lambda_.Function:
    """One of the library's functions; ``options`` are further ``lambda_.Function`` properties
    (a VPC, asynchronous retries), ``no_dead_letter_queue`` says why it needs no dead-letter
    queue (cdk-nag ``Serverless-LambdaDLQ``)."""
    function = lambda_.Function(
        scope,
        id,
        code=code,
        handler=handler,
        runtime=RUNTIME,
        architecture=lambda_.Architecture.ARM_64,
        memory_size=MEMORY_MB,
        timeout=timeout,
        role=role,
        log_group=log_group,
        tracing=lambda_.Tracing.ACTIVE,
        environment=dict(environment),
        layers=list(layers) or None,
        description=description,
        **options,
    )
    acknowledge(cfn_function(function), "Serverless-LambdaDLQ", no_dead_letter_queue)
    return function
