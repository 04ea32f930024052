"""Denied is not gone; unseen is not absent (DESIGN.md §10).

A ClientException saying the caller is not authorized, or a 403 AccessDeniedException, never
reads as "not found"; a delete that is refused or fails puts back the state from before it
began; a create whose answer was lost while reads do not show the new share yet never fails
leaving the share behind.
"""

from __future__ import annotations

import pytest

from quota_constructs.live.queue_reader import LiveQueueError, QueueReader
from quota_constructs.runtime.batch_gateway import BatchRequestError, Refusal, classify_refusal
from quota_constructs.runtime.monitoring_gateway import MonitoringGateway
from quota_constructs.runtime.ownership import LIFECYCLE_TAG_KEY, OWNER_TAG_KEY, owner_marker

from .cloudformation import CREATE_FAILED_MARKER, STACK_ID, StackResource, share_properties
from .conftest import Batch
from .declarations import G5, share_spec

OWNER = owner_marker(STACK_ID, "TeamShare")


def deployed(batch: Batch, **options: bool) -> tuple[StackResource, str]:
    resource = StackResource(handler=batch.handler)
    outcome = resource.create(share_properties(share_spec(), batch.training, **options))
    assert outcome.ok, outcome.reason
    return resource, outcome.physical_id


@pytest.mark.parametrize(("code", "message", "status", "meaning"), [
    ("ClientException", "User: arn:aws:sts::1:assumed-role/r/f is not authorized to perform: "
     "batch:DescribeQuotaShare", 400, Refusal.DENIED),
    ("AccessDeniedException", "no identity-based policy allows the action", 403,
     Refusal.DENIED),
    ("ClientException", "Quota share x does not exist", 400, Refusal.NOT_FOUND),
    ("ResourceNotFoundException", "", 404, Refusal.NOT_FOUND),
    ("ClientException", "Object already exists: quota share x", 400, Refusal.ALREADY_EXISTS),
    ("ClientException", "Cannot update quota share x while its status is UPDATING", 400,
     Refusal.OTHER),
    ("ClientException", "Quota share x not found: you are not authorized", 400, Refusal.DENIED),
])
def test_one_rule_tells_denied_from_not_found(
    code: str, message: str, status: int, meaning: Refusal
) -> None:
    assert classify_refusal(code, message, status) is meaning


@pytest.mark.parametrize("as_client_exception", [False, True])
def test_a_denied_describe_fails_the_delete_naming_the_permission_and_keeps_the_share(
    batch: Batch, as_client_exception: bool
) -> None:
    resource, arn = deployed(batch)
    batch.state.deny_next("DescribeQuotaShare", as_client_exception=as_client_exception)
    before = batch.state.mutations()

    outcome = resource.delete()

    assert not outcome.ok
    assert "batch:DescribeQuotaShare" in outcome.reason
    assert "never taken to mean the share is missing" in outcome.reason
    assert batch.state.mutations() == before
    share = batch.state.shares[arn]
    assert (share.state, share.tags[OWNER_TAG_KEY]) == ("ENABLED", OWNER)


@pytest.mark.parametrize("as_client_exception", [False, True])
def test_a_denied_listing_never_confirms_a_share_gone(
    batch: Batch, as_client_exception: bool
) -> None:
    resource, arn = deployed(batch)
    # The describe's answer is vague; the listing that would confirm it is denied.
    batch.state.fail_next("DescribeQuotaShare", code="ClientException", message="Bad request")
    batch.state.deny_next("ListQuotaShares", as_client_exception=as_client_exception)

    outcome = resource.delete()

    assert not outcome.ok
    assert "batch:ListQuotaShares" in outcome.reason
    assert arn in batch.state.shares


@pytest.mark.parametrize("as_client_exception", [False, True])
def test_a_delete_denied_after_disabling_enables_the_share_again(
    batch: Batch, as_client_exception: bool
) -> None:
    resource, arn = deployed(batch)
    batch.state.deny_next("DeleteQuotaShare", as_client_exception=as_client_exception)

    outcome = resource.delete()

    assert not outcome.ok
    assert "batch:DeleteQuotaShare" in outcome.reason
    assert "was enabled again, as it was before this delete began" in outcome.reason
    share = batch.state.shares[arn]
    assert share.state == "ENABLED"
    assert "disabled_for_delete" not in share.tags[LIFECYCLE_TAG_KEY]
    # The same delete, allowed this time, goes through.
    assert resource.delete().ok
    assert arn not in batch.state.shares


def test_a_refused_delete_leaves_a_share_an_operator_disabled_disabled(batch: Batch) -> None:
    resource, arn = deployed(batch)
    batch.state.shares[arn].state = "DISABLED"  # drained by an operator
    job = batch.state.add_job(arn, "RUNNING", {G5: 1})
    before = batch.state.mutations()

    outcome = resource.delete()

    assert not outcome.ok
    assert job in outcome.reason
    assert batch.state.mutations() == before
    assert batch.state.shares[arn].state == "DISABLED"


def test_a_job_slipping_into_a_share_the_delete_disabled_puts_it_back_enabled(
    batch: Batch,
) -> None:
    resource, arn = deployed(batch)
    slipped: list[str] = []
    original_update = batch.state._UpdateQuotaShare

    def disable_then_job(params: dict[str, object]) -> dict[str, object]:
        answer = original_update(params)
        if params.get("state") == "DISABLED" and not slipped:
            slipped.append(batch.state.add_job(arn, "SUBMITTED", {G5: 1}))
        return answer

    batch.state._UpdateQuotaShare = disable_then_job  # type: ignore[method-assign]

    outcome = resource.delete()

    assert not outcome.ok
    assert slipped[0] in outcome.reason
    assert batch.state.shares[arn].state == "ENABLED"
    assert batch.state.count("DeleteQuotaShare") == 0


def test_a_lost_create_answer_while_reads_miss_the_new_share_creates_one_share(
    batch: Batch,
) -> None:
    batch.state.unseen_reads = 3
    batch.state.fail_after_next("CreateQuotaShare")  # applied, then a 500

    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert outcome.ok, outcome.reason
    assert batch.state.count("CreateQuotaShare") == 2  # the resend met "already exists"
    shares = batch.state.shares_on(batch.training)
    assert [share.name for share in shares] == ["team-a"]
    assert shares[0].tags[OWNER_TAG_KEY] == OWNER


def test_a_share_reads_do_not_show_yet_is_awaited_never_failed_with_the_marker(
    batch: Batch,
) -> None:
    batch.state.unseen_reads = 40  # longer than on_event's bounded re-reads
    batch.state.fail_after_next("CreateQuotaShare")

    outcome = StackResource(
        max_polls=60, handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert outcome.ok, outcome.reason
    assert outcome.physical_id == f"{batch.training}/quota-share/team-a"
    assert outcome.physical_id != CREATE_FAILED_MARKER
    assert batch.state.shares[outcome.physical_id].tags[OWNER_TAG_KEY] == OWNER


def test_a_new_share_missing_from_the_first_reads_is_not_reported_gone(batch: Batch) -> None:
    batch.state.unseen_reads = 4

    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert outcome.ok, outcome.reason
    assert len(batch.state.shares_on(batch.training)) == 1


@pytest.mark.parametrize("as_client_exception", [False, True])
def test_monitoring_lookups_raise_on_denial_and_skip_only_what_is_not_found(
    batch: Batch, as_client_exception: bool
) -> None:
    _, arn = deployed(batch)
    job = batch.state.add_job(arn, "RUNNING", {G5: 1})
    gateway = MonitoringGateway(batch.connection.client(), batch.connection.policy)

    assert gateway.describe_job("job-unknown") is None
    batch.state.deny_next("DescribeServiceJob", as_client_exception=as_client_exception)
    with pytest.raises(BatchRequestError) as raised:
        gateway.describe_job(job)
    assert raised.value.denied and "batch:DescribeServiceJob" in str(raised.value)

    batch.state.deny_next("ListQuotaShares", as_client_exception=as_client_exception)
    batch.state.deny_next("DescribeQuotaShare", as_client_exception=as_client_exception)
    live = gateway.live_shares(batch.training, ["team-a", "team-gone"])
    assert not live.knows("team-a")  # denied: unknown, which MonitorHealthy reports
    assert live.knows("team-gone") and live.get("team-gone") is None


@pytest.mark.parametrize("as_client_exception", [False, True])
def test_the_live_commands_say_a_denied_describe_instead_of_skipping_the_share(
    batch: Batch, as_client_exception: bool
) -> None:
    deployed(batch)
    reader = QueueReader(batch.connection.client(), batch.connection.policy)
    assert [share.name for share in reader.shares(batch.training, with_tags=True)] == ["team-a"]
    batch.state.deny_next("DescribeQuotaShare", as_client_exception=as_client_exception)

    with pytest.raises(LiveQueueError, match=r"access denied.*batch:DescribeQuotaShare"):
        reader.shares(batch.training, with_tags=True)
