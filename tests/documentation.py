"""Where the documentation lives: the README (the front page) and the guides under docs/. Tests
that run or check documented examples read them from here, wherever a section moved."""

from __future__ import annotations

import re
from pathlib import Path

from stacks.launch import PROJECT_ROOT

README = PROJECT_ROOT / "README.md"
DOCS = PROJECT_ROOT / "docs"


def documentation_files() -> list[Path]:
    """The README, then every Markdown page of the site, in a stable order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def documentation_text() -> str:
    """Every documentation file, one after another."""
    return "\n".join(path.read_text() for path in documentation_files())


def fenced_blocks(language: str) -> list[str]:
    """The bodies of every ```<language> block, each once (the front page repeats the reference
    example of the getting-started page), in documentation order."""
    found = re.findall(rf"```{language}\n(.*?)```", documentation_text(), flags=re.DOTALL)
    return list(dict.fromkeys(found))
