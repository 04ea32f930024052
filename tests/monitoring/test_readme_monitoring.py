"""The README's monitoring example runs as written and does what the text around it says."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

from tests.documentation import fenced_blocks


def monitoring_block() -> str:
    blocks = [b for b in fenced_blocks("python") if "add_monitoring" in b]
    assert len(blocks) == 1
    return blocks[0]


def test_monitoring_example_runs_and_writes_the_agreement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # App() writes its assembly under the working directory
    out = io.StringIO()
    namespace: dict[str, object] = {}
    with contextlib.redirect_stderr(out):
        exec(compile(monitoring_block(), "README.md", "exec"), namespace)
    [written] = out.getvalue().split()
    assert written.endswith(os.path.join("agreements", "MonitoredQuotas.md"))
    agreement = Path(written).read_text()
    assert "### QS1 — vision-team" in agreement
    assert "at most 1 preemption per job" in agreement
    monitoring = namespace["monitoring"]
    assert sorted(monitoring.owner_topics) == ["nlp-team", "vision-team"]  # type: ignore[attr-defined]
