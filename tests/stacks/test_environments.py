"""Per-environment deployment: selection by context, naming, tagging and sizing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import App
from aws_cdk.assertions import Template

from stacks.environments import ENVIRONMENTS, UnknownEnvironmentError, select_environments
from stacks.launch import (
    PROJECT_ROOT,
    app_settings,
    clear_previous_assembly,
    parse_context_flags,
)
from stacks.wiring import add_stacks


def test_every_environment_is_built_without_selection(all_stacks: dict[str, object]) -> None:
    for env in ENVIRONMENTS.values():
        assert env.stack_name in all_stacks


def test_selecting_one_environment_builds_only_its_stack() -> None:
    app = App(context={"env": "prod"})
    assert [stack.stack_name for stack in add_stacks(app)] == ["TrainingQuotas-prod"]


def test_unknown_environment_lists_the_known_ones() -> None:
    with pytest.raises(UnknownEnvironmentError) as caught:
        select_environments("production")
    assert str(caught.value) == (
        "unknown deployment environment 'production'; known: dev, prod, staging"
    )


def test_app_rejects_unknown_environment_with_a_clear_message() -> None:
    # A mistyped environment must not cost the user the last good cdk.out.
    outdir = PROJECT_ROOT / "cdk.out"
    created = not outdir.exists()
    outdir.mkdir(exist_ok=True)
    marker = outdir / "kept-by-a-failed-run.test"
    marker.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CDK_")}
    try:
        result = subprocess.run(
            [sys.executable, "app.py", "-c", "env=qa"],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 1
        assert "unknown deployment environment 'qa'; known: dev, prod, staging" in result.stderr
        assert marker.exists()
    finally:
        marker.unlink(missing_ok=True)
        if created:
            outdir.rmdir()


def test_app_run_directly_synthesizes_into_the_projects_cdk_out() -> None:
    # The README's main job: python app.py (here one environment, to stay quick).
    env = {k: v for k, v in os.environ.items() if not k.startswith("CDK_")}
    result = subprocess.run(
        [sys.executable, "app.py", "-c", "env=dev"], cwd=PROJECT_ROOT, env=env,
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == ""
    assert "synthesized 1 stack into" in result.stderr
    outdir = PROJECT_ROOT / "cdk.out"
    assert sorted(p.name for p in outdir.glob("*.template.json")) == [
        "TrainingQuotas-dev.template.json"
    ]
    assert (outdir / "agreements" / "TrainingQuotas-dev.md").is_file()
    assert (outdir / "agreements" / "TrainingQuotas-dev.json").is_file()


@pytest.mark.skipif(
    not (PROJECT_ROOT / ".venv").is_dir(), reason="needs the environment dev.py creates"
)
def test_app_moves_to_the_project_environment_when_python3_lacks_the_dependencies() -> None:
    # -S hides site-packages, as a python3 without aws-cdk-lib would; the CDK CLI's python3
    # may be such an interpreter.
    env = {k: v for k, v in os.environ.items() if not k.startswith("CDK_")}
    result = subprocess.run(
        [sys.executable, "-S", "app.py", "-c", "env=qa"], cwd=PROJECT_ROOT, env=env,
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 1
    assert "unknown deployment environment 'qa'" in result.stderr


def test_stack_carries_its_environment_in_name_tags_and_size() -> None:
    app = App(context={"env": "prod"})
    (stack,) = add_stacks(app)
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::Batch::ServiceEnvironment",
        {
            "CapacityLimits": [
                {"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 8},
                {"CapacityUnit": "ml.g5.12xlarge", "MaxCapacity": 4},
            ],
            "Tags": {"environment": "prod"},
        },
    )
    template.has_resource_properties("AWS::Batch::JobQueue", {"Priority": 10})
    assert "(prod)" in stack.template_options.description  # type: ignore[operator]


def test_account_and_region_are_optional() -> None:
    assert all(env.cdk_environment is None for env in ENVIRONMENTS.values())


def test_direct_run_reads_cdk_json_context_and_flags() -> None:
    settings = app_settings(["-c", "env=dev", "--context=team=x"], {})
    assert settings["context"]["env"] == "dev"
    assert settings["context"]["team"] == "x"
    assert settings["context"]["@aws-cdk/aws-iam:minimizePolicies"] is True
    assert settings["outdir"].endswith("cdk.out")
    assert app_settings([], {"CDK_OUTDIR": "/tmp/x"}) == {}


@pytest.mark.parametrize("argv", [["-c"], ["-c", "novalue"], ["stray"]])
def test_bad_context_flags_are_rejected(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse_context_flags(argv)


def test_a_direct_run_starts_from_an_empty_assembly(tmp_path: Path) -> None:
    stale = tmp_path / "cdk.out"
    stale.mkdir()
    (stale / "TrainingQuotas-dev.template.json").write_text("{}")
    clear_previous_assembly({"outdir": str(stale)})
    assert not stale.exists()
    clear_previous_assembly({})  # under the CLI: nothing to clear
