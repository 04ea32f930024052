"""QuotaShare: both provisioning modes, imported and cross-stack queues, imports and grants."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Template

from quota_constructs import (
    CapacityLimit,
    IQuotaShare,
    QuotaConfigError,
    QuotaShare,
    QuotaShareSchedulingPolicy,
    QuotaShareSpec,
    ShareGrant,
    ShareLifecycle,
    ShareProvisioning,
    SharingStrategy,
    TrainingJobQueue,
    TrainingServiceEnvironment,
)
from quota_constructs.quota_share import SHARE_TAG_KEY
from quota_constructs.share_provider import QuotaShareProvider
from quota_constructs.wire.share_codec import resource_properties

from .support import (
    G5,
    G6,
    QUEUE_ARN,
    assert_config_error,
    logical_id,
    model_warnings,
    policy_statements,
    resolve,
    scratch_stack,
    spec,
    warnings_of,
)

CFN = ShareProvisioning.CLOUDFORMATION
CUSTOM = ShareProvisioning.CUSTOM_RESOURCE
SHARE_ARN = f"{QUEUE_ARN}/quota-share/team-a"
# The in-share opt-in is rendered only when set: templates without it stay as they were.
GUARDS_OFF = {
    "AdoptExisting": False, "AllowPreemptionOnShrink": False, "TerminateActiveJobsOnDelete": False
}
GUARDS_ON = {
    "AdoptExisting": True, "AllowPreemptionOnShrink": True, "TerminateActiveJobsOnDelete": True,
    "AllowPreemptionOnInShareEnable": True,
}
PARTITION = {"Ref": "AWS::Partition"}

DETAILED = QuotaShareSpec(
    name="Detailed",
    capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(G6, 1)],
    strategy=SharingStrategy.LEND_AND_BORROW,
    borrow_limit_percent=0,
    in_share_preemption=True,
    enabled=False,
    tags={"team": "research"},
)


def make_queue(stack: cdk.Stack, id: str = "Queue") -> TrainingJobQueue:
    return TrainingJobQueue(
        stack,
        id,
        service_environment=TrainingServiceEnvironment(
            stack, f"{id}Environment", capacity_limits=[CapacityLimit(G5, 4), CapacityLimit(G6, 1)]
        ),
        scheduling_policy=QuotaShareSchedulingPolicy(stack, f"{id}Policy"),
    )


def role(stack: cdk.Stack, id: str) -> iam.Role:
    return iam.Role(stack, id, assumed_by=iam.AccountRootPrincipal())


@pytest.fixture(scope="module")
def built() -> SimpleNamespace:
    app = cdk.App()
    b = SimpleNamespace()

    cfn_stack = cdk.Stack(app, "Cfn")
    b.cfn_queue = make_queue(cfn_stack)
    b.cfn = {
        s.name: QuotaShare(cfn_stack, s.name, job_queue=b.cfn_queue, spec=s, provisioning=CFN)
        for s in (
            DETAILED,
            spec("Unlimited", SharingStrategy.LEND_AND_BORROW),
            spec("Lend", SharingStrategy.LEND),
        )
    }

    custom_stack = cdk.Stack(app, "Custom")
    b.custom_queue = make_queue(custom_stack)
    b.custom = QuotaShare(custom_stack, "Default", job_queue=b.custom_queue, spec=DETAILED)
    b.guarded = QuotaShare(
        custom_stack, "Guarded", job_queue=b.custom_queue,
        spec=spec("Guarded", SharingStrategy.RESERVE),
        lifecycle=ShareLifecycle(
            adopt_existing=True, allow_preemption_on_shrink=True,
            terminate_active_jobs_on_delete=True, allow_preemption_on_in_share_enable=True,
        ),
    )

    # A queue in a platform stack, shares in two team stacks (one per provisioning mode).
    platform = cdk.Stack(app, "Platform")
    b.platform_queue = make_queue(platform)
    b.team_custom = QuotaShare(
        cdk.Stack(app, "TeamCustom"), "Share", job_queue=b.platform_queue,
        spec=spec("TeamCustom", count=2),
    )
    b.team_cfn = QuotaShare(
        cdk.Stack(app, "TeamCfn"), "Share", job_queue=b.platform_queue,
        spec=spec("TeamCfn", count=2), provisioning=CFN,
    )

    imported_stack = cdk.Stack(app, "OnImport")
    b.imported_queue = TrainingJobQueue.from_job_queue_arn(imported_stack, "Queue", QUEUE_ARN)
    b.on_import_custom = b.imported_queue.add_quota_share("Custom", spec=spec("Custom"))
    b.on_import_cfn = b.imported_queue.add_quota_share(
        "Cfn", spec=spec("Cfn"), provisioning=CFN
    )

    # Grants
    b.submitter = role(cfn_stack, "Submitter")
    b.execution_role = iam.Role(
        cfn_stack, "ExecutionRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com")
    )
    b.cfn["Detailed"].grant_submit(
        b.submitter, max_priority=50,
        execution_roles=[
            b.execution_role,
            iam.Role.from_role_arn(cfn_stack, "Existing", "arn:aws:iam::123456789012:role/x"),
        ],
    )
    b.open_submitter = role(cfn_stack, "OpenSubmitter")
    b.cfn["Lend"].grant_submit(b.open_submitter)
    b.updater = role(cfn_stack, "Updater")
    b.cfn["Detailed"].grant_update_priority(b.updater, max_priority=9999)
    b.open_updater = role(cfn_stack, "OpenUpdater")
    b.cfn["Detailed"].grant_update_priority(b.open_updater)
    b.custom_submitter = role(custom_stack, "Submitter")
    b.custom.grant_submit(b.custom_submitter, max_priority=0)

    b.retained = {
        mode: QuotaShare(
            custom_stack, f"Retained{mode.name}", job_queue=b.custom_queue,
            spec=spec(f"Retained{mode.name}"), provisioning=mode,
            lifecycle=ShareLifecycle(removal_policy=cdk.RemovalPolicy.RETAIN),
        )
        for mode in (CFN, CUSTOM)
    }

    grants = cdk.Stack(app, "ImportedShare")
    b.share_import = QuotaShare.from_quota_share_arn(grants, "Share", SHARE_ARN)
    b.import_submitter = role(grants, "Submitter")
    b.share_import.grant_submit(b.import_submitter, max_priority=10)
    b.import_updater = role(grants, "Updater")
    b.share_import.grant_update_priority(b.import_updater)
    b.token_import = QuotaShare.from_quota_share_arn(
        grants, "TokenShare", cdk.CfnParameter(grants, "ShareArn").value_as_string
    )
    return b


def template(construct: Any) -> dict[str, Any]:
    return dict(Template.from_stack(cdk.Stack.of(construct)).to_json())


def resource(construct: Any) -> dict[str, Any]:
    return template(construct)["Resources"][logical_id(construct)]  # type: ignore[no-any-return]


def queue_arn(queue: TrainingJobQueue) -> Any:
    return {"Fn::GetAtt": [logical_id(queue), "JobQueueArn"]}


# -- CLOUDFORMATION ---------------------------------------------------------------------


def test_cloudformation_mode_renders_every_spec_field(built: SimpleNamespace) -> None:
    share = built.cfn["Detailed"]
    assert share.node.default_child.node.id == "Resource"
    assert resource(share) == {
        "Type": "AWS::Batch::QuotaShare",
        "Properties": {
            "QuotaShareName": "Detailed",
            "JobQueue": queue_arn(built.cfn_queue),
            "CapacityLimits": [
                {"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 2},
                {"CapacityUnit": "ml.g6.xlarge", "MaxCapacity": 1},
            ],
            # 0 means "never borrow" and must reach AWS Batch as 0, not be dropped.
            "ResourceSharingConfiguration": {"Strategy": "LEND_AND_BORROW", "BorrowLimit": 0},
            "PreemptionConfiguration": {"InSharePreemption": "ENABLED"},
            "State": "DISABLED",
            "Tags": {"team": "research"},
        },
        "DeletionPolicy": "Delete",
        "UpdateReplacePolicy": "Delete",
    }


@pytest.mark.parametrize(
    ("name", "sharing"),
    [
        ("Unlimited", {"Strategy": "LEND_AND_BORROW", "BorrowLimit": -1}),
        ("Lend", {"Strategy": "LEND"}),
    ],
)
def test_cloudformation_mode_renders_the_borrow_limit_only_for_borrowing_shares(
    built: SimpleNamespace, name: str, sharing: dict[str, Any]
) -> None:
    assert resource(built.cfn[name])["Properties"]["ResourceSharingConfiguration"] == sharing


def test_both_modes_render_the_same_share_properties(built: SimpleNamespace) -> None:
    for share, queue in ((built.cfn["Detailed"], built.cfn_queue), (built.custom,
                                                                     built.custom_queue)):
        rendered = resource(share)["Properties"]
        expected = resource_properties(DETAILED, resolve(share, queue.job_queue_arn))
        assert {k: v for k, v in rendered.items() if k in expected} == expected


def test_cloudformation_mode_attributes(built: SimpleNamespace) -> None:
    share = built.cfn["Detailed"]
    assert resolve(share, share.quota_share_arn) == {
        "Fn::GetAtt": [logical_id(share), "QuotaShareArn"]
    }
    assert share.quota_share_name == "Detailed"
    assert share.job_queue is built.cfn_queue
    assert share.spec is DETAILED
    assert share.provisioning is CFN
    assert resolve(share, share.job_queue_arn) == queue_arn(built.cfn_queue)
    assert isinstance(share, IQuotaShare)


def test_cloudformation_mode_adds_no_provider(built: SimpleNamespace) -> None:
    assert cdk.Stack.of(built.cfn_queue).node.try_find_child("QuotaShareProvider") is None


# -- CUSTOM_RESOURCE --------------------------------------------------------------------


def test_custom_resource_is_the_default_and_carries_the_guards(built: SimpleNamespace) -> None:
    share = built.custom
    provider = QuotaShareProvider.for_stack(cdk.Stack.of(share))
    assert share.provisioning is CUSTOM
    assert share.node.default_child is share.node.find_child("Resource")
    assert resource(share)["Type"] == "Custom::BatchQuotaShare"
    assert resource(share)["Properties"] == {
        "ServiceToken": resolve(share, provider.service_token),
        "ServiceTimeout": str(int(provider.service_timeout.to_seconds())),
        **resource_properties(DETAILED, queue_arn(built.custom_queue)),
        **GUARDS_OFF,
    }
    assert resource(built.guarded)["Properties"] == {
        "ServiceToken": resolve(share, provider.service_token),
        "ServiceTimeout": str(int(provider.service_timeout.to_seconds())),
        **resource_properties(built.guarded.spec, queue_arn(built.custom_queue)),
        **GUARDS_ON,
    }


def test_custom_resource_arn_is_its_physical_id(built: SimpleNamespace) -> None:
    assert resolve(built.custom, built.custom.quota_share_arn) == {"Ref": logical_id(built.custom)}


def test_one_provider_per_stack_scoped_to_the_queue(built: SimpleNamespace) -> None:
    stack = cdk.Stack.of(built.custom)
    providers = [c for c in stack.node.children if isinstance(c, QuotaShareProvider)]
    assert [p.node.id for p in providers] == ["QuotaShareProvider"]
    assert _provider_resources(stack, queue=queue_arn(built.custom_queue)) == {
        "{queue}", "{queue}/quota-share/*"
    }


def _provider_resources(stack: cdk.Stack, *, queue: Any) -> set[str]:
    """Which of ``queue`` and its quota shares the stack's provider may act on."""
    shares = (
        f"{queue}/quota-share/*" if isinstance(queue, str)
        else {"Fn::Join": ["", [queue, "/quota-share/*"]]}
    )
    provider = QuotaShareProvider.for_stack(stack)
    found: set[str] = set()
    for statement in policy_statements(provider.handler_role):
        resources = statement["Resource"]
        for item in resources if isinstance(resources, list) else [resources]:
            if item == queue:
                found.add("{queue}")
            elif item == shares:
                found.add("{queue}/quota-share/*")
    return found


# -- imported and cross-stack queues ----------------------------------------------------


def test_cross_stack_shares_reference_the_queue_through_an_export(
    built: SimpleNamespace,
) -> None:
    platform = template(built.platform_queue)
    exported = {
        output["Export"]["Name"]
        for output in platform.get("Outputs", {}).values()
        if output["Value"] == queue_arn(built.platform_queue) and "Export" in output
    }
    assert len(exported) == 1
    export_name = exported.pop()
    for share in (built.team_custom, built.team_cfn):
        assert resource(share)["Properties"]["JobQueue"] == {"Fn::ImportValue": export_name}


def test_a_cross_stack_custom_share_uses_its_own_stacks_provider(
    built: SimpleNamespace,
) -> None:
    team = cdk.Stack.of(built.team_custom)
    assert team.node.try_find_child("QuotaShareProvider") is not None
    assert cdk.Stack.of(built.platform_queue).node.try_find_child("QuotaShareProvider") is None
    assert cdk.Stack.of(built.team_cfn).node.try_find_child("QuotaShareProvider") is None
    export = resource(built.team_custom)["Properties"]["JobQueue"]
    assert _provider_resources(team, queue=export) == {"{queue}", "{queue}/quota-share/*"}


def test_shares_from_other_stacks_count_in_the_queues_allocation(
    built: SimpleNamespace,
) -> None:
    queue = built.platform_queue
    assert [s.name for s in queue.quota_share_specs] == ["TeamCustom", "TeamCfn"]
    assert warnings_of(queue) == model_warnings(
        [CapacityLimit(G5, 4), CapacityLimit(G6, 1)],
        [spec("TeamCustom", count=2), spec("TeamCfn", count=2)],
        "Platform/Queue",
    )


def test_shares_on_an_imported_queue_use_its_arn_in_both_modes(built: SimpleNamespace) -> None:
    assert resource(built.on_import_cfn)["Properties"]["JobQueue"] == QUEUE_ARN
    assert resource(built.on_import_custom)["Properties"]["JobQueue"] == QUEUE_ARN
    assert _provider_resources(cdk.Stack.of(built.on_import_custom), queue=QUEUE_ARN) == {
        "{queue}", "{queue}/quota-share/*"
    }


# -- grants -----------------------------------------------------------------------------


def service_jobs() -> dict[str, Any]:
    """Every service job in the deploying stack's account and region."""
    return {
        "Fn::Join": [
            "",
            [
                "arn:", PARTITION, ":batch:", {"Ref": "AWS::Region"}, ":",
                {"Ref": "AWS::AccountId"}, ":service-job/*",
            ],
        ]
    }


RESERVED = {"aws:TagKeys": [
    "quota-constructs:owner", "quota-constructs:adopting", "quota-constructs:lifecycle",
    "quota-constructs:deployed-config", "quota-constructs:adopted",
]}
"""The library's keys a team may not set on a job (written out: the template's own words)."""


def tag_on_submission(share: str, jobs: Any) -> dict[str, Any]:
    """The TagResource that submitting with tags needs: the share's tag with this share's
    name, no key the library reserves (other tags may come along), and only on a job carrying
    no share tag yet (the one being created), never on a job already labelled."""
    return {
        "Action": "batch:TagResource",
        "Condition": {
            "StringEquals": {f"aws:RequestTag/{SHARE_TAG_KEY}": share},
            "ForAllValues:StringNotEqualsIgnoreCase": RESERVED,
            "Null": {f"aws:ResourceTag/{SHARE_TAG_KEY}": "true"},
        },
        "Effect": "Allow",
        "Resource": jobs,
    }


def test_grant_submit_is_limited_to_queue_share_tag_priority_and_execution_roles(
    built: SimpleNamespace,
) -> None:
    share = built.cfn["Detailed"]
    assert policy_statements(built.submitter) == [
        {
            "Action": "batch:SubmitServiceJob",
            "Condition": {
                "NumericLessThanEquals": {"batch:SchedulingPriority": 50},
                "StringEquals": {f"aws:RequestTag/{SHARE_TAG_KEY}": "Detailed"},
                "ForAllValues:StringNotEqualsIgnoreCase": RESERVED,
            },
            "Effect": "Allow",
            "Resource": [
                queue_arn(built.cfn_queue),
                {"Fn::GetAtt": [logical_id(share), "QuotaShareArn"]},
                service_jobs(),
            ],
        },
        tag_on_submission("Detailed", service_jobs()),
        {
            "Action": "iam:PassRole",
            "Condition": {"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
            "Effect": "Allow",
            "Resource": [
                {"Fn::GetAtt": [logical_id(built.execution_role), "Arn"]},
                "arn:aws:iam::123456789012:role/x",
            ],
        },
    ]


def test_grant_submit_without_ceiling_or_roles(built: SimpleNamespace) -> None:
    share = built.cfn["Lend"]
    assert policy_statements(built.open_submitter) == [
        {
            "Action": "batch:SubmitServiceJob",
            "Condition": {"StringEquals": {f"aws:RequestTag/{SHARE_TAG_KEY}": "Lend"},
                          "ForAllValues:StringNotEqualsIgnoreCase": RESERVED},
            "Effect": "Allow",
            "Resource": [
                queue_arn(built.cfn_queue),
                {"Fn::GetAtt": [logical_id(share), "QuotaShareArn"]},
                service_jobs(),
            ],
        },
        tag_on_submission("Lend", service_jobs()),
    ]


def test_grant_submit_on_a_custom_resource_share_uses_its_physical_id(
    built: SimpleNamespace,
) -> None:
    statement = policy_statements(built.custom_submitter)[0]
    assert statement["Resource"][1] == {"Ref": logical_id(built.custom)}
    assert statement["Condition"] == {
        "NumericLessThanEquals": {"batch:SchedulingPriority": 0},
        "StringEquals": {f"aws:RequestTag/{SHARE_TAG_KEY}": "Detailed"},
        "ForAllValues:StringNotEqualsIgnoreCase": RESERVED,
    }


def test_grant_update_priority_covers_only_the_shares_tagged_jobs_with_the_ceiling(
    built: SimpleNamespace,
) -> None:
    own_jobs = {"StringEquals": {f"aws:ResourceTag/{SHARE_TAG_KEY}": "Detailed"}}
    assert policy_statements(built.updater) == [
        {
            "Action": "batch:UpdateServiceJob",
            "Condition": {
                "NumericLessThanEquals": {"batch:SchedulingPriority": 9999}, **own_jobs
            },
            "Effect": "Allow",
            "Resource": service_jobs(),
        }
    ]
    assert policy_statements(built.open_updater) == [
        {
            "Action": "batch:UpdateServiceJob", "Condition": own_jobs, "Effect": "Allow",
            "Resource": service_jobs(),
        }
    ]


def test_grants_are_recorded_on_the_share(built: SimpleNamespace) -> None:
    assert built.cfn["Detailed"].grants == (
        ShareGrant("Cfn/Submitter", "submit", 50),
        ShareGrant("Cfn/Updater", "update_priority", 9999),
        ShareGrant("Cfn/OpenUpdater", "update_priority", None),
    )
    assert built.cfn["Lend"].grants == (ShareGrant("Cfn/OpenSubmitter", "submit", None),)
    assert built.share_import.grants == (
        ShareGrant("ImportedShare/Submitter", "submit", 10),
        ShareGrant("ImportedShare/Updater", "update_priority", None),
    )
    assert built.cfn["Unlimited"].grants == ()


def test_a_grant_names_an_imported_role_by_its_arn() -> None:
    stack = scratch_stack()
    share = QuotaShare.from_quota_share_arn(stack, "Share", SHARE_ARN)
    arn = "arn:aws:iam::123456789012:role/team-a-submitter"
    share.grant_submit(iam.Role.from_role_arn(stack, "Existing", arn), max_priority=5)
    user = iam.User(stack, "User")
    share.grant_update_priority(user)
    assert share.grants == (
        ShareGrant(arn, "submit", 5), ShareGrant("Scratch/User", "update_priority", None)
    )


def test_submission_tags_name_the_share(built: SimpleNamespace) -> None:
    assert built.cfn["Detailed"].submission_tags == {SHARE_TAG_KEY: "Detailed"}
    assert built.share_import.submission_tags == {SHARE_TAG_KEY: "team-a"}


def test_an_imported_share_grants_in_its_own_account_and_region(built: SimpleNamespace) -> None:
    share = built.share_import
    assert (share.quota_share_name, share.job_queue_arn) == ("team-a", QUEUE_ARN)
    assert isinstance(share, IQuotaShare)
    jobs = {"Fn::Join": ["", ["arn:", PARTITION, ":batch:eu-west-1:123456789012:service-job/*"]]}
    assert policy_statements(built.import_submitter) == [
        {
            "Action": "batch:SubmitServiceJob",
            "Condition": {
                "NumericLessThanEquals": {"batch:SchedulingPriority": 10},
                "StringEquals": {f"aws:RequestTag/{SHARE_TAG_KEY}": "team-a"},
                "ForAllValues:StringNotEqualsIgnoreCase": RESERVED,
            },
            "Effect": "Allow",
            "Resource": [QUEUE_ARN, SHARE_ARN, jobs],
        },
        tag_on_submission("team-a", jobs),
    ]
    assert policy_statements(built.import_updater) == [
        {
            "Action": "batch:UpdateServiceJob",
            "Condition": {"StringEquals": {f"aws:ResourceTag/{SHARE_TAG_KEY}": "team-a"}},
            "Effect": "Allow",
            "Resource": jobs,
        }
    ]


def test_a_token_share_arn_is_split_at_deploy_time(built: SimpleNamespace) -> None:
    share = built.token_import
    parameter = {"Ref": "ShareArn"}
    halves = {"Fn::Split": ["/quota-share/", parameter]}
    assert resolve(share, share.job_queue_arn) == {"Fn::Select": [0, halves]}
    assert resolve(share, share.quota_share_name) == {"Fn::Select": [1, halves]}


# -- errors -----------------------------------------------------------------------------


@pytest.fixture
def queue() -> TrainingJobQueue:
    return make_queue(scratch_stack())


def test_the_opt_in_to_delete_adopted_shares_is_rendered_only_when_set(
    queue: TrainingJobQueue,
) -> None:
    stack = cdk.Stack.of(queue)
    default = QuotaShare(stack, "Default", job_queue=queue, spec=spec("Default"))
    opted = QuotaShare(
        stack, "Opted", job_queue=queue, spec=spec("Opted"),
        lifecycle=ShareLifecycle(adopt_existing=True, delete_adopted_share_on_delete=True),
    )

    assert "DeleteAdoptedShareOnDelete" not in resource(default)["Properties"]
    assert resource(opted)["Properties"]["DeleteAdoptedShareOnDelete"] is True
    assert resource(opted)["Properties"]["AdoptExisting"] is True


@pytest.mark.parametrize(
    "guard", ["adopt_existing", "allow_preemption_on_shrink", "terminate_active_jobs_on_delete",
              "allow_preemption_on_in_share_enable", "delete_adopted_share_on_delete"]
)
def test_guards_need_the_custom_resource(queue: TrainingJobQueue, guard: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShare(
            queue, "Share", job_queue=queue, spec=spec("Team"), provisioning=CFN,
            lifecycle=ShareLifecycle(**{guard: True}),
        )
    assert_config_error(
        caught.value, "quota share 'Team'", f"lifecycle.{guard}", True,
        "False with ShareProvisioning.CLOUDFORMATION",
    )
    assert queue.node.try_find_child("Share") is None
    assert queue.quota_share_specs == ()


def test_shares_are_deleted_with_the_stack_by_default(built: SimpleNamespace) -> None:
    for share in (built.custom, built.cfn["Lend"]):
        assert resource(share)["DeletionPolicy"] == "Delete"


@pytest.mark.parametrize("mode", [CFN, CUSTOM])
def test_a_retained_share_stays_in_batch_when_it_leaves_the_stack(
    built: SimpleNamespace, mode: ShareProvisioning
) -> None:
    share = resource(built.retained[mode])
    assert (share["DeletionPolicy"], share["UpdateReplacePolicy"]) == ("Retain", "Retain")


def test_custom_resource_shares_keep_one_tag_for_the_ownership_marker(
    queue: TrainingJobQueue,
) -> None:
    tags = {f"k{i}": "v" for i in range(50)}
    QuotaShare(queue, "Cfn", job_queue=queue, spec=spec("Cfn", tags=tags), provisioning=CFN)
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShare(queue, "Custom", job_queue=queue, spec=spec("Custom", tags=tags))
    assert_config_error(
        caught.value, "quota share 'Custom'", "tags", "50 tags",
        "at most 48 with ShareProvisioning.CUSTOM_RESOURCE",
    )
    fitting = dict(list(tags.items())[:48])
    QuotaShare(queue, "Fits", job_queue=queue, spec=spec("Fits", tags=fitting))


@pytest.mark.parametrize(
    ("props", "field", "value", "allowed"),
    [
        ({"lifecycle": ShareLifecycle(removal_policy="RETAIN")},  # type: ignore[arg-type]
         "lifecycle.removal_policy", "RETAIN", "a RemovalPolicy"),
        ({"provisioning": "CLOUDFORMATION"}, "provisioning", "CLOUDFORMATION",
         "ShareProvisioning.CUSTOM_RESOURCE or ShareProvisioning.CLOUDFORMATION"),
        ({"lifecycle": ShareLifecycle(adopt_existing="true")},  # type: ignore[arg-type]
         "lifecycle.adopt_existing", "true", "True or False"),
        ({"lifecycle": {"adopt_existing": True}}, "lifecycle", {"adopt_existing": True},
         "a ShareLifecycle"),
        ({"job_queue": QUEUE_ARN}, "job_queue", QUEUE_ARN, "a TrainingJobQueue"),
        ({"provider": "QuotaShareProvider"}, "provider", "QuotaShareProvider",
         "a QuotaShareProvider or None"),
    ],
)
def test_share_prop_mistakes_name_the_share(
    queue: TrainingJobQueue, props: dict[str, Any], field: str, value: Any, allowed: str
) -> None:
    arguments: dict[str, Any] = {"job_queue": queue, "spec": spec("Team"), **props}
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShare(queue, "Share", **arguments)
    assert_config_error(caught.value, "quota share 'Team'", field, value, allowed)


def test_spec_must_be_a_quota_share_spec(queue: TrainingJobQueue) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShare(queue, "Share", job_queue=queue, spec={"name": "Team"})  # type: ignore[arg-type]
    assert_config_error(
        caught.value, "quota share 'Scratch/Queue/Share'", "spec", {"name": "Team"},
        "a QuotaShareSpec",
    )


@pytest.mark.parametrize("priority", [-1, 10000, True, 2.5])
def test_priority_ceilings_outside_0_to_9999_are_rejected(priority: Any) -> None:
    share = QuotaShare.from_quota_share_arn(scratch_stack(), "Share", SHARE_ARN)
    grantee = role(cdk.Stack.of(share), "Grantee")
    for grant in (share.grant_submit, share.grant_update_priority):
        with pytest.raises(QuotaConfigError) as caught:
            grant(grantee, max_priority=priority)
        assert_config_error(
            caught.value, "quota share 'team-a'", "max_priority", priority, "between 0 and 9999"
        )


def test_one_execution_role_must_still_come_in_a_list() -> None:
    stack = scratch_stack()
    share = QuotaShare.from_quota_share_arn(stack, "Share", SHARE_ARN)
    execution = iam.Role(stack, "Execution", assumed_by=iam.ServicePrincipal("sagemaker"))
    with pytest.raises(QuotaConfigError) as caught:
        share.grant_submit(role(stack, "Grantee"), execution_roles=execution)  # type: ignore[arg-type]
    assert_config_error(
        caught.value, "quota share 'team-a'", "execution_roles", "Scratch/Execution",
        "for one role pass execution_roles=[role]",
    )
    assert share.grants == ()


def test_execution_roles_must_be_roles() -> None:
    share = QuotaShare.from_quota_share_arn(scratch_stack(), "Share", SHARE_ARN)
    grantee = role(cdk.Stack.of(share), "Grantee")
    role_arn = "arn:aws:iam::123456789012:role/x"
    with pytest.raises(QuotaConfigError) as caught:
        share.grant_submit(grantee, execution_roles=[role_arn])  # type: ignore[list-item]
    assert_config_error(
        caught.value, "quota share 'team-a'", "execution_roles[0]", role_arn, "an iam.IRole"
    )


@pytest.mark.parametrize(
    ("arn", "field"),
    [
        (QUEUE_ARN, "quota_share_arn"),
        (f"{QUEUE_ARN}/compute/team-a", "quota_share_arn"),
        (f"{QUEUE_ARN}/quota-share/team a", "quota_share_arn (quota share name)"),
    ],
)
def test_a_malformed_share_arn_is_rejected(arn: str, field: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShare.from_quota_share_arn(scratch_stack(), "Share", arn)
    assert caught.value.subject == "quota share 'Scratch/Share'"
    assert caught.value.field == field


def test_a_share_imported_from_a_token_is_named_by_its_path_in_errors() -> None:
    stack = scratch_stack()
    share = QuotaShare.from_quota_share_arn(
        stack, "Share", cdk.CfnParameter(stack, "ShareArn").value_as_string
    )
    with pytest.raises(QuotaConfigError) as caught:
        share.grant_update_priority(role(stack, "Grantee"), max_priority=10000)
    assert_config_error(
        caught.value, "quota share 'Scratch/Share'", "max_priority", 10000, "between 0 and 9999"
    )
