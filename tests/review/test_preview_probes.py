"""Reviewer's probes of ``preview``: a team stack's template previewed on a queue that another
stack's shares also use, and deletes judged by the last deployment's opt-ins."""

from __future__ import annotations

import pytest

from quota_constructs.live.preview import DeclaredShare, preview
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.runtime.share_request import GuardOptIns

from ..runtime.cloudformation import STACK_ID, StackResource, share_properties
from ..runtime.conftest import G5, Batch
from ..runtime.declarations import share_spec

PLATFORM_STACK = STACK_ID.replace("TestStack", "PlatformStack") + "-platform"


def test_another_stacks_share_is_not_a_delete_of_this_stack(batch: Batch) -> None:
    platform = StackResource(
        logical_id="PlatformShare", stack_id=PLATFORM_STACK, handler=batch.handler,
    )
    assert platform.create(share_properties(share_spec(name="platform"), batch.training)).ok
    team = StackResource(logical_id="TeamShare", handler=batch.handler)
    assert team.create(share_properties(share_spec(name="team-a"), batch.training)).ok
    assert platform.physical_id is not None
    batch.state.add_job(platform.physical_id, "RUNNING", {G5: 1})
    declared = [DeclaredShare.of_spec(share_spec(name="team-a"), batch.training,
                                      logical_id="TeamShare")]

    result = preview("training", declared, reader=QueueReader.connect(), stack_id=STACK_ID)

    assert [(c.share, c.action) for c in result.changes] == [("team-a", "NONE")]
    assert not result.refused


@pytest.mark.parametrize("terminate", [False, True])
def test_deleting_the_team_share_is_judged_by_its_recorded_opt_in(
    batch: Batch, terminate: bool
) -> None:
    platform = StackResource(
        logical_id="PlatformShare", stack_id=PLATFORM_STACK, handler=batch.handler,
    )
    assert platform.create(share_properties(share_spec(name="platform"), batch.training)).ok
    team = StackResource(logical_id="TeamShare", handler=batch.handler)
    assert team.create(share_properties(share_spec(name="team-a"), batch.training,
                                        terminate_active_jobs_on_delete=terminate)).ok
    assert team.physical_id is not None
    running = batch.state.add_job(team.physical_id, "RUNNING", {G5: 1})

    result = preview("training", [], reader=QueueReader.connect(), stack_id=STACK_ID)
    outcome = team.delete()

    assert [(c.share, c.action) for c in result.changes] == [("team-a", "DELETE")]
    assert result.refused == (not outcome.ok) == (not terminate)
    assert result.changes[0].terminated_jobs == (running,)


def test_a_rename_with_running_jobs_is_judged_by_the_old_shares_record(batch: Batch) -> None:
    team = StackResource(logical_id="TeamShare", handler=batch.handler)
    assert team.create(share_properties(share_spec(name="team-a"), batch.training,
                                        terminate_active_jobs_on_delete=False)).ok
    assert team.physical_id is not None
    running = batch.state.add_job(team.physical_id, "RUNNING", {G5: 1})
    # The new declaration opts in: a rename's delete is still judged by the old share's record.
    declared = [DeclaredShare.of_spec(
        share_spec(name="team-a-2"), batch.training, logical_id="TeamShare",
        opt_ins=GuardOptIns(terminate_active_jobs_on_delete=True))]

    result = preview("training", declared, reader=QueueReader.connect(), stack_id=STACK_ID)
    outcome = team.update(share_properties(share_spec(name="team-a-2"), batch.training,
                                           terminate_active_jobs_on_delete=True))

    (change,) = result.changes
    assert (change.action, change.renamed_from) == ("RENAME", "team-a")
    handler_refused = not outcome.ok or (outcome.cleanup is not None and not outcome.cleanup.ok)
    assert change.refused == handler_refused
    assert running in change.terminated_jobs
