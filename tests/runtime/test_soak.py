"""The random-sequence soak (see :mod:`.soak`): a slice of it in the suite, and proof it can fail.

``python -m tests.runtime.soak --sequences 1000`` runs the full soak and prints the counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from quota_constructs.runtime.batch_gateway import BatchGateway
from quota_constructs.runtime.share_writes import Progress, ShareWrite

from . import soak


def test_random_sequences_with_faults_and_redeliveries_break_nothing() -> None:
    counts = soak.run(sequences=150, seed=16)

    assert counts.problems == []
    assert counts.violations == 0
    # The sequences did what they claim: every kind of step, faults and redeliveries.
    kinds = {kind.split()[0] for kind in counts.actions}
    assert kinds == {"create", "adopt", "update", "rename", "move", "delete"}
    assert counts.should_succeed > 1500 and counts.rollbacks > 200
    assert counts.refused_as_expected > 100
    assert counts.faults_injected > 1000
    assert counts.redeliveries > 250 and counts.killed_mid_request > 50
    assert counts.denials > 40 and counts.operator_drains > 15
    assert counts.given_back_partly > 0


def test_the_soak_catches_a_blind_retry_of_a_change_that_went_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # What the runtime did before: send the change again after any retryable answer.
    def blind_retry(
        self: BatchGateway, write: ShareWrite, read: Any
    ) -> tuple[Progress, Mapping[str, Any] | None]:
        return Progress.APPLIED, self._call(write.operation, **write.params)

    monkeypatch.setattr(BatchGateway, "_write", blind_retry)

    counts = soak.run(sequences=40, seed=16)

    assert counts.failed_that_should_succeed > 0
    assert any("while its status is UPDATING" in problem for problem in counts.problems)
