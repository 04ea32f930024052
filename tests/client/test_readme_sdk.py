"""The README's team-side examples run against the fake Batch: the SageMaker Python SDK v3
(``sagemaker-train``) submission and the library's client.

The SDK's ``ModelTrainer`` validates its execution role through IAM when it is built; that
one call is replaced (``TrainDefaults.get_role`` returns the role given). Everything else is
the SDK's own code: it builds the CreateTrainingJob request offline and sends
``SubmitServiceJob`` with boto3, which ``AWS_ENDPOINT_URL_BATCH`` points at the fake, whose
IAM stand-in enforces the grant. So the test checks the request the SDK builds, not SageMaker.
"""

from __future__ import annotations

import pytest

from tests.documentation import fenced_blocks

from .conftest import Queue
from .fake_submissions import TAG_KEY
from .granted import team_policy

SDK_MARKER = 'TrainingQueue("gpu-prod").submit('
"""The team-side SDK example (the "Try it locally" section has an SDK block of its own)."""


def readme_block(marker: str) -> str:
    """The ```py block (not run by the README test, which needs no AWS) containing
    ``marker``."""
    blocks = fenced_blocks("py")
    (found,) = [block for block in blocks if marker in block]
    return str(found)


@pytest.fixture
def offline_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    from sagemaker.train.defaults import TrainDefaults

    monkeypatch.setattr(
        TrainDefaults, "get_role",
        staticmethod(lambda role=None, sagemaker_session=None: role),
    )


def test_the_readme_sdk_example_submits_with_share_tag_budget_and_priority(
    queue: Queue, offline_sdk: None
) -> None:
    queue.state.policy = team_policy("vision", 50)
    exec(readme_block(SDK_MARKER), {})
    (job,) = queue.state.submitted()
    assert (job.share_name, job.priority, job.retries_before_termination) == ("vision", 10, 2)
    assert job.tags[TAG_KEY] == "vision"
    assert job.payload["ResourceConfig"]["InstanceType"] == "ml.g5.xlarge"
    assert queue.state.denied == []


def test_the_sdk_trap_priority_zero_is_dropped_and_the_ceiling_denies_it(
    queue: Queue, offline_sdk: None
) -> None:
    """What the README and the agreement warn about, shown on the SDK itself."""
    from botocore.exceptions import ClientError

    queue.state.policy = team_policy("vision", 50)
    block = readme_block(SDK_MARKER).replace("priority=10,", "priority=0,")
    with pytest.raises(ClientError, match="AccessDenied"):
        exec(block, {})
    (submit,) = [params for name, params in queue.state.calls if name == "SubmitServiceJob"]
    assert "schedulingPriority" not in submit


def test_the_readme_client_example(queue: Queue) -> None:
    queue.state.policy = team_policy("vision", 50)
    exec(readme_block("ShareClient("), {})
    (job,) = queue.state.submitted()
    assert (job.share_name, job.priority, job.retries_before_termination) == ("vision", 20, 2)
    assert job.tags == {TAG_KEY: "vision", "cost-center": "cv-42",
                        "experiment": "resnet-sweep-7"}
    assert queue.state.denied == []
