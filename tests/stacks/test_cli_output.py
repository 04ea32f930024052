"""Under the CDK CLI, stdout is the CLI's: the app and dev.py write their messages to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stacks.launch import PROJECT_ROOT


def cli_environment(outdir: Path, **context: str) -> dict[str, str]:
    """What the CDK CLI hands ``python3 app.py``: the output directory and the context."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CDK_")}
    full_context = dict(json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"])
    full_context.update(context)
    env["CDK_OUTDIR"] = str(outdir)
    env["CDK_CONTEXT_JSON"] = json.dumps(full_context)
    return env


def test_under_the_cli_the_app_writes_nothing_to_stdout(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "app.py"], cwd=PROJECT_ROOT, env=cli_environment(tmp_path, env="dev"),
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == ""
    assert f"synthesized 1 stack into {tmp_path}" in result.stderr.splitlines()
    assert "TrainingQuotas-dev/TrainingQueue/JobQueue: service environment" in result.stderr
    template_path = tmp_path / "TrainingQuotas-dev.template.json"
    template = json.loads(template_path.read_text())
    # A clean cdk-nag run is said to have run, over what it checked.
    assert (f"cdk-nag AwsSolutions and Serverless checked {len(template['Resources'])} "
            "resources in 1 template: no unacknowledged findings") in result.stderr.splitlines()
    assert "AWS::Batch::JobQueue" in {r["Type"] for r in template["Resources"].values()}
    # What a user runs next, in the project directory (whose .cfnlintrc.yaml applies).
    linted = subprocess.run(
        [Path(sys.executable).with_name("cfn-lint"), template_path], cwd=PROJECT_ROOT,
        capture_output=True, text=True, check=False,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr


@pytest.mark.skipif(
    not (PROJECT_ROOT / ".venv").is_dir(), reason="needs the environment dev.py creates"
)
def test_switching_to_the_project_environment_keeps_stdout_clean(tmp_path: Path) -> None:
    # -S: a python3 without the dependencies, as the CLI's may be; app.py re-executes itself
    # under .venv's Python.
    result = subprocess.run(
        [sys.executable, "-S", "app.py"], cwd=PROJECT_ROOT,
        env=cli_environment(tmp_path, env="staging"),
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == ""
    assert "synthesized 1 stack into" in result.stderr


def test_setting_up_sends_what_it_and_its_subprocesses_print_to_stderr() -> None:
    # The first run under the CLI creates .venv: ensurepip and pip are subprocesses, whose
    # stdout a sys.stdout redirection would not catch.
    code = textwrap.dedent(
        """
        import subprocess, sys
        import dev
        with dev.stdout_to_stderr():
            print("from python")
            subprocess.run([sys.executable, "-c", "print('from a subprocess')"], check=True)
        print("after")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "after\n"
    assert "from python" in result.stderr
    assert "from a subprocess" in result.stderr
