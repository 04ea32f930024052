"""Turning in-share preemption on is guarded like a shrink (issue 26, item 3).

With a low-priority job on the share's whole limit and a higher-priority job waiting in the same
share, AWS Batch preempts the running job as soon as in-share preemption is on. The update is
refused without ``allow_preemption_on_in_share_enable``, naming the jobs; applied when nothing
would be preempted now.
"""

from __future__ import annotations

from typing import Any

import pytest

from quota_constructs.model import SharingStrategy
from quota_constructs.runtime import guards
from quota_constructs.runtime.ownership import LIFECYCLE_TAG_KEY
from quota_constructs.runtime.share_request import GuardOptIns

from .cloudformation import StackResource, share_properties
from .conftest import Batch
from .declarations import G5, G5_2X, share_spec

LEND = SharingStrategy.LEND


def deployed(batch: Batch, **spec: Any) -> tuple[StackResource, str]:
    resource = StackResource(handler=batch.handler)
    outcome = resource.create(share_properties(share_spec(**spec), batch.training))
    assert outcome.ok, outcome.reason
    return resource, outcome.physical_id


def turn_on(batch: Batch, resource: StackResource, *, opt_in: bool = False,
            **spec: Any) -> Any:
    spec = {"strategy": LEND, "limits": {G5: 4}, **spec}
    return resource.update(share_properties(
        share_spec(in_share_preemption=True, **spec), batch.training,
        allow_preemption_on_in_share_enable=opt_in,
    ))


def test_refused_while_a_waiting_job_outranks_one_on_the_whole_limit(batch: Batch) -> None:
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    low = batch.state.add_job(arn, "RUNNING", {G5: 4}, name="nightly-sweep", priority=1)
    high = batch.state.add_job(arn, "RUNNABLE", {G5: 2}, name="urgent-eval", priority=50)
    before = batch.state.mutations()

    outcome = turn_on(batch, resource)

    assert not outcome.ok
    assert "refusing to turn in-share preemption on" in outcome.reason
    assert f"nightly-sweep ({low}, RUNNING, priority 1)" in outcome.reason
    assert f"urgent-eval ({high}, RUNNABLE, priority 50)" in outcome.reason
    assert "Nothing was changed" in outcome.reason
    assert "ShareLifecycle(allow_preemption_on_in_share_enable=True)" in outcome.reason
    assert batch.state.mutations() == before
    assert batch.state.shares[arn].in_share_preemption == "DISABLED"
    assert batch.state.preempted_jobs == []


def test_the_opt_in_applies_it_and_batch_preempts_the_named_job(batch: Batch) -> None:
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    low = batch.state.add_job(arn, "RUNNING", {G5: 4}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 2}, priority=50)

    outcome = turn_on(batch, resource, opt_in=True)

    assert outcome.ok, outcome.reason
    assert batch.state.shares[arn].in_share_preemption == "ENABLED"
    assert batch.state.preempted_jobs == [low]
    recorded = GuardOptIns.from_tags(batch.state.shares[arn].tags)
    assert recorded == GuardOptIns(allow_preemption_on_in_share_enable=True)


def test_applied_when_the_waiting_job_fits_in_the_free_limit(batch: Batch) -> None:
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 2}, priority=50)

    outcome = turn_on(batch, resource)

    assert outcome.ok, outcome.reason
    assert batch.state.shares[arn].in_share_preemption == "ENABLED"
    assert batch.state.preempted_jobs == []


def test_applied_when_no_waiting_job_outranks_a_running_one(batch: Batch) -> None:
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    batch.state.add_job(arn, "RUNNING", {G5: 4}, priority=50)
    batch.state.add_job(arn, "RUNNABLE", {G5: 2}, priority=50)  # equal: no preemption
    batch.state.add_job(arn, "RUNNABLE", {G5: 1}, priority=3)

    outcome = turn_on(batch, resource)

    assert outcome.ok, outcome.reason
    assert batch.state.preempted_jobs == []


def test_applied_without_reading_priorities_when_nothing_waits(batch: Batch) -> None:
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    batch.state.add_job(arn, "RUNNING", {G5: 4}, priority=1)

    outcome = turn_on(batch, resource)

    assert outcome.ok, outcome.reason
    assert batch.state.count("DescribeServiceJob") == 0


def test_only_jobs_on_the_instance_type_the_waiting_job_lacks_are_named(batch: Batch) -> None:
    limits = {G5: 3, G5_2X: 2}
    resource, arn = deployed(batch, strategy=LEND, limits=limits)
    on_g5 = batch.state.add_job(arn, "RUNNING", {G5: 2}, name="on-g5", priority=1)
    higher = batch.state.add_job(arn, "STARTING", {G5: 1}, name="higher", priority=90)
    on_2x = batch.state.add_job(arn, "RUNNING", {G5_2X: 2}, name="on-2x", priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 1}, priority=50)

    outcome = turn_on(batch, resource, limits=limits)

    assert not outcome.ok
    assert on_g5 in outcome.reason
    assert on_2x not in outcome.reason and higher not in outcome.reason


def test_a_borrowing_share_whose_lender_has_idle_capacity_is_applied(batch: Batch) -> None:
    lender = batch.state.add_share(batch.training, "lender", {G5: 4}, "LEND")
    batch.state.add_job(lender, "RUNNING", {G5: 1})
    resource, arn = deployed(batch, limits={G5: 2}, borrow=100)
    batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 2}, priority=50)

    outcome = turn_on(batch, resource, strategy=SharingStrategy.LEND_AND_BORROW,
                      limits={G5: 2}, borrow=100)

    assert outcome.ok, outcome.reason
    assert batch.state.preempted_jobs == []


def test_a_borrowing_share_with_nothing_idle_to_borrow_is_refused(batch: Batch) -> None:
    lender = batch.state.add_share(batch.training, "lender", {G5: 4}, "LEND")
    batch.state.add_job(lender, "RUNNING", {G5: 3})
    resource, arn = deployed(batch, limits={G5: 2}, borrow=100)
    low = batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 2}, priority=50)

    outcome = turn_on(batch, resource, strategy=SharingStrategy.LEND_AND_BORROW,
                      limits={G5: 2}, borrow=100)

    assert not outcome.ok and low in outcome.reason
    assert batch.state.shares[arn].in_share_preemption == "DISABLED"


def test_a_job_larger_than_the_share_can_ever_hold_still_counts(batch: Batch) -> None:
    # Whether Batch tries preemption for a job it can never place is not documented: named.
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    low = batch.state.add_job(arn, "RUNNING", {G5: 4}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 6}, priority=50)

    outcome = turn_on(batch, resource)

    assert not outcome.ok and low in outcome.reason


def test_an_unset_opt_in_is_not_rendered_nor_recorded(batch: Batch) -> None:
    properties = share_properties(share_spec(), batch.training)
    assert "AllowPreemptionOnInShareEnable" not in properties
    _, arn = deployed(batch)
    assert "allow_preemption_on_in_share_enable" not in (
        batch.state.shares[arn].tags[LIFECYCLE_TAG_KEY]
    )


def test_lenders_idle_limits_beyond_the_environment_are_not_borrowable(batch: Batch) -> None:
    # The shares' limits add up to more than the environment runs: the lender's idle limit is
    # only partly real capacity.
    batch.state.queues[batch.training].environment = {G5: 4}
    lender = batch.state.add_share(batch.training, "lender", {G5: 4}, "LEND")
    batch.state.add_job(lender, "RUNNING", {G5: 1})
    resource, arn = deployed(batch, limits={G5: 2}, borrow=100)
    low = batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 2}, priority=50)
    borrowing = {"strategy": SharingStrategy.LEND_AND_BORROW, "limits": {G5: 2}, "borrow": 100}

    refused = turn_on(batch, resource, **borrowing)
    applied = turn_on(batch, resource, opt_in=True, **borrowing)

    assert not refused.ok and low in refused.reason
    assert applied.ok, applied.reason
    assert batch.state.preempted_jobs == [low]


def test_an_adoption_that_turns_it_on_is_guarded_and_leaves_the_share_as_it_was(
    batch: Batch,
) -> None:
    arn = batch.state.add_share(batch.training, "team-a", {G5: 4}, "LEND")
    low = batch.state.add_job(arn, "RUNNING", {G5: 4}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 1}, priority=50)
    before = dict(batch.state.shares[arn].tags)

    outcome = StackResource(handler=batch.handler).create(share_properties(
        share_spec(strategy=LEND, limits={G5: 4}, in_share_preemption=True, tags={}),
        batch.training, adopt_existing=True))

    assert not outcome.ok and low in outcome.reason
    assert batch.state.shares[arn].in_share_preemption == "DISABLED"
    assert batch.state.shares[arn].tags == before
    assert batch.state.preempted_jobs == []


def test_with_more_waiting_jobs_than_are_read_every_running_job_is_named(
    batch: Batch, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(guards, "JOBS_DESCRIBED", 1)
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    running = batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=5)
    batch.state.add_job(arn, "RUNNABLE", {G5: 1}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 1}, priority=1)

    outcome = turn_on(batch, resource)

    assert not outcome.ok
    assert running in outcome.reason and "not all read" in outcome.reason


# -- jobs not yet RUNNABLE (issue 30, item 6) ----------------------------------------------------
#
# AWS: in-share preemption lets "higher priority RUNNABLE jobs" preempt. A SUBMITTED or PENDING
# job becomes RUNNABLE by itself, so it preempts too, a moment after the switch is turned on.


@pytest.mark.parametrize("status", ["SUBMITTED", "PENDING"])
def test_refused_while_a_job_not_yet_runnable_outranks_one_on_the_whole_limit(
    batch: Batch, status: str,
) -> None:
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    low = batch.state.add_job(arn, "RUNNING", {G5: 4}, name="nightly-sweep", priority=1)
    high = batch.state.add_job(arn, status, {G5: 2}, name="urgent-eval", priority=50)
    before = batch.state.mutations()

    outcome = turn_on(batch, resource)

    assert not outcome.ok
    assert f"nightly-sweep ({low}, RUNNING, priority 1)" in outcome.reason
    assert f"urgent-eval ({high}, {status}, priority 50)" in outcome.reason
    assert "SUBMITTED and PENDING ones become RUNNABLE by themselves" in outcome.reason
    assert batch.state.mutations() == before
    # The share is left as it was: once the job is RUNNABLE, nothing is preempted.
    batch.state.waiting_jobs_become_runnable()
    assert batch.state.shares[arn].in_share_preemption == "DISABLED"
    assert batch.state.preempted_jobs == []


@pytest.mark.parametrize("status", ["SUBMITTED", "PENDING"])
def test_with_the_opt_in_the_named_job_is_preempted_once_the_waiting_job_is_runnable(
    batch: Batch, status: str,
) -> None:
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    low = batch.state.add_job(arn, "RUNNING", {G5: 4}, priority=1)
    batch.state.add_job(arn, status, {G5: 2}, priority=50)

    outcome = turn_on(batch, resource, opt_in=True)

    assert outcome.ok, outcome.reason
    assert batch.state.preempted_jobs == []  # nothing RUNNABLE yet
    batch.state.waiting_jobs_become_runnable()
    assert batch.state.preempted_jobs == [low]


@pytest.mark.parametrize("status", ["SUBMITTED", "PENDING"])
def test_a_job_not_yet_runnable_that_fits_in_the_free_limit_is_no_objection(
    batch: Batch, status: str,
) -> None:
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(arn, status, {G5: 2}, priority=50)

    outcome = turn_on(batch, resource)

    assert outcome.ok, outcome.reason
    batch.state.waiting_jobs_become_runnable()
    assert batch.state.preempted_jobs == []


def test_a_runnable_job_takes_the_free_limit_before_a_submitted_one_of_higher_priority(
    batch: Batch,
) -> None:
    # The RUNNABLE job starts on the free 2 now; the SUBMITTED one, RUNNABLE later, finds
    # nothing free and preempts the running low-priority job.
    resource, arn = deployed(batch, strategy=LEND, limits={G5: 4})
    low = batch.state.add_job(arn, "RUNNING", {G5: 2}, priority=1)
    batch.state.add_job(arn, "RUNNABLE", {G5: 2}, priority=5)
    high = batch.state.add_job(arn, "SUBMITTED", {G5: 2}, priority=50)

    outcome = turn_on(batch, resource)

    assert not outcome.ok
    assert low in outcome.reason and high in outcome.reason
