"""Snapshots of every stack the app builds, plus cdk-nag and cfn-lint over all of them.

Update deliberately with ``python3 dev.py test --snapshot-update`` after reviewing the diff.
"""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs, lint
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from stacks.environments import ENVIRONMENTS

from .conftest import normalized_template

STACK_NAMES = [env.stack_name for env in ENVIRONMENTS.values()] + [
    "QuotaReference",
    "QuotaPlatformExample",
    "QuotaTeamVisionExample",
]


@pytest.fixture
def json_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def test_app_builds_exactly_the_documented_stacks(all_stacks: dict[str, Stack]) -> None:
    assert sorted(all_stacks) == sorted(STACK_NAMES)


@pytest.mark.parametrize("stack_name", STACK_NAMES)
def test_template_matches_snapshot(
    all_stacks: dict[str, Stack], stack_name: str, json_snapshot: SnapshotAssertion
) -> None:
    assert normalized_template(all_stacks[stack_name]) == json_snapshot


@pytest.mark.parametrize("pack", [AwsSolutionsChecks, ServerlessChecks])
def test_cdk_nag_reports_no_unacknowledged_finding(
    the_app: App, pack: type[AwsSolutionsChecks] | type[ServerlessChecks]
) -> None:
    report = pack(the_app).validate_scope(the_app)
    findings = [
        f"{violation.rule_name} at {[r.construct_path for r in violation.violating_resources]}"
        for violation in report.violations
    ]
    assert report.success, "\n".join(findings)
    assert findings == []


@pytest.mark.parametrize("stack_name", STACK_NAMES)
def test_template_passes_cfn_lint(all_stacks: dict[str, Stack], stack_name: str) -> None:
    template = json.dumps(Template.from_stack(all_stacks[stack_name]).to_json())
    # W3005 (DependsOn already implied by a GetAtt) is how aws-cdk-lib wires every Lambda
    # function to its role's default policy; it is redundant, not wrong.
    matches = lint(template, config=ManualArgs(regions=["us-east-1"], ignore_checks=["W3005"]))
    assert [str(match) for match in matches] == []
