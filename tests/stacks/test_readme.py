"""The README stays true: its Quickstart, and every Python block run as a user would run it —
in a project of their own, outside this repository, against the installed wheel."""

from __future__ import annotations

import os
import re
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

README = PROJECT_ROOT / "README.md"


def readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def block_id(block: str) -> str:
    """The block's first construct id, as a readable test id (``TrainingQuotas``...)."""
    found = re.search(r'Stack\(app, "([^"]+)"', block)
    return found.group(1) if found else "block"


def test_quickstart_gives_exactly_the_two_commands() -> None:
    quickstart = README.read_text().split("## Quickstart", 1)[1]
    first_bash = re.search(r"```bash\n(.*?)```", quickstart, flags=re.DOTALL)
    assert first_bash is not None
    assert first_bash.group(1).splitlines() == ["python3 dev.py synth", "python3 dev.py test"]


def test_the_readme_has_python_blocks_to_run() -> None:
    assert len(readme_python_blocks()) >= 4


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


def test_the_user_project_imports_the_wheel_not_the_checkout(user_project: UserProject) -> None:
    result = user_project.run("import quota_constructs; print(quota_constructs.__file__)")
    assert result.returncode == 0, result.stderr
    location = Path(result.stdout.strip())
    assert not location.is_relative_to(PROJECT_ROOT)
    assert location.is_relative_to(user_project.python.parent.parent)
    # stacks/ is this repository's, not the library's: a README block using it would fail.
    assert user_project.run("import stacks").returncode != 0


@pytest.mark.parametrize(
    "block", readme_python_blocks(), ids=[block_id(b) for b in readme_python_blocks()]
)
def test_each_readme_block_runs_as_is_outside_the_repository(
    user_project: UserProject, block: str
) -> None:
    result = user_project.run(block)
    assert result.returncode == 0, f"{block}\n---\n{result.stderr[-4000:]}"
    # A block that prints does so to stderr, as a CDK app must.
    assert result.stdout == ""
    if "allocation_summary(app)" in block:
        for line in documented_summary():
            assert line in result.stderr.splitlines()


def documented_summary() -> list[str]:
    found = re.search(
        r"### Reading the summary.*?```text\n(.*?)```", README.read_text(), flags=re.DOTALL
    )
    assert found is not None
    return found.group(1).splitlines()
