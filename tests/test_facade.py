"""The package facade: its exports are its imports, listed once, and every one resolves."""

from __future__ import annotations

import subprocess
import sys

import quota_constructs

# What DESIGN.md §3 and the README promise at the top level.
PROMISED = {
    "CapacityUnit", "CapacityLimit", "SharingStrategy", "QuotaShareSpec", "QuotaConfigError",
    "QuotaShareSchedulingPolicy", "TrainingServiceEnvironment", "TrainingJobQueue", "QuotaShare",
    "ShareProvisioning", "QuotaManagedTrainingQueue", "QuotaShareMonitoring",
    "allocation_summary",
}


def test_every_export_resolves_to_the_object_of_its_module() -> None:
    for name in quota_constructs.__all__:
        value = getattr(quota_constructs, name)
        if isinstance(value, type) or callable(value):
            assert value.__module__.startswith("quota_constructs."), name
            assert getattr(sys.modules[value.__module__], name) is value, name


def test_the_promised_names_are_exported() -> None:
    assert set(quota_constructs.__all__) >= PROMISED


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        quota_constructs.NoSuchConstruct  # noqa: B018
    except AttributeError as error:
        assert "NoSuchConstruct" in str(error)
    else:
        raise AssertionError("an unknown name resolved")


def test_the_facade_imports_no_aws_cdk_until_a_construct_is_asked_for() -> None:
    # The Lambdas ship the facade without aws_cdk: importing it and the model must not need it.
    code = (
        "import sys, quota_constructs, quota_constructs.model\n"
        "assert 'aws_cdk' not in sys.modules, 'aws_cdk imported'\n"
        "assert 'QuotaManagedTrainingQueue' in quota_constructs.__all__\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
