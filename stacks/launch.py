"""Make ``python app.py`` behave like ``cdk synth``.

The CDK CLI hands the app its context (cdk.json plus ``-c`` flags) and an output directory
through the environment. Run directly, the app would otherwise synthesize into a temporary
directory without cdk.json's feature flags, producing a different template than the CLI.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quota_constructs import deployments

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CLI_MARKERS = deployments.CLI_MARKERS


def app_settings(argv: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any]:
    """Keyword arguments for ``App``: empty under the CLI, cdk.json's context plus ``-c``
    flags and ``cdk.out`` otherwise (the library's :func:`quota_constructs.deployments.app_settings`
    for this repository's cdk.json)."""
    return deployments.app_settings(argv, environ, cdk_json=PROJECT_ROOT / "cdk.json")


def clear_previous_assembly(settings: Mapping[str, Any]) -> None:
    """Remove what an earlier direct run left in ``cdk.out``, so that after ``-c env=prod`` it
    holds prod's templates only (the CLI, which owns the directory otherwise, is not involved)."""
    outdir = settings.get("outdir")
    if outdir is not None:
        shutil.rmtree(outdir, ignore_errors=True)


parse_context_flags = deployments.parse_context_flags
