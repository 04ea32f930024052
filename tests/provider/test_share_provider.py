"""QuotaShareProvider: the resources it synthesizes, its IAM scope, its errors, cdk-nag.

One App (module fixture) holds every scenario and is synthesized once, with the feature flags of
the project's cdk.json so that policies are minimized exactly as in a deployment:
- ``Provider``: the provider obtained through ``for_stack``, two job queues (one defined in the
  stack, one imported by ARN) with two quota shares each, ``manage_shares_of`` called once per
  share and once more through a second token for the same queue;
- ``Tuned``: a provider created explicitly with non-default props;
- ``Queues`` / ``Consumer``: a provider managing a queue defined in another stack.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from aws_cdk import App, CustomResource, Duration, Environment, Stack, Token, Validations
from aws_cdk import aws_batch as batch
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs, lint

from quota_constructs.model import QuotaConfigError
from quota_constructs.nag_acknowledgments import nag_resource_name
from quota_constructs.share_provider import QuotaShareProvider

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ENV = Environment(account="123456789012", region="eu-west-1")
IMPORTED_QUEUE = "arn:aws:batch:eu-west-1:123456789012:job-queue/imported-queue"
SERVICE_ENVIRONMENT = "arn:aws:batch:eu-west-1:123456789012:service-environment/training"

ON_EVENT = "quota_constructs.runtime.quota_share_handler.on_event"
IS_COMPLETE = "quota_constructs.runtime.quota_share_handler.is_complete"
FRAMEWORK_HANDLERS = {"framework.onEvent", "framework.isComplete", "framework.onTimeout"}

# The contract, restated independently of the module: which Batch action may touch what.
QUEUE_LEVEL = ["batch:CreateQuotaShare", "batch:GetJobQueueSnapshot", "batch:ListQuotaShares"]
SHARE_LEVEL = [
    "batch:CreateQuotaShare",
    "batch:DeleteQuotaShare",
    "batch:DescribeQuotaShare",
    "batch:ListTagsForResource",
    "batch:TagResource",
    "batch:UntagResource",
    "batch:UpdateQuotaShare",
]
UNSCOPED = ["batch:DescribeJobQueues", "batch:DescribeServiceEnvironments",
            "batch:DescribeServiceJob", "batch:ListServiceJobs", "xray:PutTelemetryRecords",
            "xray:PutTraceSegments"]
LOG_WRITE = ["logs:CreateLogStream", "logs:PutLogEvents"]


def project_context() -> dict[str, Any]:
    return dict(json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"])


def job_queue(stack: Stack, id: str) -> batch.CfnJobQueue:
    return batch.CfnJobQueue(
        stack,
        id,
        priority=1,
        job_queue_type="SAGEMAKER_TRAINING",
        service_environment_order=[
            batch.CfnJobQueue.ServiceEnvironmentOrderProperty(
                order=1, service_environment=SERVICE_ENVIRONMENT
            )
        ],
    )


def quota_share(stack: Stack, id: str, queue_arn: str) -> CustomResource:
    """What a QuotaShare construct does with the provider: look it up, scope it, use it."""
    provider = QuotaShareProvider.for_stack(stack)
    provider.manage_shares_of(queue_arn)
    return CustomResource(
        stack,
        id,
        service_token=provider.service_token,
        resource_type="Custom::BatchQuotaShare",
        properties={"QuotaShareName": id, "JobQueue": queue_arn},
    )


@dataclass
class Built:
    app: App
    stacks: dict[str, Stack]
    templates: dict[str, dict[str, Any]]
    provider: QuotaShareProvider
    tuned: QuotaShareProvider

    def template(self, name: str) -> Template:
        return Template.from_json(self.templates[name])

    def resources(self, name: str, resource_type: str) -> dict[str, dict[str, Any]]:
        return {
            logical_id: resource
            for logical_id, resource in self.templates[name]["Resources"].items()
            if resource["Type"] == resource_type
        }

    def logical_id(self, construct: Any) -> str:
        cfn = construct.node.default_child or construct
        stack = Stack.of(cfn)
        return str(stack.resolve(stack.get_logical_id(cfn)))


@pytest.fixture(scope="module")
def built() -> Iterator[Built]:
    with TemporaryDirectory() as outdir:
        app = App(context=project_context(), outdir=outdir)

        stack = Stack(app, "Provider", env=ENV)
        provider = QuotaShareProvider.for_stack(stack)
        queue = job_queue(stack, "QueueA")
        for name in ("TeamA", "TeamB"):
            quota_share(stack, name, queue.attr_job_queue_arn)
        for name in ("TeamC", "TeamD"):
            quota_share(stack, name, IMPORTED_QUEUE)
        # A second token object for the same attribute must not add a second grant.
        provider.manage_shares_of(Token.as_string(queue.get_att("JobQueueArn")))

        tuned_stack = Stack(app, "Tuned", env=ENV)
        tuned = QuotaShareProvider(
            tuned_stack,
            "QuotaShareProvider",
            total_timeout=Duration.minutes(10),
            query_interval=Duration.seconds(30),
            log_retention=logs.RetentionDays.THREE_MONTHS,
            handler_layers=[
                lambda_.LayerVersion.from_layer_version_arn(
                    tuned_stack, "Boto3Layer", BOTO3_LAYER_ARN
                )
            ],
        )
        quota_share(tuned_stack, "TeamA", IMPORTED_QUEUE)

        queues = Stack(app, "Queues", env=ENV)
        shared_queue = job_queue(queues, "SharedQueue")
        consumer = Stack(app, "Consumer", env=ENV)
        quota_share(consumer, "TeamA", shared_queue.attr_job_queue_arn)

        assembly = app.synth()
        stacks = {s.stack_name: s for s in (stack, tuned_stack, queues, consumer)}
        templates = {name: assembly.get_stack_by_name(name).template for name in stacks}
        yield Built(app, stacks, templates, provider, tuned)


BOTO3_LAYER_ARN = "arn:aws:lambda:eu-west-1:123456789012:layer:boto3-recent:3"


def test_handler_layers_reach_both_handlers_only(built: Built) -> None:
    functions = built.resources("Tuned", "AWS::Lambda::Function").values()
    layers = {f["Properties"]["Handler"]: f["Properties"].get("Layers") for f in functions}
    assert layers[ON_EVENT] == layers[IS_COMPLETE] == [BOTO3_LAYER_ARN]
    assert all(
        value is None for handler, value in layers.items() if handler not in (ON_EVENT, IS_COMPLETE)
    )
    default = built.resources("Provider", "AWS::Lambda::Function").values()
    assert all("Layers" not in f["Properties"] for f in default)


# -- one provider per stack --------------------------------------------------------------------


def test_for_stack_returns_the_one_provider_of_the_stack(built: Built) -> None:
    assert QuotaShareProvider.for_stack(built.stacks["Provider"]) is built.provider
    assert built.provider.node.path == "Provider/QuotaShareProvider"
    assert QuotaShareProvider.for_stack(built.stacks["Tuned"]) is built.tuned


def test_four_shares_on_two_queues_share_one_provider(built: Built) -> None:
    functions = built.resources("Provider", "AWS::Lambda::Function").values()
    handlers = sorted(f["Properties"]["Handler"] for f in functions)
    assert handlers == sorted([ON_EVENT, IS_COMPLETE, *FRAMEWORK_HANDLERS])
    assert len(built.resources("Provider", "AWS::StepFunctions::StateMachine")) == 1

    shares = built.resources("Provider", "Custom::BatchQuotaShare").values()
    tokens = {json.dumps(s["Properties"]["ServiceToken"]) for s in shares}
    assert len(list(shares)) == 4
    entrypoint = built.logical_id(
        built.provider.node.find_child("Provider").node.find_child("framework-onEvent")
    )
    assert tokens == {json.dumps({"Fn::GetAtt": [entrypoint, "Arn"]})}


# -- the handler functions ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attribute", "handler", "timeout"),
    [("on_event_function", ON_EVENT, 300), ("is_complete_function", IS_COMPLETE, 120)],
)
def test_handler_function_settings(
    built: Built, attribute: str, handler: str, timeout: int
) -> None:
    provider = built.provider
    function = getattr(provider, attribute)
    properties = built.templates["Provider"]["Resources"][built.logical_id(function)]["Properties"]
    assert properties["Handler"] == handler
    assert properties["Runtime"] == "python3.14"
    assert properties["Architectures"] == ["arm64"]
    assert properties["MemorySize"] == 256
    assert properties["Timeout"] == timeout
    assert properties["TracingConfig"] == {"Mode": "Active"}
    assert properties["LoggingConfig"] == {
        "LogGroup": {"Ref": built.logical_id(provider.log_group)}
    }
    assert properties["Role"] == {"Fn::GetAtt": [built.logical_id(provider.handler_role), "Arn"]}
    assert properties["Environment"]["Variables"] == {
        "QUOTA_SHARE_TOTAL_TIMEOUT_SECONDS": "1800",
        "QUOTA_SHARE_QUERY_INTERVAL_SECONDS": "15",
    }


def test_both_handlers_run_the_same_code_asset(built: Built) -> None:
    resources = built.templates["Provider"]["Resources"]
    codes = [
        resources[built.logical_id(f)]["Properties"]["Code"]
        for f in (built.provider.on_event_function, built.provider.is_complete_function)
    ]
    assert codes[0] == codes[1]
    assert codes[0]["S3Key"].endswith(".zip")


def test_framework_functions_are_traced_sized_and_log_to_the_provider_log_group(
    built: Built,
) -> None:
    provider = built.provider
    our_roles = {
        json.dumps({"Fn::GetAtt": [built.logical_id(role), "Arn"]})
        for role in (provider.framework_on_event_role, provider.framework_waiter_role)
    }
    framework = [
        f["Properties"]
        for f in built.resources("Provider", "AWS::Lambda::Function").values()
        if f["Properties"]["Handler"] in FRAMEWORK_HANDLERS
    ]
    assert len(framework) == 3
    for properties in framework:
        assert properties["MemorySize"] == 128
        assert properties["TracingConfig"] == {"Mode": "Active"}
        assert properties["LoggingConfig"]["LogGroup"] == {
            "Ref": built.logical_id(provider.log_group)
        }
        assert json.dumps(properties["Role"]) in our_roles


# -- IAM -----------------------------------------------------------------------------------------


def test_no_role_anywhere_carries_a_managed_policy(built: Built) -> None:
    for name in built.templates:
        assert not built.resources(name, "AWS::IAM::ManagedPolicy")
        for logical_id, role in built.resources(name, "AWS::IAM::Role").items():
            assert "ManagedPolicyArns" not in role["Properties"], f"{name}/{logical_id}"


def handler_statements(
    built: Built, stack: str, provider: QuotaShareProvider
) -> list[dict[str, Any]]:
    policy = provider.handler_role.node.find_child("DefaultPolicy")
    resource = built.templates[stack]["Resources"][built.logical_id(policy)]
    return resource["Properties"]["PolicyDocument"]["Statement"]  # type: ignore[no-any-return]


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def normalized(statements: list[dict[str, Any]]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Statements as sorted (actions, resources) pairs; duplicates stay visible."""
    assert all(
        s["Effect"] == "Allow" and set(s) == {"Action", "Effect", "Resource"} for s in statements
    )
    return sorted(
        (
            tuple(sorted(as_list(s["Action"]))),
            tuple(sorted(json.dumps(r, sort_keys=True) for r in as_list(s["Resource"]))),
        )
        for s in statements
    )


def quota_shares_of(queue_arn: Any) -> Any:
    if isinstance(queue_arn, str):
        return f"{queue_arn}/quota-share/*"
    return {"Fn::Join": ["", [queue_arn, "/quota-share/*"]]}


def test_handler_policy_is_exactly_the_queue_and_share_grants(built: Built) -> None:
    queue_a = {"Fn::GetAtt": ["QueueA", "JobQueueArn"]}
    log_group = {"Fn::GetAtt": [built.logical_id(built.provider.log_group), "Arn"]}
    expected: list[dict[str, Any]] = [
        {"Effect": "Allow", "Action": LOG_WRITE, "Resource": log_group},
        {"Effect": "Allow", "Action": UNSCOPED, "Resource": "*"},
        {"Effect": "Allow", "Action": QUEUE_LEVEL, "Resource": [queue_a, IMPORTED_QUEUE]},
        {
            "Effect": "Allow",
            "Action": SHARE_LEVEL,
            "Resource": [quota_shares_of(queue_a), quota_shares_of(IMPORTED_QUEUE)],
        },
    ]
    actual = handler_statements(built, "Provider", built.provider)
    assert normalized(actual) == normalized(expected)


def test_each_action_reaches_only_the_resource_type_it_is_defined_for(built: Built) -> None:
    """Whatever way the statements are grouped, per action: the queues, their shares, or '*'."""
    granted: dict[str, list[str]] = {}
    for statement in handler_statements(built, "Tuned", built.tuned):
        for action in as_list(statement["Action"]):
            granted.setdefault(action, []).extend(
                json.dumps(r, sort_keys=True) for r in as_list(statement["Resource"])
            )
    queue = [json.dumps(IMPORTED_QUEUE)]
    shares = [json.dumps(quota_shares_of(IMPORTED_QUEUE))]
    expected = {action: list(shares) for action in SHARE_LEVEL}
    for action in QUEUE_LEVEL:
        expected[action] = sorted(expected.get(action, []) + queue)
    expected.update({action: [json.dumps("*")] for action in UNSCOPED})
    log_group = json.dumps({"Fn::GetAtt": [built.logical_id(built.tuned.log_group), "Arn"]})
    expected.update({action: [log_group] for action in LOG_WRITE})
    assert {action: sorted(resources) for action, resources in granted.items()} == expected


def test_a_queue_of_another_stack_is_granted_through_its_export(built: Built) -> None:
    provider = QuotaShareProvider.for_stack(built.stacks["Consumer"])
    shares = [
        s
        for s in handler_statements(built, "Consumer", provider)
        if "batch:DeleteQuotaShare" in as_list(s["Action"])
    ]
    assert len(shares) == 1
    (resource,) = as_list(shares[0]["Resource"])
    joined = resource["Fn::Join"][1]
    assert "Fn::ImportValue" in joined[0] and joined[1] == "/quota-share/*"


# -- logs and the waiter -----------------------------------------------------------------------


@pytest.mark.parametrize(("stack", "days"), [("Provider", 365), ("Tuned", 90)])
def test_every_log_group_has_the_retention_and_outlives_the_stack(
    built: Built, stack: str, days: int
) -> None:
    groups = built.resources(stack, "AWS::Logs::LogGroup")
    assert len(groups) == 2
    for group in groups.values():
        assert group["Properties"]["RetentionInDays"] == days
        assert group["DeletionPolicy"] == "Retain"


def test_waiter_logs_every_event_without_execution_data_to_a_vended_log_group(built: Built) -> None:
    provider = built.provider
    (machine,) = built.resources("Provider", "AWS::StepFunctions::StateMachine").values()
    waiter_log_group = built.logical_id(provider.waiter_log_group)
    assert machine["Properties"]["LoggingConfiguration"] == {
        "Destinations": [
            {"CloudWatchLogsLogGroup": {"LogGroupArn": {"Fn::GetAtt": [waiter_log_group, "Arn"]}}}
        ],
        "IncludeExecutionData": False,
        "Level": "ALL",
    }
    assert machine["Properties"]["TracingConfiguration"] == {"Enabled": True}
    name = built.templates["Provider"]["Resources"][waiter_log_group]["Properties"]["LogGroupName"]
    assert name == {
        "Fn::Join": [
            "",
            ["/aws/vendedlogs/states/", {"Ref": built.logical_id(provider.is_complete_function)}],
        ]
    }


@pytest.mark.parametrize(
    ("stack", "interval", "attempts"), [("Provider", 15, 120), ("Tuned", 30, 20)]
)
def test_waiter_polls_at_the_query_interval_until_the_total_timeout(
    built: Built, stack: str, interval: int, attempts: int
) -> None:
    (machine,) = built.resources(stack, "AWS::StepFunctions::StateMachine").values()
    definition = "".join(
        p for p in machine["Properties"]["DefinitionString"]["Fn::Join"][1] if isinstance(p, str)
    )
    assert f'"IntervalSeconds":{interval},"MaxAttempts":{attempts},"BackoffRate":1' in definition


def test_explicit_props_reach_the_handlers(built: Built) -> None:
    properties = built.templates["Tuned"]["Resources"][
        built.logical_id(built.tuned.on_event_function)
    ]["Properties"]
    assert properties["Environment"]["Variables"] == {
        "QUOTA_SHARE_TOTAL_TIMEOUT_SECONDS": "600",
        "QUOTA_SHARE_QUERY_INTERVAL_SECONDS": "30",
    }
    assert (built.tuned.total_timeout.to_seconds(), built.tuned.query_interval.to_seconds()) == (
        600,
        30,
    )


@pytest.mark.parametrize("stack", ["Provider", "Consumer"])
def test_templates_pass_cfn_lint(built: Built, stack: str) -> None:
    # W3005: every aws-cdk-lib Function (the framework's included) depends on its role both by
    # GetAtt and by DependsOn, which CDK adds so that the role's policy exists first.
    config = ManualArgs(regions=["eu-west-1"], ignore_checks=["W3005"])
    assert [str(match) for match in lint(json.dumps(built.templates[stack]), config=config)] == []


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "interval", "field", "value"),
    [
        (Duration.minutes(61), Duration.seconds(15), "total_timeout", "1 hour 1 minute"),
        # An hour of waiting leaves no room for on_event before it and the last poll after it.
        (Duration.hours(1), Duration.seconds(15), "total_timeout", "1 hour"),
        (Duration.minutes(53), Duration.seconds(15), "total_timeout", "53 minutes"),
        (Duration.hours(2), Duration.seconds(15), "total_timeout", "2 hours"),
        (Duration.seconds(100), Duration.seconds(15), "total_timeout", "1 minute 40 seconds"),
        (Duration.seconds(10), Duration.seconds(15), "total_timeout", "10 seconds"),
        (Duration.minutes(30), Duration.millis(1500), "query_interval", "1 second 500 millis"),
        (Duration.minutes(30), Duration.seconds(0), "query_interval", "0 seconds"),
    ],
)
def test_timing_is_checked_before_anything_is_built(
    total: Duration, interval: Duration, field: str, value: str
) -> None:
    stack = Stack(App(), "Scratch")
    with pytest.raises(QuotaConfigError) as raised:
        QuotaShareProvider(
            stack, "QuotaShareProvider", total_timeout=total, query_interval=interval
        )
    assert (raised.value.subject, raised.value.field, raised.value.value) == (
        "QuotaShareProvider",
        field,
        value,
    )
    assert not stack.node.children


def test_the_longest_total_timeout_leaves_the_whole_request_within_the_hour() -> None:
    stack = Stack(App(), "Scratch")
    provider = QuotaShareProvider(stack, "QuotaShareProvider", total_timeout=Duration.minutes(52))
    assert provider.total_timeout.to_seconds() == 52 * 60
    # on_event (5 min) + waiter (52 min) + last is_complete (2 min) + hand-offs (1 min).
    assert provider.service_timeout.to_seconds() == 3600


def test_a_provider_can_live_anywhere_in_a_stack_under_any_id() -> None:
    stack = Stack(App(), "Scratch")
    holder = logs.LogGroup(stack, "Holder")
    nested = QuotaShareProvider(holder, "Shares", total_timeout=Duration.minutes(10))
    other = QuotaShareProvider(stack, "TeamProvider")
    assert nested.node.path == "Scratch/Holder/Shares"
    assert other.node.path == "Scratch/TeamProvider"
    # Neither is the stack's default: for_stack creates that one separately.
    default = QuotaShareProvider.for_stack(stack)
    assert default is not nested and default is not other
    assert default.node.path == "Scratch/QuotaShareProvider"


def test_a_provider_outside_every_stack_is_refused() -> None:
    with pytest.raises(QuotaConfigError, match="a Stack or a construct inside one"):
        QuotaShareProvider(App(), "QuotaShareProvider")


def test_creating_the_default_provider_after_a_share_says_what_to_do() -> None:
    stack = Stack(App(), "Scratch")
    quota_share(stack, "TeamA", IMPORTED_QUEUE)  # creates the default provider implicitly
    with pytest.raises(QuotaConfigError) as raised:
        QuotaShareProvider(stack, "QuotaShareProvider", total_timeout=Duration.minutes(10))
    message = str(raised.value)
    assert "Scratch/QuotaShareProvider" in message
    assert "above the first quota share" in message and "provider=" in message


def test_an_id_already_taken_is_reported_as_such() -> None:
    stack = Stack(App(), "Scratch")
    logs.LogGroup(stack, "Taken")
    with pytest.raises(QuotaConfigError, match="an id no other construct in the scope uses"):
        QuotaShareProvider(stack, "Taken")


def test_the_package_exports_the_provider() -> None:
    import quota_constructs

    assert quota_constructs.QuotaShareProvider is QuotaShareProvider
    assert "QuotaShareProvider" in quota_constructs.__all__


def test_the_reserved_id_taken_by_something_else_is_reported() -> None:
    stack = Stack(App(), "Scratch")
    logs.LogGroup(stack, "QuotaShareProvider")
    with pytest.raises(TypeError, match="reserved for the quota share provider"):
        QuotaShareProvider.for_stack(stack)


def test_a_queue_name_is_not_a_queue_arn() -> None:
    provider = QuotaShareProvider.for_stack(Stack(App(), "Scratch"))
    with pytest.raises(QuotaConfigError) as raised:
        provider.manage_shares_of("platform-queue")
    assert (raised.value.field, raised.value.value) == ("job_queue_arn", "platform-queue")


# -- cdk-nag ------------------------------------------------------------------------------------


def findings(app: App) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for pack in (AwsSolutionsChecks(app), ServerlessChecks(app)):
        report = pack.validate_scope(app)
        for violation in report.violations:
            found[violation.rule_name] = [
                str(r.construct_path) for r in violation.violating_resources
            ]
        assert report.success == (not report.violations)
    return found


def test_both_nag_packs_pass_on_the_synthesized_app(built: Built) -> None:
    assert findings(built.app) == {}


def test_both_nag_packs_pass_on_a_tree_that_was_never_synthesized() -> None:
    app = App(context=project_context())
    stack = Stack(app, "Unsynthesized", env=ENV)
    quota_share(stack, "TeamA", job_queue(stack, "Queue").attr_job_queue_arn)
    quota_share(stack, "TeamB", IMPORTED_QUEUE)
    assert findings(app) == {}


def acknowledgments(app: App) -> dict[str, dict[str, str]]:
    """Every acknowledgment in the app: construct path -> {rule id: reason}."""
    found: dict[str, dict[str, str]] = {}
    for construct in app.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                rules = {
                    rule.removeprefix("Annotation::"): reason for rule, reason in entry.data.items()
                }
                found.setdefault(construct.node.path, {}).update(rules)
    return found


def test_acknowledgments_sit_on_the_providers_own_resources_with_reasons(built: Built) -> None:
    acknowledged = acknowledgments(built.app)
    assert acknowledged
    for path, rules in acknowledged.items():
        assert "/QuotaShareProvider/" in path and path.endswith("/Resource"), path
        for rule, reason in rules.items():
            assert rule in {
                "Serverless-LambdaDLQ",
                "AwsSolutions-IAM5[Resource::*]",
            } or rule.startswith("AwsSolutions-IAM5[Resource::"), rule
            assert len(reason) > 60, (path, rule)


def test_the_handler_policy_acknowledges_exactly_its_wildcards(built: Built) -> None:
    acknowledged = acknowledgments(built.app)[
        "Provider/QuotaShareProvider/HandlerRole/DefaultPolicy/Resource"
    ]
    assert set(acknowledged) == {
        "AwsSolutions-IAM5[Resource::*]",
        "AwsSolutions-IAM5[Resource::<QueueA.JobQueueArn>/quota-share/*]",
        f"AwsSolutions-IAM5[Resource::{IMPORTED_QUEUE}/quota-share/*]",
    }


def test_framework_invoke_wildcards_are_acknowledged_per_function(built: Built) -> None:
    provider = built.provider
    handler_versions = {
        f"AwsSolutions-IAM5[Resource::<{built.logical_id(f)}.Arn>:*]"
        for f in (provider.on_event_function, provider.is_complete_function)
    }
    acknowledged = acknowledgments(built.app)
    for role in ("FrameworkOnEventRole", "FrameworkCompleteAndTimeoutRole"):
        rules = acknowledged[f"Provider/QuotaShareProvider/{role}/DefaultPolicy/Resource"]
        assert set(rules) == handler_versions | {"AwsSolutions-IAM5[Resource::*]"}


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (
            "arn:aws:batch:eu-west-1:1:job-queue/q/quota-share/*",
            "arn:aws:batch:eu-west-1:1:job-queue/q/quota-share/*",
        ),
        ({"Fn::GetAtt": ["Fn", "Arn"]}, "<Fn.Arn>"),
        ({"Ref": "Queue"}, "<Queue>"),
        (
            {"Fn::Join": ["", [{"Fn::GetAtt": ["Q", "JobQueueArn"]}, "/quota-share/*"]]},
            "<Q.JobQueueArn>/quota-share/*",
        ),
        ({"Fn::Sub": "arn:${AWS::Partition}:batch"}, "arn:<AWS::Partition>:batch"),
        ({"Fn::ImportValue": "Queues:ExportsOutput"}, "Queues:ExportsOutput"),
        ({"Fn::Select": [0, ["a"]]}, '{"Fn::Select":[0,["a"]]}'),
    ],
)
def test_nag_resource_name_matches_cdk_nag_naming(value: Any, name: str) -> None:
    assert nag_resource_name(value) == name
