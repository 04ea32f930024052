"""TrainingServiceEnvironment: a SAGEMAKER_TRAINING environment sized in instance types."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import aws_cdk as cdk
import pytest

from quota_constructs import (
    CapacityLimit,
    ITrainingServiceEnvironment,
    QuotaConfigError,
    TrainingServiceEnvironment,
)

from .support import G5, G6, assert_config_error, logical_id, properties, resolve, scratch_stack

ENVIRONMENT_ARN = "arn:aws:batch:eu-west-1:123456789012:service-environment/gpu-pool"


@pytest.fixture(scope="module")
def built() -> SimpleNamespace:
    app = cdk.App()
    default_stack = cdk.Stack(app, "Default")
    full_stack = cdk.Stack(app, "Full")
    return SimpleNamespace(
        default=TrainingServiceEnvironment(
            default_stack, "Environment", capacity_limits=[CapacityLimit(G5, 3)]
        ),
        full=TrainingServiceEnvironment(
            full_stack,
            "Environment",
            capacity_limits=[CapacityLimit(G5, 3), CapacityLimit("ml.g6.xlarge", 2)],
            service_environment_name="gpu-pool",
            enabled=False,
            tags={"team": "platform"},
        ),
        by_arn=TrainingServiceEnvironment.from_service_environment_arn(
            default_stack, "ByArn", ENVIRONMENT_ARN
        ),
        by_attributes=TrainingServiceEnvironment.from_service_environment_attributes(
            default_stack, "ByAttributes",
            service_environment_arn=ENVIRONMENT_ARN, capacity_limits=[CapacityLimit(G6, 4)],
        ),
    )


def test_defaults(built: SimpleNamespace) -> None:
    assert properties(cdk.Stack.of(built.default), "AWS::Batch::ServiceEnvironment") == {
        "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
        "CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 3}],
        "State": "ENABLED",
    }
    assert built.default.capacity_limits == (CapacityLimit(G5, 3),)
    assert resolve(built.default, built.default.service_environment_arn) == {
        "Fn::GetAtt": [logical_id(built.default), "ServiceEnvironmentArn"]
    }


def test_every_prop_is_rendered(built: SimpleNamespace) -> None:
    assert properties(cdk.Stack.of(built.full), "AWS::Batch::ServiceEnvironment") == {
        "ServiceEnvironmentType": "SAGEMAKER_TRAINING",
        "ServiceEnvironmentName": "gpu-pool",
        "CapacityLimits": [
            {"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 3},
            {"CapacityUnit": "ml.g6.xlarge", "MaxCapacity": 2},
        ],
        "State": "DISABLED",
        "Tags": {"team": "platform"},
    }
    assert built.full.service_environment_name == "gpu-pool"
    assert built.full.node.default_child.node.id == "Resource"


def test_imports(built: SimpleNamespace) -> None:
    for environment in (built.default, built.by_arn, built.by_attributes):
        assert isinstance(environment, ITrainingServiceEnvironment)
    assert built.by_arn.service_environment_arn == ENVIRONMENT_ARN
    assert built.by_arn.service_environment_name == "gpu-pool"
    assert built.by_arn.capacity_limits is None
    assert built.by_attributes.capacity_limits == (CapacityLimit(G6, 4),)
    assert built.by_attributes.env.region == "eu-west-1"


@pytest.mark.parametrize(
    ("limits", "field", "value", "allowed"),
    [
        ([], "capacity_limits", [], "between 1 and 5 capacity limits (0 given)"),
        (
            [CapacityLimit(f"ml.g5.{size}", 1) for size in
             ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")],
            "capacity_limits",
            [f"ml.g5.{size}:1" for size in
             ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge")],
            "(6 given)",
        ),
        ([CapacityLimit("NUM_INSTANCES", 3)], "capacity_limits[0].unit", "NUM_INSTANCES",
         "never NUM_INSTANCES"),
        ([CapacityLimit("ml.g5.xlarg", 3)], "capacity_limits[0].unit", "ml.g5.xlarg",
         "did you mean"),
        ([CapacityLimit(G5, 1), CapacityLimit(G5, 2)], "capacity_limits[1].unit", G5,
         "each capacity unit at most once"),
        ([CapacityLimit(G5, 0)], "capacity_limits[0].max_capacity", 0, ">= 1"),
    ],
)
def test_capacity_limit_mistakes_name_the_environment(
    limits: list[CapacityLimit], field: str, value: Any, allowed: str
) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        TrainingServiceEnvironment(
            scratch_stack(), "Environment", capacity_limits=limits,
            service_environment_name="gpu-pool",
        )
    assert_config_error(caught.value, "service environment 'gpu-pool'", field, value, allowed)


def test_an_unnamed_environment_is_named_by_its_construct_path() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        TrainingServiceEnvironment(
            scratch_stack(), "Environment", capacity_limits=[CapacityLimit(G5, 1)],
            enabled="no",  # type: ignore[arg-type]
        )
    assert_config_error(
        caught.value, "service environment 'Scratch/Environment'", "enabled", "no", "True or False"
    )


def test_imported_capacity_limits_are_validated() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        TrainingServiceEnvironment.from_service_environment_attributes(
            scratch_stack(), "Imported",
            service_environment_arn=ENVIRONMENT_ARN, capacity_limits=[CapacityLimit(G5, -1)],
        )
    assert_config_error(
        caught.value, "service environment 'gpu-pool'", "capacity_limits[0].max_capacity", -1,
        ">= 1",
    )


def test_an_arn_of_another_resource_type_is_rejected() -> None:
    arn = "arn:aws:batch:eu-west-1:123456789012:compute-environment/gpu-pool"
    with pytest.raises(QuotaConfigError) as caught:
        TrainingServiceEnvironment.from_service_environment_arn(scratch_stack(), "Imported", arn)
    assert_config_error(
        caught.value, "service environment 'Scratch/Imported'", "service_environment_arn", arn,
        ":service-environment/<name>",
    )


def test_tokens_are_not_validated() -> None:
    stack = scratch_stack()
    capacity = cdk.CfnParameter(stack, "Capacity", type="Number").value_as_number
    environment = TrainingServiceEnvironment(
        stack, "Environment", capacity_limits=[CapacityLimit(G5, capacity)]  # type: ignore[arg-type]
    )
    assert environment.capacity_limits[0].max_capacity == capacity
