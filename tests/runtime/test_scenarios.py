"""Whole lives of shares, with the properties a synthesized template carries and faults injected."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .cloudformation import StackResource, stringify
from .conftest import Batch
from .declarations import G5

# Two Custom::BatchQuotaShare resources as `python app.py` synthesizes the reference stack,
# with the Fn::GetAtt of the job queue ARN resolved and the service token filled in.
TEMPLATE_PROPERTIES: dict[str, dict[str, Any]] = {
    "TrainingQueueQS1A897FA29": {
        "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:framework-onEvent",
        "QuotaShareName": "QS1",
        "JobQueue": "<queue>",
        "CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 1}],
        "ResourceSharingConfiguration": {"Strategy": "LEND_AND_BORROW", "BorrowLimit": 200},
        "PreemptionConfiguration": {"InSharePreemption": "ENABLED"},
        "State": "ENABLED",
        "AdoptExisting": False,
        "AllowPreemptionOnShrink": False,
        "TerminateActiveJobsOnDelete": False,
    },
    "TrainingQueueQS2F59BEABB": {
        "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:framework-onEvent",
        "QuotaShareName": "QS2",
        "JobQueue": "<queue>",
        "CapacityLimits": [{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 1}],
        "ResourceSharingConfiguration": {"Strategy": "LEND"},
        "PreemptionConfiguration": {"InSharePreemption": "DISABLED"},
        "State": "ENABLED",
        "AdoptExisting": False,
        "AllowPreemptionOnShrink": False,
        "TerminateActiveJobsOnDelete": False,
    },
}


def template_properties(logical_id: str, queue: str, **changes: Any) -> dict[str, Any]:
    properties = copy.deepcopy(TEMPLATE_PROPERTIES[logical_id])
    properties.update(JobQueue=queue, **changes)
    result: dict[str, Any] = stringify(properties)
    return result


def assert_no_job_harmed(batch: Batch) -> None:
    assert batch.state.terminated_jobs == []
    assert batch.state.preempted_jobs == []


def test_the_reference_stack_lives_and_dies_without_harming_a_job(batch: Batch) -> None:
    qs1, qs2 = StackResource(
        "TrainingQueueQS1A897FA29", handler=batch.handler,
    ), StackResource("TrainingQueueQS2F59BEABB", handler=batch.handler)
    assert qs1.create(template_properties(qs1.logical_id, batch.training)).ok
    assert qs2.create(template_properties(qs2.logical_id, batch.training)).ok
    assert qs1.physical_id is not None and qs2.physical_id is not None
    job = batch.state.add_job(qs1.physical_id, "RUNNING", {G5: 3}, name="borrowing-run")

    # QS1 borrows up to 200 %: lowering the borrow limit to 100 would put its job over.
    shrink = qs1.update(template_properties(
        qs1.logical_id, batch.training,
        ResourceSharingConfiguration={"Strategy": "LEND_AND_BORROW", "BorrowLimit": 100},
    ))
    assert not shrink.ok and job in shrink.reason
    # Stack deletion: QS2 goes, QS1 is refused while its job runs, then goes once it finished.
    assert qs2.delete().ok
    refused = qs1.delete()
    assert not refused.ok and "borrowing-run" in refused.reason
    assert_no_job_harmed(batch)
    batch.state.job(job).status = "SUCCEEDED"
    assert qs1.delete().ok
    assert batch.state.shares_on(batch.training) == []


@pytest.mark.parametrize("fault", ["ThrottlingException", "ServerException"])
def test_a_full_life_under_constant_faults_loses_and_duplicates_nothing(
    batch: Batch, fault: str
) -> None:
    status = 500 if fault == "ServerException" else 400
    operations = ("CreateQuotaShare", "DescribeQuotaShare", "UpdateQuotaShare",
                  "DeleteQuotaShare", "ListQuotaShares", "GetJobQueueSnapshot",
                  "ListServiceJobs", "TagResource", "UntagResource")

    def storm() -> None:
        batch.state.faults.clear()
        for operation in operations:
            batch.state.fail_next(operation, 2, code=fault, status=status)

    batch.state.transition_polls = 2
    share = StackResource("TrainingQueueQS1A897FA29", handler=batch.handler)
    storm()
    assert share.create(template_properties(share.logical_id, batch.training)).ok
    assert share.physical_id is not None
    job = batch.state.add_job(share.physical_id, "RUNNING", {G5: 1})

    storm()
    grown = share.update(template_properties(
        share.logical_id, batch.training,
        CapacityLimits=[{"CapacityUnit": "ml.g5.xlarge", "MaxCapacity": 2}], Tags={"team": "x"},
    ))
    assert grown.ok, grown.reason

    storm()
    renamed = share.update(
        template_properties(share.logical_id, batch.training, QuotaShareName="QS1-next"),
        later_failure=True,
    )
    assert renamed.rollback is not None and renamed.rollback.ok, renamed.rollback
    assert [s.name for s in batch.state.shares_on(batch.training)] == ["QS1"]
    assert batch.state.job(job).status == "RUNNING"

    storm()
    refused = share.delete()
    assert not refused.ok and job in refused.reason
    assert_no_job_harmed(batch)
    batch.state.job(job).status = "SUCCEEDED"
    storm()
    assert share.delete().ok
    assert batch.state.shares_on(batch.training) == []
    assert batch.sleeps, "the faults were retried with backoff"
