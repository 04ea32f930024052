"""Griffe extension: the library's docstrings cross-reference in Sphinx's roles
(``:class:`QuotaShare```, ``:meth:`~ShareMetrics.lent```), which mkdocstrings would show as
literal text. Each role becomes an *optional* autorefs link: a link where the target is on the
site, plain code where it is not, so ``mkdocs build --strict`` never fails on a reference to an
undocumented (private or external) name."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|data|mod|exc|obj|const):`(?P<target>[^`]+)`")


def resolve(obj: griffe.Object, target: str) -> str:
    """The full path of ``target`` as written in ``obj``'s docstring: relative to the object's
    scope (its members, its module's names and imports), or already a full path."""
    head, _, rest = target.lstrip(".").partition(".")
    scope: griffe.Object | None = obj
    while scope is not None:
        try:
            base = scope.resolve(head)
        except (griffe.NameResolutionError, ValueError, AttributeError):
            scope = scope.parent
            continue
        return f"{base}.{rest}" if rest else base
    return target.lstrip(".")


def as_autoref(obj: griffe.Object, match: re.Match[str]) -> str:
    written = match["target"]
    shown_short = written.startswith("~")
    target = written.lstrip("~")
    shown = target.rsplit(".", 1)[-1] if shown_short else target.lstrip(".")
    identifier = resolve(obj, target)
    return f'<autoref identifier="{identifier}" optional><code>{shown}</code></autoref>'


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring once its object is loaded."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = ROLE.sub(lambda m: as_autoref(obj, m), obj.docstring.value)
