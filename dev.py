#!/usr/bin/env python3
"""Set up the project from scratch and run one of its jobs.

    python3 dev.py synth   # create .venv, install, synthesize every stack into cdk.out (+ cdk-nag)
    python3 dev.py test    # create .venv, install, run ruff, mypy and the whole pytest suite
    python3 dev.py test --quick   # the inner loop: ruff, mypy and the fast tests (see QUICK_SKIPS)
    python3 dev.py dist    # build the wheel and sdist into dist/, check them, smoke-test the wheel
    python3 dev.py docs    # build the documentation site into site/ (mkdocs --strict)
    python3 dev.py bench   # synth-time benchmark: library against raw Cfn* resources
    python3 dev.py bench-sim [--jobs N]   # simulator throughput: 250k, 500k, 1M jobs
    python3 dev.py bench-recommend [--jobs N] [--workers W ...]   # recommend on 1M jobs
    python3 dev.py bench-emulator [--jobs N] [--profile]   # emulator API calls per second
    python3 dev.py bench-usage [--jobs N] [--profile]   # quota-constructs usage on 1M jobs
    python3 dev.py simulate [--env dev] [--workload FILE | --synthetic --jobs N --hours H]
                           # replay a workload; HTML report + metrics.json + jobs.csv

Needs only Python >= 3.11 (and Node.js, which aws-cdk-lib's jsii runtime uses). The virtual
environment is reused while pyproject.toml and constraints.txt are unchanged.

.venv holds the project's dependencies, not the project: every job runs from this checkout (its
root is on the path), so nothing has to be reinstalled when the code changes. The one thing
built in place is the compiled simulator (the test, bench and simulate jobs compile its hot
modules with mypyc when their source changed, about a minute; without a C compiler, or with
QUOTA_CONSTRUCTS_COMPILE=0, it runs as pure Python, with the same results). Messages about
setting up go to stderr: under the CDK CLI, stdout is the CLI's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".installed-from"
DIST = ROOT / "dist"
SITE = ROOT / "site"
NATIVE = ROOT / "quota_constructs" / "simulation" / "_native.py"

# python3 dev.py test --quick: the inner loop, under 3 minutes on this project's shared 2-core
# machine. Left out: whole apps synthesized (every stack, cdk-nag, cfn-lint, the CDK CLI, the
# README and docs blocks against the built wheel, the site build), the seeded soak, the held-out
# review probes, and the slowest equivalence and property suites of each area (each still has
# faster tests in the subset). CI runs everything (python3 dev.py test).
QUICK_SKIPS = (
    "tests/stacks",
    "tests/monitoring",
    "tests/review",
    "tests/simulation_report",
    "tests/provider",
    "tests/runtime/test_soak.py",
    "tests/live/test_preview_agrees_with_handler.py",
    "tests/live/test_status.py",
    "tests/live/test_history.py",
    "tests/runtime/test_old_botocore.py",
    "tests/constructs/test_share_tags.py",
    "tests/monitoring_runtime/test_from_template.py",
    "tests/constructs/test_borrowing_and_grants.py",
    "tests/constructs/test_nag_acknowledgments.py",
    "tests/constructs/test_team_grant.py",
    "tests/simulation/test_invariants.py",
    "tests/simulation/test_recommend.py",
    "tests/simulation/test_recommend_cli.py",
    "tests/simulation/test_scheduling.py",
    "tests/client/test_readme_sdk.py",
    "tests/usage/test_usage_against_fake_batch.py",
)


def ensure_environment() -> None:
    if not PYTHON.exists():
        say("creating .venv (first run: a minute or two)")
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    wanted = hashlib.sha256(
        (ROOT / "pyproject.toml").read_bytes() + (ROOT / "constraints.txt").read_bytes()
    ).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    say("installing the dependencies and dev tools of quota-constructs into .venv")
    run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip", stdout=sys.stderr)
    # The requirements, not the project itself: an editable install would build the project
    # with setuptools, whose editable mode announces itself on every first setup (pip shows a
    # build backend's warnings), and would add nothing, since the jobs run from this checkout.
    run(
        PYTHON, "-m", "pip", "install", "--quiet", "-c", ROOT / "constraints.txt",
        *requirements(ROOT / "pyproject.toml"),
        stdout=sys.stderr,
    )
    STAMP.write_text(wanted)


def ensure_compiled_simulator() -> None:
    """Compile the simulator's hot modules in place (``setup.py build_ext --inplace`` with
    QUOTA_CONSTRUCTS_COMPILE=1) unless the build beside them is of their current source. A
    build that fails leaves the simulator pure Python (the same results, slower) and says so in
    one line; QUOTA_CONSTRUCTS_COMPILE=0 skips it."""
    if os.environ.get("QUOTA_CONSTRUCTS_COMPILE") == "0":
        return
    # _native.py imports only the standard library: read without importing the package.
    spec = importlib.util.spec_from_file_location("_quota_constructs_native", NATIVE)
    assert spec is not None and spec.loader is not None
    native = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(native)
    if native.build_is_current():
        return
    say("compiling the simulator's engine and figures with mypyc (about a minute)")
    built = subprocess.run(
        [str(PYTHON), "setup.py", "--quiet", "build_ext", "--inplace"], cwd=ROOT,
        env=dict(os.environ, QUOTA_CONSTRUCTS_COMPILE="1"), capture_output=True, text=True,
        check=False,
    )
    if built.returncode != 0:
        last = (built.stderr.strip() or built.stdout.strip() or "no output").splitlines()[-1]
        say(f"the simulator runs as pure Python: compiling it failed ({last})")


def requirements(pyproject: Path) -> list[str]:
    """The project's dependencies and its ``dev`` extra, as pyproject.toml declares them."""
    project = tomllib.loads(pyproject.read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["dev"]]


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def use_project_environment() -> None:
    """Re-run this process under .venv's Python when started by one without the dependencies.

    cdk.json runs ``python3 app.py``; under the CDK CLI that is whatever ``python3`` is first
    on PATH, which need not be the project's environment.
    """
    if importlib.util.find_spec("aws_cdk") is not None:
        return
    with stdout_to_stderr():
        ensure_environment()
    os.execv(PYTHON, [str(PYTHON), *sys.argv])


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout meanwhile to stderr, by this process and by the
    processes it starts (ensurepip, pip): file descriptor 1 is redirected, not just sys.stdout."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run(*command: object, stdout: TextIO | None = None) -> None:
    env = dict(os.environ, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20")
    # Material for MkDocs' banner about its successor: not a finding of ours, on every build.
    env.setdefault("NO_MKDOCS_2_WARNING", "1")
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    # The checkout is what every job runs: scripts outside its root (benchmarks/) included.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
    )
    result = subprocess.run(
        [str(c) for c in command], cwd=ROOT, env=env, stdout=stdout, check=False
    )
    if result.returncode != 0:
        sys.exit(result.returncode)


def build_distributions(outdir: Path = DIST) -> tuple[Path, Path]:
    """Build the sdist and the wheel (the wheel from the sdist, as an installer would) into
    ``outdir``, emptied first, and check them: ``twine check --strict``, the wheel holds exactly
    the package's files, and the wheel alone, in a fresh environment, runs the console script
    and stages the custom-resource Lambda's code (its modules and the AWS Batch service model).

    Returns ``(wheel, sdist)``. Exits with the failing step's status, as every job does.
    """
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    # The pure-Python wheel, whatever the shell says: the compiled ones are cibuildwheel's.
    os.environ["QUOTA_CONSTRUCTS_COMPILE"] = "0"
    run(PYTHON, "-m", "build", "--quiet", "--outdir", outdir, ROOT, stdout=sys.stderr)
    (wheel,) = outdir.glob("quota_constructs-*.whl")
    (sdist,) = outdir.glob("quota_constructs-*.tar.gz")
    run(PYTHON, "-m", "twine", "check", "--strict", wheel, sdist, stdout=sys.stderr)
    check_artefact_contents(wheel, sdist)
    smoke_test_wheel(wheel)
    return wheel, sdist


def package_files() -> set[str]:
    """The files of the package as this checkout has them (``git ls-files``: tracked, and new
    ones git does not ignore), or, outside git, as they lie on disk without caches."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "quota_constructs"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    if listed.returncode == 0 and listed.stdout.strip():
        return set(listed.stdout.split())
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "quota_constructs").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def check_artefact_contents(wheel: Path, sdist: Path) -> None:
    """The wheel carries every file of the package and nothing else (no stale staging output,
    no caches); the sdist carries the same files, pyproject.toml and the README and changelog."""
    expected = package_files()
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = {n for n in archive.namelist() if n.startswith("quota_constructs/")}
    with tarfile.open(sdist) as archive:
        root = archive.getnames()[0].split("/", 1)[0]
        in_sdist = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    problems = [
        *(f"the wheel lacks {name}" for name in sorted(expected - in_wheel)),
        *(f"the wheel carries {name}, which is no file of the package"
          for name in sorted(in_wheel - expected)),
        *(f"the sdist {root} lacks {name}"
          for name in sorted((expected | {"pyproject.toml", "README.md", "CHANGELOG.md"})
                             - in_sdist)),
    ]
    if problems:
        sys.exit("dist: " + "; ".join(problems))
    say(f"dist: {wheel.name} and {sdist.name} carry the {len(expected)} files of the package")


SMOKE = """
import sys, tempfile
from pathlib import Path
import quota_constructs
from quota_constructs._runtime_asset import stage_lambda_code
assert Path(quota_constructs.__file__).parent.parent != Path(sys.argv[1]), "the checkout"
target = Path(tempfile.mkdtemp())
stage_lambda_code(target)
staged = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()}
for needed in ("quota_constructs/runtime/quota_share_handler.py",
               "quota_constructs/model/training_instance_types.json"):
    assert needed in staged, needed
assert any(p.startswith("quota_constructs/runtime/botocore_data/batch/")
           and p.endswith("/service-2.json") for p in staged), "the AWS Batch model"
print(quota_constructs.__version__)
"""


def smoke_test_wheel(wheel: Path) -> None:
    """Install ``wheel`` alone into a fresh environment outside the checkout (its dependencies
    from .venv) and run the console script and the Lambda staging from it."""
    with tempfile.TemporaryDirectory(prefix="quota-constructs-wheel-") as scratch:
        python, script = install_wheel_alone(wheel, Path(scratch) / "venv")
        version = subprocess.run(
            [str(python), "-c", SMOKE, str(ROOT)], cwd=scratch, env=checkout_free_env(),
            capture_output=True, text=True, check=False,
        )
        if version.returncode != 0:
            sys.exit(f"dist: the installed wheel cannot stage its Lambda code:\n{version.stderr}")
        expected = wheel.name.split("-")[1]
        if version.stdout.strip() != expected:
            sys.exit(f"dist: __version__ is {version.stdout.strip()!r}, the wheel {expected!r}")
        helped = subprocess.run(
            [str(script), "--help"], cwd=scratch, env=checkout_free_env(),
            capture_output=True, text=True, check=False,
        )
        if helped.returncode != 0 or "simulate" not in helped.stdout:
            sys.exit(f"dist: quota-constructs --help failed:\n{helped.stderr}")
    say(f"dist: {wheel.name} installed alone runs quota-constructs and stages its Lambda code")


def install_wheel_alone(wheel: Path, environment: Path) -> tuple[Path, Path]:
    """A new virtual environment at ``environment`` with ``wheel`` installed and nothing else of
    this checkout; the dependencies come from .venv through a path line in a .pth file (which
    does not process .venv's own .pth files, so no editable install there can shadow the
    wheel). Returns its Python and its ``quota-constructs`` script."""
    venv.EnvBuilder(with_pip=False).create(environment)
    bin_dir = environment / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    theirs = subprocess.run([str(python), "-c", purelib], capture_output=True, text=True,
                            check=True).stdout.strip()
    ours = subprocess.run([str(PYTHON), "-c", purelib], capture_output=True, text=True,
                          check=True).stdout.strip()
    (Path(theirs) / "dependencies.pth").write_text(ours + "\n")
    subprocess.run(
        [str(PYTHON), "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--ignore-installed", "--quiet", str(wheel)],
        check=True, capture_output=True, env=checkout_free_env(),
    )
    return python, bin_dir / ("quota-constructs.exe" if os.name == "nt" else "quota-constructs")


def checkout_free_env() -> dict[str, str]:
    """This environment without what would make the checkout importable or make an app think
    it runs under the CDK CLI."""
    return {
        k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("CDK_")
    }


def quick_test_arguments(extra: list[str]) -> list[str]:
    """pytest's arguments for ``test --quick``: the quick subset, then the caller's own."""
    return [*(f"--ignore={path}" for path in QUICK_SKIPS), "-m", "not slow", *extra]


def main(argv: list[str]) -> None:
    job = argv[0] if argv else "synth"
    extra = argv[1:]
    jobs = {"synth", "test", "bench", "bench-sim", "bench-recommend", "bench-emulator",
            "bench-usage", "simulate", "dist", "docs"}
    if job not in jobs:
        sys.exit(f"unknown job {job!r}; use one of: {', '.join(sorted(jobs))}")
    ensure_environment()
    if job in ("test", "simulate") or job.startswith("bench-"):
        ensure_compiled_simulator()
    if job == "synth":
        run(PYTHON, "app.py", *extra)
    elif job == "test":
        run(PYTHON, "-m", "ruff", "check", ".")
        run(PYTHON, "-m", "mypy")
        if "--quick" in extra:
            extra = quick_test_arguments([a for a in extra if a != "--quick"])
        run(PYTHON, "-m", "pytest", "-q", *extra)
    elif job == "dist":
        wheel, sdist = build_distributions()
        say(f"dist: built and checked {wheel.relative_to(ROOT)} and {sdist.relative_to(ROOT)}")
    elif job == "docs":
        run(PYTHON, "-m", "mkdocs", "build", "--strict", "--site-dir", SITE, *extra)
    elif job == "bench-sim":
        run(PYTHON, "benchmarks/simulator_throughput.py", *extra)
    elif job == "bench-recommend":
        run(PYTHON, "benchmarks/recommend_at_scale.py", *extra)
    elif job == "bench-emulator":
        run(PYTHON, "benchmarks/emulator_throughput.py", *extra)
    elif job == "bench-usage":
        run(PYTHON, "benchmarks/usage_at_scale.py", *extra)
    elif job == "simulate":
        run(PYTHON, "-m", "quota_constructs.simulation.cli", *extra)
    else:
        run(PYTHON, "benchmarks/synth_time.py", *extra)


if __name__ == "__main__":
    main(sys.argv[1:])
