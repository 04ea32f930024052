"""Ambiguous answers and repeated deliveries: the share as AWS Batch now has it decides.

"Applied, then 500" is the fake applying the change and answering a server error; the fake
refuses any update while a share is UPDATING, as AWS Batch does. Each test names the step
that used to fail a deployment (or leave a share disabled) and checks it now completes with
the change applied exactly once.
"""

from __future__ import annotations

import pytest

from quota_constructs.runtime.ownership import ADOPTING_TAG_KEY, OWNER_TAG_KEY, owner_marker

from .cloudformation import STACK_ID, StackResource, cfn_event, run_provider, share_properties
from .conftest import Batch
from .declarations import G5, share_spec


def deployed(batch: Batch, name: str = "team-a") -> StackResource:
    resource = StackResource(handler=batch.handler)
    outcome = resource.create(share_properties(share_spec(name), batch.training))
    assert outcome.ok, outcome.reason
    return resource


def sent(batch: Batch, operation: str) -> list[dict[str, object]]:
    return [params for op, params in batch.state.calls if op == operation]


def test_an_update_applied_then_answered_500_completes_without_sending_it_again(
    batch: Batch,
) -> None:
    resource = deployed(batch)
    batch.state.fail_after_next("UpdateQuotaShare")

    outcome = resource.update(share_properties(share_spec(limits={G5: 6}), batch.training))

    assert outcome.ok, outcome.reason
    assert outcome.rollback is None
    share = batch.state.shares[str(resource.physical_id)]
    assert (share.limits, share.status) == ({G5: 6}, "VALID")
    assert len(sent(batch, "UpdateQuotaShare")) == 1


def test_an_update_that_failed_before_applying_is_sent_again(batch: Batch) -> None:
    resource = deployed(batch)
    batch.state.fail_next("UpdateQuotaShare", code="ServerException", status=500)

    outcome = resource.update(share_properties(share_spec(limits={G5: 6}), batch.training))

    assert outcome.ok, outcome.reason
    assert batch.state.shares[str(resource.physical_id)].limits == {G5: 6}
    assert len(sent(batch, "UpdateQuotaShare")) == 2


def test_an_update_whose_answer_timed_out_after_applying_is_not_sent_again(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:

    resource = deployed(batch)
    batch.with_timeouts(1, 3)
    batch.state.slow_next("UpdateQuotaShare", 8.0)  # far past the read timeout, on any machine

    outcome = resource.update(share_properties(share_spec(limits={G5: 6}), batch.training))

    assert outcome.ok, outcome.reason
    assert len(sent(batch, "UpdateQuotaShare")) == 1


@pytest.mark.parametrize("operation", ["UpdateQuotaShare", "DeleteQuotaShare"])
def test_a_delete_step_applied_then_answered_500_still_deletes(
    batch: Batch, operation: str
) -> None:
    resource = deployed(batch)
    arn = str(resource.physical_id)
    batch.state.fail_after_next(operation)

    outcome = resource.delete()

    assert outcome.ok, outcome.reason
    assert arn not in batch.state.shares
    assert len(sent(batch, operation)) == 1


def test_the_cleanup_of_a_rename_never_leaves_the_old_share_disabled(batch: Batch) -> None:
    resource = deployed(batch)
    old = str(resource.physical_id)
    # The disable step of the old share's delete: applied, then 500 (several times over).
    batch.state.fail_after_next("UpdateQuotaShare", 1)
    batch.state.fail_next("DescribeQuotaShare", 2, code="ServerException", status=500)

    outcome = resource.update(share_properties(share_spec("team-a-v2"), batch.training))

    assert outcome.ok, outcome.reason
    assert outcome.cleanup is not None and outcome.cleanup.ok, outcome.cleanup.reason
    assert old not in batch.state.shares
    assert [s.name for s in batch.state.shares_on(batch.training)] == ["team-a-v2"]


def test_re_enabling_after_a_job_slipped_in_survives_a_500_and_then_fails_the_delete(
    batch: Batch,
) -> None:
    resource = deployed(batch)
    arn = str(resource.physical_id)
    event = cfn_event("Delete", share_properties(share_spec(), batch.training), physical_id=arn)
    batch.handler.on_event(event, None)  # guard passed, share being disabled
    late = batch.state.add_job(arn, "SUBMITTED", {G5: 1}, name="late-submission")
    batch.state.fail_after_next("UpdateQuotaShare")  # the re-enable: applied, then 500

    outcome = run_provider(event, handler=batch.handler)

    assert not outcome.ok and late in outcome.reason
    share = batch.state.shares[arn]
    assert (share.state, share.status) == ("ENABLED", "VALID")
    assert batch.state.count("DeleteQuotaShare") == 0 and batch.state.terminated_jobs == []


def test_a_create_applied_then_answered_500_creates_one_share(batch: Batch) -> None:
    batch.state.fail_after_next("CreateQuotaShare")

    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert outcome.ok, outcome.reason
    assert len(batch.state.shares_on(batch.training)) == 1
    assert batch.state.count("CreateQuotaShare") == 1


def test_a_tag_applied_then_answered_500_is_not_a_failure(batch: Batch) -> None:
    resource = deployed(batch)
    batch.state.fail_after_next("TagResource")

    outcome = resource.update(
        share_properties(share_spec(tags={"team": "b"}), batch.training)
    )

    assert outcome.ok, outcome.reason
    assert batch.state.shares[str(resource.physical_id)].tags["team"] == "b"
    assert batch.state.count("TagResource") == 1


def hand_made_share(batch: Batch) -> str:
    batch.state.handle("CreateQuotaShare", {
        "quotaShareName": "team-a", "jobQueue": batch.training,
        "capacityLimits": [{"capacityUnit": G5, "maxCapacity": 2}],
        "resourceSharingConfiguration": {"strategy": "LEND"},
        "preemptionConfiguration": {"inSharePreemption": "DISABLED"},
    })
    arn = f"{batch.training}/quota-share/team-a"
    batch.state.shares[arn].status = "VALID"
    return arn


def test_an_adoption_applied_then_answered_500_completes(batch: Batch) -> None:
    arn = hand_made_share(batch)
    batch.state.fail_after_next("UpdateQuotaShare")

    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(), batch.training, adopt_existing=True)
    )

    assert outcome.ok, outcome.reason
    share = batch.state.shares[arn]
    assert share.limits == {G5: 4} and share.strategy == "LEND_AND_BORROW"
    assert share.tags[OWNER_TAG_KEY] == owner_marker(STACK_ID, "TeamShare")
    assert ADOPTING_TAG_KEY not in share.tags


def test_a_repeated_delivery_of_an_adopting_create_recognises_its_own_adoption(
    batch: Batch,
) -> None:
    arn = hand_made_share(batch)
    batch.state.transition_polls = 3
    event = cfn_event(
        "Create", share_properties(share_spec(), batch.training, adopt_existing=True)
    )
    batch.handler.on_event(event, None)  # adopts, marks, submits the update
    assert batch.state.shares[arn].status == "UPDATING"

    # The same request again (same RequestId): it must find its own adoption in flight.
    outcome = run_provider(event, handler=batch.handler)

    assert outcome.ok, outcome.reason
    share = batch.state.shares[arn]
    assert (share.limits, share.status) == ({G5: 4}, "VALID")
    assert share.tags[OWNER_TAG_KEY] == owner_marker(STACK_ID, "TeamShare")
    assert ADOPTING_TAG_KEY not in share.tags
    assert len(sent(batch, "UpdateQuotaShare")) == 1


def test_a_refused_adoption_leaves_no_adoption_marker(batch: Batch) -> None:
    arn = hand_made_share(batch)
    batch.state.add_job(arn, "RUNNING", {G5: 2})

    # Lowering 2 -> 1 under a job using 2: the shrink guard refuses before anything changes.
    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(limits={G5: 1}), batch.training, adopt_existing=True)
    )

    assert not outcome.ok and "refusing to lower" in outcome.reason
    assert ADOPTING_TAG_KEY not in batch.state.shares[arn].tags
    assert batch.state.mutations() == ["CreateQuotaShare"]  # the hand-made one only


def test_a_repeated_delivery_of_an_update_while_updating_changes_nothing_twice(
    batch: Batch,
) -> None:
    resource = deployed(batch)
    batch.state.transition_polls = 3
    event = cfn_event(
        "Update", share_properties(share_spec(limits={G5: 6}), batch.training),
        old_properties=resource.properties, physical_id=resource.physical_id,
    )
    batch.handler.on_event(event, None)

    outcome = run_provider(event, handler=batch.handler)

    assert outcome.ok, outcome.reason
    assert len(sent(batch, "UpdateQuotaShare")) == 1


def test_a_busy_refusal_of_a_change_that_did_not_happen_is_sent_again(batch: Batch) -> None:
    resource = deployed(batch)
    batch.state.fail_next(
        "UpdateQuotaShare", code="ClientException",
        message="Cannot update quota share team-a while its status is UPDATING",
    )

    outcome = resource.update(share_properties(share_spec(limits={G5: 6}), batch.training))

    assert outcome.ok, outcome.reason
    assert batch.state.shares[str(resource.physical_id)].limits == {G5: 6}
    assert len(sent(batch, "UpdateQuotaShare")) == 2


def test_a_plain_refusal_is_neither_re_read_nor_sent_again(batch: Batch) -> None:
    resource = deployed(batch)
    batch.state.fail_next("UpdateQuotaShare", code="ClientException",
                          message="capacity unit ml.g5.xlarge is not in the environment")

    outcome = resource.update(share_properties(share_spec(limits={G5: 6}), batch.training))

    assert not outcome.ok
    assert outcome.reason.startswith("AWS Batch UpdateQuotaShare failed: ClientException")
    # Sent once; the rollback finds the share as it was and sends nothing.
    assert len(sent(batch, "UpdateQuotaShare")) == 1
    assert batch.sleeps == []
