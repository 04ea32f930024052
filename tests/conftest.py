"""Fixtures more than one test package uses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
