"""The one declaration loader (``quota_constructs.cli.declarations``): files and modules, the one
shape, and one-line errors naming the option to pass."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from quota_constructs.cli.declarations import (
    CLOUDFORMATION,
    NoDeclarationError,
    declaration_of,
    environment,
)
from quota_constructs.model import QuotaConfigError
from quota_constructs.runtime.share_request import GuardOptIns

ROOT = Path(__file__).parents[2]

DATACLASS_MODULE = textwrap.dedent("""\
    from __future__ import annotations

    from dataclasses import dataclass, field

    from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy

    G5 = "ml.g5.xlarge"


    @dataclass(frozen=True)
    class Platform:
        capacity_limits: tuple[CapacityLimit, ...]
        shares: tuple[QuotaShareSpec, ...]
        queue_name: str | None = None
        lifecycle_by_share: dict[str, dict[str, bool]] = field(default_factory=dict)


    PROD = Platform(
        capacity_limits=(CapacityLimit(G5, 4),),
        shares=(
            QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 2)],
                           strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100),
            QuotaShareSpec(name="nlp", capacity_limits=[CapacityLimit(G5, 2)],
                           strategy=SharingStrategy.LEND),
        ),
        queue_name="gpu-prod",
        lifecycle_by_share={"nlp": {"allow_preemption_on_shrink": True}},
    )
""")


def test_a_file_with_a_postponed_annotation_dataclass_loads(tmp_path: Path) -> None:
    path = tmp_path / "platform_quotas.py"
    path.write_text(DATACLASS_MODULE)

    declaration = declaration_of(f"{path}:PROD", "prod")

    assert [s.name for s in declaration.shares] == ["vision", "nlp"]
    assert [(c.unit, c.max_capacity) for c in declaration.capacity_limits] == [
        ("ml.g5.xlarge", 4)]
    assert declaration.queue_name == "gpu-prod"
    assert declaration.lifecycle_of("nlp") == GuardOptIns(allow_preemption_on_shrink=True)
    assert declaration.lifecycle_of("vision") == GuardOptIns()
    # Read twice (--declaration and --compare of one file): one module, not two.
    assert declaration_of(f"{path}:PROD", "prod").shares == declaration.shares


def test_a_file_may_import_its_neighbours(tmp_path: Path) -> None:
    (tmp_path / "common_limits.py").write_text(
        "from quota_constructs.model import CapacityLimit\n"
        "LIMITS = [CapacityLimit('ml.g5.xlarge', 2)]\n")
    path = tmp_path / "decl.py"
    path.write_text("from common_limits import LIMITS\n"
                    "DECLARATION = {'capacity_limits': LIMITS, 'shares': []}\n")
    assert declaration_of(f"{path}:DECLARATION", "d").capacity_limits[0].max_capacity == 2


def test_a_package_module_of_the_working_directory_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "my_platform"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "quotas.py").write_text(DATACLASS_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".")])
    for name in [m for m in sys.modules if m.startswith("my_platform")]:
        monkeypatch.delitem(sys.modules, name)

    declaration = declaration_of("my_platform.quotas:PROD", "prod")

    assert declaration.queue_name == "gpu-prod"


def test_lifecycle_and_provisioning_read_by_their_switches() -> None:
    from aws_cdk import RemovalPolicy

    from quota_constructs import ShareLifecycle, ShareProvisioning
    from quota_constructs.cli.declarations import read_declaration
    from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy

    share = QuotaShareSpec(name="a", capacity_limits=[CapacityLimit("ml.g5.xlarge", 1)],
                           strategy=SharingStrategy.RESERVE)
    declaration = read_declaration({
        "capacity_limits": [CapacityLimit("ml.g5.xlarge", 1)], "shares": [share],
        "lifecycle": ShareLifecycle(terminate_active_jobs_on_delete=True,
                                    removal_policy=RemovalPolicy.RETAIN),
    }, "d")
    assert declaration.lifecycle_of("a") == GuardOptIns(terminate_active_jobs_on_delete=True)
    plain = read_declaration({"capacity_limits": [], "shares": [share],
                              "provisioning": ShareProvisioning.CLOUDFORMATION}, "d")
    assert plain.provisioning == CLOUDFORMATION
    with pytest.raises(QuotaConfigError, match=r"False with ShareProvisioning\.CLOUDFORMATION"):
        read_declaration({"capacity_limits": [], "shares": [share],
                          "provisioning": "CLOUDFORMATION",
                          "lifecycle": ShareLifecycle(adopt_existing=True)}, "d")
    with pytest.raises(QuotaConfigError, match="names of the declaration's shares: a"):
        read_declaration({"capacity_limits": [], "shares": [share],
                          "lifecycle_by_share": {"b": ShareLifecycle()}}, "d")


@pytest.mark.parametrize(("text", "reference", "expected"), [
    ("X = 1\n", "{path}:X", "with capacity_limits and shares"),
    ("from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy\n"
     "X = [QuotaShareSpec(name='a', strategy=SharingStrategy.LEND,\n"
     "                    capacity_limits=[CapacityLimit('ml.g5.xlarge', 1)])]\n",
     "{path}:X", "a list of shares alone is not a declaration"),
    ("X = {'capacity_limits': [], 'shares': ['vision']}\n", "{path}:X",
     "shares got 'vision'; allowed: QuotaShareSpec items"),
    ("X = (\n", "{path}:X", "a module that runs (SyntaxError"),
    ("raise RuntimeError('boom')\n", "{path}:X", "RuntimeError: boom at "),
    ("X = 1\n", "{path}", "path/to/file.py:attribute or package.module:attribute"),
    ("X = 1\n", "{path}:Y", "'Y' not found"),
    ("X = 1\n", "{missing}:X", "no file"),
])
def test_mistakes_are_one_line_naming_the_option(
    tmp_path: Path, text: str, reference: str, expected: str
) -> None:
    path = tmp_path / "decl.py"
    path.write_text(text)
    with pytest.raises(QuotaConfigError) as raised:
        declaration_of(reference.format(path=path, missing=tmp_path / "nope.py"), "d",
                       command="preview")
    message = str(raised.value)
    assert "\n" not in message and message.startswith("preview: --declaration")
    assert expected in message


def test_the_repository_environments_still_load() -> None:
    assert environment("prod").name == "prod"
    with pytest.raises(QuotaConfigError, match="--env got 'qa'; allowed: one of dev, prod"):
        environment("qa")


@pytest.mark.parametrize("command", ["simulate", "recommend"])
def test_outside_the_repository_without_a_declaration_says_which_option(
    tmp_path: Path, command: str
) -> None:
    workload = tmp_path / "jobs.csv"
    workload.write_text("job_id,share,submitted_at,duration,instance_type\n")
    # The library alone, as an installed package has it: no repository stacks/ beside it.
    installed = tmp_path / "site"
    installed.mkdir()
    (installed / "quota_constructs").symlink_to(ROOT / "quota_constructs")
    done = subprocess.run(
        [sys.executable, "-m", "quota_constructs", command, "--workload", str(workload),
         "--out", str(tmp_path / "out"), "--quiet"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={"PYTHONPATH": str(installed), "PATH": "/usr/bin:/bin",
             "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"},
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2
    assert len(lines) == 1, lines
    assert "No module named" not in lines[0]
    assert f"{command}: no declaration: pass --declaration path/to/file.py:attribute" in lines[0]


def test_no_declaration_error_pickles_as_itself() -> None:
    import pickle

    error = NoDeclarationError("simulate", "dev")
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


def test_loading_leaves_sys_path_as_it_was(tmp_path: Path) -> None:
    # A declaration file named like a standard module must not shadow it afterwards.
    path = tmp_path / "platform.py"
    path.write_text("from quota_constructs.model import CapacityLimit\n"
                    "D = {'capacity_limits': [CapacityLimit('ml.g5.xlarge', 1)], 'shares': []}\n")
    before = list(sys.path)
    declaration_of(f"{path}:D", "d")
    assert sys.path == before
    import platform

    assert Path(platform.__file__).parent != tmp_path
