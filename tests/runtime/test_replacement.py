"""Rename and queue moves: a new share, the old one through the delete guard, rollbacks safe."""

from __future__ import annotations

from .cloudformation import STACK_ID, StackResource, share_properties
from .conftest import Batch
from .declarations import G5, share_spec


def names_on(batch: Batch, queue: str) -> list[str]:
    return sorted(share.name for share in batch.state.shares_on(queue))


def test_rename_creates_the_new_share_and_deletes_the_old_one(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec("team-a"), batch.training))
    old_arn = resource.physical_id

    outcome = resource.update(share_properties(share_spec("team-a-v2"), batch.training))

    assert outcome.ok, outcome.reason
    assert outcome.physical_id == f"{batch.training}/quota-share/team-a-v2"
    assert outcome.data["QuotaShareName"] == "team-a-v2"
    assert outcome.cleanup is not None and outcome.cleanup.ok, outcome.cleanup
    assert outcome.cleanup.physical_id == old_arn
    assert names_on(batch, batch.training) == ["team-a-v2"]


def test_rename_leaves_the_old_share_with_active_jobs_in_place(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec("team-a"), batch.training))
    assert resource.physical_id is not None
    job = batch.state.add_job(resource.physical_id, "RUNNING", {G5: 2}, name="still-training")

    outcome = resource.update(share_properties(share_spec("team-a-v2"), batch.training))

    # The update itself succeeds; the old share's delete (cleanup) is refused and changes nothing.
    assert outcome.ok
    assert outcome.cleanup is not None and not outcome.cleanup.ok
    assert f"still-training ({job}, RUNNING)" in outcome.cleanup.reason
    assert names_on(batch, batch.training) == ["team-a", "team-a-v2"]
    old = batch.state.share(batch.training, "team-a")
    assert old is not None and old.state == "ENABLED"
    assert batch.state.terminated_jobs == []


def test_rename_rolled_back_by_a_later_failure_keeps_the_original(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec("team-a"), batch.training))
    original = resource.physical_id
    assert original is not None
    job = batch.state.add_job(original, "RUNNING", {G5: 1})

    outcome = resource.update(
        share_properties(share_spec("team-a-v2"), batch.training), later_failure=True
    )

    assert outcome.ok  # this resource was fine; another resource failed the stack update
    assert outcome.rollback is not None and outcome.rollback.ok, outcome.rollback
    # The rollback finds the original with this resource's marker and keeps it.
    assert outcome.rollback.physical_id == original
    assert outcome.cleanup is not None and outcome.cleanup.ok
    assert resource.physical_id == original
    assert names_on(batch, batch.training) == ["team-a"]
    assert batch.state.job(job).status == "RUNNING" and batch.state.terminated_jobs == []


def test_rename_onto_a_name_someone_else_uses_fails_and_rolls_back_cleanly(batch: Batch) -> None:
    StackResource("Other", stack_id=STACK_ID + "-other", handler=batch.handler).create(
        share_properties(share_spec("taken", limits={G5: 1}), batch.training)
    )
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec("team-a"), batch.training))
    original = resource.physical_id

    outcome = resource.update(share_properties(share_spec("taken"), batch.training))

    assert not outcome.ok and "'taken' already exists on job queue" in outcome.reason
    assert outcome.rollback is not None and outcome.rollback.ok
    assert outcome.rollback.physical_id == original and outcome.cleanup is None
    assert names_on(batch, batch.training) == ["taken", "team-a"]
    taken = batch.state.share(batch.training, "taken")
    assert taken is not None and taken.limits == {G5: 1}


def test_rename_to_an_invalid_share_is_cleaned_up_by_the_rollback(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec("team-a"), batch.training))
    original = resource.physical_id

    outcome = resource.update(
        share_properties(share_spec("team-a-v2", limits={"ml.p4d.24xlarge": 1}), batch.training)
    )

    assert not outcome.ok and "is INVALID" in outcome.reason
    assert outcome.rollback is not None and outcome.rollback.ok
    assert outcome.rollback.physical_id == original
    assert outcome.cleanup is not None and outcome.cleanup.ok
    assert names_on(batch, batch.training) == ["team-a"]


def test_moving_a_share_to_another_queue_replaces_it(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec("team-a"), batch.training))

    outcome = resource.update(share_properties(share_spec("team-a"), batch.research))

    assert outcome.ok, outcome.reason
    assert outcome.physical_id == f"{batch.research}/quota-share/team-a"
    assert outcome.cleanup is not None and outcome.cleanup.ok
    assert names_on(batch, batch.training) == []
    assert names_on(batch, batch.research) == ["team-a"]


def test_a_queue_given_by_name_is_the_same_queue_as_by_arn(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec("team-a"), batch.training))
    arn = resource.physical_id

    outcome = resource.update(share_properties(share_spec("team-a", limits={G5: 5}), "training"))

    assert outcome.ok and outcome.physical_id == arn and outcome.cleanup is None
    assert batch.state.count("CreateQuotaShare") == 1


def test_queue_move_rolled_back_keeps_the_original_and_removes_the_copy(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec("team-a"), batch.training))
    original = resource.physical_id

    outcome = resource.update(
        share_properties(share_spec("team-a"), batch.research), later_failure=True
    )

    assert outcome.rollback is not None and outcome.rollback.ok
    assert resource.physical_id == original
    assert names_on(batch, batch.training) == ["team-a"]
    assert names_on(batch, batch.research) == []
