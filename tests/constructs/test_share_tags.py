"""Quota shares are taggable the CDK way in both provisioning modes."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from quota_constructs import (
    CapacityLimit,
    QuotaManagedTrainingQueue,
    QuotaShare,
    ShareLifecycle,
    ShareProvisioning,
    TrainingJobQueue,
)
from quota_constructs.model import QuotaConfigError

from .support import ENV, G5, QUEUE_ARN, logical_id, spec

CFN = ShareProvisioning.CLOUDFORMATION
CUSTOM = ShareProvisioning.CUSTOM_RESOURCE


def share_tags(share: QuotaShare) -> Any:
    template = Template.from_stack(cdk.Stack.of(share)).to_json()
    return template["Resources"][logical_id(share)]["Properties"].get("Tags")


def imported_share(mode: ShareProvisioning, **options: Any) -> QuotaShare:
    stack = cdk.Stack(cdk.App(), "Team", env=ENV)
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", QUEUE_ARN)
    return queue.add_quota_share("Share", spec=spec("vision", **options), provisioning=mode)


@pytest.mark.parametrize("mode", [CUSTOM, CFN])
def test_tags_of_the_stack_reach_the_share_in_both_modes(mode: ShareProvisioning) -> None:
    share = imported_share(mode, tags={"team": "vision"})
    cdk.Tags.of(cdk.Stack.of(share)).add("cost-center", "ml-42")
    assert share_tags(share) == {"cost-center": "ml-42", "team": "vision"}


@pytest.mark.parametrize("mode", [CUSTOM, CFN])
def test_tags_of_win_over_a_spec_tag_of_the_same_key(mode: ShareProvisioning) -> None:
    share = imported_share(mode, tags={"environment": "spec", "team": "vision"})
    cdk.Tags.of(cdk.Stack.of(share)).add("environment", "prod")
    assert share_tags(share) == {"environment": "prod", "team": "vision"}


@pytest.mark.parametrize("mode", [CUSTOM, CFN])
def test_a_lower_priority_tags_of_lets_the_spec_tag_win(mode: ShareProvisioning) -> None:
    share = imported_share(mode, tags={"environment": "spec"})
    cdk.Tags.of(cdk.Stack.of(share)).add("environment", "prod", priority=10)
    assert share_tags(share) == {"environment": "spec"}


def test_a_share_without_tags_renders_none() -> None:
    assert share_tags(imported_share(CUSTOM)) is None


def test_tags_can_be_aimed_at_the_custom_resource_type_and_removed() -> None:
    share = imported_share(CUSTOM, tags={"team": "vision"})
    stack = cdk.Stack.of(share)
    cdk.Tags.of(stack).add("only-shares", "yes", include_resource_types=["Custom::BatchQuotaShare"])
    cdk.Tags.of(stack).add("not-shares", "no", exclude_resource_types=["Custom::BatchQuotaShare"])
    cdk.Tags.of(share).remove("team")
    assert share_tags(share) == {"only-shares": "yes"}


def test_the_l3_passes_stack_tags_to_every_share() -> None:
    stack = cdk.Stack(cdk.App(), "Env", env=ENV)
    cdk.Tags.of(stack).add("environment", "prod")
    queue = QuotaManagedTrainingQueue(
        stack, "Queue", capacity_limits=[CapacityLimit(G5, 2)],
        shares=[spec("A", tags={"team": "a"}), spec("B")],
    )
    assert [share_tags(share) for share in queue.shares] == [
        {"environment": "prod", "team": "a"}, {"environment": "prod"}
    ]


@pytest.mark.parametrize(("mode", "limit"), [(CUSTOM, 48), (CFN, 50)])
def test_too_many_tags_with_tags_of_fail_the_synth_naming_the_share(
    mode: ShareProvisioning, limit: int
) -> None:
    fitting = imported_share(mode, tags={f"spec{i}": "v" for i in range(limit - 1)})
    cdk.Tags.of(cdk.Stack.of(fitting)).add("environment", "prod")
    assert len(share_tags(fitting)) == limit
    share = imported_share(mode, tags={f"spec{i}": "v" for i in range(limit - 1)})
    stack = cdk.Stack.of(share)
    cdk.Tags.of(stack).add("environment", "prod")
    cdk.Tags.of(stack).add("one-too-many", "x")
    with pytest.raises(RuntimeError) as caught:
        Template.from_stack(stack)
    message = str(caught.value)
    assert f"quota share 'vision': tags got '{limit + 1} tags'" in message
    assert f"at most {limit}" in message


def test_the_monitors_drift_tag_counts_and_the_error_says_so() -> None:
    """A monitored custom-resource share carries the monitor's deployed-config tag: 48 tags of
    the user's own plus that one no longer fit, and the message names the tag that tipped it."""
    stack = cdk.Stack(cdk.App(), "Monitored", env=ENV)
    queue = QuotaManagedTrainingQueue(
        stack, "Queue", capacity_limits=[CapacityLimit(G5, 2)],
        shares=[spec("vision", tags={f"spec{i}": "v" for i in range(48)})],
    )
    queue.add_monitoring()
    with pytest.raises(RuntimeError) as caught:
        Template.from_stack(stack)
    message = str(caught.value)
    assert "quota share 'vision': tags got '49 tags'" in message
    assert "quota-constructs:deployed-config" in message and "QuotaShareMonitoring" in message


def adopted_share(tags: dict[str, str], *, adopt_existing: bool = True) -> QuotaShare:
    stack = cdk.Stack(cdk.App(), "Team", env=ENV)
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", QUEUE_ARN)
    return queue.add_quota_share(
        "Share", spec=spec("vision", tags=tags),
        lifecycle=ShareLifecycle(adopt_existing=adopt_existing))


def test_adopt_existing_leaves_room_for_the_adoption_record_47_declared_tags() -> None:
    # Issue 30, item 8: an adopted share carries three tags of the library's (owner marker,
    # lifecycle record, adoption record), so 47 of its own fit in AWS's 50 and 48 do not.
    assert len(share_tags(adopted_share({f"spec{i}": "v" for i in range(47)}))) == 47
    with pytest.raises(QuotaConfigError) as caught:
        adopted_share({f"spec{i}": "v" for i in range(48)})
    message = str(caught.value)
    assert "\n" not in message
    assert "quota share 'vision': tags got '48 tags'" in message
    assert ("at most 47 with ShareProvisioning.CUSTOM_RESOURCE and ShareLifecycle(adopt_existing"
            "=True), which keeps 3 of the 50 tags AWS allows per share for its own "
            "(quota-constructs:adopted, quota-constructs:lifecycle, quota-constructs:owner)"
            ) in message
    assert len(share_tags(adopted_share({f"spec{i}": "v" for i in range(48)},
                                        adopt_existing=False))) == 48


def test_tags_of_count_against_an_adopted_shares_budget_at_synth() -> None:
    share = adopted_share({f"spec{i}": "v" for i in range(47)})
    cdk.Tags.of(cdk.Stack.of(share)).add("environment", "prod")
    with pytest.raises(RuntimeError) as caught:
        Template.from_stack(cdk.Stack.of(share))
    assert "tags got '48 tags'" in str(caught.value) and "at most 47" in str(caught.value)


def test_the_queue_judges_each_share_by_its_own_lifecycle() -> None:
    stack = cdk.Stack(cdk.App(), "Env", env=ENV)
    tags = {f"spec{i}": "v" for i in range(48)}
    with pytest.raises(QuotaConfigError, match="quota share 'B': tags got '48 tags'"):
        QuotaManagedTrainingQueue(
            stack, "Queue", capacity_limits=[CapacityLimit(G5, 2)],
            shares=[spec("A", tags=tags), spec("B", tags=tags)],
            lifecycle_by_share={"B": ShareLifecycle(adopt_existing=True)},
        )
