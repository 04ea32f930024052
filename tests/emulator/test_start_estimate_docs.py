"""The guides' start-estimate examples (the operator's and the team lead's), run in-process
against the emulator as they are written (the docs suite runs them again against the wheel)."""

from __future__ import annotations

import re

import boto3
import pytest

from tests.documentation import DOCS


def estimate_blocks() -> list[str]:
    found = []
    for page in ("operator.md", "team-lead.md"):
        blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), flags=re.DOTALL)
        found += [block for block in blocks if "estimate" in block]
    return found


def test_each_guide_shows_the_estimate_against_the_emulator() -> None:
    assert len(estimate_blocks()) == 2


@pytest.mark.parametrize("block", estimate_blocks(), ids=["operator", "team-lead"])
def test_the_guides_estimate_examples_run(block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The blocks point boto3 at the emulator with set_environment=True, which keeps what a
    # user set: nothing of the machine's own configuration may be set here.
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BATCH", "AWS_REGION",
                 "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    exec(compile(block, "<guide>", "exec"), {"__name__": "guide"})
