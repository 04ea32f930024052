"""One App holding every stack of stacks/, shared by all tests of this package."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk.assertions import Template

from stacks.launch import PROJECT_ROOT
from stacks.wiring import add_stacks

from .user_project import built_wheel, user_project

__all__ = ["built_wheel", "user_project"]

ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")


def project_context() -> dict[str, Any]:
    return dict(json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"])


@pytest.fixture(scope="session")
def all_stacks() -> Iterator[dict[str, Stack]]:
    with TemporaryDirectory() as outdir:
        app = App(context=project_context(), outdir=outdir)
        stacks = {stack.stack_name: stack for stack in add_stacks(app)}
        app.synth()
        yield stacks


@pytest.fixture(scope="session")
def the_app(all_stacks: dict[str, Stack]) -> App:
    app = next(iter(all_stacks.values())).node.root
    assert isinstance(app, App)
    return app


def normalized_template(stack: Stack) -> dict[str, Any]:
    """The template as a snapshot should see it: without what differs between machines and
    CDK bootstrap versions (asset hashes, the bootstrap-version parameter and rule)."""
    template = Template.from_stack(stack).to_json()
    template.get("Parameters", {}).pop("BootstrapVersion", None)
    if not template.get("Parameters"):
        template.pop("Parameters", None)
    template.get("Rules", {}).pop("CheckBootstrapVersion", None)
    if not template.get("Rules"):
        template.pop("Rules", None)
    normalized: dict[str, Any] = json.loads(ASSET_HASH.sub("<asset-hash>", json.dumps(template)))
    return normalized
