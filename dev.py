#!/usr/bin/env python3
"""Set up the project from scratch and run one of its jobs.

    python3 dev.py synth   # create .venv, install, synthesize every stack into cdk.out (+ cdk-nag)
    python3 dev.py test    # create .venv, install, run ruff, mypy and the whole pytest suite
    python3 dev.py bench   # synth-time benchmark: library against raw Cfn* resources
    python3 dev.py bench-sim [--jobs N]   # simulator throughput: 250k, 500k, 1M jobs
    python3 dev.py bench-recommend [--jobs N] [--workers W ...]   # recommend on 1M jobs
    python3 dev.py bench-emulator [--jobs N] [--profile]   # emulator API calls per second
    python3 dev.py simulate [--env dev] [--workload FILE | --synthetic --jobs N --hours H]
                           # replay a workload; HTML report + metrics.json + jobs.csv

Needs only Python >= 3.11 (and Node.js, which aws-cdk-lib's jsii runtime uses). The virtual
environment is reused while pyproject.toml and constraints.txt are unchanged.

.venv holds the project's dependencies, not the project: every job runs from this checkout (its
root is on the path), so nothing has to be built or reinstalled when the code changes. Messages
about setting up go to stderr: under the CDK CLI, stdout is the CLI's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tomllib
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".installed-from"


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


def main(argv: list[str]) -> None:
    job = argv[0] if argv else "synth"
    extra = argv[1:]
    jobs = {"synth", "test", "bench", "bench-sim", "bench-recommend", "bench-emulator",
            "simulate"}
    if job not in jobs:
        sys.exit(f"unknown job {job!r}; use one of: {', '.join(sorted(jobs))}")
    ensure_environment()
    if job == "synth":
        run(PYTHON, "app.py", *extra)
    elif job == "test":
        run(PYTHON, "-m", "ruff", "check", ".")
        run(PYTHON, "-m", "mypy")
        run(PYTHON, "-m", "pytest", "-q", *extra)
    elif job == "bench-sim":
        run(PYTHON, "benchmarks/simulator_throughput.py", *extra)
    elif job == "bench-recommend":
        run(PYTHON, "benchmarks/recommend_at_scale.py", *extra)
    elif job == "bench-emulator":
        run(PYTHON, "benchmarks/emulator_throughput.py", *extra)
    elif job == "simulate":
        run(PYTHON, "-m", "quota_constructs.simulation.cli", *extra)
    else:
        run(PYTHON, "benchmarks/synth_time.py", *extra)


if __name__ == "__main__":
    main(sys.argv[1:])
