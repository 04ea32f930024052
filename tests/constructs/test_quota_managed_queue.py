"""QuotaManagedTrainingQueue: the one-call L3, its construct ids, parts, checks and allocation."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from quota_constructs import (
    CapacityLimit,
    JobStateTimeLimitAction,
    QuotaConfigError,
    QuotaManagedTrainingQueue,
    QuotaShare,
    QuotaShareProvider,
    QuotaShareSchedulingPolicy,
    ShareLifecycle,
    ShareProvisioning,
    SharingStrategy,
    TrainingJobQueue,
    TrainingServiceEnvironment,
)

from .support import (
    G5,
    G6,
    assert_config_error,
    logical_id,
    model_warnings,
    policy_statements,
    scratch_stack,
    spec,
    warnings_of,
)

CFN = ShareProvisioning.CLOUDFORMATION
REFERENCE_SHARES = (
    spec("QS1", SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200,
         in_share_preemption=True),
    spec("QS2", SharingStrategy.LEND),
    spec("QS3", SharingStrategy.RESERVE),
)
TAGS = {"project": "training"}


def reference(stack: cdk.Stack, **props: Any) -> QuotaManagedTrainingQueue:
    return QuotaManagedTrainingQueue(
        stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 3)],
        shares=REFERENCE_SHARES, **props,
    )


@pytest.fixture(scope="module")
def built() -> SimpleNamespace:
    app = cdk.App()
    b = SimpleNamespace()
    b.reference = reference(cdk.Stack(app, "Reference"))
    b.full = reference(
        cdk.Stack(app, "Full"),
        queue_name="training",
        priority=10,
        provisioning=CFN,
        job_state_time_limit_actions=[
            JobStateTimeLimitAction(max_time_seconds=3600, reason="stuck an hour")
        ],
        tags=TAGS,
    )
    b.guarded = reference(
        cdk.Stack(app, "Guarded"),
        lifecycle=ShareLifecycle(
            adopt_existing=True, allow_preemption_on_shrink=True,
            terminate_active_jobs_on_delete=True,
        ),
    )
    # Shrinking QS2 waives its guard alone; QS1 may be deleted with its jobs while the
    # queue-wide default keeps every other guard on.
    b.per_share = reference(
        cdk.Stack(app, "PerShare"),
        lifecycle_by_share={
            "QS2": ShareLifecycle(allow_preemption_on_shrink=True),
            "QS1": ShareLifecycle(
                terminate_active_jobs_on_delete=True, removal_policy=cdk.RemovalPolicy.RETAIN
            ),
        },
    )
    # A queue-wide opt-in that one share declines.
    b.all_but_one = reference(
        cdk.Stack(app, "AllButOne"),
        lifecycle=ShareLifecycle(adopt_existing=True),
        lifecycle_by_share={"QS3": ShareLifecycle()},
    )
    with_provider = cdk.Stack(app, "WithProvider")
    b.provider = QuotaShareProvider(
        with_provider, "QuotaShareProvider", total_timeout=cdk.Duration.minutes(20)
    )
    b.with_provider = reference(with_provider, provider=b.provider)
    b.grown = reference(cdk.Stack(app, "Grown"), provisioning=CFN)
    b.late = b.grown.job_queue.add_quota_share(
        "Late", spec=spec("Late", SharingStrategy.LEND), provisioning=CFN
    )
    b.observer = iam.Role(
        cdk.Stack.of(b.reference), "Observer", assumed_by=iam.AccountRootPrincipal()
    )
    b.reference.grant_observe(b.observer)
    return b


def resources(queue: QuotaManagedTrainingQueue, resource_type: str) -> list[dict[str, Any]]:
    found = Template.from_stack(cdk.Stack.of(queue)).find_resources(resource_type)
    return [dict(resource) for resource in found.values()]


def test_construct_ids_are_the_parts_and_the_share_names(built: SimpleNamespace) -> None:
    queue = built.reference
    assert [child.node.id for child in queue.node.children] == [
        "SchedulingPolicy", "ServiceEnvironment", "JobQueue", "QS1", "QS2", "QS3",
    ]
    assert isinstance(queue.scheduling_policy, QuotaShareSchedulingPolicy)
    assert isinstance(queue.service_environment, TrainingServiceEnvironment)
    assert isinstance(queue.job_queue, TrainingJobQueue)
    assert queue.node.find_child("JobQueue") is queue.job_queue
    assert queue.share("QS2") is queue.node.find_child("QS2")
    assert [share.spec for share in queue.shares] == list(REFERENCE_SHARES)


def test_the_reference_example_synthesizes_the_documented_layout(
    built: SimpleNamespace,
) -> None:
    queue = built.reference
    (environment,) = resources(queue, "AWS::Batch::ServiceEnvironment")
    assert environment["Properties"]["CapacityLimits"] == [
        {"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 3}
    ]
    assert len(resources(queue, "AWS::Batch::SchedulingPolicy")) == 1
    assert len(resources(queue, "AWS::Batch::JobQueue")) == 1
    shares = {
        r["Properties"]["QuotaShareName"]: r["Properties"]
        for r in resources(queue, "Custom::BatchQuotaShare")
    }
    assert sorted(shares) == ["QS1", "QS2", "QS3"]
    assert shares["QS1"]["ResourceSharingConfiguration"] == {
        "Strategy": "LEND_AND_BORROW", "BorrowLimit": 200
    }
    assert shares["QS1"]["PreemptionConfiguration"] == {"InSharePreemption": "ENABLED"}
    assert shares["QS2"]["ResourceSharingConfiguration"] == {"Strategy": "LEND"}
    assert shares["QS3"]["ResourceSharingConfiguration"] == {"Strategy": "RESERVE"}
    for properties in shares.values():
        assert properties["CapacityLimits"] == [
            {"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 1}
        ]
        assert properties["JobQueue"] == {
            "Fn::GetAtt": [logical_id(queue.job_queue), "JobQueueArn"]
        }
    assert warnings_of(queue.job_queue) == []


def test_defaults_set_no_physical_names_and_use_the_custom_resource(
    built: SimpleNamespace,
) -> None:
    queue = built.reference
    (policy,) = resources(queue, "AWS::Batch::SchedulingPolicy")
    (environment,) = resources(queue, "AWS::Batch::ServiceEnvironment")
    (job_queue,) = resources(queue, "AWS::Batch::JobQueue")
    assert "Name" not in policy["Properties"]
    assert "ServiceEnvironmentName" not in environment["Properties"]
    assert "JobQueueName" not in job_queue["Properties"]
    assert job_queue["Properties"]["Priority"] == 1
    assert "JobStateTimeLimitActions" not in job_queue["Properties"]
    assert all(share.provisioning is ShareProvisioning.CUSTOM_RESOURCE for share in queue.shares)
    assert resources(queue, "AWS::Batch::QuotaShare") == []


def test_allocation_summarises_limits_strategies_and_reach(built: SimpleNamespace) -> None:
    allocation = built.reference.allocation
    assert allocation.environment_limits == (CapacityLimit(G5, 3),)
    assert allocation.shares == REFERENCE_SHARES
    # QS1 may borrow 200 % of 1, but only QS2 lends: 1 + 1. RESERVE and LEND never borrow.
    assert [allocation.reach(name) for name in ("QS1", "QS2", "QS3")] == [
        {G5: 2}, {G5: 1}, {G5: 1}
    ]


def test_every_prop_is_rendered(built: SimpleNamespace) -> None:
    queue = built.full
    (job_queue,) = resources(queue, "AWS::Batch::JobQueue")
    assert job_queue["Properties"]["JobQueueName"] == "training"
    assert job_queue["Properties"]["Priority"] == 10
    assert job_queue["Properties"]["JobStateTimeLimitActions"] == [
        {"Action": "TERMINATE", "MaxTimeSeconds": 3600, "Reason": "stuck an hour",
         "State": "RUNNABLE"}
    ]
    for resource_type in (
        "AWS::Batch::SchedulingPolicy", "AWS::Batch::ServiceEnvironment", "AWS::Batch::JobQueue"
    ):
        assert [r["Properties"]["Tags"] for r in resources(queue, resource_type)] == [TAGS]
    shares = resources(queue, "AWS::Batch::QuotaShare")
    assert len(shares) == 3
    # A share's tags are its spec's, not the queue's.
    assert all("Tags" not in share["Properties"] for share in shares)
    assert resources(queue, "Custom::BatchQuotaShare") == []
    assert cdk.Stack.of(queue).node.try_find_child("QuotaShareProvider") is None


def test_guards_apply_to_every_share(built: SimpleNamespace) -> None:
    for share in resources(built.guarded, "Custom::BatchQuotaShare"):
        assert {k: share["Properties"][k] for k in (
            "AdoptExisting", "AllowPreemptionOnShrink", "TerminateActiveJobsOnDelete"
        )} == {"AdoptExisting": True, "AllowPreemptionOnShrink": True,
               "TerminateActiveJobsOnDelete": True}


def test_allocation_includes_shares_added_to_the_queue_later(built: SimpleNamespace) -> None:
    assert isinstance(built.late, QuotaShare)
    assert [s.name for s in built.grown.allocation.shares] == ["QS1", "QS2", "QS3", "Late"]
    assert warnings_of(built.grown.job_queue) == model_warnings(
        [CapacityLimit(G5, 3)], [*REFERENCE_SHARES, spec("Late")], "Grown/TrainingQueue/JobQueue"
    )
    assert built.grown.allocation.warnings == tuple(warnings_of(built.grown.job_queue))


def test_grant_observe_is_the_queues(built: SimpleNamespace) -> None:
    queue_arn = {"Fn::GetAtt": [logical_id(built.reference.job_queue), "JobQueueArn"]}
    assert [s["Resource"] for s in policy_statements(built.observer)] == [
        queue_arn, {"Fn::Join": ["", [queue_arn, "/quota-share/*"]]}, "*",
    ]


def test_an_unknown_share_name_lists_the_known_ones(built: SimpleNamespace) -> None:
    with pytest.raises(KeyError) as caught:
        built.reference.share("QS4")
    assert caught.value.args[0] == (
        "job queue 'Reference/TrainingQueue/JobQueue' has no quota share named 'QS4'; "
        "its shares: QS1, QS2, QS3"
    )


# -- errors: nothing is created when the declaration is wrong ---------------------------


def build_failing(**props: Any) -> QuotaConfigError:
    """The error of a declaration that must fail, after checking it created nothing."""
    stack = scratch_stack()
    arguments: dict[str, Any] = {
        "capacity_limits": [CapacityLimit(G5, 3)], "shares": REFERENCE_SHARES, **props
    }
    with pytest.raises(QuotaConfigError) as caught:
        QuotaManagedTrainingQueue(stack, "TrainingQueue", **arguments)
    created = stack.node.try_find_child("TrainingQueue")
    assert created is None or created.node.children == []
    return caught.value


@pytest.mark.parametrize("name", ["SchedulingPolicy", "ServiceEnvironment", "JobQueue"])
def test_a_share_named_like_a_part_is_rejected(name: str) -> None:
    error = build_failing(shares=[spec(name)])
    assert_config_error(error, f"quota share {name!r}", "name", name, "a literal name other than")


def test_a_share_unit_the_environment_lacks_is_rejected() -> None:
    error = build_failing(shares=[spec("QS1"), spec("G6", unit=G6)])
    assert_config_error(
        error, "quota share 'G6'", "capacity_limits[0].unit", G6,
        "a unit the service environment lists",
    )


def test_over_reservation_is_rejected() -> None:
    error = build_failing(
        shares=[spec("A", SharingStrategy.RESERVE, count=2),
                spec("B", SharingStrategy.RESERVE, count=2)],
        queue_name="training",
    )
    assert_config_error(
        error, "quota share 'B'", "capacity_limits[0].max_capacity", 2,
        "RESERVE shares together would hold A=2 + B=2 = 4 of the environment's 3",
    )


def test_more_than_twenty_shares_are_rejected() -> None:
    error = build_failing(shares=[spec(f"S{i}") for i in range(21)])
    assert_config_error(
        error, "job queue 'Scratch/TrainingQueue/JobQueue'", "shares", "21 shares",
        "at most 20 quota shares per job queue",
    )


@pytest.mark.parametrize(
    ("props", "field", "value", "allowed"),
    [
        ({"priority": 2000}, "priority", 2000, "between 0 and 1000"),
        ({"provisioning": CFN, "lifecycle": ShareLifecycle(adopt_existing=True)},
         "lifecycle.adopt_existing", True, "False with ShareProvisioning.CLOUDFORMATION"),
        ({"provisioning": CFN, "provider": "QuotaShareProvider"}, "provider",
         "QuotaShareProvider", "None with ShareProvisioning.CLOUDFORMATION"),
        ({"capacity_limits": [CapacityLimit("NUM_INSTANCES", 3)]},
         "capacity_limits[0].unit", "NUM_INSTANCES", "never NUM_INSTANCES"),
        ({"queue_name": "a" * 129}, "queue_name", "a" * 129, "1 to 128 characters"),
        ({"lifecycle": ShareLifecycle(removal_policy="RETAIN")},  # type: ignore[arg-type]
         "lifecycle.removal_policy", "RETAIN", "a RemovalPolicy"),
        ({"lifecycle_by_share": [ShareLifecycle()]}, "lifecycle_by_share", [ShareLifecycle()],
         "a mapping of share name to ShareLifecycle"),
        ({"shares": [spec("Tagged", tags={f"k{i}": "v" for i in range(50)})]}, "tags",
         "50 tags", "at most 48 with ShareProvisioning.CUSTOM_RESOURCE"),
    ],
)
def test_queue_mistakes_are_rejected_before_anything_exists(
    props: dict[str, Any], field: str, value: Any, allowed: str
) -> None:
    error = build_failing(**props)
    assert error.field == field
    assert error.value == value
    assert allowed in error.allowed


# -- per-share lifecycle ----------------------------------------------------------------

GUARD_PROPERTIES = ("AdoptExisting", "AllowPreemptionOnShrink", "TerminateActiveJobsOnDelete")


def guards_by_share(queue: QuotaManagedTrainingQueue) -> dict[str, dict[str, bool]]:
    return {
        r["Properties"]["QuotaShareName"]: {k: r["Properties"][k] for k in GUARD_PROPERTIES}
        for r in resources(queue, "Custom::BatchQuotaShare")
    }


def guards(adopt: bool = False, shrink: bool = False, terminate: bool = False) -> dict[str, bool]:
    return dict(zip(GUARD_PROPERTIES, (adopt, shrink, terminate), strict=True))


def test_each_share_takes_its_own_lifecycle(built: SimpleNamespace) -> None:
    assert guards_by_share(built.per_share) == {
        "QS1": guards(terminate=True), "QS2": guards(shrink=True), "QS3": guards(),
    }
    assert built.per_share.share("QS2").lifecycle == ShareLifecycle(
        allow_preemption_on_shrink=True
    )
    policies = {
        r["Properties"]["QuotaShareName"]: r["DeletionPolicy"]
        for r in resources(built.per_share, "Custom::BatchQuotaShare")
    }
    assert policies == {"QS1": "Retain", "QS2": "Delete", "QS3": "Delete"}


def test_the_queue_wide_lifecycle_is_the_default_a_share_can_decline(
    built: SimpleNamespace,
) -> None:
    assert guards_by_share(built.all_but_one) == {
        "QS1": guards(adopt=True), "QS2": guards(adopt=True), "QS3": guards(),
    }


def test_a_lifecycle_for_an_undeclared_share_is_rejected_naming_it() -> None:
    error = build_failing(lifecycle_by_share={"QS4": ShareLifecycle()})
    assert_config_error(
        error, "quota share 'QS4'", "lifecycle_by_share", "QS4",
        "the name of a declared share: QS1, QS2, QS3",
    )


def test_a_per_share_guard_without_the_custom_resource_names_the_share() -> None:
    error = build_failing(
        provisioning=CFN,
        lifecycle_by_share={"QS2": ShareLifecycle(allow_preemption_on_shrink=True)},
    )
    assert_config_error(
        error, "quota share 'QS2'", "lifecycle_by_share['QS2'].allow_preemption_on_shrink",
        True, "False with ShareProvisioning.CLOUDFORMATION",
    )


def test_an_explicit_provider_serves_the_shares(built: SimpleNamespace) -> None:
    stack = cdk.Stack.of(built.with_provider)
    token = stack.resolve(built.provider.service_token)
    services = [
        r["Properties"]["ServiceToken"]
        for r in resources(built.with_provider, "Custom::BatchQuotaShare")
    ]
    assert services == [token] * 3
