"""Snapshots of every stack the app builds, plus cdk-nag and cfn-lint over all of them.

Update deliberately with ``python3 dev.py test --snapshot-update`` after reviewing the diff.
"""

from __future__ import annotations

import json

import pytest
from aws_cdk import App, Stack, Tags
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs, lint
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from stacks.environments import ENVIRONMENTS
from stacks.wiring import add_stacks

from .conftest import normalized_template, project_context

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


CLOUDFORMATION_CUSTOM_RESOURCE_LIMIT_SECONDS = 3600


def test_tags_of_the_app_reach_every_share_of_every_stack_within_the_hour() -> None:
    # What a platform's tag policy would do to this repository's app: tag everything.
    app = App(context=project_context())
    stacks = add_stacks(app)
    Tags.of(app).add("cost-center", "ml-42")
    shares = {
        (stack.stack_name, logical_id): resource
        for stack in stacks
        for logical_id, resource in Template.from_stack(stack).to_json()["Resources"].items()
        if resource["Type"] in ("Custom::BatchQuotaShare", "AWS::Batch::QuotaShare")
    }
    assert {stack for stack, _ in shares} == set(STACK_NAMES) - {"QuotaPlatformExample"}
    for (stack_name, logical_id), resource in shares.items():
        properties = resource["Properties"]
        assert properties["Tags"]["cost-center"] == "ml-42", (stack_name, logical_id)
        if resource["Type"] == "Custom::BatchQuotaShare":
            assert 0 < int(properties["ServiceTimeout"]) < (
                CLOUDFORMATION_CUSTOM_RESOURCE_LIMIT_SECONDS
            ), (stack_name, logical_id)
