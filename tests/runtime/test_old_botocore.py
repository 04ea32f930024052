"""The handler, staged exactly as its Lambda asset, on a botocore older than the quota-share API.

A Lambda's Python runtime brings the botocore AWS last bundled with it. Here that situation is
real: a throwaway virtual environment gets boto3/botocore from before 1.42.72 from the package
index (once per session, through pip's cache), and the asset directory the provider deploys
(``runtime_asset_directory()``, the real staging) runs in that interpreter, as Lambda would run
it, against the fake AWS Batch on loopback — through create, an update, a rename and delete.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from quota_constructs._runtime_asset import runtime_asset_directory
from quota_constructs.runtime.service_models import MINIMUM_BOTOCORE

from ..conftest import OLD_BOTOCORE
from .cloudformation import StackResource, share_properties
from .conftest import Batch
from .declarations import G5, share_spec
from .fake_batch import FakeBatchServer

# A SageMaker training instance type the pinned botocore knows and OLD_BOTOCORE does not.
NEWER_INSTANCE_TYPE = "ml.p6-b300.48xlarge"

# Runs in the old interpreter: imports the handler from the asset directory only, reports what
# that interpreter is, then answers one request per line of stdin, as Lambda would invoke it.
DRIVER = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import botocore, botocore.session
    from quota_constructs.runtime import quota_share_handler
    from quota_constructs.model import training_instance_types

    bundled = botocore.session.get_session().get_service_model("batch").operation_names
    print(json.dumps({
        "botocore": botocore.__version__,
        "handler": quota_share_handler.__file__,
        "bundled_model_has_quota_shares": "CreateQuotaShare" in bundled,
        "bundled_instance_types": sorted(
            botocore.session.get_session().get_service_model("sagemaker")
            .shape_for("TrainingInstanceType").enum
        ),
        "runtime_instance_types": sorted(training_instance_types()),
    }), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            entry_point = getattr(quota_share_handler, request["entry_point"])
            answer = {"result": entry_point(request["event"], None)}
        except Exception as error:
            answer = {"error": str(error)}
        print(json.dumps(answer), flush=True)
    """
)


class OldRuntime:
    """The staged handler in the old interpreter, one process for the whole test."""

    def __init__(self, python: Path, asset: str, endpoint: str) -> None:
        environment = {
            "AWS_ENDPOINT_URL_BATCH": endpoint,
            "AWS_ACCESS_KEY_ID": "AKIDFAKEFAKEFAKE",
            "AWS_SECRET_ACCESS_KEY": "fake-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
            "PATH": "/usr/bin:/bin",
        }
        # -I: no PYTHONPATH, no user site, not the working directory: only the venv and the asset.
        # -B: the asset is staged once per test process; caches written into it here would
        # change what later tests find staged (and its hash).
        self._process = subprocess.Popen(
            [str(python), "-I", "-B", "-c", DRIVER, asset],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
            cwd="/",
        )
        self.facts: dict[str, Any] = self._read()

    def on_event(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        return self._call("on_event", event)

    def is_complete(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        return self._call("is_complete", event)

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=60)

    def _call(self, entry_point: str, event: Mapping[str, Any]) -> dict[str, Any]:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps({"entry_point": entry_point, "event": event}) + "\n")
        self._process.stdin.flush()
        answer = self._read()
        if "error" in answer:
            raise RuntimeError(answer["error"])
        result: dict[str, Any] = answer["result"]
        return result

    def _read(self) -> dict[str, Any]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            assert self._process.stderr is not None
            raise RuntimeError(f"the old runtime exited: {self._process.stderr.read()[-3000:]}")
        answer: dict[str, Any] = json.loads(line)
        return answer


@pytest.fixture
def old_runtime(
    old_python: Path, batch: Batch, fake_batch_server: FakeBatchServer
) -> Iterator[OldRuntime]:
    runtime = OldRuntime(old_python, runtime_asset_directory(), fake_batch_server.endpoint)
    yield runtime
    runtime.close()


def test_the_staged_handler_lives_a_whole_life_on_a_botocore_without_quota_shares(
    batch: Batch, old_runtime: OldRuntime
) -> None:
    facts = old_runtime.facts
    # The situation is the one the issue describes, not a newer botocore in disguise.
    assert tuple(int(p) for p in facts["botocore"].split(".")) < tuple(
        int(p) for p in MINIMUM_BOTOCORE.split(".")
    )
    assert facts["bundled_model_has_quota_shares"] is False
    assert Path(facts["handler"]).is_relative_to(runtime_asset_directory())
    # The declaration uses an instance type the synth accepts and the old runtime's enum lacks.
    assert NEWER_INSTANCE_TYPE not in facts["bundled_instance_types"]
    assert NEWER_INSTANCE_TYPE in facts["runtime_instance_types"]
    queue = batch.state.add_queue("newer", {G5: 8, NEWER_INSTANCE_TYPE: 2})

    resource = StackResource(handler=old_runtime)
    created = resource.create(share_properties(
        share_spec(limits={G5: 2, NEWER_INSTANCE_TYPE: 1}, tags={"team": "a"}), queue
    ))
    assert created.ok, created.reason
    arn = created.physical_id
    assert batch.state.shares[arn].limits == {G5: 2, NEWER_INSTANCE_TYPE: 1}

    grown = resource.update(share_properties(
        share_spec(limits={G5: 3, NEWER_INSTANCE_TYPE: 2}, borrow=0, tags={"team": "b"}), queue
    ))
    assert grown.ok, grown.reason
    share = batch.state.shares[arn]
    assert (share.limits, share.borrow_limit, share.tags["team"]) == (
        {G5: 3, NEWER_INSTANCE_TYPE: 2}, 0, "b"
    )

    # The guards work there too: a running job keeps the share from being deleted.
    job = batch.state.add_job(arn, "RUNNING", {G5: 1})
    refused = resource.delete()
    assert not refused.ok and job in refused.reason
    batch.state.job(job).status = "SUCCEEDED"

    renamed = resource.update(share_properties(share_spec("team-a-v2", limits={G5: 1}), queue))
    assert renamed.ok, renamed.reason
    assert renamed.cleanup is not None and renamed.cleanup.ok, renamed.cleanup
    assert [s.name for s in batch.state.shares_on(queue)] == ["team-a-v2"]

    deleted = resource.delete()
    assert deleted.ok, deleted.reason
    assert batch.state.shares_on(queue) == []
    assert batch.state.terminated_jobs == []


def test_without_the_carried_model_the_old_runtime_says_which_botocore_it_needs(
    batch: Batch, old_python: Path, fake_batch_server: FakeBatchServer, tmp_path: Path
) -> None:
    # The asset as it would be without the service model: only the Python modules.
    from quota_constructs._runtime_asset import PACKAGE_ROOT, stage_runtime

    stage_runtime(PACKAGE_ROOT, tmp_path)
    runtime = OldRuntime(old_python, str(tmp_path), fake_batch_server.endpoint)
    try:
        outcome = StackResource(handler=runtime).create(
            share_properties(share_spec(), batch.training)
        )
    finally:
        runtime.close()
    assert not outcome.ok
    assert f"botocore in this Lambda ({OLD_BOTOCORE})" in outcome.reason
    assert f"botocore >= {MINIMUM_BOTOCORE}" in outcome.reason
    assert batch.state.calls == []
