#!/usr/bin/env python3
"""Synthesize the quota stacks: every deployment environment, or one with ``-c env=NAME``."""

from __future__ import annotations

import os
import sys

import dev

# Before anything from the dependencies is imported: under the CDK CLI, python3 may not be the
# project's environment.
dev.use_project_environment()

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks, ServerlessChecks

from quota_constructs import write_allocation_agreements
from stacks.environments import UnknownEnvironmentError
from stacks.launch import app_settings, clear_previous_assembly
from stacks.summary import queue_summaries
from stacks.wiring import add_stacks


def main() -> None:
    settings = app_settings(sys.argv[1:], os.environ)
    clear_previous_assembly(settings)
    app = App(**settings)
    try:
        stacks = add_stacks(app)
    except UnknownEnvironmentError as error:
        sys.exit(f"error: {error}")
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    assembly = app.synth()
    print(
        f"synthesized {len(stacks)} stacks into {assembly.directory} "
        "(cdk-nag AwsSolutions and Serverless: no unacknowledged findings)"
    )
    for line in queue_summaries(app):
        print(line)
    # Human output goes to stderr: stdout stays free for the CDK CLI and for tools.
    for path in write_allocation_agreements(app, assembly.directory):
        print(f"allocation agreement: {os.path.relpath(path)}", file=sys.stderr)


if __name__ == "__main__":
    main()
