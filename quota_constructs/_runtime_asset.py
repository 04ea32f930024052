"""Stage the code of the library's Lambda functions as a directory whose asset hash is stable.

``lambda_.Code.from_asset`` fingerprints every file under the directory it is given, by relative
path and content. Pointing it at the package itself would hash whatever else happens to lie there
(``__pycache__``, editor files, the constructs, which the Lambda cannot import without aws_cdk),
so the hash, and with it the deployed function, would differ between machines and checkouts.
Instead, exactly what the Lambda needs is written into a fresh directory that holds nothing else;
only relative paths and file contents reach the hash:

- the runtime's modules (``quota_constructs/__init__.py``, ``model/*.py``, ``runtime/*.py``);
- the AWS service models its clients use (AWS Batch), copied from the botocore installed here
  into ``quota_constructs/runtime/botocore_data`` in botocore's layout and decompressed, so that
  the function does not depend on the botocore of the Lambda runtime (see
  :mod:`quota_constructs.runtime.service_models`);
- the SageMaker training instance types this botocore knows, which the runtime's re-parse of
  its properties checks against (see :func:`quota_constructs.model.training_instance_types`);
- any extra files a function needs (configuration, for instance).

All of it comes from pinned inputs (the package's sources and the locked botocore), so the hash
is the same on every machine for a given lock file. Every Lambda of the library stages its code
with :func:`stage_lambda_code`.
"""

from __future__ import annotations

import atexit
import functools
import gzip
import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath

from .model.capacity import TRAINING_INSTANCE_TYPES_FILE, botocore_training_instance_types
from .runtime.service_models import (
    BOTOCORE_DATA_DIRECTORY,
    MINIMUM_BOTOCORE,
    REQUIRED_BATCH_OPERATIONS,
)

PACKAGE_NAME = "quota_constructs"
PACKAGE_ROOT = Path(__file__).resolve().parent

# Subpackages the Lambda imports; each travels as its top-level ``*.py`` files only.
RUNTIME_SUBPACKAGES = ("model", "wire", "runtime")

BOTOCORE_DATA_IN_ASSET = PurePosixPath(PACKAGE_NAME, "runtime", BOTOCORE_DATA_DIRECTORY)
INSTANCE_TYPES_IN_ASSET = PurePosixPath(PACKAGE_NAME, "model", TRAINING_INSTANCE_TYPES_FILE)
DEFAULT_SERVICES = ("batch",)
"""AWS services whose models the custom-resource runtime carries."""
# What a client needs of a service's data (examples and docs-only files are left behind).
MODEL_FILES = ("service-2", "endpoint-rule-set-1", "paginators-1", "waiters-2")


class StagingError(RuntimeError):
    """The Lambda code cannot be staged from this installation."""


def runtime_sources(package_root: Path) -> Iterator[tuple[Path, Path]]:
    """Yield ``(source, path inside the asset)`` for every module the Lambda needs, sorted."""
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


def botocore_model_files(service: str) -> dict[PurePosixPath, bytes]:
    """The installed botocore's model files of ``service``, decompressed, by data-relative path.

    Only botocore's built-in data is read (not ``~/.aws/models`` or ``AWS_DATA_PATH``), so what
    is staged depends on the locked botocore alone. Decompressed, because botocore versions
    before gzip support only read ``.json``; the latest API version only, as botocore loads.
    """
    import botocore  # only when staging: a synth without the provider never loads it

    service_root = Path(botocore.__file__).resolve().parent / "data" / service
    versions = sorted(p.name for p in service_root.glob("*") if p.is_dir())
    if not versions:
        raise StagingError(f"botocore {botocore.__version__} has no model of {service!r}")
    version = versions[-1]
    files: dict[PurePosixPath, bytes] = {}
    for name in MODEL_FILES:
        plain = service_root / version / f"{name}.json"
        packed = plain.with_name(plain.name + ".gz")
        if plain.is_file():
            files[PurePosixPath(service, version, plain.name)] = plain.read_bytes()
        elif packed.is_file():
            files[PurePosixPath(service, version, plain.name)] = gzip.decompress(
                packed.read_bytes()
            )
    if PurePosixPath(service, version, "service-2.json") not in files:
        raise StagingError(f"botocore {botocore.__version__} has no service-2 model of {service!r}")
    return files


def stage_lambda_code(
    target: Path,
    *,
    package_root: Path = PACKAGE_ROOT,
    services: Sequence[str] = DEFAULT_SERVICES,
    extra_files: Mapping[str, bytes] | None = None,
) -> None:
    """Stage a Lambda of this library into the empty directory ``target``.

    :param services: AWS services whose botocore models the function carries and prefers to
        the Lambda runtime's (``AWS Batch`` by default).
    :param extra_files: more files, by POSIX path relative to the asset root (for example a
        configuration the function reads); they may not replace a staged file.
    """
    stage_runtime(package_root, target)
    staged: dict[PurePosixPath, bytes] = {}
    for service in services:
        files = botocore_model_files(service)
        if service == "batch":
            _check_batch_model(files)
        for relative, content in files.items():
            staged[BOTOCORE_DATA_IN_ASSET / relative] = content
    staged[INSTANCE_TYPES_IN_ASSET] = (
        json.dumps(sorted(botocore_training_instance_types()), indent=0) + "\n"
    ).encode()
    for name, content in (extra_files or {}).items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise StagingError(f"extra file {name!r}: a relative path inside the asset")
        if relative in staged or (target / relative).exists():
            raise StagingError(f"extra file {name!r} would replace a staged file")
        staged[relative] = content
    for relative, content in sorted(staged.items()):
        destination = target.joinpath(*relative.parts)
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(content)


@functools.cache
def runtime_asset_directory() -> str:
    """The custom-resource runtime's staged code for this process (removed at exit).

    Staged once per process: every provider in every stack of the app shares one asset, and
    synthesizing many stacks does not copy the files again.
    """
    target = Path(tempfile.mkdtemp(prefix="quota-constructs-runtime-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    stage_lambda_code(target)
    return str(target)


def _check_batch_model(files: Mapping[PurePosixPath, bytes]) -> None:
    import botocore

    (service,) = [content for path, content in files.items() if path.name == "service-2.json"]
    operations = set(json.loads(service)["operations"])
    missing = [op for op in REQUIRED_BATCH_OPERATIONS if op not in operations]
    if missing:
        raise StagingError(
            f"the botocore installed here ({botocore.__version__}) does not know the AWS Batch "
            f"operations {', '.join(missing)}, which the quota share custom resource carries to "
            f"its Lambda; install botocore >= {MINIMUM_BOTOCORE} and synthesize again"
        )


def _is_test_module(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
