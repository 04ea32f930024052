"""Throttling, server errors, slowness and an outdated botocore: retried or reported readably."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import botocore
import pytest

from quota_constructs.runtime import batch_gateway
from quota_constructs.runtime.service_models import REQUIRED_BATCH_OPERATIONS
from quota_constructs.wire import custom_resource

from .cloudformation import StackResource, cfn_event, share_properties
from .conftest import Batch
from .declarations import G5, share_spec


@pytest.mark.parametrize(
    ("code", "status", "message"),
    [
        ("ThrottlingException", 400, "Rate exceeded"),
        ("TooManyRequestsException", 429, "Too many requests"),
        ("ClientException", 429, "Too Many Requests."),
        ("ServerException", 500, "Internal error"),
        ("ServiceUnavailableException", 503, "Try again"),
    ],
)
def test_throttling_and_server_errors_are_retried_with_backoff(
    batch: Batch, code: str, status: int, message: str
) -> None:
    batch.state.fail_next("CreateQuotaShare", 3, code=code, status=status, message=message)

    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert outcome.ok, outcome.reason
    assert batch.state.count("CreateQuotaShare") == 4
    assert batch.sleeps == [0.25, 0.5, 1.0]
    assert len(batch.state.shares_on(batch.training)) == 1


def test_every_operation_is_retried_not_only_create(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec(limits={G5: 8}, borrow=0), batch.training))
    for operation in ("DescribeQuotaShare", "ListQuotaShares", "GetJobQueueSnapshot",
                      "ListServiceJobs", "UpdateQuotaShare", "TagResource"):
        batch.state.fail_next(operation, 2, code="ServerException", status=500)
    assert resource.physical_id is not None
    batch.state.add_job(resource.physical_id, "RUNNING", {G5: 1})

    outcome = resource.update(share_properties(
        share_spec(limits={G5: 4}, borrow=0, tags={"team": "b"}), batch.training
    ))

    assert outcome.ok, outcome.reason
    assert batch.state.shares[resource.physical_id].limits == {G5: 4}


def test_retries_are_bounded_and_the_failure_says_batch_is_unavailable(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec(), batch.training))
    batch.state.fail_next("DescribeQuotaShare", 50, code="ServerException", status=500)

    outcome = resource.delete()

    assert not outcome.ok
    assert outcome.reason.startswith("AWS Batch DescribeQuotaShare kept failing after retries")
    assert "ServerException" in outcome.reason
    assert batch.state.count("DescribeQuotaShare") == 6 + 1  # 6 attempts, plus the create's poll
    assert batch.state.mutations() == ["CreateQuotaShare"]


def test_client_errors_are_not_retried(batch: Batch) -> None:
    batch.state.fail_next("CreateQuotaShare", code="ClientException", message="queue is INVALID")
    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))
    assert not outcome.ok
    assert outcome.reason == (
        "AWS Batch CreateQuotaShare failed: ClientException: queue is INVALID"
    )
    assert batch.sleeps == []


def test_a_slow_answer_times_out_and_is_retried(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch.with_timeouts(1, 3)
    batch.state.slow_next("ListQuotaShares", 8.0)  # far past the read timeout, on any machine
    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))
    assert outcome.ok, outcome.reason
    assert batch.state.count("ListQuotaShares") == 2
    assert len(batch.sleeps) == 1


def test_an_unreachable_endpoint_fails_after_bounded_retries(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL_BATCH", "http://127.0.0.1:9")  # discard port: refused
    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))
    assert not outcome.ok
    assert outcome.reason.startswith(
        "AWS Batch ListQuotaShares could not be reached after retries"
    )
    assert len(batch.sleeps) == 5


def test_retries_stop_when_the_lambda_is_about_to_time_out(batch: Batch) -> None:
    batch.state.fail_next("ListQuotaShares", 3, code="ThrottlingException")
    context = SimpleNamespace(get_remaining_time_in_millis=lambda: 9000)  # 2 s timeouts
    event = cfn_event("Create", share_properties(share_spec(), batch.training))

    with pytest.raises(Exception, match="kept failing after retries") as caught:
        batch.handler.on_event(event, context)

    assert "ThrottlingException" in str(caught.value)
    assert batch.state.count("ListQuotaShares") == 1 and batch.sleeps == []


def fake_client(operations: tuple[str, ...]) -> Any:
    return SimpleNamespace(meta=SimpleNamespace(
        service_model=SimpleNamespace(operation_names=list(operations))
    ))


def test_an_outdated_botocore_is_reported_with_the_version_needed(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a botocore from before the quota-share API knows of the operations the runtime uses.
    known = ("ListServiceJobs", "TagResource", "UntagResource", "ListTagsForResource",
             "DescribeJobQueues")
    batch.connection = replace(batch.connection, make_client=lambda _: fake_client(known))

    outcome = StackResource(
        handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert not outcome.ok
    assert f"botocore in this Lambda ({botocore.__version__})" in outcome.reason
    assert "CreateQuotaShare" in outcome.reason and "GetJobQueueSnapshot" in outcome.reason
    assert "botocore >= 1.42.72" in outcome.reason
    assert batch.state.calls == []


def test_the_installed_botocore_has_every_operation_the_runtime_uses() -> None:
    names = set(botocore.session.get_session().get_service_model("batch").operation_names)
    assert set(REQUIRED_BATCH_OPERATIONS) <= names


def test_an_unexpected_error_still_reaches_cloudformation_readably(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(share_properties(share_spec(), batch.training))

    def broken(*_: object) -> None:
        raise KeyError("quotaShareArn")

    monkeypatch.setattr(batch_gateway.BatchGateway, "describe", broken)
    outcome = resource.delete()
    assert not outcome.ok
    assert outcome.reason == (
        "unexpected KeyError in on_event for a Delete of quota share 'team-a': 'quotaShareArn'"
    )


class SteppingClock:
    """Each reading is ``step`` seconds later than the one before."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 1_700_000_000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def give_the_provider(batch: Batch, monkeypatch: pytest.MonkeyPatch, total: int,
                      interval: int) -> None:
    monkeypatch.setenv(custom_resource.TOTAL_TIMEOUT_ENV, str(total))
    monkeypatch.setenv(custom_resource.QUERY_INTERVAL_ENV, str(interval))
    batch.clock = SteppingClock(interval)


def test_a_stuck_create_fails_with_its_own_reason_before_the_provider_times_out(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    give_the_provider(batch, monkeypatch, total=300, interval=15)
    batch.state.stick("team-a")

    outcome = StackResource(
        max_polls=20, handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))

    assert not outcome.ok and outcome.polls < 20
    assert outcome.reason.startswith(
        "quota share 'team-a' on job queue 'training' is still CREATING after"
    )
    assert "total timeout of 300 s" in outcome.reason


def test_a_stuck_delete_fails_with_its_own_reason(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    resource = StackResource(max_polls=20, handler=batch.handler)
    resource.create(share_properties(share_spec(), batch.training))
    give_the_provider(batch, monkeypatch, total=300, interval=15)
    batch.state.stick("team-a", "DELETING")

    outcome = resource.delete()

    assert not outcome.ok and "is still DELETING after" in outcome.reason
    assert batch.state.count("DeleteQuotaShare") == 1


def test_without_the_providers_timing_the_runtime_just_keeps_polling(
    batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch.clock = SteppingClock(3600)
    batch.state.stick("team-a")
    outcome = StackResource(
        max_polls=12, handler=batch.handler,
    ).create(share_properties(share_spec(), batch.training))
    assert outcome.reason == "Operation timed out" and outcome.polls == 12
