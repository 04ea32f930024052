"""Create: submit, wait for VALID, adopt only what this resource owns or was told to adopt."""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs.model import SharingStrategy
from quota_constructs.runtime.ownership import (
    ADOPTING_TAG_KEY,
    LIFECYCLE_TAG_KEY,
    OWNER_TAG_KEY,
    owner_marker,
    stack_marker,
)

from .cloudformation import STACK_ID, StackResource, share_properties
from .conftest import Batch
from .declarations import G5, G5_2X, share_spec


def test_create_submits_the_declaration_and_waits_until_valid(batch: Batch) -> None:
    batch.state.transition_polls = 3
    spec = share_spec(limits={G5: 4, G5_2X: 2}, borrow=200, in_share_preemption=True)
    outcome = StackResource(handler=batch.handler).create(share_properties(spec, batch.training))

    assert outcome.ok, outcome.reason
    arn = f"{batch.training}/quota-share/team-a"
    assert outcome.physical_id == arn
    assert outcome.data == {"QuotaShareArn": arn, "QuotaShareName": "team-a"}
    assert outcome.polls == 3
    share = batch.state.shares[arn]
    assert share.status == "VALID"
    assert share.limits == {G5: 4, G5_2X: 2}
    assert (share.strategy, share.borrow_limit) == ("LEND_AND_BORROW", 200)
    assert (share.in_share_preemption, share.state) == ("ENABLED", "ENABLED")
    assert share.tags == {
        "team": "a",
        OWNER_TAG_KEY: owner_marker(STACK_ID, "TeamShare"),
        LIFECYCLE_TAG_KEY: "adopt_existing=false allow_preemption_on_shrink=false "
        f"terminate_active_jobs_on_delete=false stack={stack_marker(STACK_ID)}",
    }
    assert batch.state.mutations() == ["CreateQuotaShare"]


def test_borrow_limit_zero_is_sent_as_zero_and_unlimited_as_minus_one(batch: Batch) -> None:
    never = StackResource("Never", handler=batch.handler).create(
        share_properties(share_spec("never", borrow=0), batch.training)
    )
    unlimited = StackResource("Unlimited", handler=batch.handler).create(
        share_properties(share_spec("unlimited", borrow=None), batch.training)
    )
    reserve = StackResource("Reserve", handler=batch.handler).create(
        share_properties(share_spec("reserve", strategy=SharingStrategy.RESERVE), batch.training)
    )

    assert never.ok and unlimited.ok and reserve.ok
    sent = {p["quotaShareName"]: p["resourceSharingConfiguration"]
            for op, p in batch.state.calls if op == "CreateQuotaShare"}
    assert sent == {
        "never": {"strategy": "LEND_AND_BORROW", "borrowLimit": 0},
        "unlimited": {"strategy": "LEND_AND_BORROW", "borrowLimit": -1},
        "reserve": {"strategy": "RESERVE"},
    }


def test_repeated_create_delivery_adopts_its_own_share_without_duplicating(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    props = share_properties(share_spec(), batch.training)
    first = resource.send("Create", props)
    again = resource.send("Create", props)

    assert first.ok and again.ok, again.reason
    assert again.physical_id == first.physical_id
    assert len(batch.state.shares_on(batch.training)) == 1
    assert batch.state.count("CreateQuotaShare") == 1


def test_a_share_someone_else_made_is_not_taken_over_without_adopt_existing(batch: Batch) -> None:
    StackResource("Other", stack_id=STACK_ID + "-other", handler=batch.handler).create(
        share_properties(share_spec(limits={G5: 6}, tags={"owner": "other"}), batch.training)
    )
    before = batch.state.share(batch.training, "team-a")
    assert before is not None
    calls_before = len(batch.state.mutations())

    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert not outcome.ok
    assert "quota share 'team-a' already exists on job queue" in outcome.reason
    assert "ShareLifecycle(adopt_existing=True)" in outcome.reason
    # The failed create reported no share, so the rollback Delete touches nothing.
    assert outcome.rollback is not None and outcome.rollback.ok
    assert len(batch.state.mutations()) == calls_before
    after = batch.state.share(batch.training, "team-a")
    assert after is not None and after.limits == {G5: 6} and after.tags["owner"] == "other"


def test_adopt_existing_takes_the_share_over_and_applies_the_declaration(batch: Batch) -> None:
    StackResource("Other", stack_id=STACK_ID + "-other", handler=batch.handler).create(
        share_properties(share_spec(limits={G5: 2}, borrow=0, tags={"cost": "x"}), batch.training)
    )
    spec = share_spec(limits={G5: 5}, borrow=50, tags={"team": "a"})
    resource = StackResource(handler=batch.handler)

    outcome = resource.create(share_properties(spec, batch.training, adopt_existing=True))

    assert outcome.ok, outcome.reason
    share = batch.state.share(batch.training, "team-a")
    assert share is not None
    assert share.limits == {G5: 5} and share.borrow_limit == 50
    # Tags others set stay; ours are added with the ownership marker.
    assert share.tags["cost"] == "x" and share.tags["team"] == "a"
    # The previous owner is remembered, so undoing the adoption hands the share back.
    previous = owner_marker(STACK_ID + "-other", "Other")
    assert share.tags[OWNER_TAG_KEY] == f"{owner_marker(STACK_ID, 'TeamShare')}/{previous}"
    assert batch.state.count("CreateQuotaShare") == 1
    # From now on the share is this resource's: a repeated Create adopts it without the flag.
    assert resource.send("Create", share_properties(spec, batch.training)).ok


def test_adopting_a_larger_share_still_respects_the_shrink_guard(batch: Batch) -> None:
    other = StackResource("Other", stack_id=STACK_ID + "-other", handler=batch.handler)
    other.create(share_properties(share_spec(limits={G5: 8}, borrow=0), batch.training))
    assert other.physical_id is not None
    busy = batch.state.add_job(other.physical_id, "RUNNING", {G5: 6}, name="big-run")

    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(limits={G5: 2}, borrow=0), batch.training, adopt_existing=True)
    )

    assert not outcome.ok
    assert f"big-run ({busy}, RUNNING)" in outcome.reason
    assert batch.state.shares[other.physical_id].limits == {G5: 8}
    assert batch.state.preempted_jobs == [] and batch.state.terminated_jobs == []


def test_invalid_share_fails_with_what_was_submitted_and_rollback_removes_it(batch: Batch) -> None:
    # ml.p4d.24xlarge is not in the queue's service environment, so Batch marks it INVALID.
    spec = share_spec(limits={"ml.p4d.24xlarge": 1}, borrow=0)
    outcome = StackResource(handler=batch.handler).create(share_properties(spec, batch.training))

    assert not outcome.ok
    for expected in ("'team-a'", "'training'", "is INVALID", "ml.p4d.24xlarge: 1",
                     "LEND_AND_BORROW", "borrow limit 0%", "service environment",
                     "quota-share policy"):
        assert expected in outcome.reason
    assert outcome.rollback is not None and outcome.rollback.ok, outcome.rollback
    assert batch.state.shares_on(batch.training) == []


def test_forced_invalid_status_fails_the_create(batch: Batch) -> None:
    batch.state.invalid.add("team-a")
    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))
    assert not outcome.ok and "is INVALID" in outcome.reason
    assert batch.state.shares_on(batch.training) == []


def test_a_share_stuck_in_creating_is_never_reported_complete(batch: Batch) -> None:
    batch.state.stick("team-a")
    resource = StackResource(max_polls=15, handler=batch.handler)

    outcome = resource.send("Create", share_properties(share_spec(), batch.training))

    # The runtime keeps answering "not yet"; the provider's total timeout is the bound.
    assert not outcome.ok and outcome.reason == "Operation timed out"
    assert outcome.polls == 15
    assert batch.state.count("CreateQuotaShare") == 1


def test_the_share_limit_per_queue_is_reported_readably(batch: Batch) -> None:
    for index in range(20):
        batch.state.handle("CreateQuotaShare", {
            "quotaShareName": f"s{index}", "jobQueue": batch.training,
            "capacityLimits": [{"capacityUnit": G5, "maxCapacity": 1}],
            "resourceSharingConfiguration": {"strategy": "LEND"},
            "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
        })

    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert not outcome.ok
    assert outcome.reason.startswith("AWS Batch CreateQuotaShare failed: ClientException:")
    assert "20 shares" in outcome.reason


def test_a_create_whose_response_was_lost_is_not_duplicated(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The CreateQuotaShare takes effect but answers after the client's read timeout; the
    # re-read finds the share with this resource's marker, so it is not sent again.
    batch.with_timeouts(1, 3)
    batch.state.slow_next("CreateQuotaShare", 8.0)  # far past the read timeout, on any machine

    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert outcome.ok, outcome.reason
    assert batch.state.count("CreateQuotaShare") == 1
    assert len(batch.state.shares_on(batch.training)) == 1


def pre_existing(batch: Batch, **spec: Any) -> str:
    """A share another stack made, which this resource may be told to adopt."""
    other = StackResource("Other", stack_id=STACK_ID + "-other", handler=batch.handler)
    outcome = other.create(share_properties(share_spec(**spec), batch.training))
    assert outcome.ok, outcome.reason
    return outcome.physical_id


def test_an_adoption_that_fails_releases_the_share_instead_of_deleting_it(batch: Batch) -> None:
    arn = pre_existing(batch, limits={G5: 2})

    # 40 does not fit the environment: the adopted share turns INVALID and the create fails;
    # CloudFormation's rollback then deletes the resource, which must not delete the share.
    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(limits={G5: 40}), batch.training, adopt_existing=True)
    )

    assert not outcome.ok and "is INVALID" in outcome.reason
    assert outcome.rollback is not None and outcome.rollback.ok, outcome.rollback
    assert arn in batch.state.shares
    assert batch.state.count("DeleteQuotaShare") == 0
    assert batch.state.shares[arn].state == "ENABLED"


def test_a_completed_adoption_makes_the_share_this_resources_to_delete(batch: Batch) -> None:
    other = StackResource("Other", stack_id=STACK_ID + "-other", handler=batch.handler)
    assert other.create(share_properties(share_spec(limits={G5: 2}), batch.training)).ok
    arn = other.physical_id
    assert arn is not None
    resource = StackResource(handler=batch.handler)
    assert resource.create(
        share_properties(share_spec(), batch.training, adopt_existing=True)
    ).ok
    assert ADOPTING_TAG_KEY not in batch.state.shares[arn].tags

    # The previous owner's Delete (the move completed) lets go of the share ...
    assert other.delete().ok
    assert arn in batch.state.shares
    # ... after which the adopting resource owns it outright.
    assert resource.delete().ok
    assert arn not in batch.state.shares


def made_by_hand(batch: Batch) -> str:
    batch.state.handle("CreateQuotaShare", {
        "quotaShareName": "team-a", "jobQueue": batch.training,
        "capacityLimits": [{"capacityUnit": G5, "maxCapacity": 2}],
        "resourceSharingConfiguration": {"strategy": "LEND"},
        "tags": {"made": "by-hand", "team": "legacy"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"}, "state": "DISABLED",
    })
    batch.state.settle()
    return f"{batch.training}/quota-share/team-a"


def test_deleting_the_adopter_of_a_share_made_by_hand_gives_it_back_as_it_was(
    batch: Batch,
) -> None:
    arn = made_by_hand(batch)
    before = batch.state.shares[arn].summary(), dict(batch.state.shares[arn].tags)
    resource = StackResource(handler=batch.handler)
    assert resource.create(
        share_properties(share_spec(), batch.training, adopt_existing=True)
    ).ok
    share = batch.state.shares[arn]
    assert share.tags[OWNER_TAG_KEY] == owner_marker(STACK_ID, "TeamShare")
    assert (share.limits, share.state, share.tags["team"]) == ({G5: 4}, "ENABLED", "a")

    assert resource.delete().ok

    # Adoption is import: configuration, state and its own tags as before; markers gone.
    share = batch.state.shares[arn]
    assert (share.summary(), share.tags) == before
    assert batch.state.count("DeleteQuotaShare") == 0


def test_the_rollback_of_an_adoption_gives_the_share_back_as_it_was(batch: Batch) -> None:
    arn = made_by_hand(batch)
    before = batch.state.shares[arn].summary(), dict(batch.state.shares[arn].tags)
    resource = StackResource(handler=batch.handler)
    properties = share_properties(share_spec(), batch.training, adopt_existing=True)
    outcome = resource.create(properties)
    assert outcome.ok
    batch.state.add_job(arn, "RUNNING", {G5: 1})

    # Another resource of the deployment fails: CloudFormation deletes this one.
    rollback = resource.send("Delete", properties, physical_id=outcome.physical_id)

    assert rollback.ok, rollback.reason
    share = batch.state.shares[arn]
    assert (share.summary(), share.tags) == before
    assert batch.state.terminated_jobs == [] and batch.state.preempted_jobs == []


def test_delete_adopted_share_on_delete_deletes_a_share_made_by_hand(batch: Batch) -> None:
    arn = made_by_hand(batch)
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(
        share_spec(), batch.training, adopt_existing=True, delete_adopted_share_on_delete=True,
    )).ok

    assert resource.delete().ok
    assert arn not in batch.state.shares


def test_a_failed_adoption_is_undone_and_says_what_was_restored(batch: Batch) -> None:
    arn = made_by_hand(batch)
    before = batch.state.shares[arn].summary(), dict(batch.state.shares[arn].tags)

    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(limits={G5: 40}), batch.training, adopt_existing=True)
    )

    assert not outcome.ok and "is INVALID" in outcome.reason
    assert "The adoption was undone" in outcome.reason
    assert "capacity limits [ml.g5.xlarge: 2], strategy LEND" in outcome.reason
    assert outcome.rollback is not None and outcome.rollback.ok, outcome.rollback
    batch.state.settle()
    share = batch.state.shares[arn]
    assert share.status == "VALID"
    assert (share.summary(), share.tags) == before


def test_a_busy_share_is_not_adopted_until_it_settles(batch: Batch) -> None:
    arn = pre_existing(batch, limits={G5: 2})
    batch.state.shares[arn].status = "UPDATING"
    batch.state.shares[arn].polls_left = 100
    before = batch.state.mutations()

    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(), batch.training, adopt_existing=True)
    )

    assert not outcome.ok and "is UPDATING; it can be adopted once" in outcome.reason
    assert batch.state.mutations() == before


def test_tags_a_later_update_sets_on_an_adopted_share_are_given_back_too(batch: Batch) -> None:
    arn = made_by_hand(batch)
    batch.state.shares[arn].tags["cost-center"] = "1234"
    before = dict(batch.state.shares[arn].tags)
    resource = StackResource(handler=batch.handler)
    assert resource.create(
        share_properties(share_spec(), batch.training, adopt_existing=True)
    ).ok
    update = share_properties(
        share_spec(tags={"team": "a", "cost-center": "9999", "new": "x"}), batch.training,
    )
    assert resource.update(update).ok
    assert batch.state.shares[arn].tags["cost-center"] == "9999"

    assert resource.delete().ok

    assert batch.state.shares[arn].tags == before


def test_an_adoption_whose_tags_would_not_fit_is_refused_before_anything_changes(
    batch: Batch,
) -> None:
    arn = made_by_hand(batch)
    # 48 tags of its own; the declaration sets one of them (team), the library adds three.
    batch.state.shares[arn].tags.update({f"k{n}": "v" for n in range(46)})
    before = batch.state.shares[arn].summary(), dict(batch.state.shares[arn].tags)
    batch.state.calls.clear()

    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(), batch.training, adopt_existing=True)
    )

    assert not outcome.ok
    assert ("would carry 51 tags, more than the 50 AWS allows per resource: 1 declared, 3 the "
            "custom resource keeps (quota-constructs:adopted, quota-constructs:lifecycle, "
            "quota-constructs:owner) and 47 already on the share that the declaration does not "
            "set (k0, k1, k10, k11, k12 and 42 more)") in outcome.reason
    assert "Nothing was changed" in outcome.reason and "\n" not in outcome.reason
    assert batch.state.mutations() == []
    assert (batch.state.shares[arn].summary(), batch.state.shares[arn].tags) == before


def test_an_adoption_that_fills_the_fifty_tags_never_needs_a_fifty_first(batch: Batch) -> None:
    # 47 tags of its own (team among them) and the library's three: exactly 50. The adoption's
    # marker travels in its record, so the claim adds the owner marker without a fourth tag.
    arn = made_by_hand(batch)
    batch.state.shares[arn].tags.update({f"k{n}": "v" for n in range(45)})
    resource = StackResource(handler=batch.handler)
    properties = share_properties(share_spec(), batch.training, adopt_existing=True)

    outcome = resource.create(properties)

    assert outcome.ok, outcome.reason
    tags = batch.state.shares[arn].tags
    assert len(tags) == 50 and ADOPTING_TAG_KEY not in tags
    assert tags[OWNER_TAG_KEY] == owner_marker(resource.stack_id, resource.logical_id)
    # Given back as it was when the resource goes.
    assert resource.delete().ok
    assert len(batch.state.shares[arn].tags) == 47


def test_47_declared_tags_are_adopted_and_updated_within_the_fifty(batch: Batch) -> None:
    arn = batch.state.add_share(batch.training, "team-a", {G5: 4}, "LEND_AND_BORROW", 100)
    declared = {f"k{n}": "v" for n in range(47)}
    resource = StackResource(handler=batch.handler)

    created = resource.create(share_properties(share_spec(tags=declared), batch.training,
                                                adopt_existing=True))
    assert created.ok, created.reason
    updated = resource.update(share_properties(
        share_spec(tags={**declared, "k0": "changed"}), batch.training, adopt_existing=True))

    assert updated.ok, updated.reason
    assert len(batch.state.shares[arn].tags) == 50


def test_an_update_that_would_pass_fifty_tags_is_refused_naming_the_limit(batch: Batch) -> None:
    # Adopted with tags of its own the declaration does not set; an update declaring more
    # would take it past 50: refused before any write, not AWS's generic error.
    arn = made_by_hand(batch)
    batch.state.shares[arn].tags.update({f"own{n}": "v" for n in range(10)})
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(share_spec(), batch.training,
                                            adopt_existing=True)).ok
    before = batch.state.mutations()

    outcome = resource.update(share_properties(
        share_spec(tags={f"k{n}": "v" for n in range(40)}), batch.training, adopt_existing=True))

    assert not outcome.ok
    assert "would carry 54 tags, more than the 50 AWS allows per resource" in outcome.reason
    assert "11 already on the share that the declaration does not set" in outcome.reason
    assert batch.state.mutations() == before


def test_48_declared_tags_with_adopt_existing_are_refused_before_any_call(batch: Batch) -> None:
    # A template made by hand, or by a version before the synth counted the adoption record.
    arn = made_by_hand(batch)
    batch.state.calls.clear()
    tags = {f"k{n}": "v" for n in range(48)}

    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(tags=tags), batch.training, adopt_existing=True))

    assert not outcome.ok and "\n" not in outcome.reason
    assert "quota share 'team-a': tags got '48 tags'" in outcome.reason
    assert ("at most 47 with ShareProvisioning.CUSTOM_RESOURCE and "
            "ShareLifecycle(adopt_existing=True)") in outcome.reason
    assert batch.state.calls == []
    assert batch.state.shares[arn].tags == {"made": "by-hand", "team": "legacy"}


def test_an_update_swapping_its_declared_tags_never_carries_both_sets(batch: Batch) -> None:
    # 40 declared tags replaced by 40 others: the old ones go before the new ones are set, so
    # the share never carries 80 (AWS would refuse past 50).
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(
        share_spec(tags={f"old{n}": "v" for n in range(40)}), batch.training)).ok

    outcome = resource.update(share_properties(
        share_spec(tags={f"new{n}": "v" for n in range(40)}), batch.training))

    assert outcome.ok, outcome.reason
    assert resource.physical_id is not None
    tags = batch.state.shares[resource.physical_id].tags
    assert len(tags) == 42 and not [key for key in tags if key.startswith("old")]
