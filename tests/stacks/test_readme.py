"""The README's reference example runs as written."""

from __future__ import annotations

import re

from aws_cdk import App, Stack
from aws_cdk.assertions import Template

from stacks.launch import PROJECT_ROOT


def readme_python_blocks() -> list[str]:
    text = (PROJECT_ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_quickstart_gives_exactly_the_two_commands() -> None:
    text = (PROJECT_ROOT / "README.md").read_text()
    quickstart = text.split("## Quickstart", 1)[1]
    first_bash = re.search(r"```bash\n(.*?)```", quickstart, flags=re.DOTALL)
    assert first_bash is not None
    assert first_bash.group(1).splitlines() == ["python3 dev.py synth", "python3 dev.py test"]


def test_reference_example_synthesizes_the_documented_shares() -> None:
    example = readme_python_blocks()[0]
    stack = Stack(App(), "ReadmeExample")
    namespace: dict[str, object] = {"stack": stack}
    exec(compile(example, "README.md", "exec"), namespace)
    shares = Template.from_stack(stack).find_resources("Custom::BatchQuotaShare")
    names = sorted(share["Properties"]["QuotaShareName"] for share in shares.values())
    assert names == ["QS1", "QS2", "QS3"]
