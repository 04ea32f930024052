"""Fixtures more than one test package uses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
