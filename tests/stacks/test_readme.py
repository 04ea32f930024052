"""The README and the guides under docs/ stay true: the Quickstart, and every Python block run
as a user would run it — in a project of their own, outside this repository, against the
installed wheel."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stacks.launch import PROJECT_ROOT
from tests.documentation import README, documentation_text, fenced_blocks

from .user_project import UserProject


def readme_python_blocks() -> list[str]:
    """Every ```python block of the README and of docs/**/*.md, each once."""
    return fenced_blocks("python")


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
    assert len(re.findall(r"```python\n", README.read_text())) >= 1
    assert len(readme_python_blocks()) >= 10


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
        r"### Reading the summary.*?```text\n(.*?)```", documentation_text(), flags=re.DOTALL
    )
    assert found is not None
    return found.group(1).splitlines()
