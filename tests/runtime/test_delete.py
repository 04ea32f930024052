"""Delete: by physical id only; refused while jobs are active; disable → delete → gone."""

from __future__ import annotations

from quota_constructs.runtime import quota_share_handler
from quota_constructs.runtime.ownership import LIFECYCLE_TAG_KEY

from .cloudformation import (
    CREATE_FAILED_MARKER,
    StackResource,
    cfn_event,
    run_provider,
    share_properties,
)
from .conftest import Batch
from .declarations import G5, share_spec


def deployed(batch: Batch, **options: bool) -> tuple[StackResource, str]:
    resource = StackResource(handler=batch.handler)
    outcome = resource.create(share_properties(share_spec(), batch.training, **options))
    assert outcome.ok, outcome.reason
    return resource, outcome.physical_id


def test_delete_disables_deletes_and_waits_until_gone(batch: Batch) -> None:
    resource, arn = deployed(batch)
    batch.state.add_job(arn, "SUCCEEDED", {G5: 1})  # finished jobs do not block a delete

    outcome = resource.delete()

    assert outcome.ok, outcome.reason
    assert arn not in batch.state.shares
    changes = [(op, p.get("state")) for op, p in batch.state.calls
               if op in ("UpdateQuotaShare", "DeleteQuotaShare")]
    assert changes == [("UpdateQuotaShare", "DISABLED"), ("DeleteQuotaShare", None)]


def test_delete_of_a_share_with_active_jobs_fails_listing_them_and_changes_nothing(
    batch: Batch,
) -> None:
    resource, arn = deployed(batch)
    jobs = [batch.state.add_job(arn, status, {G5: 1}, name=f"job-{status.lower()}")
            for status in ("SUBMITTED", "PENDING", "RUNNABLE", "SCHEDULED", "STARTING", "RUNNING")]
    before = batch.state.mutations()

    outcome = resource.delete()

    assert not outcome.ok
    assert "still has 6 active job(s)" in outcome.reason
    for job in jobs:
        assert job in outcome.reason
    assert "ShareLifecycle(terminate_active_jobs_on_delete=True)" in outcome.reason
    # The opt-in travels in the properties of the last deployment: say when it takes effect.
    assert "takes effect only once it is deployed before the deployment that removes or " \
        "renames the share" in outcome.reason
    assert batch.state.mutations() == before
    share = batch.state.shares[arn]
    assert (share.state, share.status) == ("ENABLED", "VALID")
    assert batch.state.terminated_jobs == []


def test_a_long_job_list_is_capped_with_a_count_of_the_rest(batch: Batch) -> None:
    resource, arn = deployed(batch)
    for _ in range(14):
        batch.state.add_job(arn, "RUNNABLE", {G5: 1})
    outcome = resource.delete()
    assert not outcome.ok
    assert "still has 14 active job(s)" in outcome.reason and " and 4 more." in outcome.reason


def test_terminate_active_jobs_on_delete_deletes_anyway(batch: Batch) -> None:
    resource, arn = deployed(batch, terminate_active_jobs_on_delete=True)
    running = batch.state.add_job(arn, "RUNNING", {G5: 1})
    queued = batch.state.add_job(arn, "RUNNABLE", {G5: 1})

    outcome = resource.delete()

    assert outcome.ok, outcome.reason
    assert arn not in batch.state.shares
    assert sorted(batch.state.terminated_jobs) == sorted([running, queued])
    assert batch.state.count("ListServiceJobs") == 0


def test_a_share_already_gone_is_a_successful_delete(batch: Batch) -> None:
    resource, arn = deployed(batch)
    del batch.state.shares[arn]
    outcome = resource.delete()
    assert outcome.ok, outcome.reason
    assert batch.state.mutations() == ["CreateQuotaShare"]


def test_a_physical_id_that_is_not_a_share_arn_means_nothing_to_delete(batch: Batch) -> None:
    for physical_id in ("3f6b1a3e-request-id", CREATE_FAILED_MARKER, "team-a"):
        event = cfn_event("Delete", share_properties(share_spec(), batch.training),
                          physical_id=physical_id)
        assert run_provider(event, handler=batch.handler).ok
    assert batch.state.calls == []


def test_delete_never_looks_at_the_properties_to_decide_what_to_delete(batch: Batch) -> None:
    _, arn = deployed(batch)
    other = StackResource("Other", handler=batch.handler)
    other.create(share_properties(share_spec("team-b"), batch.training))

    # Properties naming team-b, physical id of team-a: only team-a goes.
    event = cfn_event("Delete", share_properties(share_spec("team-b"), batch.training),
                      physical_id=arn)
    assert run_provider(event, handler=batch.handler).ok
    assert batch.state.share(batch.training, "team-a") is None
    assert batch.state.share(batch.training, "team-b") is not None


def test_repeated_delete_delivery_is_harmless(batch: Batch) -> None:
    resource, _ = deployed(batch)
    assert resource.delete().ok
    again = resource.delete()
    assert again.ok, again.reason
    assert batch.state.count("DeleteQuotaShare") == 1


def test_a_delete_delivered_again_mid_way_continues_where_it_stopped(batch: Batch) -> None:
    _, arn = deployed(batch)
    batch.state.transition_polls = 3
    event = cfn_event("Delete", share_properties(share_spec(), batch.training), physical_id=arn)
    batch.handler.on_event(event, None)  # first delivery: disabled, then lost
    assert batch.state.shares[arn].state == "DISABLED"

    replay = run_provider(event, handler=batch.handler)

    assert replay.ok, replay.reason
    assert arn not in batch.state.shares
    assert [p.get("state") for op, p in batch.state.calls if op == "UpdateQuotaShare"] == [
        "DISABLED"
    ]
    assert batch.state.count("DeleteQuotaShare") == 1


def test_an_already_disabled_share_is_deleted_without_another_update(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec(enabled=False), batch.training))
    outcome = resource.delete()
    assert outcome.ok
    assert batch.state.count("UpdateQuotaShare") == 0


def test_a_job_slipping_in_before_the_share_is_disabled_stops_the_delete(batch: Batch) -> None:
    _, arn = deployed(batch)
    event = cfn_event("Delete", share_properties(share_spec(), batch.training), physical_id=arn)
    batch.handler.on_event(event, None)  # guard passed, share disabled
    late = batch.state.add_job(arn, "SUBMITTED", {G5: 1}, name="late-submission")
    outcome = run_provider_is_complete(event)

    assert late in outcome
    share = batch.state.shares[arn]
    assert share.state == "ENABLED"  # put back as declared
    assert batch.state.count("DeleteQuotaShare") == 0 and batch.state.terminated_jobs == []


def run_provider_is_complete(event: dict[str, object]) -> str:
    for _ in range(10):
        try:
            if quota_share_handler.is_complete(dict(event), None)["IsComplete"]:
                return "completed"
        except Exception as error:
            return str(error)
    return "timed out"


def test_delete_of_a_busy_share_waits_until_it_settles(batch: Batch) -> None:
    resource, arn = deployed(batch)
    batch.state.shares[arn].status = "UPDATING"
    batch.state.shares[arn].polls_left = 3
    outcome = resource.delete()
    assert outcome.ok, outcome.reason
    assert arn not in batch.state.shares


def test_stack_delete_after_a_failed_create_touches_nothing(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    outcome = resource.create(share_properties(share_spec(), "no-such-queue"))
    assert not outcome.ok and "no-such-queue" in outcome.reason
    assert outcome.physical_id == CREATE_FAILED_MARKER
    assert outcome.rollback is not None and outcome.rollback.ok
    assert batch.state.mutations() == []


def test_the_delete_guard_reads_the_lifecycle_record_on_the_share(batch: Batch) -> None:
    resource, arn = deployed(batch, terminate_active_jobs_on_delete=True)
    job = batch.state.add_job(arn, "RUNNING", {G5: 1})
    # The record is what preview and the monitoring read: when it says the guard is on, the
    # delete is refused whatever the properties sent with the Delete.
    batch.state.shares[arn].tags[LIFECYCLE_TAG_KEY] = "terminate_active_jobs_on_delete=false"

    refused = resource.delete()

    assert not refused.ok and job in refused.reason
    del batch.state.shares[arn].tags[LIFECYCLE_TAG_KEY]  # an older share: properties decide
    assert resource.delete().ok
    assert batch.state.terminated_jobs == [job]
