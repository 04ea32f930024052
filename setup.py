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

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_ext import build_ext

SIMULATION = Path("quota_constructs", "simulation")


def native_rules() -> ModuleType:
    """``quota_constructs/simulation/_native.py``, which lists the compiled modules and says how
    their sources are stamped: loaded from its file (it imports only the standard library; the
    build environment lacks the package's dependencies)."""
    spec = importlib.util.spec_from_file_location("_quota_constructs_native",
                                                  SIMULATION / "_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NATIVE = native_rules()


def native_extensions() -> list[object]:
    if os.environ.get("QUOTA_CONSTRUCTS_COMPILE") != "1":
        return []
    from mypyc.build import mypycify

    sources = [str(SIMULATION / f"{name}.py") for name in NATIVE.COMPILED]
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
        stamp = {name: NATIVE.source_digest(SIMULATION / f"{name}.py") for name in NATIVE.COMPILED}
        (root / SIMULATION / NATIVE.STAMP).write_text(json.dumps(stamp, indent=1) + "\n")


setup(ext_modules=native_extensions(), cmdclass={"build_ext": StampedBuildExt})
