"""The compiled simulator and its source: the same results, and a stale build never run.

``python3 dev.py test`` compiles the simulator's hot modules with mypyc where a C compiler is
(CI has one), so the suite runs the compiled modules; these tests run the pure-Python source
beside them against the same pinned replays, and check how the package chooses between them.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from quota_constructs.simulation import _native

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, **env: str) -> str:
    """What ``code`` prints in a fresh interpreter on this checkout, with ``env`` set."""
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
    )
    return done.stdout.strip()


def _module(directory: Path, name: str, source: str, *, compiled: bool,
            stamped: str | None) -> None:
    (directory / f"{name}.py").write_text(source)
    if compiled:
        (directory / f"{name}{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    if stamped is not None:
        stamp = directory / _native.STAMP
        recorded = json.loads(stamp.read_text()) if stamp.exists() else {}
        recorded[name] = hashlib.sha256(stamped.encode()).hexdigest()
        stamp.write_text(json.dumps(recorded))


def test_a_build_of_other_source_is_stale_and_its_source_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_native.PURE_PYTHON, raising=False)
    _module(tmp_path, "engine", "x = 2\n", compiled=True, stamped="x = 1\n")  # edited since
    _module(tmp_path, "figures", "y = 1\n", compiled=True, stamped="y = 1\n")
    assert _native.stale_builds(tmp_path) == ["engine"]
    assert not _native.build_is_current(tmp_path)
    assert list(_native.modules_to_run_from_source(tmp_path)) == ["engine"]


def test_a_build_without_its_stamp_is_stale(tmp_path: Path) -> None:
    _module(tmp_path, "engine", "x = 1\n", compiled=True, stamped=None)
    _module(tmp_path, "figures", "y = 1\n", compiled=True, stamped=None)
    assert _native.stale_builds(tmp_path) == ["engine", "figures"]


def test_a_current_build_runs_compiled_and_the_switch_runs_every_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in _native.COMPILED:
        _module(tmp_path, name, f"{name} = 1\n", compiled=True, stamped=f"{name} = 1\n")
    monkeypatch.delenv(_native.PURE_PYTHON, raising=False)
    assert _native.build_is_current(tmp_path)
    assert _native.modules_to_run_from_source(tmp_path) == {}
    monkeypatch.setenv(_native.PURE_PYTHON, "1")
    assert set(_native.modules_to_run_from_source(tmp_path)) == set(_native.COMPILED)


def test_no_build_is_not_current_and_runs_the_source_silently(tmp_path: Path) -> None:
    for name in _native.COMPILED:
        _module(tmp_path, name, f"{name} = 1\n", compiled=False, stamped=None)
    assert not _native.build_is_current(tmp_path)
    assert _native.modules_to_run_from_source(tmp_path) == {}


def test_the_switch_loads_the_engine_from_its_source() -> None:
    code = ("from quota_constructs.simulation import _native, engine; "
            "print(_native.build(), engine.__file__.endswith('engine.py'))")
    assert _python(code, **{_native.PURE_PYTHON: "1"}) == "pure Python True"


@pytest.mark.slow
def test_the_source_replays_the_pinned_runs_as_the_compiled_engine_does() -> None:
    # The suite itself ran whichever this checkout has; the source runs here, in a process of
    # its own, against the same pinned digests (and front's order), with the compiled modules
    # beside it.
    if not _native.build_is_current():
        pytest.skip("no current compiled build here: the suite itself ran the source")
    assert _python("from quota_constructs.simulation import _native; print(_native.build())"
                   ) == "compiled"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/simulation/test_engine_regression.py", "tests/simulation/test_queue_front.py",
         "tests/simulation/test_figures.py"],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT), _native.PURE_PYTHON: "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert " passed" in done.stdout.splitlines()[-1]
