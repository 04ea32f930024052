#!/usr/bin/env python3
"""Synthesize the quota stacks: every deployment environment, or one with ``-c env=NAME``.

stdout belongs to the CDK CLI (``cdk synth`` prints the template there, ``cdk ls`` the stack
names), so everything this app has to say goes to stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import dev

# Before anything from the dependencies is imported: under the CDK CLI, python3 may not be the
# project's environment.
dev.use_project_environment()

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks, ServerlessChecks

from quota_constructs import allocation_summary, write_allocation_agreements
from quota_constructs.agreements import agreement_json_path
from quota_constructs.deployments import ENVIRONMENT_CONTEXT_KEY, UnknownEnvironmentError
from quota_constructs.nag_report import CountedNagPack, nag_summary
from stacks.environments import select_environments
from stacks.launch import app_settings, clear_previous_assembly
from stacks.wiring import add_stacks


def main() -> None:
    settings = app_settings(sys.argv[1:], os.environ)
    try:
        # Checked before cdk.out is cleared: a mistyped -c env=... leaves the last good one.
        select_environments(settings.get("context", {}).get(ENVIRONMENT_CONTEXT_KEY))
    except UnknownEnvironmentError as error:
        sys.exit(f"error: {error}")
    # Before the App exists: declaring the stacks already stages their assets into cdk.out.
    clear_previous_assembly(settings)
    app = App(**settings)
    try:
        stacks = add_stacks(app)
    except UnknownEnvironmentError as error:
        sys.exit(f"error: {error}")
    # Counted: a clean cdk-nag run prints nothing, so the summary says what it checked.
    packs = [CountedNagPack(AwsSolutionsChecks(app)), CountedNagPack(ServerlessChecks(app))]
    Validations.of(app).add_plugins(*packs)
    assembly = app.synth()
    agreements = write_allocation_agreements(app, assembly.directory)
    count = f"{len(stacks)} stack{'' if len(stacks) == 1 else 's'}"
    # Human output goes to stderr: stdout belongs to the CDK CLI (templates, stack lists).
    report = [
        f"synthesized {count} into {assembly.directory}",
        nag_summary(packs),
        *allocation_summary(app),
        *(f"allocation agreement: {_shown(path)} (and {agreement_json_path(path).name})"
          for path in agreements),
    ]
    print("\n".join(report), file=sys.stderr)


def _shown(path: Path) -> str:
    """Relative to the working directory when below it (cdk.out/agreements/...), else as is."""
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


if __name__ == "__main__":
    main()
