"""A project of a user's own, outside this repository, with the built wheel installed: what
the README blocks and the CDK CLI test run in."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dev import build_distributions, checkout_free_env, install_wheel_alone


@dataclass(frozen=True)
class UserProject:
    """A directory outside the repository and a Python with the wheel installed."""

    directory: Path
    python: Path

    @property
    def console_script(self) -> Path:
        name = "quota-constructs.exe" if os.name == "nt" else "quota-constructs"
        return self.python.with_name(name)

    def run(self, code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), "-c", code], cwd=self.directory, env=checkout_free_environment(),
            capture_output=True, text=True, timeout=600, check=False,
        )


def checkout_free_environment() -> dict[str, str]:
    """This process's environment without what would make the checkout importable
    (dev.py puts it on PYTHONPATH) or make an app think it runs under the CDK CLI."""
    return checkout_free_env()


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel ``python3 dev.py dist`` builds and checks (sdist, wheel from the sdist, twine,
    contents, smoke test), built once per session."""
    wheel, _ = build_distributions(tmp_path_factory.mktemp("dist"))
    return wheel


@pytest.fixture(scope="session")
def user_project(
    tmp_path_factory: pytest.TempPathFactory, built_wheel: Path
) -> Iterator[UserProject]:
    """The built wheel installed alone into a throw-away virtual environment outside the
    repository (its dependencies from this environment's site-packages, see
    ``dev.install_wheel_alone``)."""
    if shutil.which("node") is None:
        pytest.skip("aws-cdk-lib needs Node.js")
    root = tmp_path_factory.mktemp("readme")
    python, _ = install_wheel_alone(built_wheel, root / "venv")
    project = root / "my-training-platform"
    project.mkdir()
    yield UserProject(project, python)
