"""The Lambda asset: exactly the runtime's modules, and a hash that depends on nothing else."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aws_cdk import App, FileSystem, Stack

from quota_constructs._runtime_asset import PACKAGE_ROOT, runtime_asset_directory, stage_runtime
from quota_constructs.share_provider import QuotaShareProvider


def staged_files(directory: Path) -> set[str]:
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}


def copy_package(destination: Path) -> Path:
    """A copy of the quota_constructs package as a fresh checkout would have it."""
    target = destination / "quota_constructs"
    shutil.copytree(PACKAGE_ROOT, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def plant_caches(package: Path) -> None:
    """What running the code and the tests leaves behind in a working copy."""
    for subpackage in ("model", "runtime"):
        cache = package / subpackage / "__pycache__"
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "quota_share_handler.cpython-314.pyc").write_bytes(b"\x00compiled")
    (package / "__pycache__").mkdir(exist_ok=True)
    (package / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\x00compiled")


def fingerprint_of_staged(package: Path, target: Path) -> str:
    target.mkdir(parents=True)
    stage_runtime(package, target)
    return FileSystem.fingerprint(str(target))


def test_the_asset_holds_the_package_init_the_model_and_the_runtime_only() -> None:
    staged = staged_files(Path(runtime_asset_directory()))
    assert "quota_constructs/__init__.py" in staged
    assert "quota_constructs/model/wire.py" in staged
    assert all(name.endswith(".py") and "__pycache__" not in name for name in staged)
    allowed_directories = {"quota_constructs", "quota_constructs/model", "quota_constructs/runtime"}
    assert {name.rsplit("/", 1)[0] for name in staged} <= allowed_directories
    # The constructs need aws_cdk, which the Lambda does not have.
    assert "quota_constructs/share_provider.py" not in staged


def test_caches_tests_subpackages_and_other_files_stay_out(tmp_path: Path) -> None:
    package = tmp_path / "source" / "quota_constructs"
    files = {
        "__init__.py": "",
        "share_provider.py": "",
        "model/__init__.py": "",
        "model/share.py": "",
        "model/test_share.py": "",
        "model/share_test.py": "",
        "model/conftest.py": "",
        "model/notes.txt": "",
        "model/drafts/extra.py": "",
        "runtime/__init__.py": "",
        "runtime/quota_share_handler.py": "",
    }
    for name, content in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(content)
    plant_caches(package)

    target = tmp_path / "asset"
    target.mkdir()
    stage_runtime(package, target)

    assert staged_files(target) == {
        "quota_constructs/__init__.py",
        "quota_constructs/model/__init__.py",
        "quota_constructs/model/share.py",
        "quota_constructs/runtime/__init__.py",
        "quota_constructs/runtime/quota_share_handler.py",
    }


def test_the_hash_ignores_where_the_checkout_is_and_what_caches_it_holds(tmp_path: Path) -> None:
    clean = copy_package(tmp_path / "a")
    used = copy_package(tmp_path / "somewhere" / "else" / "b")
    plant_caches(used)
    (used / "runtime" / "quota_share_handler.py").touch()  # a newer mtime must not matter

    hashes = {
        fingerprint_of_staged(clean, tmp_path / "asset-a"),
        fingerprint_of_staged(used, tmp_path / "asset-b"),
        FileSystem.fingerprint(runtime_asset_directory()),
    }
    assert len(hashes) == 1


def test_the_hash_follows_the_code(tmp_path: Path) -> None:
    original = copy_package(tmp_path / "a")
    edited = copy_package(tmp_path / "b")
    wire = edited / "model" / "wire.py"
    wire.write_text(wire.read_text() + "\n# edited\n")
    assert fingerprint_of_staged(original, tmp_path / "asset-a") != fingerprint_of_staged(
        edited, tmp_path / "asset-b"
    )


SYNTH_ELSEWHERE = textwrap.dedent(
    """
    import json, sys
    import quota_constructs
    from aws_cdk import App, Stack
    from quota_constructs.share_provider import QuotaShareProvider

    app = App(outdir=sys.argv[1])
    stack = Stack(app, "Elsewhere")
    provider = QuotaShareProvider.for_stack(stack)
    template = app.synth().get_stack_by_name("Elsewhere").template
    logical_id = stack.resolve(stack.get_logical_id(provider.on_event_function.node.default_child))
    key = template["Resources"][logical_id]["Properties"]["Code"]["S3Key"]
    print(json.dumps({"package": quota_constructs.__file__, "s3_key": key}))
    """
)


@pytest.mark.skipif(shutil.which("node") is None, reason="aws-cdk-lib needs Node.js")
def test_a_synth_from_another_checkout_with_caches_gives_the_same_asset(tmp_path: Path) -> None:
    checkout = tmp_path / "other" / "checkout"
    package = copy_package(checkout)
    plant_caches(package)
    environment = dict(os.environ, PYTHONPATH=str(checkout))
    # Let this interpreter write its own bytecode caches into the copy, as a developer's would.
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    result = subprocess.run(
        [sys.executable, "-c", SYNTH_ELSEWHERE, str(tmp_path / "cdk.out")],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    elsewhere = json.loads(result.stdout.strip().splitlines()[-1])
    assert Path(elsewhere["package"]).is_relative_to(checkout)
    assert (package / "model" / "__pycache__").is_dir()

    stack = Stack(App(), "Here")
    function = QuotaShareProvider.for_stack(stack).on_event_function.node.default_child
    here = stack.resolve(function.code)["s3Key"]  # type: ignore[union-attr]
    assert elsewhere["s3_key"] == here
