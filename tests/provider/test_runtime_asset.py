"""The Lambda asset: exactly the runtime's modules, and a hash that depends on nothing else."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path, PurePosixPath

import botocore
import pytest
from aws_cdk import App, FileSystem, Stack

from quota_constructs import _runtime_asset
from quota_constructs._runtime_asset import (
    INSTANCE_TYPES_IN_ASSET,
    PACKAGE_ROOT,
    StagingError,
    runtime_asset_directory,
    stage_lambda_code,
    stage_runtime,
)
from quota_constructs.model.capacity import botocore_training_instance_types
from quota_constructs.share_provider import QuotaShareProvider

BATCH_VERSION = "2016-08-10"


def staged_files(directory: Path) -> set[str]:
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}


def copy_package(destination: Path) -> Path:
    """A copy of the quota_constructs package as a fresh checkout would have it."""
    target = destination / "quota_constructs"
    shutil.copytree(PACKAGE_ROOT, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def plant_caches(package: Path) -> None:
    """What running the code and the tests leaves behind in a working copy."""
    for subpackage in ("model", "wire", "runtime"):
        cache = package / subpackage / "__pycache__"
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "quota_share_handler.cpython-314.pyc").write_bytes(b"\x00compiled")
    (package / "__pycache__").mkdir(exist_ok=True)
    (package / "__pycache__" / "__init__.cpython-311.pyc").write_bytes(b"\x00compiled")


def fingerprint_of_staged(package: Path, target: Path) -> str:
    target.mkdir(parents=True)
    stage_lambda_code(target, package_root=package)
    return FileSystem.fingerprint(str(target))


def test_the_asset_holds_the_runtime_its_service_model_and_instance_types_only() -> None:
    staged = staged_files(Path(runtime_asset_directory()))
    assert "quota_constructs/__init__.py" in staged
    assert "quota_constructs/wire/share_codec.py" in staged
    data = {name for name in staged if not name.endswith(".py")}
    assert data == {
        f"quota_constructs/runtime/botocore_data/batch/{BATCH_VERSION}/{name}.json"
        for name in ("service-2", "endpoint-rule-set-1", "paginators-1")
    } | {"quota_constructs/model/training_instance_types.json"}
    assert all("__pycache__" not in name for name in staged)
    allowed_directories = {
        f"quota_constructs{sub}" for sub in ("", "/model", "/wire", "/runtime")
    }
    python_directories = {name.rsplit("/", 1)[0] for name in staged - data}
    assert python_directories <= allowed_directories
    # The constructs need aws_cdk, which the Lambda does not have.
    assert "quota_constructs/share_provider.py" not in staged


def test_the_carried_model_is_the_installed_botocores_decompressed() -> None:
    data = Path(botocore.__file__).parent / "data" / "batch" / BATCH_VERSION
    staged = (
        Path(runtime_asset_directory()) / "quota_constructs/runtime/botocore_data/batch"
        / BATCH_VERSION
    )
    for name in ("service-2", "endpoint-rule-set-1"):
        packed, plain = data / f"{name}.json.gz", data / f"{name}.json"
        original = gzip.decompress(packed.read_bytes()) if packed.exists() else plain.read_bytes()
        assert (staged / f"{name}.json").read_bytes() == original
    operations = json.loads((staged / "service-2.json").read_bytes())["operations"]
    assert {"CreateQuotaShare", "GetJobQueueSnapshot"} <= set(operations)
    carried = json.loads(
        (Path(runtime_asset_directory()) / INSTANCE_TYPES_IN_ASSET).read_text()
    )
    assert carried == sorted(botocore_training_instance_types())


def test_other_lambdas_stage_the_same_way_with_their_own_files(tmp_path: Path) -> None:
    target = tmp_path / "asset"
    target.mkdir()
    stage_lambda_code(target, extra_files={"config/shares.json": b"{}"})
    staged = staged_files(target)
    assert "config/shares.json" in staged
    assert staged - {"config/shares.json"} == staged_files(Path(runtime_asset_directory()))
    for name in ("../escape.json", "/etc/passwd", "quota_constructs/wire/share_codec.py"):
        again = tmp_path / f"again-{len(name)}"
        again.mkdir()
        with pytest.raises(StagingError, match="extra file"):
            stage_lambda_code(again, extra_files={name: b""})


def test_a_botocore_without_the_quota_share_api_cannot_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = _runtime_asset.botocore_model_files

    def without_quota_shares(service: str) -> dict[PurePosixPath, bytes]:
        files = real(service)
        for path, content in files.items():
            if path.name == "service-2.json":
                model = json.loads(content)
                del model["operations"]["CreateQuotaShare"]
                files[path] = json.dumps(model).encode()
        return files

    monkeypatch.setattr(_runtime_asset, "botocore_model_files", without_quota_shares)
    with pytest.raises(StagingError, match=r"CreateQuotaShare.*botocore >= 1\.42\.72"):
        stage_lambda_code(tmp_path)


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
    wire = edited / "wire" / "share_codec.py"
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
