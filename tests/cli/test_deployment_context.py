"""``-c enviroment=prod`` (a mistyped context key) fails naming the known keys instead of
silently building every environment; the keys CDK itself puts in the context pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import App

from quota_constructs import _share_ledger
from quota_constructs.deployments import (
    LIBRARY_CONTEXT_KEYS,
    UnknownContextKeyError,
    UnknownEnvironmentError,
    environments_from_context,
)

ENVIRONMENTS = {"dev": 2, "staging": 4, "prod": 8}
CDK_JSON = Path(__file__).parents[2] / "cdk.json"


@pytest.mark.parametrize("key", ["enviroment", "environment", "ENV", "stage", "evn"])
def test_a_mistyped_environment_key_names_the_known_keys(key: str) -> None:
    with pytest.raises(UnknownContextKeyError) as raised:
        environments_from_context(App(context={key: "prod"}), ENVIRONMENTS)
    message = str(raised.value)
    assert message.startswith(f"unknown context key {key!r} (-c {key}=prod)")
    assert "to choose a deployment environment: -c env=prod" in message
    assert message.endswith("known keys: env, quota_constructs:unownedCapacityBorrowable")
    # The apps that already catch an unknown environment name catch this too.
    assert isinstance(raised.value, UnknownEnvironmentError)


def test_a_mistyped_library_key_is_caught_too() -> None:
    app = App(context={"quota_constructs:unownedCapacityBorowable": "false"})
    with pytest.raises(UnknownContextKeyError, match="known keys: env, quota_constructs:"):
        environments_from_context(app, ENVIRONMENTS)


def test_the_keys_cdk_itself_passes_are_not_mistakes() -> None:
    context = json.loads(CDK_JSON.read_text())["context"]
    context.update({
        "aws:cdk:enable-path-metadata": True, "aws:cdk:version-reporting": False,
        "aws:cdk:bundling-stacks": ["**"], "acknowledged-issue-numbers": [32775],
        "cli-telemetry": False,
        "availability-zones:account=123456789012:region=us-east-1": ["us-east-1a"],
    })
    assert environments_from_context(App(context=context), ENVIRONMENTS) == ENVIRONMENTS
    context["env"] = "prod"
    assert environments_from_context(App(context=context), ENVIRONMENTS) == {"prod": 8}


def test_an_app_declares_its_own_keys() -> None:
    app = App(context={"stage_name": "prod", "env": "dev"})
    with pytest.raises(UnknownContextKeyError):
        environments_from_context(app, ENVIRONMENTS)
    assert environments_from_context(app, ENVIRONMENTS, known_keys=["stage_name"]) == {"dev": 2}


def test_the_library_keys_are_the_ones_its_constructs_read() -> None:
    assert _share_ledger.UNOWNED_CAPACITY_CONTEXT in LIBRARY_CONTEXT_KEYS
