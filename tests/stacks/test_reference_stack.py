"""The documented three-project example, as synthesized by the reference stack."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Match, Template

G5 = "ml.g5.xlarge"


@pytest.fixture(scope="module")
def template(all_stacks: dict[str, Stack]) -> Template:
    return Template.from_stack(all_stacks["QuotaReference"])


def share_properties(template: Template) -> dict[str, dict[str, Any]]:
    shares = template.find_resources("Custom::BatchQuotaShare")
    return {r["Properties"]["QuotaShareName"]: r["Properties"] for r in shares.values()}


def test_policy_is_a_fifo_quota_share_policy(template: Template) -> None:
    template.resource_count_is("AWS::Batch::SchedulingPolicy", 1)
    template.has_resource_properties(
        "AWS::Batch::SchedulingPolicy",
        {
            "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"},
            "FairsharePolicy": Match.absent(),
        },
    )


def test_environment_holds_three_g5_xlarge(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Batch::ServiceEnvironment",
        {
            "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
            "CapacityLimits": [{"CapacityUnit": G5, "MaxCapacity": 3}],
        },
    )


def test_queue_is_a_sagemaker_training_queue_on_that_environment(template: Template) -> None:
    template.has_resource_properties(
        "AWS::Batch::JobQueue",
        {
            "JobQueueType": "SAGEMAKER_TRAINING",
            "Priority": 1,
            "SchedulingPolicyArn": Match.any_value(),
            "ServiceEnvironmentOrder": [{"Order": 1, "ServiceEnvironment": Match.any_value()}],
        },
    )


def test_three_shares_configured_as_documented(template: Template) -> None:
    shares = share_properties(template)
    assert sorted(shares) == ["QS1", "QS2", "QS3"]
    for props in shares.values():
        assert props["CapacityLimits"] == [{"CapacityUnit": G5, "MaxCapacity": 1}]
        assert props["State"] == "ENABLED"
    assert shares["QS1"]["ResourceSharingConfiguration"] == {
        "Strategy": "LEND_AND_BORROW",
        "BorrowLimit": 200,
    }
    assert shares["QS1"]["PreemptionConfiguration"] == {"InSharePreemption": "ENABLED"}
    assert shares["QS2"]["ResourceSharingConfiguration"] == {"Strategy": "LEND"}
    assert shares["QS3"]["ResourceSharingConfiguration"] == {"Strategy": "RESERVE"}
    for name in ("QS2", "QS3"):
        assert shares[name]["PreemptionConfiguration"] == {"InSharePreemption": "DISABLED"}


def test_shares_are_guarded_by_default(template: Template) -> None:
    for props in share_properties(template).values():
        assert props["AdoptExisting"] is False
        assert props["AllowPreemptionOnShrink"] is False
        assert props["TerminateActiveJobsOnDelete"] is False
