"""Delete honours ownership: a share another resource owns is released, never disabled or deleted.

The scenarios are the ways one share comes to be declared by two resources: the same
declaration moved to another construct path (a new logical id in the same stack) or to another
stack, adopted with ``adopt_existing=True``; and what CloudFormation then does — delete the old
resource, or roll the move back by deleting the new one.
"""

from __future__ import annotations

import logging

import pytest

from quota_constructs.runtime.ownership import (
    ADOPTING_TAG_KEY,
    OWNER_TAG_KEY,
    owner_marker,
    release_on_delete,
)

from .cloudformation import STACK_ID, StackResource, share_properties
from .conftest import Batch
from .declarations import G5, share_spec

OTHER_STACK = STACK_ID.replace("/platform/", "/platform-next/")
DESTRUCTIVE = ("UpdateQuotaShare", "DeleteQuotaShare")


def original(batch: Batch) -> tuple[StackResource, str]:
    """Resource A: creates team-a, and so owns it."""
    resource = StackResource("TeamShare", handler=batch.handler)
    outcome = resource.create(share_properties(share_spec(), batch.training))
    assert outcome.ok, outcome.reason
    assert outcome.physical_id is not None
    return resource, outcome.physical_id


def adopter(batch: Batch, *, stack_id: str = STACK_ID) -> StackResource:
    """Resource B: the same declaration at another construct path, told to adopt the share."""
    resource = StackResource("MovedTeamShare", stack_id=stack_id, handler=batch.handler)
    outcome = resource.create(
        share_properties(share_spec(), batch.training, adopt_existing=True)
    )
    assert outcome.ok, outcome.reason
    return resource


def destructive_calls(batch: Batch) -> list[str]:
    return [op for op in batch.state.mutations() if op in DESTRUCTIVE]


@pytest.mark.parametrize("stack_id", [STACK_ID, OTHER_STACK], ids=["same-stack", "other-stack"])
@pytest.mark.parametrize("with_jobs", [False, True], ids=["no-jobs", "running-jobs"])
def test_deleting_the_resource_a_share_was_moved_away_from_releases_it(
    batch: Batch, stack_id: str, with_jobs: bool, caplog: pytest.LogCaptureFixture
) -> None:
    a, arn = original(batch)
    jobs = [batch.state.add_job(arn, "RUNNING", {G5: 1})] if with_jobs else []
    b = adopter(batch, stack_id=stack_id)
    assert b.physical_id == arn
    before = destructive_calls(batch)

    with caplog.at_level(logging.INFO, logger="quota_constructs.runtime"):
        outcome = a.delete()  # CloudFormation's cleanup after the move

    assert outcome.ok, outcome.reason
    share = batch.state.shares[arn]
    assert (share.state, share.status) == ("ENABLED", "VALID")
    assert destructive_calls(batch) == before
    assert batch.state.terminated_jobs == [] and all(
        batch.state.job(job).status == "RUNNING" for job in jobs
    )
    assert "quota_share_released" in caplog.text and "another quota-constructs resource" in (
        caplog.text
    )
    # B owns it outright now: its own Delete, later, deletes it (guarded as always).
    assert share.tags[OWNER_TAG_KEY] == owner_marker(b.stack_id, b.logical_id)
    for job in jobs:
        batch.state.job(job).status = "SUCCEEDED"
    assert b.delete().ok
    assert arn not in batch.state.shares


@pytest.mark.parametrize("with_jobs", [False, True], ids=["no-jobs", "running-jobs"])
def test_a_rolled_back_move_hands_the_share_back_to_the_original(
    batch: Batch, with_jobs: bool
) -> None:
    a, arn = original(batch)
    jobs = [batch.state.add_job(arn, "RUNNABLE", {G5: 1})] if with_jobs else []
    b = adopter(batch)
    before = destructive_calls(batch)

    # Another resource of the deployment fails: CloudFormation deletes the new resource B.
    outcome = b.delete()

    assert outcome.ok, outcome.reason
    assert destructive_calls(batch) == before
    share = batch.state.shares[arn]
    assert (share.state, share.status) == ("ENABLED", "VALID")
    assert share.tags[OWNER_TAG_KEY] == owner_marker(a.stack_id, a.logical_id)
    assert batch.state.terminated_jobs == [] and all(
        batch.state.job(job).status == "RUNNABLE" for job in jobs
    )
    # A is the owner again, as if the move never happened: an update in place works, and its
    # delete is the one that deletes.
    for job in jobs:
        batch.state.job(job).status = "SUCCEEDED"
    assert a.update(share_properties(share_spec(limits={G5: 5}), batch.training)).ok
    assert a.delete().ok
    assert arn not in batch.state.shares


def test_the_rollback_of_a_rename_onto_an_adopted_share_gives_it_back(batch: Batch) -> None:
    owner = StackResource("Owner", stack_id=OTHER_STACK, handler=batch.handler)
    assert owner.create(share_properties(share_spec("shared"), batch.training)).ok
    taken = owner.physical_id
    assert taken is not None
    job = batch.state.add_job(taken, "RUNNING", {G5: 1})
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(share_spec("team-a"), batch.training)).ok

    outcome = resource.update(
        share_properties(share_spec("shared"), batch.training, adopt_existing=True),
        later_failure=True,
    )

    assert outcome.ok and outcome.rollback is not None and outcome.rollback.ok
    # The replacement's cleanup deleted the adopted share's resource: released, handed back.
    assert outcome.cleanup is not None and outcome.cleanup.ok, outcome.cleanup
    assert outcome.cleanup.physical_id == taken
    share = batch.state.shares[taken]
    assert (share.state, share.status) == ("ENABLED", "VALID")
    assert share.tags[OWNER_TAG_KEY] == owner_marker(owner.stack_id, owner.logical_id)
    assert batch.state.job(job).status == "RUNNING"
    assert batch.state.count("DeleteQuotaShare") == 0


def test_a_share_without_an_owner_marker_is_released(
    batch: Batch, caplog: pytest.LogCaptureFixture
) -> None:
    _, arn = original(batch)
    del batch.state.shares[arn].tags[OWNER_TAG_KEY]  # stripped by hand or by other tooling
    resource = StackResource(handler=batch.handler)
    resource.properties = share_properties(share_spec(), batch.training)
    resource.physical_id = arn

    with caplog.at_level(logging.INFO, logger="quota_constructs.runtime"):
        outcome = resource.delete()

    assert outcome.ok, outcome.reason
    assert arn in batch.state.shares and batch.state.shares[arn].state == "ENABLED"
    assert destructive_calls(batch) == []
    assert "carries no owner marker" in caplog.text


def test_a_share_another_resource_is_adopting_is_not_deleted_by_its_owner(batch: Batch) -> None:
    a, arn = original(batch)
    batch.state.shares[arn].tags[ADOPTING_TAG_KEY] = owner_marker(OTHER_STACK, "Adopter")

    assert a.delete().ok
    assert arn in batch.state.shares and batch.state.count("DeleteQuotaShare") == 0


def test_a_repeated_release_moves_no_marker_twice(batch: Batch) -> None:
    a, arn = original(batch)
    adopter(batch)
    assert a.delete().ok
    tags_after_first = dict(batch.state.shares[arn].tags)
    mutations = len(batch.state.mutations())

    assert a.delete().ok  # delivered again
    assert batch.state.shares[arn].tags == tags_after_first
    assert len(batch.state.mutations()) == mutations


def test_only_an_outright_owner_may_delete() -> None:
    me, other, third = "a" * 20, "b" * 20, "c" * 20
    assert release_on_delete({OWNER_TAG_KEY: me}, me) is None
    assert release_on_delete({OWNER_TAG_KEY: me, "team": "x"}, me) is None
    handed_back = release_on_delete({OWNER_TAG_KEY: f"{me}/{other}"}, me)
    assert handed_back is not None and handed_back.set_tags == {OWNER_TAG_KEY: other}
    let_go = release_on_delete({OWNER_TAG_KEY: f"{other}/{me}"}, me)
    assert let_go is not None and let_go.set_tags == {OWNER_TAG_KEY: other}
    unrelated = release_on_delete({OWNER_TAG_KEY: f"{other}/{third}"}, me)
    assert unrelated is not None and unrelated.set_tags == {}
    pending = release_on_delete({OWNER_TAG_KEY: other, ADOPTING_TAG_KEY: me}, me)
    assert pending is not None and pending.remove_tags == [ADOPTING_TAG_KEY]
    assert release_on_delete({}, me) is not None
    assert release_on_delete({ADOPTING_TAG_KEY: other}, me) is not None


def test_a_rolled_back_move_gives_the_previous_owner_its_configuration_and_lifecycle_record(
    batch: Batch,
) -> None:
    from quota_constructs.runtime.ownership import LIFECYCLE_TAG_KEY

    first = StackResource("TeamShare", handler=batch.handler)
    assert first.create(share_properties(
        share_spec(limits={G5: 2}, tags={"team": "a"}), batch.training,
        terminate_active_jobs_on_delete=True,
    )).ok
    arn = first.physical_id
    assert arn is not None
    before = batch.state.shares[arn].summary(), dict(batch.state.shares[arn].tags)
    moved = StackResource("MovedTeamShare", handler=batch.handler)
    properties = share_properties(
        share_spec(limits={G5: 5}, tags={"team": "b", "cost": "x"}), batch.training,
        adopt_existing=True,
    )
    outcome = moved.create(properties)
    assert outcome.ok, outcome.reason
    assert batch.state.shares[arn].limits == {G5: 5}

    rollback = moved.send("Delete", properties, physical_id=outcome.physical_id)

    assert rollback.ok, rollback.reason
    share = batch.state.shares[arn]
    assert (share.summary(), share.tags) == before
    assert "terminate_active_jobs_on_delete=true" in share.tags[LIFECYCLE_TAG_KEY]
    # The previous owner's own opt-in is honoured by its later delete.
    job = batch.state.add_job(arn, "RUNNING", {G5: 1})
    assert first.delete().ok
    assert arn not in batch.state.shares and job in batch.state.terminated_jobs


def test_whether_an_adopted_share_is_deleted_is_read_from_its_lifecycle_record() -> None:
    from quota_constructs.model.adoption_record import (
        ADOPTED_TAG_KEY,
        AdoptionEntry,
        AdoptionRecord,
    )
    from quota_constructs.runtime.ownership import LIFECYCLE_TAG_KEY

    marker = owner_marker(STACK_ID, "TeamShare")
    record = AdoptionRecord((AdoptionEntry(by=marker, from_resource=False, config={}),))
    tags = {OWNER_TAG_KEY: marker, ADOPTED_TAG_KEY: record.encode()}

    kept = release_on_delete(tags, marker)
    assert kept is not None and "existed before the stack" in kept.reason
    opted = {**tags, LIFECYCLE_TAG_KEY: "adopt_existing=true delete_adopted_share_on_delete=true"}
    assert release_on_delete(opted, marker) is None
    assert release_on_delete(opted, marker, delete_adopted=False) is not None
