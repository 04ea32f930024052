"""No import circle between the library's parts: its sub-packages and top-level modules (the
package's own ``__init__`` counting as one part, the facade) never import each other, directly
or round a longer loop. Every import counts: at module level, inside functions, and under
``TYPE_CHECKING``, because each is a dependency someone must understand to change either side."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "quota_constructs"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE
FACADE = "__init__"


def part_of(path: Path) -> str:
    """The part a source file belongs to: its sub-package, or its top-level module."""
    relative = path.relative_to(ROOT)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _parts() -> set[str]:
    return {part_of(path) for path in ROOT.rglob("*.py")}


def _target(dotted: str, parts: set[str]) -> str | None:
    """The part ``dotted`` (a module path, or a module path plus an imported name) lies in."""
    names = dotted.split(".")
    if names[0] != PACKAGE:
        return None
    if len(names) == 1:
        return FACADE
    return names[1] if names[1] in parts else FACADE  # a name re-exported by the facade


def imports_of(path: Path) -> set[str]:
    """The parts ``path`` imports anything from, wherever in the file the import is."""
    package = (PACKAGE, *path.relative_to(ROOT).parent.parts)
    return imports_in(path.read_text(encoding="utf-8"), package)


def imported_names(source: str, package: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """Every import of ``source`` (a module of ``package``), at any depth of the file, as
    ``(module, module.name)``: ``name`` may be a module of ``module`` or a name in it."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((alias.name, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join(base + ((node.module,) if node.module else ()))
            else:
                module = node.module or ""
            yield from ((module, f"{module}.{alias.name}") for alias in node.names)


def imports_in(source: str, package: tuple[str, ...]) -> set[str]:
    """The parts ``source``, a module of ``package``, imports anything from."""
    parts = _parts()
    # Either way the part is the first component below the package.
    targets = (_target(dotted, parts) for _, dotted in imported_names(source, package))
    return {target for target in targets if target is not None}


def import_graph() -> dict[str, set[str]]:
    parts = _parts()
    graph: dict[str, set[str]] = {part: set() for part in parts}
    for path in ROOT.rglob("*.py"):
        source = part_of(path)
        graph[source] |= imports_of(path) - {source}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one part (Tarjan), as sorted lists."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_two_parts_of_the_library_import_each_other() -> None:
    graph = import_graph()
    # The facade re-exports the parts; nothing inside the library may import the facade back.
    assert circles(graph) == []


def module_name(path: Path) -> str:
    """``quota_constructs.model.share`` for ``quota_constructs/model/share.py``; a package's
    ``__init__`` is the package itself."""
    parts = path.with_suffix("").relative_to(ROOT.parent).parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def file_imports_in(source: str, package: tuple[str, ...], modules: set[str]) -> set[str]:
    """The library's modules ``source`` (a module of ``package``) imports: for ``from m import
    n``, ``m.n`` when that is a module, else ``m``."""
    found: set[str] = set()
    for module, dotted in imported_names(source, package):
        name = dotted if dotted in modules else module
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def folder_graphs() -> dict[str, dict[str, set[str]]]:
    """Per folder of the library, its files (not the folder's ``__init__``, its facade) and
    which of the same folder's files each imports."""
    paths = {module_name(path): path for path in ROOT.rglob("*.py")}
    modules = set(paths)
    graphs: dict[str, dict[str, set[str]]] = {}
    for name, path in paths.items():
        if path.name == "__init__.py":
            continue
        package = (PACKAGE, *path.relative_to(ROOT).parent.parts)
        folder = graphs.setdefault(str(path.parent.relative_to(ROOT.parent)), {})
        imported = file_imports_in(path.read_text(encoding="utf-8"), package, modules)
        folder[name] = {
            other for other in imported
            if other != name and paths[other].parent == path.parent
            and paths[other].name != "__init__.py"
        }
    return graphs


def test_no_two_files_of_one_folder_import_each_other() -> None:
    # Inside a folder as between parts: one file builds on another, never both ways (a shared
    # piece both need goes one floor down, as model/borrow_limit.py does for share and
    # borrowing).
    found = {folder: circles(graph) for folder, graph in folder_graphs().items()}
    assert {folder: groups for folder, groups in found.items() if groups} == {}


def test_a_circle_between_two_files_of_a_folder_is_seen() -> None:
    modules = {"quota_constructs.model.a", "quota_constructs.model.b"}
    package = (PACKAGE, "model")
    graph = {
        "quota_constructs.model.a": file_imports_in("from .b import X\n", package, modules),
        "quota_constructs.model.b": file_imports_in(
            "def f():\n    from . import a\n", package, modules
        ),
    }
    assert circles(graph) == [["quota_constructs.model.a", "quota_constructs.model.b"]]


def test_the_monitor_depends_one_floor_down_not_on_the_l3() -> None:
    graph = import_graph()
    assert "quota_managed_queue" not in graph["monitoring"]
    assert "monitoring" in graph["quota_managed_queue"]  # add_monitoring()


@pytest.mark.parametrize(("source", "expected"), [
    ("from ..monitoring import X\n", {"monitoring"}),
    ("from .emf import X\n", {"runtime"}),
    ("def f():\n    from ..quota_managed_queue import Q\n", {"quota_managed_queue"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .. import job_queue\n",
     {"job_queue"}),
    ("from quota_constructs import QuotaConfigError\n", {FACADE}),
    ("import quota_constructs.model.share\n", {"model"}),
])
def test_every_kind_of_import_is_seen(source: str, expected: set[str]) -> None:
    # As if it were a module of quota_constructs/runtime/.
    assert imports_in(source, (PACKAGE, "runtime")) == expected


def test_a_circle_is_found_round_a_longer_loop() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def is_module(dotted: str) -> bool:
    """Whether ``dotted`` names one of the library's modules or packages (not a name in one)."""
    relative = Path(*dotted.split(".")[1:]) if "." in dotted else Path()
    return (ROOT / relative).with_suffix(".py").is_file() or (ROOT / relative).is_dir()


def private_names_imported(source: str, package: tuple[str, ...]) -> set[str]:
    """The private names (``_x``, not a module) ``source`` imports from another module."""
    return {
        dotted
        for module, dotted in imported_names(source, package)
        if module.split(".")[0] == PACKAGE
        and dotted.rsplit(".", 1)[-1].startswith("_")
        and not dotted.rsplit(".", 1)[-1].startswith("__")
        and not is_module(dotted)
    }


def test_no_private_name_is_imported_from_another_module() -> None:
    """A name with a leading underscore is its module's own business; what another module needs
    is public, under a name that says what it is."""
    crossing = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in ROOT.rglob("*.py")
        for name in private_names_imported(
            path.read_text(encoding="utf-8"), (PACKAGE, *path.relative_to(ROOT).parent.parts)
        )
    }
    assert crossing == set()


def test_a_private_name_import_is_seen_and_a_private_module_is_not() -> None:
    source = "from .metrics import ShareMetrics, _custom\nfrom . import _function\n"
    found = private_names_imported(source, (PACKAGE, "monitoring"))
    assert found == {f"{PACKAGE}.monitoring.metrics._custom"}
    assert private_names_imported("from ._function import LambdaBase\n",
                                  (PACKAGE, "monitoring")) == set()
