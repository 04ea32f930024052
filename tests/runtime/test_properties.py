"""CloudFormation's stringified properties are parsed strictly, through the model."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .cloudformation import STACK_ID, StackResource, cfn_event, run_provider, share_properties
from .conftest import Batch
from .declarations import G5, share_spec

ROOT = Path(__file__).resolve().parents[2]


def props(batch: Batch, **overrides: Any) -> dict[str, Any]:
    return {**share_properties(share_spec(), batch.training), **overrides}


def test_properties_arrive_as_strings_and_are_understood(batch: Batch) -> None:
    properties = props(batch)
    assert properties["CapacityLimits"] == [{"CapacityUnit": G5, "MaxCapacity": "4"}]
    assert properties["ResourceSharingConfiguration"]["BorrowLimit"] == "100"
    assert properties["AdoptExisting"] == "false"
    assert "ServiceToken" in properties

    outcome = StackResource(handler=batch.handler).create(properties)

    assert outcome.ok, outcome.reason
    assert batch.state.shares[outcome.physical_id].limits == {G5: 4}


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ({"CapacityLimits": [{"CapacityUnit": G5, "MaxCapacity": "1.5"}]},
         "quota share 'team-a': CapacityLimits[0].MaxCapacity got '1.5'; allowed: an integer"),
        ({"AdoptExisting": "yes"},
         "quota share 'team-a': AdoptExisting got 'yes'; allowed: true or false"),
        ({"AllowPreemptionOnShrink": "1"},
         "quota share 'team-a': AllowPreemptionOnShrink got '1'; allowed: true or false"),
        ({"AllowPreemptionOnInShareEnable": "on"},
         "quota share 'team-a': AllowPreemptionOnInShareEnable got 'on'; allowed: true or false"),
        ({"State": "true"}, "quota share 'team-a': State got 'true'; allowed: ENABLED or DISABLED"),
        ({"ResourceSharingConfiguration": {"Strategy": "LEND", "BorrowLimit": "50"}},
         "quota share 'team-a': borrow_limit_percent got 50; allowed: only with strategy "
         "LEND_AND_BORROW"),
        ({"CapacityLimits": [{"CapacityUnit": "ml.g5.xxlarge", "MaxCapacity": "1"}]},
         "quota share 'team-a': capacity_limits[0].unit got 'ml.g5.xxlarge'; allowed: a SageMaker"),
        ({"QuotaShareName": "team a"}, "quota share 'team a': name got 'team a'"),
    ],
)
def test_bad_properties_fail_with_the_model_reason_before_any_call(
    batch: Batch, override: dict[str, Any], expected: str
) -> None:
    outcome = StackResource(handler=batch.handler).create(props(batch, **override))
    assert not outcome.ok
    assert outcome.reason.startswith(expected), outcome.reason
    assert batch.state.calls == []


def test_absent_opt_ins_mean_every_guard_stays_on(batch: Batch) -> None:
    StackResource("Other", stack_id=STACK_ID + "-other", handler=batch.handler).create(props(batch))
    bare = {k: v for k, v in props(batch).items()
            if k not in ("AdoptExisting", "AllowPreemptionOnShrink", "TerminateActiveJobsOnDelete")}
    outcome = StackResource(handler=batch.handler).create(bare)
    assert not outcome.ok and "ShareLifecycle(adopt_existing=True)" in outcome.reason


def test_a_bad_opt_in_on_delete_fails_readably_and_deletes_nothing(batch: Batch) -> None:
    resource = StackResource(handler=batch.handler)
    resource.create(props(batch))
    event = cfn_event("Delete", props(batch, TerminateActiveJobsOnDelete="sure"),
                      physical_id=resource.physical_id)
    outcome = run_provider(event, handler=batch.handler)
    assert not outcome.ok and "TerminateActiveJobsOnDelete got 'sure'" in outcome.reason
    assert batch.state.mutations() == ["CreateQuotaShare"]


def test_an_unknown_request_type_is_rejected_readably(batch: Batch) -> None:
    event = cfn_event("Create", props(batch))
    event["RequestType"] = "Replace"
    with pytest.raises(ValueError, match="RequestType got 'Replace'"):
        batch.handler.on_event(event, None)


def test_log_lines_are_json_and_never_carry_the_response_url(
    batch: Batch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="quota_constructs.runtime")
    resource = StackResource(handler=batch.handler)
    resource.create(props(batch))
    resource.delete()
    lines = [json.loads(record.getMessage()) for record in caplog.records
             if record.name == "quota_constructs.runtime"]
    assert {"request", "quota_share_created", "quota_share_disabled",
            "quota_share_deleted"} <= {line["event"] for line in lines}
    assert "presigned" not in caplog.text and "fake-secret" not in caplog.text


def test_the_handler_imports_without_aws_cdk() -> None:
    code = (
        "import sys; sys.modules['aws_cdk'] = None; sys.modules['constructs'] = None; "
        "import quota_constructs.runtime.quota_share_handler as h; "
        "assert callable(h.on_event) and callable(h.is_complete)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
