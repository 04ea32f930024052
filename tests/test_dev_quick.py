"""python3 dev.py test --quick leaves out exactly the documented paths, which exist: a renamed
test file would otherwise silently join the inner loop."""

from __future__ import annotations

import dev
from stacks.launch import PROJECT_ROOT


def test_every_quick_skip_names_an_existing_test_path() -> None:
    for path in dev.QUICK_SKIPS:
        assert (PROJECT_ROOT / path).exists(), path


def test_quick_arguments_ignore_the_skips_deselect_slow_and_keep_the_callers() -> None:
    arguments = dev.quick_test_arguments(["-k", "grant"])
    assert arguments[-2:] == ["-k", "grant"]
    assert [a for a in arguments if a.startswith("--ignore=")] == [
        f"--ignore={path}" for path in dev.QUICK_SKIPS]
    assert arguments[arguments.index("-m") + 1] == "not slow"


def test_the_documented_subset_is_the_one_dev_py_runs() -> None:
    documented = (PROJECT_ROOT / "docs" / "development.md").read_text()
    assert "QUICK_SKIPS" in documented
    for folder in ("tests/stacks", "tests/monitoring", "tests/review", "tests/provider"):
        assert folder in dev.QUICK_SKIPS and f"`{folder}`" in documented
