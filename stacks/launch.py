"""Make ``python app.py`` behave like ``cdk synth``.

The CDK CLI hands the app its context (cdk.json plus ``-c`` flags) and an output directory
through the environment. Run directly, the app would otherwise synthesize into a temporary
directory without cdk.json's feature flags, producing a different template than the CLI.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CLI_MARKERS = ("CDK_OUTDIR", "CDK_CONTEXT_JSON")


def app_settings(argv: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any]:
    """Keyword arguments for ``App``: empty under the CLI, cdk.json's context plus ``-c``
    flags and ``cdk.out`` otherwise."""
    if any(marker in environ for marker in CLI_MARKERS):
        return {}
    context = dict(json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"])
    context.update(parse_context_flags(argv))
    return {"context": context, "outdir": str(PROJECT_ROOT / "cdk.out")}


def clear_previous_assembly(settings: Mapping[str, Any]) -> None:
    """Remove what an earlier direct run left in ``cdk.out``, so that after ``-c env=prod`` it
    holds prod's templates only (the CLI, which owns the directory otherwise, is not involved)."""
    outdir = settings.get("outdir")
    if outdir is not None:
        shutil.rmtree(outdir, ignore_errors=True)


def parse_context_flags(argv: Sequence[str]) -> dict[str, str]:
    """``-c key=value`` / ``--context key=value`` pairs, as the CDK CLI accepts them."""
    flags: dict[str, str] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-c", "--context"):
            if not args:
                raise SystemExit(f"error: {arg} needs key=value")
            pair = args.pop(0)
        elif arg.startswith("--context="):
            pair = arg.removeprefix("--context=")
        else:
            raise SystemExit(f"error: unexpected argument {arg!r}; use -c key=value")
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"error: context {pair!r} must be key=value")
        flags[key] = value
    return flags
