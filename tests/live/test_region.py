"""The live commands find their region as the AWS CLI does: ``--region``, else ``AWS_REGION``,
else ``AWS_DEFAULT_REGION``, else the profile's; without one, one line naming every way to set
it."""

from __future__ import annotations

from pathlib import Path

import pytest

from quota_constructs.cli import main as cli
from quota_constructs.live.queue_reader import NO_REGION, LiveQueueError, QueueReader

from .conftest import Batch


@pytest.fixture
def no_region(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No region anywhere; a config file with a profile ``eu`` in eu-west-1 (not the default)."""
    config = tmp_path / "config"
    config.write_text("[profile eu]\nregion = eu-west-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return config


def region(**kwargs: str) -> str:
    return str(QueueReader.connect(**kwargs)._client.meta.region_name)


def test_aws_region_alone_is_honoured(no_region: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "ap-southeast-2")
    assert region() == "ap-southeast-2"


def test_the_order_is_option_aws_region_aws_default_region_profile(
    no_region: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert region(profile="eu") == "eu-west-1"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    assert region(profile="eu") == "us-west-2"
    monkeypatch.setenv("AWS_REGION", "ap-southeast-2")
    assert region(profile="eu") == "ap-southeast-2"
    assert region(profile="eu", region="sa-east-1") == "sa-east-1"
    monkeypatch.setenv("AWS_PROFILE", "eu")
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    assert region() == "eu-west-1"


def test_no_region_names_every_way_to_set_one(no_region: Path) -> None:
    with pytest.raises(LiveQueueError) as raised:
        QueueReader.connect()
    assert str(raised.value) == NO_REGION
    for way in ("--region", "AWS_REGION", "AWS_DEFAULT_REGION", "aws configure set region"):
        assert way in NO_REGION


@pytest.mark.parametrize("argv", [
    ["status", "--queue", "training"],
    ["explain", "--queue", "training", "--share", "vision"],
    ["history", "--queue", "training", "--out", "jobs.csv"],
])
def test_every_live_command_says_it_in_one_line(
    no_region: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"quota-constructs {argv[0]}: error: {NO_REGION}"


def test_a_live_command_runs_with_only_aws_region(
    batch: Batch, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    batch.state.add_share(batch.training, "vision", {"ml.g5.xlarge": 1}, "RESERVE")
    assert cli(["status", "--queue", "training", "--json"]) == 0
    assert '"vision"' in capsys.readouterr().out
