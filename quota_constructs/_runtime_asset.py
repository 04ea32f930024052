"""Stage the custom-resource Lambda code as a directory whose asset hash is the same everywhere.

``lambda_.Code.from_asset`` fingerprints every file under the directory it is given, by relative
path and content. Pointing it at the package itself would hash whatever else happens to lie there
(``__pycache__``, editor files, the constructs, which the Lambda cannot import without aws_cdk),
so the hash, and with it the deployed function, would differ between machines and checkouts.
Instead, exactly the modules the Lambda needs are copied into a fresh directory that holds
nothing else; only relative paths and file contents reach the hash.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

PACKAGE_NAME = "quota_constructs"
PACKAGE_ROOT = Path(__file__).resolve().parent

# Subpackages the Lambda imports; each travels as its top-level ``*.py`` files only.
RUNTIME_SUBPACKAGES = ("model", "runtime")


def runtime_sources(package_root: Path) -> Iterator[tuple[Path, Path]]:
    """Yield ``(source, path inside the asset)`` for every file the Lambda needs, sorted."""
    yield package_root / "__init__.py", Path(PACKAGE_NAME, "__init__.py")
    for subpackage in RUNTIME_SUBPACKAGES:
        for source in sorted((package_root / subpackage).glob("*.py")):
            if source.is_file() and not _is_test_module(source.name):
                yield source, Path(PACKAGE_NAME, subpackage, source.name)


def stage_runtime(package_root: Path, target: Path) -> None:
    """Copy the Lambda's modules from ``package_root`` into the empty directory ``target``."""
    for source, relative in runtime_sources(package_root):
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        # Content only: permissions and timestamps do not reach the asset hash, and a copy
        # that kept them would only look as if they mattered.
        shutil.copyfile(source, destination)


@functools.cache
def runtime_asset_directory() -> str:
    """The staged asset directory for this process (created on first use, removed at exit).

    Staged once per process: every provider in every stack of the app shares one asset, and
    synthesizing many stacks does not copy the files again.
    """
    target = Path(tempfile.mkdtemp(prefix="quota-constructs-runtime-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    stage_runtime(PACKAGE_ROOT, target)
    return str(target)


def _is_test_module(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
