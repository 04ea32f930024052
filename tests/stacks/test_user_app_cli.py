"""A user's app outside this repository — four teams, grants, monitoring, owners subscribed the
documented way — synthesized with the CDK CLI and the README's cdk.json: the outputs carry the
documented names, the agreement names the real queue and roles and gives a submit call per
share matching its contract, its JSON twin agrees with it, and cdk-nag stays clean."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stacks.launch import PROJECT_ROOT
from tests.documentation import documentation_text

from .user_project import UserProject, checkout_free_environment

APP = textwrap.dedent('''
    import sys

    from aws_cdk import App, Stack, Validations
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_sns_subscriptions as subscriptions
    from cdk_nag import AwsSolutionsChecks, ServerlessChecks

    from quota_constructs import (
        CapacityLimit, CapacityUnit, QuotaManagedTrainingQueue, QuotaShare, QuotaShareSpec,
        ShareAgreement, SharingStrategy, write_allocation_agreements,
    )
    from quota_constructs.nag_acknowledgments import acknowledge_grant_wildcards

    G5 = CapacityUnit.ML_G5_XLARGE
    app = App()
    platform = Stack(app, "GpuQuotas-prod")
    queue = QuotaManagedTrainingQueue(
        platform, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 6)], queue_name="gpu-prod",
        shares=[
            QuotaShareSpec(name="llm-research", capacity_limits=[CapacityLimit(G5, 2)],
                           strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100,
                           agreement=ShareAgreement(owner="llm-team", interruption_budget=2)),
            QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 2)],
                           strategy=SharingStrategy.LEND,
                           agreement=ShareAgreement(owner="vision-team", interruption_budget=0)),
            QuotaShareSpec(name="speech", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.RESERVE,
                           agreement=ShareAgreement(owner="speech-team")),
        ],
    )
    team = Stack(app, "TeamEval")
    evaluation = QuotaShare(
        team, "QuotaShare", job_queue=queue.job_queue,
        spec=QuotaShareSpec(name="eval", capacity_limits=[CapacityLimit(G5, 1)],
                            strategy=SharingStrategy.LEND,
                            agreement=ShareAgreement(owner="eval-team", interruption_budget=1)))
    REASON = "Service jobs exist only at run time; queue, share and ceiling bound them."

    def granted(role, share, ceiling):
        for grant in (share.grant_submit(role, max_priority=ceiling),
                      share.grant_update_priority(role, max_priority=ceiling)):
            acknowledge_grant_wildcards(role, grant, reason=REASON)

    granted(iam.Role(platform, "llm-submitter", assumed_by=iam.AccountRootPrincipal()),
            queue.share("llm-research"), 50)
    granted(iam.Role(platform, "VisionSubmitter", role_name="vision-submitter",
                     assumed_by=iam.AccountRootPrincipal()), queue.share("vision"), 0)
    granted(iam.Role.from_role_arn(platform, "SpeechSubmitter",
                                   "arn:aws:iam::123456789012:role/speech-submitter"),
            queue.share("speech"), None)
    granted(iam.Role(team, "EvalSubmitter", assumed_by=iam.AccountRootPrincipal()),
            evaluation, 20)

    monitoring = queue.add_monitoring()
    monitoring.subscribe_owner("llm-team", subscriptions.EmailSubscription("llm@example.com"))
    monitoring.subscribe_owner("vision-team",
                               subscriptions.UrlSubscription("https://hooks.example.com/v"))
    monitoring.subscribe_owner("speech-team", subscriptions.EmailSubscription("s@example.com"))
    monitoring.subscribe_owner("eval-team", subscriptions.EmailSubscription("e@example.com"))

    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    assembly = app.synth()
    for path in write_allocation_agreements(app, assembly.directory):
        print(path, file=sys.stderr)
''')

# What each share's contract says (the declaration above): ceiling of its submit grant, budget.
CONTRACTS = {
    "llm-research": (50, 2),
    "vision": (0, 0),
    "speech": (None, None),
    "eval": (20, 1),
}


def readme_cdk_json() -> dict[str, Any]:
    text = documentation_text()
    found = re.search(r"<summary><code>cdk.json</code>.*?```json\n(.*?)```", text, re.DOTALL)
    assert found is not None
    document: dict[str, Any] = json.loads(found.group(1))
    return document


@dataclass(frozen=True)
class Synthesized:
    directory: Path
    stderr: str

    def template(self, stack: str) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(
            (self.directory / "cdk.out" / f"{stack}.template.json").read_text())
        return loaded


@pytest.fixture(scope="module")
def synthesized(user_project: UserProject) -> Iterator[Synthesized]:
    if shutil.which("npx") is None:
        pytest.skip("the CDK CLI runs through npx (Node.js)")
    directory = user_project.directory / "four-teams"
    directory.mkdir()
    (directory / "app.py").write_text(APP)
    settings = readme_cdk_json()
    settings["app"] = f"{user_project.python} app.py"
    (directory / "cdk.json").write_text(json.dumps(settings))
    result = subprocess.run(
        ["npx", "--yes", "aws-cdk@2", "synth", "--quiet"], cwd=directory,
        env=checkout_free_environment(), capture_output=True, text=True, timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    yield Synthesized(directory, result.stderr)


def test_the_readme_cdk_json_leaves_no_flag_unconfigured(synthesized: Synthesized) -> None:
    assert "feature flags are not configured" not in synthesized.stderr
    assert readme_cdk_json()["context"]["@aws-cdk/core:defaultCrossStackReferences"] == "strong"


def test_the_readme_cdk_json_is_this_repositorys(synthesized: Synthesized) -> None:
    ours = json.loads((PROJECT_ROOT / "cdk.json").read_text())
    assert readme_cdk_json()["context"] == ours["context"]


def test_outputs_carry_the_documented_names(synthesized: Synthesized) -> None:
    platform = synthesized.template("GpuQuotas-prod")["Outputs"]
    assert set(platform) >= {
        "TrainingQueueJobQueueName", "TrainingQueueJobQueueArn",
        "TrainingQueueLlmResearchShareName", "TrainingQueueLlmResearchShareArn",
        "TrainingQueueVisionShareName", "TrainingQueueSpeechShareName",
        "LlmSubmitterArn", "VisionSubmitterArn", "SpeechSubmitterArn",
        "TrainingQueueMonitoringDashboardName",
        *(f"TrainingQueueMonitoringOwnerTopic{team}TeamArn"
          for team in ("Llm", "Vision", "Speech", "Eval")),
    }
    assert platform["TrainingQueueJobQueueName"]["Value"] == "gpu-prod"
    # An imported role's ARN is already known; its output holds it all the same.
    assert platform["SpeechSubmitterArn"]["Value"] == (
        "arn:aws:iam::123456789012:role/speech-submitter")
    team = synthesized.template("TeamEval")["Outputs"]
    assert set(team) >= {"QuotaShareShareName", "QuotaShareShareArn", "EvalSubmitterArn"}
    assert team["QuotaShareShareName"]["Value"] == "eval"


def agreement(synthesized: Synthesized) -> tuple[str, dict[str, Any]]:
    directory = synthesized.directory / "cdk.out" / "agreements"
    markdown = (directory / "GpuQuotas-prod.md").read_text()
    twin: dict[str, Any] = json.loads((directory / "GpuQuotas-prod.json").read_text())
    return markdown, twin


def share_section(markdown: str, name: str) -> str:
    return markdown.split(f"### {name} — ", 1)[1].split("\n### ", 1)[0]


def test_the_agreement_names_the_real_queue_and_roles(synthesized: Synthesized) -> None:
    markdown, twin = agreement(synthesized)
    assert "## Job queue `gpu-prod`" in markdown
    (queue,) = twin["queues"]
    assert queue["queue"]["name"] == "gpu-prod"
    # A role CloudFormation names: the output that will hold its ARN.
    assert ("role whose ARN is stack output `LlmSubmitterArn` of `GpuQuotas-prod`"
            in share_section(markdown, "llm-research"))
    assert "role `vision-submitter`" in share_section(markdown, "vision")
    assert ("role `speech-submitter` (`arn:aws:iam::123456789012:role/speech-submitter`)"
            in share_section(markdown, "speech"))
    assert ("role whose ARN is stack output `EvalSubmitterArn` of `TeamEval`"
            in share_section(markdown, "eval"))
    # Where each owner hears about its share: the topic's output.
    assert ("- **Alerts** (preemptions, starvation, drift, blocked jobs): SNS topic generated "
            "at deployment; stack output `TrainingQueueMonitoringOwnerTopicVisionTeamArn` of "
            "`GpuQuotas-prod`, delivered to https `https://hooks.example.com/v`."
            in share_section(markdown, "vision"))
    vision = next(share for share in queue["shares"] if share["name"] == "vision")
    assert vision["owner_topic"]["output"] == {
        "stack": "GpuQuotas-prod", "output_key": "TrainingQueueMonitoringOwnerTopicVisionTeamArn"}
        # Every grantee is named as a role, never by its construct path alone.
    grantees = [line for line in markdown.splitlines() if " may submit jobs" in line]
    assert len(grantees) == 4
    assert all(line.startswith("  - role ") for line in grantees)
    for share in queue["shares"]:
        (submit,) = [g for g in share["grants"] if g["permission"] == "submit"]
        assert submit["role_name"] or submit["role_arn"] or submit["arn_output"]


def test_the_team_stack_has_its_own_agreement_to_act_on(synthesized: Synthesized) -> None:
    directory = synthesized.directory / "cdk.out" / "agreements"
    markdown = (directory / "TeamEval.md").read_text()
    twin = json.loads((directory / "TeamEval.json").read_text())
    assert "### eval — eval-team" in markdown and "### vision" not in markdown
    [queue] = twin["queues"]
    assert [share["name"] for share in queue["shares"]] == ["eval"]
    assert queue["other_shares"] == ["llm-research", "vision", "speech"]
    [share] = queue["shares"]
    assert share["queue"]["name"] == "gpu-prod"
    # An environment-agnostic app: account and region are in the ARN the output holds.
    assert (share["queue"]["account"], share["queue"]["region"]) == (None, None)
    assert share["queue"]["arn_output"]["output_key"] == "TrainingQueueJobQueueArn"
    assert share["instance_types"] == ["ml.g5.xlarge"]
    assert [item["endpoint"] for item in share["alerts"]["subscriptions"]] == ["e@example.com"]
    assert "delivered to email `e@example.com`." in markdown
    assert "**Instance types it can run:** `ml.g5.xlarge`" in markdown


def test_each_share_has_a_submit_call_matching_its_contract(synthesized: Synthesized) -> None:
    markdown, twin = agreement(synthesized)
    shares = {share["name"]: share for share in twin["queues"][0]["shares"]}
    assert set(shares) == set(CONTRACTS)
    for name, (ceiling, budget) in CONTRACTS.items():
        section = share_section(markdown, name)
        call = section.split("batch.submit_service_job(", 1)[1].split("\n  )", 1)[0]
        assert 'jobQueue=QUEUE' in call and 'QUEUE = "gpu-prod"' in section
        assert f'quotaShareName="{name}"' in call
        assert f'tags={{"quota-constructs:quota-share": "{name}"}}' in call
        priority = int(re.search(r"schedulingPriority=(\d+)", call).group(1))  # type: ignore[union-attr]
        assert priority <= (9999 if ceiling is None else ceiling)
        if budget is None:
            assert "preemptionConfiguration" not in call
        else:
            assert (f'preemptionConfiguration={{"preemptionRetriesBeforeTermination": {budget}}}'
                    in call)
        # The SDK equivalent, with its trap named; under a ceiling of 0 the SDK cannot submit.
        if ceiling == 0:
            assert "the SDK cannot submit into this share" in section
        else:
            assert f'quota_share_name="{name}"' in section
            assert "TrainingQueue(QUEUE).submit(" in section
        assert "drops a priority of 0" in section
        # The twin holds the same call.
        request = shares[name]["submission"]["submit_service_job"]
        assert request["quotaShareName"] == name and request["jobQueue"] == "gpu-prod"
        assert request["schedulingPriority"] == priority
        assert request.get("preemptionConfiguration") == (
            None if budget is None else {"preemptionRetriesBeforeTermination": budget})
        assert shares[name]["submission"]["max_priority"] == ceiling


def test_the_json_twin_agrees_with_the_markdown(synthesized: Synthesized) -> None:
    markdown, twin = agreement(synthesized)
    assert twin["format"] == "quota-constructs.allocation-agreement" and twin["version"] == 1
    rows = {
        cells[0]: cells
        for line in markdown.splitlines()
        if line.startswith("| ") and not line.startswith("| Share") and "---" not in line
        for cells in [[cell.strip() for cell in line.strip("|").split(" | ")]]
    }
    for share in twin["queues"][0]["shares"]:
        _, owner, strategy, own, reach, budget = rows[share["name"]]
        assert owner == share["owner"] and strategy == share["strategy"]
        assert own == ", ".join(f"{n} × {unit}" for unit, n in share["capacity_limits"].items())
        assert reach == ", ".join(f"{n} × {unit}" for unit, n in share["can_reach"].items())
        expected_budget = {None: "no limit on preemptions per job", 0: "no preemption allowed"}
        assert budget == expected_budget.get(
            share["interruption_budget"],
            f"at most {share['interruption_budget']} preemption"
            f"{'s' if share['interruption_budget'] != 1 else ''} per job")
        ceilings = {g["max_priority"] for g in share["grants"] if g["permission"] == "submit"}
        assert ceilings == {CONTRACTS[share["name"]][0]}
        for grant in share["grants"]:
            ceiling = grant["max_priority"]
            text = "any priority" if ceiling is None else f"priority at most {ceiling}"
            assert f"({text})" in share_section(markdown, share["name"])


def test_the_client_reads_the_twin_outside_the_repository(
    synthesized: Synthesized, user_project: UserProject
) -> None:
    path = synthesized.directory / "cdk.out" / "agreements" / "GpuQuotas-prod.json"
    result = user_project.run(textwrap.dedent(f'''
        import sys
        from quota_constructs.client import ShareClient
        from quota_constructs.model import QuotaConfigError
        client = ShareClient.from_agreement({str(path)!r}, share="llm-research")
        assert (client.queue, client.max_priority, client.preemption_budget) == (
            "gpu-prod", 50, 2), vars(client)
        try:
            client.submit(job_name="j", training_job_request={{}}, priority=51)
        except QuotaConfigError as error:
            print(error, file=sys.stderr)
        else:
            raise SystemExit("a priority above the ceiling was not refused")
        assert not [m for m in sys.modules if m.startswith("aws_cdk")]
    '''))
    assert result.returncode == 0, result.stderr
    assert "at most 50" in result.stderr or "to 50" in result.stderr
