"""Update in place: only what changed is sent; lowering limits below live usage is guarded."""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs.model import SharingStrategy
from quota_constructs.runtime.ownership import LIFECYCLE_TAG_KEY, OWNER_TAG_KEY
from quota_constructs.runtime.share_request import GuardOptIns

from .cloudformation import StackResource, share_properties
from .conftest import Batch
from .declarations import G5, G5_2X, share_spec


def deployed(batch: Batch, **spec: Any) -> tuple[StackResource, str]:
    resource = StackResource(handler=batch.handler)
    outcome = resource.create(share_properties(share_spec(**spec), batch.training))
    assert outcome.ok, outcome.reason
    return resource, outcome.physical_id


def update_requests(batch: Batch) -> list[dict[str, Any]]:
    return [params for op, params in batch.state.calls if op == "UpdateQuotaShare"]


@pytest.mark.parametrize(
    ("change", "sent"),
    [
        ({"limits": {G5: 6}}, {"capacityLimits": [{"capacityUnit": G5, "maxCapacity": 6}]}),
        ({"borrow": 0},
         {"resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": 0}}),
        ({"borrow": None},
         {"resourceSharingConfiguration": {"strategy": "LEND_AND_BORROW", "borrowLimit": -1}}),
        ({"strategy": SharingStrategy.LEND},
         {"resourceSharingConfiguration": {"strategy": "LEND"}}),
        ({"in_share_preemption": True},
         {"preemptionConfiguration": {"inSharePreemption": "ENABLED"}}),
        ({"enabled": False}, {"state": "DISABLED"}),
    ],
)
def test_only_the_changed_field_is_sent(batch: Batch, change: dict[str, Any],
                                        sent: dict[str, Any]) -> None:
    resource, arn = deployed(batch)

    outcome = resource.update(share_properties(share_spec(**change), batch.training))

    assert outcome.ok, outcome.reason
    assert outcome.physical_id == arn and outcome.cleanup is None
    assert update_requests(batch) == [{"quotaShareArn": arn, **sent}]
    assert batch.state.shares[arn].status == "VALID"


def test_an_unchanged_declaration_changes_nothing(batch: Batch) -> None:
    resource, arn = deployed(batch)
    before = batch.state.mutations()
    outcome = resource.update(share_properties(share_spec(), batch.training))
    assert outcome.ok and outcome.physical_id == arn
    assert batch.state.mutations() == before


def test_tags_are_updated_by_tagging_and_the_owner_marker_is_kept(batch: Batch) -> None:
    resource, arn = deployed(batch, tags={"team": "a", "cost-center": "42"})
    batch.state.shares[arn].tags["added-by-someone-else"] = "keep"
    marker = batch.state.shares[arn].tags[OWNER_TAG_KEY]
    lifecycle = batch.state.shares[arn].tags[LIFECYCLE_TAG_KEY]

    outcome = resource.update(
        share_properties(share_spec(tags={"team": "b", "env": "prod"}), batch.training)
    )

    assert outcome.ok, outcome.reason
    assert batch.state.shares[arn].tags == {
        "team": "b", "env": "prod", "added-by-someone-else": "keep", OWNER_TAG_KEY: marker,
        LIFECYCLE_TAG_KEY: lifecycle,
    }
    assert update_requests(batch) == []
    # The tags no longer declared go first, so that the share never carries the old and the new
    # at once (AWS refuses past 50 tags; the budget counts the share as it ends).
    assert [op for op, _ in batch.state.calls if op in ("TagResource", "UntagResource")] == [
        "UntagResource", "TagResource",
    ]


def test_growing_limits_needs_no_usage_check(batch: Batch) -> None:
    resource, arn = deployed(batch)
    batch.state.add_job(arn, "RUNNING", {G5: 4})
    outcome = resource.update(share_properties(share_spec(limits={G5: 8}), batch.training))
    assert outcome.ok
    assert batch.state.count("GetJobQueueSnapshot") == 0


def test_lowering_a_limit_within_live_usage_is_applied(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 8}, borrow=0)
    batch.state.add_job(arn, "RUNNING", {G5: 3})
    outcome = resource.update(
        share_properties(share_spec(limits={G5: 4}, borrow=0), batch.training)
    )
    assert outcome.ok, outcome.reason
    assert batch.state.shares[arn].limits == {G5: 4}
    assert batch.state.preempted_jobs == []


def test_lowering_a_limit_below_live_usage_fails_naming_the_jobs(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 8, G5_2X: 2}, borrow=0)
    big = batch.state.add_job(arn, "RUNNING", {G5: 4}, name="llm-pretrain")
    small = batch.state.add_job(arn, "STARTING", {G5: 2}, name="finetune")
    other_unit = batch.state.add_job(arn, "RUNNING", {G5_2X: 1}, name="eval")
    before = batch.state.mutations()

    outcome = resource.update(
        share_properties(share_spec(limits={G5: 3, G5_2X: 2}, borrow=0), batch.training)
    )

    assert not outcome.ok
    assert "ml.g5.xlarge limit from 8 to 3 while the share uses 6" in outcome.reason
    assert f"llm-pretrain ({big}, RUNNING)" in outcome.reason
    assert f"finetune ({small}, STARTING)" in outcome.reason
    assert other_unit not in outcome.reason
    assert "Nothing was changed" in outcome.reason
    assert "ShareLifecycle(allow_preemption_on_shrink=True)" in outcome.reason
    # The rollback re-sends the old properties, which match the share: nothing changes at all.
    assert outcome.rollback is not None and outcome.rollback.ok
    assert batch.state.mutations() == before
    assert batch.state.shares[arn].limits == {G5: 8, G5_2X: 2}
    assert batch.state.preempted_jobs == []


def test_removing_a_unit_in_use_counts_as_lowering_it_to_zero(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 4, G5_2X: 2}, borrow=0)
    job = batch.state.add_job(arn, "RUNNING", {G5_2X: 1}, name="on-2x")
    outcome = resource.update(
        share_properties(share_spec(limits={G5: 4}, borrow=0), batch.training)
    )
    assert not outcome.ok
    assert "ml.g5.2xlarge limit from 2 to 0" in outcome.reason and job in outcome.reason
    assert batch.state.shares[arn].limits == {G5: 4, G5_2X: 2}


def test_lowering_the_borrow_ceiling_below_borrowed_usage_is_guarded(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 2}, borrow=None)
    batch.state.add_job(arn, "RUNNING", {G5: 5}, name="borrowing")

    outcome = resource.update(share_properties(share_spec(limits={G5: 2}, borrow=100),
                                               batch.training))

    assert not outcome.ok
    assert "borrow ceiling from unlimited to 4 while the share uses 5" in outcome.reason
    assert batch.state.shares[arn].borrow_limit == -1


def test_switching_to_reserve_while_borrowing_is_guarded(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 2}, borrow=100)
    batch.state.add_job(arn, "RUNNING", {G5: 3})
    outcome = resource.update(
        share_properties(share_spec(limits={G5: 2}, strategy=SharingStrategy.RESERVE),
                         batch.training)
    )
    assert not outcome.ok and "borrow ceiling from 4 to 2" in outcome.reason
    assert batch.state.shares[arn].strategy == "LEND_AND_BORROW"


def test_usage_is_summed_from_jobs_when_the_snapshot_does_not_list_the_share(
    batch: Batch,
) -> None:
    resource, arn = deployed(batch, limits={G5: 8}, borrow=0)
    batch.state.hidden_from_snapshot.add("team-a")
    batch.state.add_job(arn, "RUNNING", {G5: 2})
    batch.state.add_job(arn, "SCHEDULED", {G5: 2})
    batch.state.add_job(arn, "RUNNABLE", {G5: 4})  # holds no capacity yet

    outcome = resource.update(share_properties(share_spec(limits={G5: 3}, borrow=0),
                                               batch.training))

    assert not outcome.ok
    assert "while the share uses 4 (usage from its SCHEDULED, STARTING and RUNNING jobs)" in (
        outcome.reason
    )
    assert batch.state.count("ListServiceJobs") >= 3


def test_allow_preemption_on_shrink_applies_the_lower_limit(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 8}, borrow=0)
    batch.state.add_job(arn, "RUNNING", {G5: 4})
    newest = batch.state.add_job(arn, "RUNNING", {G5: 3})

    outcome = resource.update(share_properties(
        share_spec(limits={G5: 5}, borrow=0), batch.training, allow_preemption_on_shrink=True
    ))

    assert outcome.ok, outcome.reason
    assert batch.state.shares[arn].limits == {G5: 5}
    assert batch.state.preempted_jobs == [newest]


def test_an_update_delivered_while_the_share_is_updating_is_applied_once_settled(
    batch: Batch,
) -> None:
    resource, arn = deployed(batch)
    batch.state.shares[arn].status = "UPDATING"
    batch.state.shares[arn].polls_left = 2

    outcome = resource.update(share_properties(share_spec(limits={G5: 6}), batch.training))

    assert outcome.ok, outcome.reason
    assert batch.state.shares[arn].limits == {G5: 6}
    assert len(update_requests(batch)) == 1


def test_an_update_to_an_invalid_configuration_fails_and_rolls_back(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 4})
    outcome = resource.update(share_properties(share_spec(limits={G5: 40}), batch.training))

    assert not outcome.ok and "is INVALID" in outcome.reason and "ml.g5.xlarge: 40" in (
        outcome.reason
    )
    assert outcome.rollback is not None and outcome.rollback.ok, outcome.rollback
    assert batch.state.shares[arn].limits == {G5: 4}
    assert batch.state.shares[arn].status == "VALID"


def test_a_share_deleted_behind_the_stacks_back_is_recreated_on_update(batch: Batch) -> None:
    resource, arn = deployed(batch)
    del batch.state.shares[arn]
    outcome = resource.update(share_properties(share_spec(limits={G5: 6}), batch.training))
    assert outcome.ok, outcome.reason
    assert outcome.physical_id == arn and batch.state.shares[arn].limits == {G5: 6}


def test_a_rollback_that_would_shrink_below_usage_is_guarded_too(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 2}, borrow=0)

    def grow_then_fill() -> None:
        batch.state.add_job(arn, "RUNNING", {G5: 5}, name="filled-after-growth")

    outcome = resource.send("Update", share_properties(share_spec(limits={G5: 6}, borrow=0),
                                                       batch.training),
                            old_properties=resource.properties, physical_id=arn)
    assert outcome.ok
    grow_then_fill()
    rollback = resource.send(
        "Update", share_properties(share_spec(limits={G5: 2}, borrow=0), batch.training),
        old_properties=share_properties(share_spec(limits={G5: 6}, borrow=0), batch.training),
        physical_id=arn,
    )
    assert not rollback.ok and "filled-after-growth" in rollback.reason
    assert batch.state.shares[arn].limits == {G5: 6}
    assert batch.state.preempted_jobs == []


def test_a_refused_shrink_does_not_change_tags_either(batch: Batch) -> None:
    resource, arn = deployed(batch, limits={G5: 8}, borrow=0, tags={"team": "a"})
    batch.state.add_job(arn, "RUNNING", {G5: 6})
    before = batch.state.mutations()

    outcome = resource.send(
        "Update",
        share_properties(share_spec(limits={G5: 2}, borrow=0, tags={"team": "b"}),
                         batch.training),
        old_properties=resource.properties, physical_id=arn,
    )

    assert not outcome.ok
    assert batch.state.mutations() == before
    assert batch.state.shares[arn].tags["team"] == "a"


def test_each_deployment_records_its_lifecycle_opt_ins_on_the_share(batch: Batch) -> None:
    resource, arn = deployed(batch)
    assert GuardOptIns.from_tags(batch.state.shares[arn].tags) == GuardOptIns()

    outcome = resource.update(
        share_properties(share_spec(), batch.training, terminate_active_jobs_on_delete=True)
    )

    assert outcome.ok, outcome.reason
    recorded = GuardOptIns.from_tags(batch.state.shares[arn].tags)
    assert recorded == GuardOptIns(terminate_active_jobs_on_delete=True)
    # A refused shrink changes nothing, the record included.
    batch.state.add_job(arn, "RUNNING", {G5: 4})
    refused = resource.update(share_properties(share_spec(limits={G5: 1}), batch.training))
    assert not refused.ok
    assert GuardOptIns.from_tags(batch.state.shares[arn].tags) == recorded


def test_a_damaged_lifecycle_record_never_waives_a_guard() -> None:
    damaged = {LIFECYCLE_TAG_KEY: "terminate_active_jobs_on_delete=yes allow_preemption_on_shrink"}
    assert GuardOptIns.from_tags(damaged) == GuardOptIns()
    assert GuardOptIns.from_tags({}) is None
