#!/usr/bin/env python3
"""Set up the project from scratch and run one of its jobs.

    python3 dev.py synth   # create .venv, install, synthesize every stack into cdk.out (+ cdk-nag)
    python3 dev.py test    # create .venv, install, run ruff, mypy and the whole pytest suite
    python3 dev.py bench   # synth-time benchmark: library against raw Cfn* resources
    python3 dev.py bench-sim [--jobs N]   # simulator throughput: 250k, 500k, 1M jobs
    python3 dev.py simulate [--env dev] [--workload FILE | --synthetic --jobs N --hours H]
                           # replay a workload; HTML report + metrics.json + jobs.csv

Needs only Python >= 3.11 (and Node.js, which aws-cdk-lib's jsii runtime uses). The virtual
environment is reused while pyproject.toml and constraints.txt are unchanged.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".installed-from"


def ensure_environment() -> None:
    if not PYTHON.exists():
        print("creating .venv", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    wanted = hashlib.sha256(
        (ROOT / "pyproject.toml").read_bytes() + (ROOT / "constraints.txt").read_bytes()
    ).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    print("installing quota-constructs with its dev extras into .venv", flush=True)
    run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(
        PYTHON, "-m", "pip", "install", "--quiet",
        "-c", ROOT / "constraints.txt", "-e", f"{ROOT}[dev]",
    )
    STAMP.write_text(wanted)


def use_project_environment() -> None:
    """Re-run this process under .venv's Python when started by one without the dependencies.

    cdk.json runs ``python3 app.py``; under the CDK CLI that is whatever ``python3`` is first
    on PATH, which need not be the project's environment.
    """
    if importlib.util.find_spec("aws_cdk") is not None:
        return
    with contextlib.redirect_stdout(sys.stderr):
        ensure_environment()
    os.execv(PYTHON, [str(PYTHON), *sys.argv])


def run(*command: object) -> None:
    env = dict(os.environ, JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20")
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    result = subprocess.run([str(c) for c in command], cwd=ROOT, env=env, check=False)
    if result.returncode != 0:
        sys.exit(result.returncode)


def main(argv: list[str]) -> None:
    job = argv[0] if argv else "synth"
    extra = argv[1:]
    if job not in {"synth", "test", "bench", "bench-sim", "simulate"}:
        sys.exit(f"unknown job {job!r}; use one of: synth, test, bench, bench-sim, simulate")
    ensure_environment()
    if job == "synth":
        run(PYTHON, "app.py", *extra)
    elif job == "test":
        run(PYTHON, "-m", "ruff", "check", ".")
        run(PYTHON, "-m", "mypy")
        run(PYTHON, "-m", "pytest", "-q", *extra)
    elif job == "bench-sim":
        run(PYTHON, "benchmarks/simulator_throughput.py", *extra)
    elif job == "simulate":
        run(PYTHON, "-m", "quota_constructs.simulation.cli", *extra)
    else:
        run(PYTHON, "benchmarks/synth_time.py", *extra)


if __name__ == "__main__":
    main(sys.argv[1:])
