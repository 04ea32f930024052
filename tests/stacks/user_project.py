"""A project of a user's own, outside this repository, with the built wheel installed: what
the README blocks and the CDK CLI test run in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from stacks.launch import PROJECT_ROOT


@dataclass(frozen=True)
class UserProject:
    """A directory outside the repository and a Python with the wheel installed."""

    directory: Path
    python: Path

    def run(self, code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), "-c", code], cwd=self.directory, env=checkout_free_environment(),
            capture_output=True, text=True, timeout=600, check=False,
        )


def checkout_free_environment() -> dict[str, str]:
    """This process's environment without what would make the checkout importable
    (dev.py puts it on PYTHONPATH) or make an app think it runs under the CDK CLI."""
    return {
        k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("CDK_")
    }


@pytest.fixture(scope="session")
def user_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserProject]:
    """Build the wheel once per session and install it into a throw-away virtual environment
    whose dependencies come from this environment's site-packages. A path line in a .pth file
    adds that directory without processing its own .pth files, so nothing installed there in
    editable mode can shadow the wheel."""
    if shutil.which("node") is None:
        pytest.skip("aws-cdk-lib needs Node.js")
    root = tmp_path_factory.mktemp("readme")
    wheels = root / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir",
         str(wheels), str(PROJECT_ROOT)],
        check=True, capture_output=True, timeout=600, env=checkout_free_environment(),
    )
    (wheel,) = wheels.glob("quota_constructs-*.whl")
    environment = root / "venv"
    venv.EnvBuilder(with_pip=False).create(environment)
    python = environment / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site_packages = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True, capture_output=True, text=True,
    ).stdout.strip())
    (site_packages / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    # --ignore-installed: an older .venv may still list the project (an editable install of
    # it); the wheel must be installed here regardless.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--ignore-installed", "--quiet", str(wheel)],
        check=True, capture_output=True, timeout=600, env=checkout_free_environment(),
    )
    project = root / "my-training-platform"
    project.mkdir()
    yield UserProject(project, python)
