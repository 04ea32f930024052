"""Fixtures more than one test package uses."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import botocore.loaders
import botocore.session
import pytest
from hypothesis import HealthCheck, settings

# Property tests judge behaviour, never speed: no per-example deadline and no "too slow" health
# check, which times the drawing of examples (a loaded 2-core machine would otherwise fail a
# correct test). In CI the examples are derived from the test itself, so a red run is
# reproducible from its log rather than a draw of luck.
_SPEED_FREE = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("default", **_SPEED_FREE)
settings.register_profile("ci", derandomize=True, **_SPEED_FREE)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture(scope="session", autouse=True)
def one_model_loader_per_data_path() -> Iterator[None]:
    """Sessions with the same data path share one botocore loader, and so its parsed models.

    The commands and Lambdas build a session per run, as they should (one per process); tests
    run them hundreds of times in one process, and each new session parsed the service models'
    JSON again (a quarter of ``tests/live``'s time). Keyed by the data path, so a test that
    stages other models (the carried Batch model, an old botocore's) still gets its own."""
    loaders: dict[str | None, botocore.loaders.Loader] = {}
    original = botocore.session.create_loader

    def shared_loader(search_path_string: str | None = None) -> botocore.loaders.Loader:
        if search_path_string not in loaders:
            loaders[search_path_string] = original(search_path_string)
        return loaders[search_path_string]

    botocore.session.create_loader = shared_loader  # type: ignore[assignment]
    yield
    botocore.session.create_loader = original


OLD_BOTOCORE = "1.40.0"
"""Months before the quota-share API (botocore 1.42.72): the botocore of an outdated Lambda
runtime."""


@pytest.fixture(scope="session")
def old_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with boto3/botocore OLD_BOTOCORE and nothing of this project."""
    venv = tmp_path_factory.mktemp("old-botocore") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--disable-pip-version-check", f"boto3=={OLD_BOTOCORE}", f"botocore=={OLD_BOTOCORE}"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return python
