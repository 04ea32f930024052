"""Declarations the usage tests read (files, as users pass them with --declaration)."""

from __future__ import annotations

from pathlib import Path

import pytest

HAND_DECLARATION = '''
from datetime import timedelta
from types import SimpleNamespace
from quota_constructs import CapacityLimit, QuotaShareSpec, ShareAgreement, SharingStrategy

G5 = "ml.g5.xlarge"

def share(name, strategy, own, **extra):
    return QuotaShareSpec(name=name, capacity_limits=[CapacityLimit(G5, own)],
                          strategy=strategy, **extra)

# Case A: 4 instances, all owned.
A = SimpleNamespace(capacity_limits=[CapacityLimit(G5, 4)], shares=[
    share("L", SharingStrategy.LEND, 2),
    share("B", SharingStrategy.LEND_AND_BORROW, 1, agreement=ShareAgreement(
        owner="b-team", target_wait_p95=timedelta(minutes=5), max_budget_failures=0)),
    share("R", SharingStrategy.RESERVE, 1),
])
# Case B: 3 instances, 1 owned by no share.
B = SimpleNamespace(capacity_limits=[CapacityLimit(G5, 3)], shares=[
    share("L", SharingStrategy.LEND, 1),
    share("B", SharingStrategy.LEND_AND_BORROW, 1),
])
'''


@pytest.fixture
def hand_declaration(tmp_path: Path) -> Path:
    path = tmp_path / "hand_declaration.py"
    path.write_text(HAND_DECLARATION, encoding="utf-8")
    return path
