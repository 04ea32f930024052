"""One ledger per queue: every construct standing for one queue in an app checks its shares
together, and the modules depend on each other one way only."""

from __future__ import annotations

import ast
from pathlib import Path

import aws_cdk as cdk
import pytest

from quota_constructs import (
    CapacityLimit,
    QuotaConfigError,
    QuotaShare,
    QuotaShareSchedulingPolicy,
    ShareProvisioning,
    SharingStrategy,
    TrainingJobQueue,
    TrainingServiceEnvironment,
)

from .support import ENV, G5, QUEUE_ARN, assert_config_error, model_warnings, spec, warnings_of

CFN = ShareProvisioning.CLOUDFORMATION
PACKAGE = Path(__file__).resolve().parents[2] / "quota_constructs"


def two_team_stacks() -> tuple[cdk.Stack, cdk.Stack]:
    app = cdk.App()
    return cdk.Stack(app, "TeamA", env=ENV), cdk.Stack(app, "TeamB", env=ENV)


def test_two_imports_of_one_queue_share_their_shares() -> None:
    team_a, team_b = two_team_stacks()
    first = TrainingJobQueue.from_job_queue_arn(team_a, "Queue", QUEUE_ARN)
    second = TrainingJobQueue.from_job_queue_arn(team_b, "Queue", QUEUE_ARN)
    first.add_quota_share("Share", spec=spec("vision"), provisioning=CFN)
    QuotaShare(team_b, "Share", job_queue=second, spec=spec("speech"), provisioning=CFN)
    assert [s.name for s in first.quota_share_specs] == ["vision", "speech"]
    assert second.quota_share_specs == first.quota_share_specs


def test_a_duplicate_name_through_another_import_is_rejected() -> None:
    team_a, team_b = two_team_stacks()
    TrainingJobQueue.from_job_queue_arn(team_a, "Queue", QUEUE_ARN).add_quota_share(
        "Share", spec=spec("vision"), provisioning=CFN
    )
    second = TrainingJobQueue.from_job_queue_arn(team_b, "Queue", QUEUE_ARN)
    with pytest.raises(QuotaConfigError) as caught:
        second.add_quota_share("Share", spec=spec("vision"), provisioning=CFN)
    assert_config_error(
        caught.value, "quota share 'vision'", "name", "vision", "a name unique within the job queue"
    )
    assert second.node.try_find_child("Share") is None


def test_the_twenty_share_limit_counts_every_import() -> None:
    team_a, team_b = two_team_stacks()
    first = TrainingJobQueue.from_job_queue_arn(team_a, "Queue", QUEUE_ARN)
    for index in range(20):
        first.add_quota_share(f"S{index}", spec=spec(f"S{index}"), provisioning=CFN)
    second = TrainingJobQueue.from_job_queue_arn(team_b, "Queue", QUEUE_ARN)
    with pytest.raises(QuotaConfigError) as caught:
        second.add_quota_share("Late", spec=spec("Late"), provisioning=CFN)
    assert_config_error(
        caught.value, "job queue 'platform-queue'", "shares", "21 shares", "at most 20"
    )


def test_over_reservation_counts_shares_added_before_the_capacity_was_known() -> None:
    team_a, team_b = two_team_stacks()
    blind = TrainingJobQueue.from_job_queue_arn(team_a, "Queue", QUEUE_ARN)
    blind.add_quota_share(
        "Share", spec=spec("vision", SharingStrategy.RESERVE, count=2), provisioning=CFN
    )
    knowing = TrainingJobQueue.from_job_queue_attributes(
        team_b, "Queue", job_queue_arn=QUEUE_ARN, capacity_limits=[CapacityLimit(G5, 3)]
    )
    assert blind.capacity_limits == (CapacityLimit(G5, 3),)
    with pytest.raises(QuotaConfigError) as caught:
        knowing.add_quota_share(
            "Share", spec=spec("speech", SharingStrategy.RESERVE, count=2), provisioning=CFN
        )
    assert_config_error(
        caught.value, "quota share 'speech'", "capacity_limits[0].max_capacity", 2,
        "RESERVE shares together would hold vision=2 + speech=2 = 4",
    )


def test_an_import_that_knows_too_little_capacity_for_the_shares_fails_clearly() -> None:
    team_a, team_b = two_team_stacks()
    TrainingJobQueue.from_job_queue_arn(team_a, "Queue", QUEUE_ARN).add_quota_share(
        "Share", spec=spec("vision", SharingStrategy.RESERVE, count=2), provisioning=CFN
    )
    with pytest.raises(QuotaConfigError) as caught:
        TrainingJobQueue.from_job_queue_attributes(
            team_b, "Queue", job_queue_arn=QUEUE_ARN, capacity_limits=[CapacityLimit(G5, 1)]
        )
    assert caught.value.subject == "quota share 'vision'"
    assert team_b.node.try_find_child("Queue") is None


def test_two_imports_that_disagree_on_the_capacity_fail_naming_both() -> None:
    team_a, team_b = two_team_stacks()
    TrainingJobQueue.from_job_queue_attributes(
        team_a, "Queue", job_queue_arn=QUEUE_ARN, capacity_limits=[CapacityLimit(G5, 3)]
    )
    with pytest.raises(QuotaConfigError) as caught:
        TrainingJobQueue.from_job_queue_attributes(
            team_b, "Queue", job_queue_arn=QUEUE_ARN, capacity_limits=[CapacityLimit(G5, 4)]
        )
    assert_config_error(
        caught.value, "job queue 'platform-queue'", "capacity_limits", "ml.g5.xlarge=4",
        "ml.g5.xlarge=3, the capacity TeamA/Queue already gives this queue",
    )


def test_an_import_of_a_queue_created_in_the_app_shares_its_ledger() -> None:
    app = cdk.App()
    platform = cdk.Stack(app, "Platform", env=ENV)
    created = TrainingJobQueue(
        platform, "Queue",
        service_environment=TrainingServiceEnvironment(
            platform, "Environment", capacity_limits=[CapacityLimit(G5, 2)]
        ),
        scheduling_policy=QuotaShareSchedulingPolicy(platform, "Policy"),
        job_queue_name="platform-queue",
    )
    created.add_quota_share("Share", spec=spec("vision", count=2), provisioning=CFN)
    team = cdk.Stack(app, "Team", env=ENV)
    imported = TrainingJobQueue.from_job_queue_arn(team, "Queue", QUEUE_ARN)
    assert imported.capacity_limits == (CapacityLimit(G5, 2),)
    with pytest.raises(QuotaConfigError) as caught:
        imported.add_quota_share("Share", spec=spec("vision"), provisioning=CFN)
    assert caught.value.field == "name"


def test_a_second_queue_of_the_same_name_account_and_region_is_refused() -> None:
    app = cdk.App()

    def named_queue(stack_name: str) -> TrainingJobQueue:
        stack = cdk.Stack(app, stack_name, env=ENV)
        return TrainingJobQueue(
            stack, "Queue",
            service_environment=TrainingServiceEnvironment(
                stack, "Environment", capacity_limits=[CapacityLimit(G5, 2)]
            ),
            scheduling_policy=QuotaShareSchedulingPolicy(stack, "Policy"),
            job_queue_name="platform-queue",
        )

    named_queue("Blue")
    with pytest.raises(QuotaConfigError) as caught:
        named_queue("Green")
    assert_config_error(
        caught.value, "job queue 'platform-queue'", "job_queue_name", "platform-queue",
        "Blue/Queue already creates a job queue named 'platform-queue'",
    )
    green = app.node.try_find_child("Green")
    assert green is not None and green.node.try_find_child("Queue") is None


def test_queues_of_other_names_accounts_or_regions_keep_their_own_ledgers() -> None:
    team_a, team_b = two_team_stacks()
    first = TrainingJobQueue.from_job_queue_arn(team_a, "Queue", QUEUE_ARN)
    first.add_quota_share("Share", spec=spec("vision"), provisioning=CFN)
    for index, arn in enumerate((
        QUEUE_ARN.replace("platform-queue", "other-queue"),
        QUEUE_ARN.replace("eu-west-1", "eu-central-1"),
        QUEUE_ARN.replace("123456789012", "210987654321"),
    )):
        other = TrainingJobQueue.from_job_queue_arn(team_b, f"Queue{index}", arn)
        assert other.quota_share_specs == ()


def test_allocation_warnings_are_reported_once_for_the_queue() -> None:
    team_a, team_b = two_team_stacks()
    first = TrainingJobQueue.from_job_queue_attributes(
        team_a, "Queue", job_queue_arn=QUEUE_ARN, capacity_limits=[CapacityLimit(G5, 3)]
    )
    second = TrainingJobQueue.from_job_queue_attributes(
        team_b, "Queue", job_queue_arn=QUEUE_ARN, capacity_limits=[CapacityLimit(G5, 3)]
    )
    second.add_quota_share("Share", spec=spec("vision"), provisioning=CFN)
    assert warnings_of(first) == model_warnings(
        [CapacityLimit(G5, 3)], [spec("vision")], "platform-queue"
    )
    assert warnings_of(second) == []


def _imports(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_quota_share_does_not_import_job_queue() -> None:
    assert "job_queue" in _imports("job_queue") | _imports("quota_managed_queue")
    assert "quota_share" in _imports("job_queue")
    assert "job_queue" not in _imports("quota_share")
    assert {"job_queue", "quota_share"}.isdisjoint(_imports("_share_ledger"))
