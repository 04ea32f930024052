"""The released artefacts: ``python3 dev.py dist`` builds a wheel and an sdist that pass its
checks, and the wheel alone, installed outside the repository, runs every console command and
carries one version."""

from __future__ import annotations

import json
import subprocess
import textwrap
import zipfile
from pathlib import Path

import pytest

import quota_constructs
from quota_constructs.cli import COMMANDS

from .user_project import UserProject, checkout_free_environment

DECLARATION = textwrap.dedent('''
    from quota_constructs import CapacityLimit, CapacityUnit, QuotaShareSpec, SharingStrategy

    G5 = CapacityUnit.ML_G5_XLARGE
    DECLARATION = {
        "capacity_limits": [CapacityLimit(G5, 3)],
        "shares": [
            QuotaShareSpec(name="research", capacity_limits=[CapacityLimit(G5, 2)],
                           strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=50),
            QuotaShareSpec(name="product", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND),
        ],
    }
''')


def console(project: UserProject, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(project.console_script), *arguments], cwd=project.directory,
        env=checkout_free_environment(), capture_output=True, text=True, timeout=600,
        check=False,
    )


def test_the_wheels_metadata_carries_the_packages_version(built_wheel: Path) -> None:
    with zipfile.ZipFile(built_wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        lines = archive.read(metadata).decode().splitlines()
    assert f"Version: {quota_constructs.__version__}" in lines
    assert "Name: quota-constructs" in lines


def test_the_console_script_and_every_commands_help(user_project: UserProject) -> None:
    listed = console(user_project, "--help")
    assert listed.returncode == 0, listed.stderr
    for name in COMMANDS:
        helped = console(user_project, name, "--help")
        assert helped.returncode == 0, f"{name}: {helped.stderr}"
        assert f"usage: quota-constructs {name}" in helped.stdout


def test_simulate_runs_on_a_small_workload_from_the_wheel(user_project: UserProject) -> None:
    (user_project.directory / "my_declaration.py").write_text(DECLARATION)
    out = user_project.directory / "report"
    result = console(
        user_project, "simulate", "--declaration", "my_declaration.py:DECLARATION",
        "--synthetic", "--jobs", "40", "--hours", "12", "--out", str(out), "--quiet",
    )
    assert result.returncode == 0, result.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics, "metrics.json is empty"
    assert (out / "jobs.csv").read_text().count("\n") == 41  # a header and one row per job


@pytest.mark.parametrize("name", ["QuotaSharePolicy", "IQuotaSharePolicy"])
def test_deprecated_names_warn_once_per_process_naming_the_removing_release(
    user_project: UserProject, name: str
) -> None:
    construct = "QuotaSharePolicy(Stack(App(), f'S{i}'), 'Policy')" if name == "QuotaSharePolicy" \
        else "quota_constructs.IQuotaSharePolicy"
    result = user_project.run(textwrap.dedent(f'''
        import json
        import warnings
        from aws_cdk import App, Stack
        import quota_constructs
        from quota_constructs import QuotaSharePolicy
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(3):
                {construct}
        print(json.dumps([str(w.message) for w in caught if w.category is DeprecationWarning]))
    '''))
    assert result.returncode == 0, result.stderr
    messages = json.loads(result.stdout)
    assert len(messages) == 1, messages
    assert f"{name} is deprecated" in messages[0] and "0.2.0" in messages[0]
    changelog = (Path(__file__).parents[2] / "CHANGELOG.md").read_text()
    assert f"`{name}`" in changelog and "Removed in 0.2.0" in changelog
