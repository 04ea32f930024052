"""``preview`` counts a share's tags as the custom resource does (issue 30, item 8), and notes a
share a give-back left marked (item 7)."""

from __future__ import annotations

from quota_constructs.live.preview import ADOPT, UPDATE, Change, DeclaredShare, preview
from quota_constructs.live.queue_reader import QueueReader
from quota_constructs.runtime.share_request import GuardOptIns
from quota_constructs.wire.lifecycle_record import lifecycle_with_restore_pending

from ..runtime.cloudformation import STACK_ID, Outcome, StackResource, share_properties
from ..runtime.conftest import G5, Batch
from ..runtime.declarations import share_spec
from ..runtime.test_create import made_by_hand

ADOPTING = GuardOptIns(adopt_existing=True)


def adopted_with_tags_of_its_own(batch: Batch, count: int) -> tuple[Change, Outcome]:
    """A share made by hand with ``count`` tags, adopted with one declared tag of them: what
    preview says, then what the handler does."""
    arn = made_by_hand(batch)  # two tags: made, team
    batch.state.shares[arn].tags.update({f"k{n}": "v" for n in range(count - 2)})
    declared = [DeclaredShare.of_spec(share_spec(), batch.training, opt_ins=ADOPTING,
                                      logical_id="TeamShare")]
    (change,) = preview("training", declared, reader=QueueReader.connect(),
                        stack_id=STACK_ID).changes
    outcome = StackResource(handler=batch.handler).create(
        share_properties(share_spec(), batch.training, adopt_existing=True))
    return change, outcome


def test_an_adoption_past_fifty_tags_is_refused_as_the_handler_refuses_it(batch: Batch) -> None:
    change, outcome = adopted_with_tags_of_its_own(batch, 48)

    assert (change.action, change.refused) == (ADOPT, True) and not outcome.ok
    assert change.reason is not None and change.reason in outcome.reason
    assert "would carry 51 tags, more than the 50 AWS allows per resource" in change.reason


def test_an_adoption_that_fits_exactly_is_applied_as_the_handler_applies_it(
    batch: Batch,
) -> None:
    change, outcome = adopted_with_tags_of_its_own(batch, 47)

    assert (change.action, change.refused, change.cannot_tell) == (ADOPT, False, False)
    assert outcome.ok, outcome.reason


def test_an_update_that_fits_only_if_earlier_declared_tags_go_cannot_be_told(
    batch: Batch,
) -> None:
    # Which of the share's undeclared tags the previous deployment declared (and the update
    # removes) is in the template CloudFormation sends, not on the share.
    resource = StackResource(handler=batch.handler)
    earlier = {f"old{n}": "v" for n in range(20)}
    assert resource.create(share_properties(share_spec(tags=earlier), batch.training)).ok
    assert resource.physical_id is not None
    batch.state.shares[resource.physical_id].tags.update({f"own{n}": "v" for n in range(10)})
    now = {f"new{n}": "v" for n in range(30)}
    declared = [DeclaredShare.of_spec(share_spec(tags=now), batch.training,
                                      logical_id="TeamShare")]

    (change,) = preview("training", declared, reader=QueueReader.connect(),
                        stack_id=STACK_ID).changes
    applied = resource.update(share_properties(share_spec(tags=now), batch.training))

    # The handler drops the 20 it declared before: 10 + 30 + 2 fit. Had they been someone
    # else's, 62 would not: preview cannot tell, and does not say "refused".
    assert applied.ok, applied.reason
    assert (change.action, change.refused, change.cannot_tell) == (UPDATE, False, True)
    assert change.reason is not None and "would carry 62 tags" in change.reason


def test_a_share_a_give_back_left_marked_is_noted(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    assert resource.create(share_properties(share_spec(limits={G5: 2}), batch.training)).ok
    assert resource.physical_id is not None
    share = batch.state.shares[resource.physical_id]
    share.limits = {G5: 5}  # held back by a rolled-back adoption, and marked
    share.tags["quota-constructs:lifecycle"] = str(lifecycle_with_restore_pending(
        share.tags["quota-constructs:lifecycle"], ["capacityLimits"]))
    declared = [DeclaredShare.of_spec(share_spec(limits={G5: 2}), batch.training,
                                      logical_id="TeamShare")]

    (change,) = preview("training", declared, reader=QueueReader.connect(),
                        stack_id=STACK_ID).changes

    assert (change.action, change.refused) == (UPDATE, False)
    assert change.reason is not None and "left the share's capacity limits as they were" in (
        change.reason)
    assert "only when its properties change" in change.reason
