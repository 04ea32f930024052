"""TrainingJobQueue: props, imports, queue-level share checks, allocation warnings, grants."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import Annotations
from aws_cdk import aws_iam as iam

from quota_constructs import (
    CapacityLimit,
    ITrainingJobQueue,
    JobStateTimeLimitAction,
    QuotaConfigError,
    QuotaShareSchedulingPolicy,
    ShareProvisioning,
    SharingStrategy,
    TrainingJobQueue,
    TrainingServiceEnvironment,
)
from quota_constructs.job_queue import ALLOCATION_WARNING_ID

from .support import (
    G5,
    G6,
    QUEUE_ARN,
    assert_config_error,
    logical_id,
    model_warnings,
    policy_statements,
    properties,
    resolve,
    scratch_stack,
    spec,
    warnings_of,
)

CFN = ShareProvisioning.CLOUDFORMATION


def make_queue(stack: cdk.Stack, capacity: int = 3, **props: Any) -> TrainingJobQueue:
    return TrainingJobQueue(
        stack,
        "Queue",
        service_environment=TrainingServiceEnvironment(
            stack, "Environment", capacity_limits=[CapacityLimit(G5, capacity)]
        ),
        scheduling_policy=QuotaShareSchedulingPolicy(stack, "Policy"),
        **props,
    )


@pytest.fixture(scope="module")
def built() -> SimpleNamespace:
    app = cdk.App()
    default = make_queue(cdk.Stack(app, "Default"))
    full = make_queue(
        cdk.Stack(app, "Full"),
        priority=1000,
        job_queue_name="training",
        enabled=False,
        job_state_time_limit_actions=[
            JobStateTimeLimitAction(max_time_seconds=600, reason="stuck over quota"),
            JobStateTimeLimitAction(max_time_seconds=86400, reason="a day is enough"),
        ],
        tags={"team": "platform"},
    )
    exact = make_queue(cdk.Stack(app, "Exact"))
    for name in ("A", "B", "C"):
        exact.add_quota_share(name, spec=spec(name), provisioning=CFN)
    over = make_queue(cdk.Stack(app, "Over"), capacity=2)
    over.add_quota_share("A", spec=spec("A"), provisioning=CFN)
    over.add_quota_share("B", spec=spec("B", count=2), provisioning=CFN)
    acknowledged = make_queue(cdk.Stack(app, "Acknowledged"))
    Annotations.of(acknowledged).acknowledge_warning(
        ALLOCATION_WARNING_ID, "the platform team keeps spare capacity for borrowing"
    )
    imports = cdk.Stack(app, "Imports")
    by_arn = TrainingJobQueue.from_job_queue_arn(imports, "ByArn", QUEUE_ARN)
    # One app holds one ledger per queue (tests/constructs/test_share_ledger.py): each import
    # that knows a different capacity for the same queue ARN gets an app of its own.
    by_capacity = TrainingJobQueue.from_job_queue_attributes(
        cdk.Stack(cdk.App(), "Imports"), "ByCapacity", job_queue_arn=QUEUE_ARN,
        capacity_limits=[CapacityLimit(G6, 2)],
    )
    environment_imports = cdk.Stack(cdk.App(), "Imports")
    by_environment = TrainingJobQueue.from_job_queue_attributes(
        environment_imports,
        "ByEnvironment",
        job_queue_arn=QUEUE_ARN,
        service_environment=TrainingServiceEnvironment.from_service_environment_attributes(
            environment_imports,
            "Environment",
            service_environment_arn=(
                "arn:aws:batch:eu-west-1:123456789012:service-environment/pool"
            ),
            capacity_limits=[CapacityLimit(G5, 4)],
        ),
    )
    by_environment.add_quota_share("Team", spec=spec("Team", count=4), provisioning=CFN)
    observer = iam.Role(default, "Observer", assumed_by=iam.AccountRootPrincipal())
    default.grant_observe(observer)
    import_observer = iam.Role(imports, "Observer", assumed_by=iam.AccountRootPrincipal())
    by_arn.grant_observe(import_observer)
    return SimpleNamespace(
        default=default, full=full, exact=exact, over=over, acknowledged=acknowledged,
        by_arn=by_arn, by_capacity=by_capacity, by_environment=by_environment,
        observer=observer, import_observer=import_observer,
    )


def test_defaults(built: SimpleNamespace) -> None:
    queue = built.default
    stack = cdk.Stack.of(queue)
    assert properties(stack, "AWS::Batch::JobQueue") == {
        "JobQueueType": "SAGEMAKER_TRAINING",
        "Priority": 1,
        "SchedulingPolicyArn": {"Fn::GetAtt": [logical_id(queue.scheduling_policy), "Arn"]},
        "ServiceEnvironmentOrder": [
            {
                "Order": 1,
                "ServiceEnvironment": {
                    "Fn::GetAtt": [logical_id(queue.service_environment), "ServiceEnvironmentArn"]
                },
            }
        ],
        "State": "ENABLED",
    }
    assert queue.node.default_child.node.id == "Resource"
    assert resolve(queue, queue.job_queue_arn) == {
        "Fn::GetAtt": [logical_id(queue), "JobQueueArn"]
    }
    assert queue.capacity_limits == (CapacityLimit(G5, 3),)
    assert queue.quota_share_specs == ()


def test_every_prop_is_rendered(built: SimpleNamespace) -> None:
    rendered = properties(cdk.Stack.of(built.full), "AWS::Batch::JobQueue")
    assert rendered["Priority"] == 1000
    assert rendered["JobQueueName"] == "training"
    assert rendered["State"] == "DISABLED"
    assert rendered["JobStateTimeLimitActions"] == [
        {"Action": "TERMINATE", "MaxTimeSeconds": 600, "Reason": "stuck over quota",
         "State": "RUNNABLE"},
        {"Action": "TERMINATE", "MaxTimeSeconds": 86400, "Reason": "a day is enough",
         "State": "RUNNABLE"},
    ]
    assert rendered["Tags"] == {"team": "platform"}
    assert built.full.job_queue_name == "training"


def test_shares_added_to_the_queue_are_its_children_and_in_its_allocation(
    built: SimpleNamespace,
) -> None:
    queue = built.exact
    children = [child.node.id for child in queue.node.children]
    assert [id for id in children if not id.endswith("Output")] == ["Resource", "A", "B", "C"]
    assert [s.name for s in queue.quota_share_specs] == ["A", "B", "C"]
    assert queue.allocation.shares == queue.quota_share_specs
    assert queue.allocation.reach("A") == {G5: 1}


def test_a_queue_without_shares_warns_that_no_share_owns_its_capacity(
    built: SimpleNamespace,
) -> None:
    assert warnings_of(built.default) == model_warnings(
        [CapacityLimit(G5, 3)], [], "Default/Queue"
    )


def test_an_exactly_divided_queue_has_no_warning(built: SimpleNamespace) -> None:
    assert warnings_of(built.exact) == []


def test_warnings_describe_the_finished_allocation_once(built: SimpleNamespace) -> None:
    final = model_warnings([CapacityLimit(G5, 2)], [spec("A"), spec("B", count=2)], "Over/Queue")
    after_a = model_warnings([CapacityLimit(G5, 2)], [spec("A")], "Over/Queue")
    assert final != after_a
    assert warnings_of(built.over) == final


def test_allocation_warnings_can_be_acknowledged_by_id(built: SimpleNamespace) -> None:
    assert warnings_of(built.acknowledged) == []


def test_imports(built: SimpleNamespace) -> None:
    for queue in (built.by_arn, built.by_capacity, built.by_environment):
        assert isinstance(queue, ITrainingJobQueue)
        assert queue.job_queue_arn == QUEUE_ARN
        assert queue.job_queue_name == "platform-queue"
        assert (queue.env.account, queue.env.region) == ("123456789012", "eu-west-1")
    assert built.by_arn.capacity_limits is None
    assert built.by_arn.allocation is None
    assert built.by_capacity.capacity_limits == (CapacityLimit(G6, 2),)
    assert built.by_environment.capacity_limits == (CapacityLimit(G5, 4),)
    assert built.by_environment.allocation.reach("Team") == {G5: 4}


def test_an_imported_queue_with_known_capacity_warns_like_a_created_one(
    built: SimpleNamespace,
) -> None:
    assert warnings_of(built.by_capacity) == model_warnings(
        [CapacityLimit(G6, 2)], [], "platform-queue"
    )
    assert warnings_of(built.by_arn) == []


def test_grant_observe_is_read_only_and_scoped_to_the_queue(built: SimpleNamespace) -> None:
    queue_arn = {"Fn::GetAtt": [logical_id(built.default), "JobQueueArn"]}
    assert policy_statements(built.observer) == [
        {
            "Action": ["batch:GetJobQueueSnapshot", "batch:ListQuotaShares"],
            "Effect": "Allow",
            "Resource": queue_arn,
        },
        {
            "Action": "batch:DescribeQuotaShare",
            "Effect": "Allow",
            "Resource": {"Fn::Join": ["", [queue_arn, "/quota-share/*"]]},
        },
        {
            "Action": ["batch:DescribeServiceJob", "batch:ListServiceJobs"],
            "Effect": "Allow",
            "Resource": "*",
        },
    ]


def test_grant_observe_on_an_imported_queue_uses_its_arn(built: SimpleNamespace) -> None:
    assert [s["Resource"] for s in policy_statements(built.import_observer)] == [
        QUEUE_ARN, f"{QUEUE_ARN}/quota-share/*", "*",
    ]


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("props", "field", "value", "allowed"),
    [
        ({"priority": 1001}, "priority", 1001, "between 0 and 1000"),
        ({"priority": -1}, "priority", -1, "between 0 and 1000"),
        ({"priority": True}, "priority", True, "an integer"),
        ({"enabled": 1}, "enabled", 1, "True or False"),
        (
            {"job_state_time_limit_actions": [
                JobStateTimeLimitAction(max_time_seconds=599, reason="too soon")]},
            "job_state_time_limit_actions[0].max_time_seconds", 599, "between 600 and 86400",
        ),
        (
            {"job_state_time_limit_actions": [
                JobStateTimeLimitAction(max_time_seconds=600, reason="r", action="CANCEL")]},
            "job_state_time_limit_actions[0].action", "CANCEL", "'TERMINATE'",
        ),
        (
            {"job_state_time_limit_actions": [
                JobStateTimeLimitAction(max_time_seconds=600, reason="r", state="STARTING")]},
            "job_state_time_limit_actions[0].state", "STARTING", "'RUNNABLE'",
        ),
        ({"tags": {"": "empty"}}, "tags key", "", "1 to 128 characters"),
    ],
)
def test_queue_prop_mistakes_name_the_queue(
    props: dict[str, Any], field: str, value: Any, allowed: str
) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        make_queue(scratch_stack(), **props)
    assert_config_error(caught.value, "job queue 'Scratch/Queue'", field, value, allowed)


def test_a_named_queue_is_named_in_errors() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        make_queue(scratch_stack(), job_queue_name="training/eu")
    assert_config_error(
        caught.value, "job queue 'training/eu'", "job_queue_name", "training/eu",
        "1 to 128 characters",
    )


def test_environment_and_policy_must_be_the_right_kind() -> None:
    stack = scratch_stack()
    policy = QuotaShareSchedulingPolicy(stack, "Policy")
    with pytest.raises(QuotaConfigError) as caught:
        TrainingJobQueue(
            stack, "Queue", service_environment=policy,  # type: ignore[arg-type]
            scheduling_policy=policy,
        )
    assert caught.value.field == "service_environment"
    environment = TrainingServiceEnvironment(
        stack, "Environment", capacity_limits=[CapacityLimit(G5, 1)]
    )
    with pytest.raises(QuotaConfigError) as caught:
        TrainingJobQueue(
            stack, "Queue2", service_environment=environment,
            scheduling_policy=environment,  # type: ignore[arg-type]
        )
    assert caught.value.field == "scheduling_policy"


def test_a_share_unit_the_environment_lacks_is_rejected_where_it_is_added() -> None:
    queue = make_queue(scratch_stack())
    with pytest.raises(QuotaConfigError) as caught:
        queue.add_quota_share("G6", spec=spec("G6", unit=G6), provisioning=CFN)
    assert_config_error(
        caught.value, "quota share 'G6'", "capacity_limits[0].unit", G6,
        "a unit the service environment lists (ml.g5.xlarge)",
    )


def test_reserve_shares_over_the_environment_are_rejected() -> None:
    queue = make_queue(scratch_stack(), capacity=2)
    queue.add_quota_share("A", spec=spec("A", SharingStrategy.RESERVE), provisioning=CFN)
    with pytest.raises(QuotaConfigError) as caught:
        queue.add_quota_share(
            "B", spec=spec("B", SharingStrategy.RESERVE, count=2), provisioning=CFN
        )
    assert_config_error(
        caught.value, "quota share 'B'", "capacity_limits[0].max_capacity", 2,
        "at most 1 ml.g5.xlarge: RESERVE shares together would hold A=1 + B=2 = 3 of the "
        "environment's 2",
    )


def test_a_rejected_share_leaves_the_queue_as_it_was() -> None:
    queue = make_queue(scratch_stack())
    queue.add_quota_share("A", spec=spec("A"), provisioning=CFN)
    with pytest.raises(QuotaConfigError) as caught:
        queue.add_quota_share("A2", spec=spec("A"), provisioning=CFN)
    assert_config_error(
        caught.value, "quota share 'A'", "name", "A", "a name unique within the job queue"
    )
    assert [s.name for s in queue.quota_share_specs] == ["A"]
    assert queue.allocation is not None
    assert [s.name for s in queue.allocation.shares] == ["A"]
    queue.add_quota_share("B", spec=spec("B"), provisioning=CFN)
    assert [s.name for s in queue.quota_share_specs] == ["A", "B"]


def test_a_queue_of_unknown_capacity_still_limits_and_names_its_shares() -> None:
    stack = scratch_stack()
    queue = TrainingJobQueue.from_job_queue_arn(stack, "Queue", QUEUE_ARN)
    # Any unit and any size is accepted: the capacity is not known here.
    queue.add_quota_share("Big", spec=spec("Big", unit=G6, count=500), provisioning=CFN)
    for index in range(19):
        queue.add_quota_share(f"S{index}", spec=spec(f"S{index}"), provisioning=CFN)
    with pytest.raises(QuotaConfigError) as caught:
        queue.add_quota_share("S19", spec=spec("S19"), provisioning=CFN)
    assert_config_error(
        caught.value, "job queue 'platform-queue'", "shares", "21 shares",
        "at most 20 quota shares per job queue",
    )


def test_import_attributes_take_capacity_from_one_place_only() -> None:
    stack = scratch_stack()
    environment = TrainingServiceEnvironment.from_service_environment_arn(
        stack, "Environment", "arn:aws:batch:eu-west-1:123456789012:service-environment/pool"
    )
    with pytest.raises(QuotaConfigError) as caught:
        TrainingJobQueue.from_job_queue_attributes(
            stack, "Queue", job_queue_arn=QUEUE_ARN, service_environment=environment,
            capacity_limits=[CapacityLimit(G5, 1)],
        )
    assert caught.value.field == "capacity_limits"
    assert "None when service_environment is given" in caught.value.allowed


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:batch:eu-west-1:123456789012:job-queue/q/quota-share/s",
        "arn:aws:batch:eu-west-1:123:job-queue/q",
        "platform-queue",
    ],
)
def test_a_malformed_queue_arn_is_rejected(arn: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        TrainingJobQueue.from_job_queue_arn(scratch_stack(), "Queue", arn)
    assert_config_error(
        caught.value, "job queue 'Scratch/Queue'", "job_queue_arn", arn, ":job-queue/<name>"
    )


def test_imported_capacity_limits_are_validated() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        TrainingJobQueue.from_job_queue_attributes(
            scratch_stack(), "Queue", job_queue_arn=QUEUE_ARN, capacity_limits=[],
        )
    assert_config_error(
        caught.value, "service environment of job queue 'platform-queue'", "capacity_limits",
        [], "between 1 and 5",
    )
