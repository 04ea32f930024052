"""The monitoring Lambdas' code: the runtime modules plus the declaration of the watched shares.

The declaration travels as a file inside the asset rather than in the environment, because
Lambda limits all environment variables of a function together to 4 KB, which the declaration
of 20 shares with their agreements exceeds. The code is staged exactly as the custom
resource's (:func:`quota_constructs._runtime_asset.stage_lambda_code`): the runtime modules and
the AWS Batch service model of the botocore installed at synth time, so the functions never
depend on the Lambda runtime's botocore knowing the quota-share API. Only relative paths and
file contents reach the asset hash: the same declaration gives the same asset on every machine.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Final

import jsii
from aws_cdk import CfnResource, IStableStringProducer, Lazy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_assets as s3_assets
from constructs import Construct

from .._runtime_asset import stage_lambda_code

DECLARATION_FILE: Final = "quota_monitor_declaration.json"
"""Where the declaration lies, relative to the function's code root."""


def monitoring_asset_directory(declaration_json: str) -> str:
    """A directory holding the runtime and ``declaration_json`` (created once per declaration
    and process, removed at exit): monitors of the same shares share one asset."""
    return asset_directory_with(((DECLARATION_FILE, declaration_json),))


@functools.cache
def asset_directory_with(files: tuple[tuple[str, str], ...]) -> str:
    """A directory holding the runtime and ``files`` (relative path, text), created once per
    content and process and removed at exit."""
    target = Path(tempfile.mkdtemp(prefix="quota-constructs-monitoring-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    # Bytes, not text: no platform newline translation may reach the hash.
    stage_lambda_code(target, extra_files={path: text.encode("utf-8") for path, text in files})
    return str(target)


class LateMonitoringCode:
    """The functions' code, whose asset is created only once the monitored shares are final.

    The functions are created with the monitoring construct (so users can reach them at
    once); the asset holding the declaration is added when the app is synthesized
    (:meth:`stage`, child ``Code`` of the monitoring construct), and the functions' code
    location resolves to it then.
    """

    def __init__(self, scope: Construct) -> None:
        self._scope = scope
        self._asset: s3_assets.Asset | None = None
        self._functions: list[lambda_.Function] = []
        self.code: lambda_.Code = _AssetLocation(self)

    @property
    def staged(self) -> bool:
        return self._asset is not None

    def used_by(self, function: lambda_.Function) -> None:
        """Record a function running this code, for the asset metadata tools read (SAM)."""
        self._functions.append(function)

    def stage(self, directory: str) -> None:
        self._asset = s3_assets.Asset(self._scope, "Code", path=directory)
        for function in self._functions:
            # As Code.from_asset does: "aws:asset:path" on the function (when the app enables
            # asset metadata), so local tools find the code.
            resource = function.node.default_child
            if isinstance(resource, CfnResource):
                self._asset.add_resource_metadata(resource, "Code")

    def asset(self) -> s3_assets.Asset:
        if self._asset is None:
            raise RuntimeError(
                f"the monitoring code of {self._scope.node.path} was not staged: the monitored "
                "shares are resolved when the app is synthesized"
            )
        return self._asset


@jsii.implements(IStableStringProducer)
class _Located:
    def __init__(self, code: LateMonitoringCode,
                 attribute: Callable[[s3_assets.Asset], str]) -> None:
        self._code = code
        self._attribute = attribute

    def produce(self) -> str:
        return self._attribute(self._code.asset())


class _AssetLocation(lambda_.Code):
    """Code at the S3 location of the asset staged later (its key holds the content hash, so
    a changed declaration always deploys new code)."""

    def __init__(self, code: LateMonitoringCode) -> None:
        super().__init__()
        self._code = code

    def bind(self, scope: Construct) -> lambda_.CodeConfig:
        return lambda_.CodeConfig(s3_location=s3.Location(
            bucket_name=Lazy.string(_Located(self._code, lambda a: a.s3_bucket_name)),
            object_key=Lazy.string(_Located(self._code, lambda a: a.s3_object_key)),
        ))
