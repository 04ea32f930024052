"""The team client against an independent fake Batch on loopback: what it sends, what it
refuses before sending, and what it lists."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quota_constructs.client import ShareClient
from quota_constructs.model import QuotaConfigError
from quota_constructs.model.tags import RESERVED_LIBRARY_TAG_KEYS

from .conftest import G5, Queue
from .fake_submissions import TAG_KEY
from .granted import team_policy
from .iam_policy import Authorization, Denied, authorize, tag_context

REQUEST = {"TrainingJobName": "resnet", "RoleArn": "arn:aws:iam::123456789012:role/x"}


def test_submit_sends_share_tag_budget_and_priority(queue: Queue) -> None:
    queue.state.policy = team_policy("vision", 50)
    client = ShareClient(queue="gpu-prod", share="vision", max_priority=50, preemption_budget=2)
    job_id = client.submit(job_name="resnet-42", training_job_request=REQUEST, priority=10)
    (job,) = queue.state.submitted()
    assert job.job_id == job_id
    assert (job.queue_arn, job.share_name, job.priority) == (queue.arn, "vision", 10)
    assert job.tags == {TAG_KEY: "vision"}
    assert job.retries_before_termination == 2
    assert job.payload == REQUEST and job.name == "resnet-42"
    assert queue.state.denied == []


def test_priority_zero_is_sent_and_allowed_under_a_ceiling(queue: Queue) -> None:
    # The SageMaker SDK drops 0; the grant would then deny the request. The client sends it.
    queue.state.policy = team_policy("vision", 0)
    client = ShareClient(queue=queue.arn, share="vision", max_priority=0)
    client.submit(job_name="j", training_job_request=REQUEST, priority=0)
    (job,) = queue.state.submitted()
    assert job.priority == 0
    # No budget: no preemptionConfiguration, AWS's default.
    assert job.retries_before_termination is None


@pytest.mark.parametrize("priority", [51, 10000, -1, None])
def test_a_priority_outside_the_ceiling_raises_before_any_call(
    queue: Queue, priority: int | None
) -> None:
    client = ShareClient(queue="gpu-prod", share="vision", max_priority=50)
    before = len(queue.state.calls)
    with pytest.raises(QuotaConfigError) as raised:
        client.submit(job_name="j", training_job_request=REQUEST, priority=priority)
    assert "vision" in str(raised.value) and "priority" in str(raised.value)
    assert "50" in str(raised.value)
    assert len(queue.state.calls) == before


def test_without_a_ceiling_any_priority_up_to_9999(queue: Queue) -> None:
    client = ShareClient(queue="gpu-prod", share="speech")
    client.submit(job_name="j", training_job_request=REQUEST, priority=9999)
    assert queue.state.submitted()[0].priority == 9999
    with pytest.raises(QuotaConfigError):
        client.submit(job_name="j", training_job_request=REQUEST, priority=10000)


def test_the_fake_denies_what_the_grant_forbids(queue: Queue) -> None:
    """The fake's IAM stand-in is not a rubber stamp: a request the client would never send
    (another share, no tag) is denied."""
    import boto3
    from botocore.exceptions import ClientError

    queue.state.policy = team_policy("vision", 50)
    batch = boto3.client("batch")
    with pytest.raises(ClientError):
        batch.submit_service_job(
            jobName="j", jobQueue="gpu-prod", serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName="vision", schedulingPriority=1, serviceRequestPayload="{}",
        )
    with pytest.raises(ClientError):
        batch.submit_service_job(
            jobName="j", jobQueue="gpu-prod", serviceJobType="SAGEMAKER_TRAINING",
            quotaShareName="vision", tags={TAG_KEY: "vision"}, serviceRequestPayload="{}",
        )
    assert len(queue.state.denied) == 2


def test_submit_with_extra_tags_is_allowed_under_the_grant(queue: Queue) -> None:
    """Cost-allocation and experiment tags travel with the share's tag, and the library's own
    grant (evaluated as IAM does) allows the request, its tag-on-create included."""
    queue.state.policy = team_policy("vision", 50)
    client = ShareClient(queue="gpu-prod", share="vision", max_priority=50)
    extra = {"cost-center": "cv-42", "experiment": "resnet-sweep-7"}
    client.submit(job_name="j", training_job_request=REQUEST, priority=5, tags=extra)
    client.submit(job_name="k", training_job_request=REQUEST, priority=5)
    first, second = queue.state.submitted()
    assert first.tags == {**extra, TAG_KEY: "vision"}
    assert second.tags == {TAG_KEY: "vision"}
    assert queue.state.denied == []


@pytest.mark.parametrize("tags", [
    {TAG_KEY: "speech"},
    {"quota-constructs:owner": "arn:aws:cloudformation:us-east-1:123456789012:stack/x/1"},
    {"Quota-Constructs:Lifecycle": "terminate"},
    {"quota-constructs:anything-new": "x"},
    {"aws:cloudformation:stack-name": "x"},
])
def test_the_client_refuses_reserved_tags_before_any_call(
    queue: Queue, tags: dict[str, str]
) -> None:
    client = ShareClient(queue="gpu-prod", share="vision")
    before = len(queue.state.calls)
    with pytest.raises(QuotaConfigError) as raised:
        client.submit(job_name="j", training_job_request=REQUEST, tags=tags)
    (key,) = tags
    assert "vision" in str(raised.value) and key in str(raised.value)
    assert len(queue.state.calls) == before


@pytest.mark.parametrize(("job_name", "tags", "named"), [
    ("has space", {}, "has space"),
    ("n" * 129, {}, "n" * 129),
    ("ok", {"team": "aws:vision"}, "aws:vision"),
])
def test_the_client_refuses_names_and_tags_aws_refuses_before_any_call(
    queue: Queue, job_name: str, tags: dict[str, str], named: str
) -> None:
    """SubmitServiceJob's documented job-name pattern and AWS Batch's tag restrictions."""
    client = ShareClient(queue="gpu-prod", share="vision")
    before = len(queue.state.calls)
    with pytest.raises(QuotaConfigError) as raised:
        client.submit(job_name=job_name, training_job_request=REQUEST, tags=tags)
    assert "vision" in str(raised.value) and repr(named) in str(raised.value)
    assert len(queue.state.calls) == before


def raw_submit(share: str, tags: dict[str, str]) -> None:
    """A request the client would never send, made with boto3 under the team's policy."""
    import boto3

    boto3.client("batch").submit_service_job(
        jobName="j", jobQueue="gpu-prod", serviceJobType="SAGEMAKER_TRAINING",
        quotaShareName=share, schedulingPriority=1, tags=tags, serviceRequestPayload="{}",
    )


@pytest.mark.parametrize(("share", "tags"), [
    ("vision", {TAG_KEY: "speech"}),
    ("speech", {TAG_KEY: "speech"}),
    ("speech", {TAG_KEY: "vision"}),
    *[("vision", {TAG_KEY: "vision", key: "x"}) for key in RESERVED_LIBRARY_TAG_KEYS],
    ("vision", {TAG_KEY: "vision", "QUOTA-CONSTRUCTS:OWNER": "x", "cost-center": "1"}),
])
def test_the_grant_denies_another_shares_tag_and_reserved_keys(
    queue: Queue, share: str, tags: dict[str, str]
) -> None:
    from botocore.exceptions import ClientError

    queue.state.policy = team_policy("vision", 50)
    with pytest.raises(ClientError, match="AccessDenied"):
        raw_submit(share, tags)
    assert queue.state.submitted() == []


@pytest.mark.parametrize("key", RESERVED_LIBRARY_TAG_KEYS)
def test_tag_on_create_alone_refuses_a_reserved_key(key: str) -> None:
    """The TagResource statement holds on its own (were SubmitServiceJob allowed some other
    way): the share's tag plus a reserved key is denied, plus a cost tag allowed."""
    job = "arn:aws:batch:us-east-1:123456789012:service-job/new"
    policy = team_policy("vision", 50)

    def tag_on_create(tags: dict[str, str]) -> Authorization:
        return Authorization("batch:TagResource", job,
                             tag_context(request_tags=tags, resource_tags=None))

    authorize(policy, [tag_on_create({TAG_KEY: "vision", "cost-center": "1"})])
    with pytest.raises(Denied):
        authorize(policy, [tag_on_create({TAG_KEY: "vision", key: "x"})])
    with pytest.raises(Denied):
        authorize(policy, [tag_on_create({"cost-center": "1"})])


@pytest.mark.parametrize("tags", [{"cost-center": "cv-42"}, {TAG_KEY: "speech"},
                                  {TAG_KEY: "vision"}])
def test_the_grant_denies_tagging_a_job_that_carries_a_share_tag(
    queue: Queue, tags: dict[str, str]
) -> None:
    import boto3
    from botocore.exceptions import ClientError

    queue.state.policy = team_policy("vision", 50)
    client = ShareClient(queue="gpu-prod", share="vision", max_priority=50)
    client.submit(job_name="j", training_job_request=REQUEST, priority=5)
    (job,) = queue.state.submitted()
    with pytest.raises(ClientError, match="AccessDenied"):
        boto3.client("batch").tag_resource(resourceArn=job.arn, tags=tags)
    assert job.tags == {TAG_KEY: "vision"}
    # Its priority is still the team's to change.
    client.update_priority(job.job_id, 7)
    assert job.priority == 7


def test_jobs_lists_only_this_shares_jobs_in_every_active_status(queue: Queue) -> None:
    mine = [
        queue.state.add_service_job(queue.arn, "vision", status, {G5: 1}).job_id
        for status in ("RUNNABLE", "RUNNING", "RUNNING", "RUNNING", "SCHEDULED")
    ]
    queue.state.add_service_job(queue.arn, "speech", "RUNNING", {G5: 1})
    queue.state.add_service_job(queue.arn, "speech", "RUNNABLE", {G5: 1})
    queue.state.add_service_job(queue.arn, "vision", "SUCCEEDED", {G5: 1})
    jobs = ShareClient(queue="gpu-prod", share="vision").jobs()
    assert sorted(job.job_id for job in jobs) == sorted(mine)
    assert {job.share for job in jobs} == {"vision"}
    finished = ShareClient(queue="gpu-prod", share="vision").jobs(statuses=["SUCCEEDED"])
    assert len(finished) == 1


def test_jobs_never_shows_another_share_even_from_an_unfiltered_listing(queue: Queue) -> None:
    queue.state.unfiltered_listing = True
    mine = {queue.state.add_service_job(queue.arn, "vision", "RUNNING", {G5: 1}).job_id,
            queue.state.add_service_job(queue.arn, "vision", "RUNNABLE", {G5: 1}).job_id}
    queue.state.add_service_job(queue.arn, "speech", "RUNNING", {G5: 1})
    jobs = ShareClient(queue="gpu-prod", share="vision").jobs()
    assert sorted(job.job_id for job in jobs) == sorted(mine)


def test_update_priority_within_the_ceiling(queue: Queue) -> None:
    queue.state.policy = team_policy("vision", 50)
    client = ShareClient(queue="gpu-prod", share="vision", max_priority=50)
    job_id = client.submit(job_name="j", training_job_request=REQUEST, priority=5)
    client.update_priority(job_id, 20)
    assert queue.state.service_job(job_id).priority == 20
    calls = len(queue.state.calls)
    with pytest.raises(QuotaConfigError):
        client.update_priority(job_id, 51)
    assert len(queue.state.calls) == calls
    assert queue.state.service_job(job_id).priority == 20


def test_from_agreement_reads_queue_ceiling_and_budget(queue: Queue, tmp_path: Path) -> None:
    path = tmp_path / "Stack.json"
    path.write_text(json.dumps(agreement_document(queue_name="gpu-prod")))
    queue.state.policy = team_policy("vision", 30)
    client = ShareClient.from_agreement(path, share="vision")
    assert (client.queue, client.max_priority, client.preemption_budget) == ("gpu-prod", 30, 1)
    client.submit(job_name="j", training_job_request=REQUEST, priority=30)
    assert queue.state.submitted()[0].retries_before_termination == 1
    with pytest.raises(QuotaConfigError):
        client.submit(job_name="j", training_job_request=REQUEST, priority=31)
    # One principal's own ceiling.
    other = ShareClient.from_agreement(path, share="vision", principal="Stack/Lead")
    assert other.max_priority == 60


def test_from_agreement_reads_a_generated_queue_name_from_the_stack_output(
    tmp_path: Path,
) -> None:
    path = tmp_path / "Stack.json"
    path.write_text(json.dumps(agreement_document(queue_name=None)))

    class CloudFormation:
        def describe_stacks(self, StackName: str) -> dict[str, object]:
            assert StackName == "Stack"
            return {"Stacks": [{"Outputs": [
                {"OutputKey": "TrainingQueueJobQueueName", "OutputValue": "gen-123"}]}]}

    client = ShareClient.from_agreement(path, share="vision",
                                        cloudformation_client=CloudFormation())
    assert client.queue == "gen-123"


@pytest.mark.parametrize("twin_written", [True, False])
def test_from_agreement_given_the_markdown_page_points_at_its_json_twin(
    tmp_path: Path, twin_written: bool
) -> None:
    page = tmp_path / "Stack.md"
    page.write_text("# Allocation agreement\n")
    if twin_written:
        (tmp_path / "Stack.json").write_text(json.dumps(agreement_document(queue_name="q")))
    with pytest.raises(ValueError) as raised:
        ShareClient.from_agreement(page, share="vision")
    message = str(raised.value)
    assert f"the client reads its JSON twin, {tmp_path / 'Stack.json'}" in message
    assert "JSON" in message and "Expecting value" not in message
    assert ("not there" in message) is not twin_written
    if twin_written:
        client = ShareClient.from_agreement(tmp_path / "Stack.json", share="vision")
        assert client.queue == "q"


def test_from_agreement_names_the_known_shares(tmp_path: Path) -> None:
    path = tmp_path / "Stack.json"
    path.write_text(json.dumps(agreement_document(queue_name="q")))
    with pytest.raises(ValueError, match=r"'nlp' not found.*vision"):
        ShareClient.from_agreement(path, share="nlp")


def test_the_client_imports_without_aws_cdk() -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('aws_cdk', 'constructs', 'jsii', 'cdk_nag'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from quota_constructs.client import ShareClient\n"
        "ShareClient(queue='q', share='s', max_priority=3).submit_request(\n"
        "    job_name='j', training_job_request={}, priority=3)\n"
        "assert not any(m.split('.')[0] == 'aws_cdk' for m in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=False, cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stderr


def agreement_document(queue_name: str | None) -> dict[str, object]:
    """An agreement twin as write_allocation_agreements writes it (the format's fields)."""
    return {
        "format": "quota-constructs.allocation-agreement",
        "version": 1,
        "stack": "Stack",
        "queues": [{
            "construct_path": "Stack/TrainingQueue/JobQueue",
            "queue": {
                "name": queue_name,
                "name_output": {"stack": "Stack", "output_key": "TrainingQueueJobQueueName"},
                "arn": None, "arn_output": None,
            },
            "shares": [{
                "name": "vision", "interruption_budget": 1,
                "grants": [
                    {"principal": "Stack/Submitter", "permission": "submit", "max_priority": 30},
                    {"principal": "Stack/Lead", "permission": "submit", "max_priority": 60},
                    {"principal": "Stack/Lead", "permission": "update_priority",
                     "max_priority": 5},
                ],
                "submission": {"tags": {TAG_KEY: "vision"}},
            }],
        }],
    }


P4D = "ml.p4d.24xlarge"


def training_request(**resource_config: object) -> dict[str, object]:
    return {**REQUEST, "ResourceConfig": {"VolumeSizeInGB": 50, **resource_config}}


@pytest.mark.parametrize(("request_", "field"), [
    (training_request(InstanceType=P4D, InstanceCount=1), "ResourceConfig.InstanceType"),
    (training_request(InstanceGroups=[
        {"InstanceGroupName": "a", "InstanceType": G5, "InstanceCount": 1},
        {"InstanceGroupName": "b", "InstanceType": P4D, "InstanceCount": 1}]),
     "ResourceConfig.InstanceGroups[1].InstanceType"),
    (training_request(InstancePreferences=[{"InstanceType": G5, "InstanceCount": 1},
                                           {"InstanceType": P4D, "InstanceCount": 1}]),
     "ResourceConfig.InstancePreferences[1].InstanceType"),
    (json.dumps(training_request(InstanceType=P4D, InstanceCount=1)),
     "ResourceConfig.InstanceType"),
])
def test_a_request_for_a_type_the_share_cannot_run_is_refused_before_any_call(
    queue: Queue, request_: dict[str, object] | str, field: str
) -> None:
    client = ShareClient(queue="gpu-prod", share="vision", instance_types=[G5])
    before = len(queue.state.calls)
    with pytest.raises(QuotaConfigError) as raised:
        client.submit(job_name="j", training_job_request=request_, priority=1)
    message = str(raised.value)
    assert message.startswith(f"quota share 'vision': training_job_request.{field} got "
                              f"'{P4D}'; allowed: an instance type the share can run: {G5}")
    assert len(queue.state.calls) == before


def test_a_request_naming_no_instance_type_is_refused_when_the_types_are_known(
    queue: Queue,
) -> None:
    client = ShareClient(queue="gpu-prod", share="vision", instance_types=[G5, P4D])
    before = len(queue.state.calls)
    with pytest.raises(QuotaConfigError, match=r"ResourceConfig\.InstanceType got None.*"
                       f"{G5}, {P4D}"):
        client.submit(job_name="j", training_job_request=REQUEST, priority=1)
    assert len(queue.state.calls) == before


def test_types_the_share_can_run_are_submitted(queue: Queue) -> None:
    client = ShareClient(queue="gpu-prod", share="vision", instance_types=[G5])
    grouped = training_request(InstanceGroups=[
        {"InstanceGroupName": "a", "InstanceType": G5, "InstanceCount": 1}])
    for request in (training_request(InstanceType=G5, InstanceCount=2), grouped):
        client.submit(job_name="j", training_job_request=request, priority=1)
    assert [job.payload for job in queue.state.submitted()] == [
        training_request(InstanceType=G5, InstanceCount=2), grouped]


def test_from_agreement_checks_the_types_its_share_can_run(
    queue: Queue, tmp_path: Path
) -> None:
    document = agreement_document(queue_name="gpu-prod")
    [entry] = document["queues"][0]["shares"]  # type: ignore[index]
    entry["instance_types"] = [G5]
    path = tmp_path / "Stack.json"
    path.write_text(json.dumps(document))
    client = ShareClient.from_agreement(path, share="vision")
    assert client.instance_types == (G5,)
    with pytest.raises(QuotaConfigError, match=f"share can run: {G5}"):
        client.submit(job_name="j", training_job_request=training_request(InstanceType=P4D),
                      priority=1)
    assert queue.state.submitted() == []
