"""Giving an adopted share back when restoring all of it would preempt (issue 30, item 7).

A rolled-back or undone adoption gives the share back what it had before, but never preempts a
job to do so: what would (a lower limit or borrow ceiling below what the jobs use, in-share
preemption turned back on while a higher-priority job waits) is held back. The Delete's reason
says exactly what was restored and what was not and why; the share carries a mark (its
lifecycle record's ``restore_pending``), the monitoring reports it as drifted, and the owner's
next deployment restores the rest through its guards.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from quota_constructs.model import SharingStrategy
from quota_constructs.runtime.ownership import LIFECYCLE_TAG_KEY, OWNER_TAG_KEY, owner_marker
from quota_constructs.runtime.share_metrics import drift_of
from quota_constructs.runtime.share_request import GuardOptIns
from quota_constructs.wire.deployed_config import (
    DEPLOYED_CONFIG_TAG_KEY,
    config_fingerprint,
    deployed_as_is,
)
from quota_constructs.wire.lifecycle_record import restore_pending
from quota_constructs.wire.live_share import LiveShare

from .cloudformation import StackResource, share_properties
from .conftest import Batch
from .declarations import G5, share_spec

LEND = SharingStrategy.LEND
LEND_AND_BORROW = SharingStrategy.LEND_AND_BORROW


def released_reason(caplog: pytest.LogCaptureFixture) -> str:
    for record in caplog.records:
        entry = json.loads(record.getMessage())
        if entry.get("event") == "quota_share_released":
            return str(entry["reason"])
    raise AssertionError("no quota_share_released in the log")


def live(batch: Batch, arn: str) -> LiveShare:
    share = batch.state.shares[arn]
    return LiveShare.from_api(share.summary(), tags=share.tags)


def moved_and_rolled_back(batch: Batch, caplog: pytest.LogCaptureFixture, *, running: int,
                          **moved: Any) -> tuple[StackResource, str, list[str]]:
    """A declares team-a (2 g5, LEND); B adopts it (the move) as ``moved`` declares; jobs start
    on what B allows; then B's deployment rolls back, deleting B."""
    original = share_properties(share_spec(limits={G5: 2}, strategy=LEND), batch.training,
                                terminate_active_jobs_on_delete=True)
    a = StackResource("TeamShare", handler=batch.handler)
    assert a.create(original).ok
    arn = a.physical_id
    assert arn is not None
    b = StackResource("MovedTeamShare", handler=batch.handler)
    properties = share_properties(share_spec(**moved), batch.training, adopt_existing=True)
    assert b.create(properties).ok
    jobs = [batch.state.add_job(arn, "RUNNING", {G5: 1}) for _ in range(running)]
    with caplog.at_level(logging.INFO, logger="quota_constructs.runtime"):
        rollback = b.send("Delete", properties, physical_id=b.physical_id)
    assert rollback.ok, rollback.reason
    return a, arn, jobs


def test_a_rolled_back_move_says_what_it_restored_and_what_it_held_back(
    batch: Batch, caplog: pytest.LogCaptureFixture,
) -> None:
    a, arn, jobs = moved_and_rolled_back(
        batch, caplog, running=4, limits={G5: 5}, strategy=LEND_AND_BORROW, borrow=100,
        enabled=False)

    share = batch.state.shares[arn]
    # Safe parts restored: the sharing (LEND: a ceiling of 5 still holds the 4 in use) and the
    # state; the limit of 2 would make two running jobs preemptible: held back.
    assert share.limits == {G5: 5}
    assert (share.strategy, share.borrow_limit, share.state) == ("LEND", None, "ENABLED")
    assert share.tags[OWNER_TAG_KEY] == owner_marker(a.stack_id, a.logical_id)
    assert batch.state.preempted_jobs == [] and batch.state.terminated_jobs == []
    reason = released_reason(caplog)
    assert "with its own configuration" not in reason
    assert ("restored as before the adoption: sharing (strategy and borrow limit), in-share "
            "preemption, state") in reason
    assert ("NOT restored, since giving back never preempts a job: capacity limits (kept: "
            "capacity limits [ml.g5.xlarge: 5]; before the adoption: capacity limits "
            "[ml.g5.xlarge: 2]), because restoring it would lower ml.g5.xlarge limit from 5 to "
            "2 while the share uses 4") in reason
    assert all(job in reason for job in jobs)
    assert "restore_pending=capacity_limits" in reason
    assert "that resource's next update restores the rest" in reason
    # The visible mark: A's own lifecycle record, plus what is pending.
    record = share.tags[LIFECYCLE_TAG_KEY]
    assert "terminate_active_jobs_on_delete=true" in record
    assert record.endswith(" restore_pending=capacity_limits")
    assert restore_pending(share.tags) == ("capacityLimits",)
    assert GuardOptIns.from_tags(share.tags) == GuardOptIns(terminate_active_jobs_on_delete=True)


def test_the_monitoring_reports_the_held_back_share_as_drifted(
    batch: Batch, caplog: pytest.LogCaptureFixture,
) -> None:
    _, arn, _ = moved_and_rolled_back(batch, caplog, running=4, limits={G5: 5},
                                      strategy=LEND)
    share = live(batch, arn)

    assert drift_of(share_spec(limits={G5: 2}, strategy=LEND), share) is not None
    # Even a deployed-config tag naming the live configuration does not hide it.
    tagged = LiveShare.from_api(batch.state.shares[arn].summary(), tags={
        **share.tags, DEPLOYED_CONFIG_TAG_KEY: config_fingerprint(share.config)})
    assert not deployed_as_is(tagged)
    unmarked = {k: v for k, v in tagged.tags.items() if k != LIFECYCLE_TAG_KEY}
    assert deployed_as_is(LiveShare.from_api(batch.state.shares[arn].summary(), tags=unmarked))


def test_the_owners_next_deployment_restores_the_rest_through_its_guards(
    batch: Batch, caplog: pytest.LogCaptureFixture,
) -> None:
    a, arn, jobs = moved_and_rolled_back(batch, caplog, running=4, limits={G5: 5},
                                         strategy=LEND)
    # A's next deployment (here: a tag added, so CloudFormation sends the resource an update).
    retagged = share_properties(share_spec(limits={G5: 2}, strategy=LEND,
                                           tags={"team": "a", "cost-centre": "ml"}),
                                batch.training, terminate_active_jobs_on_delete=True)

    while_busy = a.update(retagged)

    # The jobs still hold 4: the shrink guard refuses, naming them; the mark stays.
    assert not while_busy.ok and "refusing to lower" in while_busy.reason
    assert all(job in while_busy.reason for job in jobs)
    assert batch.state.shares[arn].limits == {G5: 5}
    assert restore_pending(batch.state.shares[arn].tags) == ("capacityLimits",)
    assert batch.state.preempted_jobs == []

    for job in jobs:
        batch.state.job(job).status = "SUCCEEDED"
    outcome = a.update(retagged)

    assert outcome.ok, outcome.reason
    share = batch.state.shares[arn]
    assert share.limits == {G5: 2} and share.tags["cost-centre"] == "ml"
    assert restore_pending(share.tags) == ()
    assert "restore_pending" not in share.tags[LIFECYCLE_TAG_KEY]
    assert drift_of(share_spec(limits={G5: 2}, strategy=LEND, tags={}), live(batch, arn)) is None


def test_an_owner_that_waives_the_shrink_guard_restores_it_at_once(
    batch: Batch, caplog: pytest.LogCaptureFixture,
) -> None:
    a, arn, jobs = moved_and_rolled_back(batch, caplog, running=4, limits={G5: 5},
                                         strategy=LEND)

    outcome = a.update(share_properties(
        share_spec(limits={G5: 2}, strategy=LEND), batch.training,
        terminate_active_jobs_on_delete=True, allow_preemption_on_shrink=True))

    assert outcome.ok, outcome.reason
    assert batch.state.shares[arn].limits == {G5: 2}
    assert set(batch.state.preempted_jobs) <= set(jobs) and batch.state.preempted_jobs
    assert restore_pending(batch.state.shares[arn].tags) == ()


def test_nothing_held_back_leaves_no_mark_and_says_all_was_restored(
    batch: Batch, caplog: pytest.LogCaptureFixture,
) -> None:
    _, arn, _ = moved_and_rolled_back(batch, caplog, running=2, limits={G5: 5},
                                      strategy=LEND)

    share = batch.state.shares[arn]
    assert share.limits == {G5: 2}
    assert restore_pending(share.tags) == ()
    reason = released_reason(caplog)
    assert "its configuration and state restored as they were before the adoption" in reason
    assert "NOT restored" not in reason and "restore_pending" not in reason


def test_in_share_preemption_turned_back_on_is_held_back_while_it_would_preempt(
    batch: Batch, caplog: pytest.LogCaptureFixture,
) -> None:
    a = StackResource("TeamShare", handler=batch.handler)
    with_preemption = share_spec(limits={G5: 2}, strategy=LEND, in_share_preemption=True)
    assert a.create(share_properties(with_preemption, batch.training)).ok
    arn = a.physical_id
    assert arn is not None
    b = StackResource("MovedTeamShare", handler=batch.handler)
    properties = share_properties(share_spec(limits={G5: 2}, strategy=LEND), batch.training,
                                  adopt_existing=True)
    assert b.create(properties).ok
    low = batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(arn, "PENDING", {G5: 1}, priority=50)

    with caplog.at_level(logging.INFO, logger="quota_constructs.runtime"):
        assert b.send("Delete", properties, physical_id=b.physical_id).ok

    share = batch.state.shares[arn]
    assert share.in_share_preemption == "DISABLED"
    assert restore_pending(share.tags) == ("preemptionConfiguration",)
    reason = released_reason(caplog)
    assert "NOT restored, since giving back never preempts a job: in-share preemption" in reason
    assert low in reason
    batch.state.waiting_jobs_become_runnable()
    assert batch.state.preempted_jobs == []


def made_by_hand(batch: Batch) -> str:
    """team-a made outside the stack: 2 g5, borrowing up to 100 % more (4 in all)."""
    return batch.state.add_share(batch.training, "team-a", {G5: 2}, "LEND_AND_BORROW", 100,
                                 tags={"team": "legacy"})


@pytest.mark.parametrize("how", ["rolled-back", "failed"])
def test_a_share_made_by_hand_is_marked_and_the_reason_says_to_restore_it_by_hand(
    batch: Batch, caplog: pytest.LogCaptureFixture, how: str,
) -> None:
    arn = made_by_hand(batch)
    jobs = [batch.state.add_job(arn, "RUNNING", {G5: 1}) for _ in range(4)]
    if how == "failed":
        batch.state.invalid.add("team-a")  # the adopted share turns INVALID: undone at once
    resource = StackResource(handler=batch.handler)
    properties = share_properties(share_spec(limits={G5: 5}, strategy=LEND), batch.training,
                                  adopt_existing=True)

    with caplog.at_level(logging.INFO, logger="quota_constructs.runtime"):
        outcome = resource.create(properties)
        if how == "rolled-back":
            assert outcome.ok, outcome.reason
            assert resource.send("Delete", properties, physical_id=outcome.physical_id).ok
        else:
            assert not outcome.ok and "The adoption was undone" in outcome.reason
            assert "NOT restored, since giving back never preempts a job: capacity limits" in (
                outcome.reason)
            assert outcome.rollback is not None and outcome.rollback.ok

    share = batch.state.shares[arn]
    # Its sharing is back (a ceiling of 10 over 5 holds the 4 in use); its limit of 2 is not.
    assert share.limits == {G5: 5}
    assert (share.strategy, share.borrow_limit) == ("LEND_AND_BORROW", 100)
    assert share.tags == {"team": "legacy",
                          LIFECYCLE_TAG_KEY: "restore_pending=capacity_limits"}
    assert GuardOptIns.from_tags(share.tags) is None
    assert batch.state.preempted_jobs == [] and all(
        batch.state.job(job).status == "RUNNING" for job in jobs)
    reason = released_reason(caplog)
    assert "restore the rest by hand" in reason and "given back, with the tags it had" in reason
