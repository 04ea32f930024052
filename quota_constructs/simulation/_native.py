"""The simulator's compiled modules: which they are, and when their Python source runs instead.

The modules in :data:`COMPILED` hold the replay's hot paths. A platform wheel built with
``QUOTA_CONSTRUCTS_COMPILE=1`` (``setup.py``; cibuildwheel sets it), and ``python3 dev.py`` in a
checkout with a C compiler, compile them with mypyc from the very same source, which every
wheel, the pure-Python one included, also carries. The results are the same either way; the
compiled replay is faster (the development guide gives the figures).

Python imports a compiled module before its source. The source runs instead:

* when ``QUOTA_CONSTRUCTS_PURE_PYTHON=1`` is set, to compare the two or to step through the
  engine in a debugger;
* when the compiled module was built from another text of its source than the one beside it
  (a checkout edited since its last build): a stale build is never run, and a warning says so.
  The build records each source's SHA-256 in :data:`STAMP`.

Nothing here imports a compiled module: this runs first, from the package's ``__init__``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from pathlib import Path
from types import ModuleType

COMPILED = ("engine", "figures")
"""The modules of this package a compiled build compiles (``setup.py`` reads this tuple)."""
STAMP = "_compiled_sources.json"
"""Written by the build beside the modules: each compiled module's source SHA-256."""
PURE_PYTHON = "QUOTA_CONSTRUCTS_PURE_PYTHON"
"""Set to 1 to run the source of every compiled module."""

_HERE = Path(__file__).resolve().parent


def source_digest(path: Path) -> str:
    """The SHA-256 of a module's source file, as the build records it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def has_compiled(name: str, directory: Path = _HERE) -> bool:
    """Whether a compiled ``name`` lies beside its source."""
    return any((directory / f"{name}{suffix}").exists() for suffix in EXTENSION_SUFFIXES)


def stale_builds(directory: Path = _HERE) -> list[str]:
    """The modules of :data:`COMPILED` lying compiled beside a source other than the one they
    were built from (the stamp records each build's source SHA-256)."""
    compiled = [name for name in COMPILED if has_compiled(name, directory)]
    if not compiled:
        return []
    try:
        built_from = json.loads((directory / STAMP).read_text())
    except (OSError, ValueError):
        built_from = {}
    return [name for name in compiled
            if built_from.get(name) != source_digest(directory / f"{name}.py")]


def build_is_current(directory: Path = _HERE) -> bool:
    """Whether every module of :data:`COMPILED` lies compiled beside the very source it was
    built from (what ``python3 dev.py`` checks before it compiles again)."""
    return all(has_compiled(name, directory) for name in COMPILED) and not stale_builds(
        directory)


def modules_to_run_from_source(directory: Path = _HERE) -> dict[str, str]:
    """The compiled modules whose source must run instead, each with the reason."""
    if os.environ.get(PURE_PYTHON) == "1":
        return {name: f"{PURE_PYTHON}=1" for name in COMPILED if has_compiled(name, directory)}
    return {name: "it was compiled from another text of its source"
            for name in stale_builds(directory)}


class _SourceFirst(MetaPathFinder):
    """Finds the named modules of the package from their ``.py`` source, before the compiled
    module Python would otherwise load."""

    def __init__(self, package: str, names: Sequence[str], directory: Path) -> None:
        self.package = package
        self.names = frozenset(names)
        self.directory = directory

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != self.package or name not in self.names:
            return None
        return importlib.util.spec_from_file_location(fullname, self.directory / f"{name}.py")


def prefer_source_where_needed(package: str) -> None:
    """Have the modules :func:`modules_to_run_from_source` names load from their source (a
    warning for each stale build)."""
    chosen = modules_to_run_from_source()
    for name, reason in chosen.items():
        if reason != f"{PURE_PYTHON}=1":
            warnings.warn(
                f"quota_constructs.simulation.{name}: running its Python source, not the "
                f"compiled module beside it: {reason} (python3 dev.py compiles it again)",
                RuntimeWarning, stacklevel=2,
            )
    if chosen:
        sys.meta_path.insert(0, _SourceFirst(package, list(chosen), _HERE))


def build() -> str:
    """How the simulator runs here: ``"compiled"`` when its engine was loaded compiled, else
    ``"pure Python"`` (for benchmarks and reports to say which they measured)."""
    from . import engine

    return "pure Python" if (engine.__file__ or "").endswith(".py") else "compiled"
