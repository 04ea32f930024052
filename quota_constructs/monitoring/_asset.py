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
from pathlib import Path
from typing import Final

from .._runtime_asset import stage_lambda_code

DECLARATION_FILE: Final = "quota_monitor_declaration.json"
"""Where the declaration lies, relative to the function's code root."""


@functools.cache
def monitoring_asset_directory(declaration_json: str) -> str:
    """A directory holding the runtime and ``declaration_json`` (created once per declaration
    and process, removed at exit): monitors of the same shares share one asset."""
    target = Path(tempfile.mkdtemp(prefix="quota-constructs-monitoring-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    # Bytes, not text: no platform newline translation may reach the hash.
    stage_lambda_code(target, extra_files={DECLARATION_FILE: declaration_json.encode("utf-8")})
    return str(target)
