"""Choosing deployment environments with ``-c env=NAME`` from any app (the library's part of
what this repository's app.py does)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import App

from quota_constructs.deployments import (
    UnknownEnvironmentError,
    app_settings,
    environments_from_context,
    parse_context_flags,
    select_environments,
)

ENVIRONMENTS = {"dev": 2, "staging": 4, "prod": 8}


def test_all_environments_without_a_name_and_exactly_one_with_it() -> None:
    assert environments_from_context(App(), ENVIRONMENTS) == ENVIRONMENTS
    assert environments_from_context(App(context={"env": "prod"}), ENVIRONMENTS) == {"prod": 8}
    assert select_environments(ENVIRONMENTS, "staging") == [4]


def test_an_unknown_name_names_the_known_ones() -> None:
    with pytest.raises(UnknownEnvironmentError) as raised:
        environments_from_context(App(context={"env": "qa"}), ENVIRONMENTS)
    assert str(raised.value) == "unknown deployment environment 'qa'; known: dev, prod, staging"


def test_another_context_key() -> None:
    app = App(context={"stage": "dev"})
    assert environments_from_context(app, ENVIRONMENTS, context_key="stage") == {"dev": 2}


def test_a_direct_run_gets_cdk_json_context_plus_flags(tmp_path: Path) -> None:
    cdk_json = tmp_path / "cdk.json"
    cdk_json.write_text(json.dumps({"app": "python3 app.py",
                                    "context": {"@aws-cdk/core:flag": True, "env": "dev"}}))
    settings = app_settings(["-c", "env=prod"], {}, cdk_json=cdk_json)
    assert settings == {"context": {"@aws-cdk/core:flag": True, "env": "prod"},
                        "outdir": str(tmp_path.resolve() / "cdk.out")}
    # Under the CDK CLI the CLI passes both itself.
    assert app_settings(["-c", "env=prod"], {"CDK_OUTDIR": "x"}, cdk_json=cdk_json) == {}


def test_context_flags_as_the_cli_takes_them() -> None:
    assert parse_context_flags(["-c", "a=1", "--context", "b=2", "--context=c=3=4"]) == {
        "a": "1", "b": "2", "c": "3=4"}
    with pytest.raises(SystemExit, match="key=value"):
        parse_context_flags(["-c", "novalue"])
