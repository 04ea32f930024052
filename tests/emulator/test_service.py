"""The emulated queue's behaviour through boto3: scheduling (retries, shares changed at run
time, jobs that can never run), listing and pagination, termination, tags, refused requests,
and the wall clock."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.emulator import Clock, Emulator, QueueService

from .conftest import submit
from .support import G5, QUEUE, training_payload


def refused(call: Any, **kwargs: Any) -> str:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    assert caught.value.response["Error"]["Code"] == "ClientException"
    return str(caught.value.response["Error"]["Message"])


def status_of(batch: Any, job: str) -> str:
    return str(batch.describe_service_job(jobId=job)["status"])


def test_a_job_preempted_more_often_than_its_budget_fails(emu: Emulator, batch: Any) -> None:
    submit(batch, "own", "QS1", priority=5)
    fragile = submit(batch, "fragile", "QS1", priority=1,
                     preemptionConfiguration={"preemptionRetriesBeforeTermination": 0})
    emu.advance(1)
    assert status_of(batch, fragile) == "RUNNING"  # on QS2's idle instance
    submit(batch, "lender", "QS2")
    emu.advance(1)
    described = batch.describe_service_job(jobId=fragile)
    assert described["status"] == "FAILED"
    assert "preemptionRetriesBeforeTermination (0)" in described["statusReason"]
    assert described["preemptionSummary"]["preemptedAttemptCount"] == 1
    # Each state change event shows the job as it was then, not as it is now.
    changes = [e["detail"] for e in emu.events()
               if e["detail-type"] == "Batch Service Job State Change"
               and e["detail"]["jobId"] == fragile]
    assert [(d["status"], "preemptionSummary" in d, len(d["attempts"])) for d in changes] == [
        ("RUNNABLE", False, 0), ("SCHEDULED", False, 0), ("STARTING", False, 0),
        ("RUNNING", False, 0), ("FAILED", True, 1)]
    assert "stoppedAt" not in changes[3] and changes[4]["stoppedAt"] > changes[3]["startedAt"]


def test_a_waiting_jobs_priority_decides_who_is_dispatched(emu: Emulator, batch: Any) -> None:
    first = submit(batch, "first", "QS3", priority=1)
    second = submit(batch, "second", "QS3", priority=1)
    batch.update_service_job(jobId=second, schedulingPriority=9)
    emu.advance(1)
    assert (status_of(batch, first), status_of(batch, second)) == ("RUNNABLE", "RUNNING")


def test_a_lender_turned_reserve_stops_lending(emu: Emulator, batch: Any) -> None:
    qs2 = batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"][1]
    batch.update_quota_share(quotaShareArn=qs2["quotaShareArn"],
                             resourceSharingConfiguration={"strategy": "RESERVE"})
    jobs = [submit(batch, f"j{i}", "QS1", priority=5 - i) for i in range(2)]
    emu.advance(1)
    assert [status_of(batch, j) for j in jobs] == ["RUNNING", "RUNNABLE"]


def test_in_share_preemption_turned_on_at_run_time(emu: Emulator, batch: Any) -> None:
    low = submit(batch, "low", "QS3", priority=1)
    emu.advance(1)
    high = submit(batch, "high", "QS3", priority=9)
    emu.advance(1)
    assert (status_of(batch, low), status_of(batch, high)) == ("RUNNING", "RUNNABLE")
    qs3 = batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"][2]["quotaShareArn"]
    batch.update_quota_share(quotaShareArn=qs3,
                             preemptionConfiguration={"inSharePreemption": "ENABLED"})
    assert (status_of(batch, low), status_of(batch, high)) == ("RUNNABLE", "RUNNING")


@pytest.fixture
def shrinkable(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Emulator, Any]]:
    shares = [
        QuotaShareSpec(name="big", capacity_limits=[CapacityLimit(G5, 3)],
                       strategy=SharingStrategy.LEND_AND_BORROW),
        QuotaShareSpec(name="small", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND),
    ]
    with Emulator(capacity_limits=[CapacityLimit(G5, 4)], shares=shares,
                  queue_name=QUEUE) as emulator:
        yield emulator, boto3.client(
            "batch", endpoint_url=emulator.endpoint_url, region_name="us-east-1",
            aws_access_key_id="testing", aws_secret_access_key="testing")


def test_a_lowered_limit_makes_running_jobs_above_it_reclaimable(
    shrinkable: tuple[Emulator, Any]
) -> None:
    emu, batch = shrinkable
    big = [submit(batch, f"big{i}", "big", priority=1) for i in range(4)]
    emu.advance(1)
    assert {status_of(batch, j) for j in big} == {"RUNNING"}  # 3 own + 1 borrowed
    arns = {s["quotaShareName"]: s["quotaShareArn"]
            for s in batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"]}
    limit = [{"capacityUnit": G5, "maxCapacity": 2}]
    batch.update_quota_share(quotaShareArn=arns["big"], capacityLimits=limit)
    batch.update_quota_share(quotaShareArn=arns["small"], capacityLimits=limit)
    small = [submit(batch, f"small{i}", "small") for i in range(2)]
    emu.advance(1)
    # Two of big's jobs are now above its limit: both reclaimed for small's two.
    assert [status_of(batch, j) for j in small] == ["RUNNING", "RUNNING"]
    assert sorted(status_of(batch, j) for j in big) == ["RUNNABLE", "RUNNABLE", "RUNNING",
                                                         "RUNNING"]


def test_jobs_that_can_never_run_stay_runnable_with_awss_reason(
    emu: Emulator, batch: Any
) -> None:
    unknown_type = submit(batch, "p5", "QS1", instance_type="ml.p5.48xlarge")
    too_big = submit(batch, "four", "QS1", count=4)
    emu.advance(60)
    described = batch.describe_service_job(jobId=unknown_type)
    assert described["status"] == "RUNNABLE"
    assert described["statusReason"].startswith("MISCONFIGURATION:SERVICE_ENVIRONMENT_MAX")
    assert batch.describe_service_job(jobId=too_big)["statusReason"].startswith(
        "MISCONFIGURATION:QUOTA_MANAGEMENT_LIMIT_EXCEEDED")
    blocked = [e["detail"]["jobId"] for e in emu.events()
               if e["detail-type"] == "Batch Service Job Queue Blocked"]
    assert blocked == [unknown_type, too_big]


def test_listing_pages_newest_first_and_filters_as_documented(
    emu: Emulator, batch: Any
) -> None:
    jobs = [submit(batch, f"train-{i}", "QS3") for i in range(7)]
    emu.advance(1)
    seen: list[str] = []
    token = None
    while True:
        kwargs = {"nextToken": token} if token else {}
        page = batch.list_service_jobs(jobQueue=QUEUE, jobStatus="RUNNABLE", maxResults=3,
                                       **kwargs)
        seen += [s["jobId"] for s in page["jobSummaryList"]]
        token = page.get("nextToken")
        if not token:
            break
    assert seen == list(reversed(jobs[1:]))  # the first runs; newest first
    assert [s["jobId"] for s in batch.list_service_jobs(jobQueue=QUEUE)["jobSummaryList"]] == [
        jobs[0]]  # no status: RUNNING only
    by_name = batch.list_service_jobs(jobQueue=QUEUE, jobStatus="SUCCEEDED",
                                      filters=[{"name": "JOB_NAME", "values": ["TRAIN-1*"]}])
    assert [s["jobName"] for s in by_name["jobSummaryList"]] == ["train-1"]  # status ignored
    assert "DONE" in refused(batch.list_service_jobs, jobQueue=QUEUE, jobStatus="DONE")
    assert "maxResults" in refused(batch.list_service_jobs, jobQueue=QUEUE, maxResults=101)


def test_terminating_many_frees_capacity_and_reports_each_job(
    emu: Emulator, batch: Any
) -> None:
    running = submit(batch, "running", "QS3")
    waiting = submit(batch, "waiting", "QS3")
    emu.advance(1)
    answer = batch.terminate_service_jobs(jobs=[running, "no-such-job"], reason="cleanup")
    # AWS: "Service jobs that can't be found are treated as successfully processed."
    assert (answer["successful"], answer["errors"]) == ([running, "no-such-job"], [])
    described = batch.describe_service_job(jobId=running)
    assert (described["status"], described["isTerminated"], described["statusReason"]) == (
        "FAILED", True, "cleanup")
    assert status_of(batch, waiting) == "RUNNING"  # the freed instance, at once


def test_the_control_api_finishes_a_job_named_by_its_arn(emu: Emulator, batch: Any) -> None:
    job = batch.describe_service_job(jobId=submit(batch, "named", "QS3"))["jobArn"]
    emu.advance(1)
    request = urllib.request.Request(f"{emu.endpoint_url}/_emulator/jobs/{job}/finish",
                                     method="POST", data=b'{"status": "FAILED"}')
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert json.loads(answer.read())["status"] == "FAILED"
    assert status_of(batch, job) == "FAILED"


def test_a_client_token_submits_once(emu: Emulator, batch: Any) -> None:
    first = submit(batch, "once", "QS1", clientToken="token-1")
    again = submit(batch, "once", "QS1", clientToken="token-1")
    assert first == again
    assert len(batch.list_service_jobs(jobQueue=QUEUE, jobStatus="SUBMITTED")[
        "jobSummaryList"]) == 1


@pytest.mark.parametrize("change", [
    {"jobName": "other"}, {"schedulingPriority": 7}, {"quotaShareName": "QS2"},
    {"serviceRequestPayload": training_payload(runtime=60)}, {"tags": {"team": "b"}},
])
def test_a_client_token_reused_for_another_request_is_refused(
    emu: Emulator, batch: Any, change: dict[str, Any]
) -> None:
    request = {"jobName": "once", "jobQueue": QUEUE, "serviceJobType": "SAGEMAKER_TRAINING",
               "serviceRequestPayload": training_payload(), "quotaShareName": "QS1",
               "schedulingPriority": 1, "tags": {"team": "a"}, "clientToken": "token-1"}
    first = batch.submit_service_job(**request)["jobId"]
    message = refused(batch.submit_service_job, **{**request, **change})
    assert "clientToken" in message and "token-1" in message and first in message
    assert batch.submit_service_job(**request)["jobId"] == first  # the same request still is
    listed = batch.list_service_jobs(jobQueue=QUEUE, jobStatus="SUBMITTED")["jobSummaryList"]
    assert [s["jobId"] for s in listed] == [first]


def test_tags_on_shares_and_jobs(emu: Emulator, batch: Any) -> None:
    share = batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"][0]["quotaShareArn"]
    batch.tag_resource(resourceArn=share, tags={"team": "vision", "cost": "a"})
    batch.untag_resource(resourceArn=share, tagKeys=["cost"])
    tags = batch.list_tags_for_resource(resourceArn=share)["tags"]
    assert tags["team"] == "vision" and "cost" not in tags
    assert "quota-constructs:owner" in tags  # declared shares read as deployed by the library
    job_arn = batch.describe_service_job(
        jobId=submit(batch, "tagged", "QS1", tags={"owner": "me"}))["jobArn"]
    assert batch.list_tags_for_resource(resourceArn=job_arn)["tags"] == {"owner": "me"}
    assert "nothing" in refused(batch.list_tags_for_resource, resourceArn="arn:aws:nothing")


def test_tags_follow_awss_tag_restrictions(emu: Emulator, batch: Any) -> None:
    """AWS Batch user guide, "Tag restrictions": 50 per resource, keys 1-128 and values up to
    256 characters, no ``aws:`` prefix (characters are not judged: the guide's list is what is
    "generally allowed" across services, and botocore's model has no pattern)."""
    job = batch.describe_service_job(jobId=submit(
        batch, "tagged", "QS1", tags={f"k{i}": "v" for i in range(48)}))["jobArn"]
    assert "at most 50" in refused(batch.tag_resource, resourceArn=job,
                                   tags={"one": "1", "two": "2", "three": "3"})
    batch.tag_resource(resourceArn=job, tags={"k0": "again", "one": "1", "two": "2"})
    assert len(batch.list_tags_for_resource(resourceArn=job)["tags"]) == 50
    share = batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"][0]["quotaShareArn"]
    for tags, named in [({"aws:team": "a"}, "aws:team"), ({"AWS:Team": "a"}, "AWS:Team"),
                        ({"team": "aws:a"}, "aws:a"), ({"k" * 129: "a"}, "k" * 129),
                        ({"team": "v" * 257}, "v" * 257)]:
        assert repr(named) in refused(batch.tag_resource, resourceArn=share, tags=tags)
        assert repr(named) in refused(batch.submit_service_job, jobName="t", jobQueue=QUEUE,
                                      serviceJobType="SAGEMAKER_TRAINING",
                                      serviceRequestPayload=training_payload(),
                                      quotaShareName="QS1", tags=tags)
    batch.tag_resource(resourceArn=share, tags={"cost center": "é-42 +=._:/@", "team,x": "a;b"})
    assert "aws:" in refused(batch.untag_resource, resourceArn=share, tagKeys=["aws:x"])


@pytest.mark.parametrize("name", ["has space", "dotted.name", "n" * 129, "slash/name"])
def test_a_job_name_outside_the_documented_pattern_is_refused(
    emu: Emulator, batch: Any, name: str
) -> None:
    message = refused(batch.submit_service_job, jobName=name, jobQueue=QUEUE,
                      serviceJobType="SAGEMAKER_TRAINING",
                      serviceRequestPayload=training_payload(), quotaShareName="QS1")
    assert f"jobName: {name!r}" in message and "letters, numbers, hyphens" in message
    assert batch.list_service_jobs(jobQueue=QUEUE, jobStatus="SUBMITTED")["jobSummaryList"] == []
    submit(batch, "Upper_and-lower-42", "QS1")  # the documented characters


def test_share_lifecycle_rules(emu: Emulator, batch: Any) -> None:
    arn = batch.list_quota_shares(jobQueue=QUEUE)["quotaShares"][2]["quotaShareArn"]
    job = submit(batch, "qs3", "QS3")
    emu.advance(1)
    assert "DISABLED" in refused(batch.delete_quota_share, quotaShareArn=arn)
    batch.update_quota_share(quotaShareArn=arn, state="DISABLED")
    assert status_of(batch, job) == "RUNNING"  # a disabled share's jobs can finish
    batch.delete_quota_share(quotaShareArn=arn)
    assert status_of(batch, job) == "FAILED"  # a deleted share's jobs are terminated
    assert arn in refused(batch.describe_quota_share, quotaShareArn=arn)
    assert "borrow" in refused(
        batch.create_quota_share, quotaShareName="QS5", jobQueue=QUEUE,
        capacityLimits=[{"capacityUnit": G5, "maxCapacity": 1}],
        resourceSharingConfiguration={"strategy": "LEND", "borrowLimit": 10},
        preemptionConfiguration={"inSharePreemption": "DISABLED"})


def test_bad_payloads_and_routes(emu: Emulator, batch: Any) -> None:
    base = {"jobName": "bad", "jobQueue": QUEUE, "serviceJobType": "SAGEMAKER_TRAINING",
            "quotaShareName": "QS1"}
    assert "ResourceConfig" in refused(batch.submit_service_job, **base,
                                       serviceRequestPayload="{}")
    assert "JSON" in refused(batch.submit_service_job, **base, serviceRequestPayload="nope")
    request = urllib.request.Request(emu.endpoint_url + "/v1/nothing", method="POST", data=b"{}")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 404
    request = urllib.request.Request(emu.endpoint_url + "/_emulator/jobs/nope/finish",
                                     method="POST", data=b'{"status": "SUCCEEDED"}')
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    assert caught.value.code == 400 and b"nope" in caught.value.read()


def test_the_wall_clock_schedules_and_ends_jobs_as_real_time_passes() -> None:
    real = [100.0]
    service = QueueService(
        capacity_limits=[CapacityLimit(G5, 1)],
        shares=[QuotaShareSpec(name="only", capacity_limits=[CapacityLimit(G5, 1)],
                               strategy=SharingStrategy.RESERVE)],
        queue_name=QUEUE, clock=Clock("wall", speed=60, monotonic=lambda: real[0]),
    )
    job = service.handle("SubmitServiceJob", {
        "jobName": "j", "jobQueue": QUEUE, "serviceJobType": "SAGEMAKER_TRAINING",
        "serviceRequestPayload": training_payload(runtime=300), "quotaShareName": "only",
    })["jobId"]
    real[0] += 1  # one real second: 60 emulated
    assert service.handle("DescribeServiceJob", {"jobId": job})["status"] == "RUNNING"
    real[0] += 5  # 300 emulated seconds later
    described = service.handle("DescribeServiceJob", {"jobId": job})
    assert described["status"] == "SUCCEEDED"
    assert described["stoppedAt"] - described["startedAt"] == 300_000
