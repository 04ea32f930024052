"""setuptools' build script, for the one thing pyproject.toml cannot say: the optional compiled
simulator.

By default the build is pure Python (a ``py3-none-any`` wheel that installs anywhere, no
compiler needed). With ``QUOTA_CONSTRUCTS_COMPILE=1`` (cibuildwheel's setting, and
``python3 dev.py`` in a checkout) the simulator's hot modules (``COMPILED`` in
``quota_constructs/simulation/_native.py``) are compiled with mypyc as well, from the same
source, which the wheel still carries; the build records each source's SHA-256 so that a stale
build is never run.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

SIMULATION = Path("quota_constructs", "simulation")


def compiled_modules() -> tuple[str, ...]:
    """``COMPILED`` as ``_native.py`` declares it (read, not imported: the build environment
    lacks the package's dependencies)."""
    tree = ast.parse((SIMULATION / "_native.py").read_text())
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "COMPILED"):
            return tuple(ast.literal_eval(node.value))
    raise SystemExit("setup.py: _native.py declares no COMPILED")


def source_digests() -> dict[str, str]:
    return {name: hashlib.sha256((SIMULATION / f"{name}.py").read_bytes()).hexdigest()
            for name in compiled_modules()}


def native_extensions() -> list[object]:
    if os.environ.get("QUOTA_CONSTRUCTS_COMPILE") != "1":
        return []
    from mypyc.build import mypycify

    sources = [str(SIMULATION / f"{name}.py") for name in compiled_modules()]
    # mypyc.ini: the type check mypyc needs, without aws_cdk's stubs (the compiled modules
    # never touch them; reading them would take minutes). One library per module (separate):
    # each lies beside its module, none at the top level.
    return mypycify(["--config-file", "mypyc.ini", *sources], opt_level="3", separate=True)


class StampedBuildExt(build_ext):
    """build_ext, then the stamp of the sources it compiled, beside them (in place) or in the
    build's tree (a wheel): written only once the compiled modules are built, so a failed
    build never vouches for an old one."""

    def run(self) -> None:
        super().run()
        if not self.extensions:
            return
        root = Path(".") if self.inplace else Path(self.build_lib)
        stamp = root / SIMULATION / "_compiled_sources.json"
        stamp.write_text(json.dumps(source_digests(), indent=1) + "\n")


setup(ext_modules=native_extensions(), cmdclass={"build_ext": StampedBuildExt})
