"""Reviewer's held-out check of issue 17: the agreement's JSON twin agrees with its Markdown
for an app with four teams, named and unnamed queues, new and imported roles and a share in
another stack; its submit call matches each share's contract; the team client reads it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from quota_constructs.client import ShareClient

from .four_team_app import build


@pytest.fixture(scope="module", name="written")
def written_agreements(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Any]]:
    paths = build(str(tmp_path_factory.mktemp("assembly")))
    return {path.stem: (path.read_text(), json.loads(path.with_suffix(".json").read_text()))
            for path in paths}


def queue_sections(markdown: str) -> list[str]:
    return markdown.split("\n## Job queue ")[1:]


def table_rows(section: str) -> dict[str, list[str]]:
    rows = {}
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith(("| Share", "| ---")):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[cells[0]] = cells
    return rows


def counts(text: str) -> dict[str, int]:
    return {unit: int(n) for n, unit in re.findall(r"(\d+) × (ml\.\S+?)(?:,|$)", text)}


def share_section(section: str, name: str) -> str:
    return re.split(r"\n### ", section.split(f"\n### {name}", 1)[1], maxsplit=1)[0]


def test_every_share_of_the_json_is_the_markdown_s(written: dict[str, tuple[str, Any]]) -> None:
    assert set(written) == {"Prod", "Team"}
    seen = 0
    for markdown, document in written.values():
        sections = queue_sections(markdown)
        assert len(sections) == len(document["queues"])
        for section, queue in zip(sections, document["queues"], strict=True):
            rows = table_rows(section)
            assert set(rows) == {share["name"] for share in queue["shares"]}
            location = queue["queue"]
            if location["name"] is not None:
                assert f"- Name: `{location['name']}`" in section
            else:
                assert location["name_output"]["output_key"] in section
            for share in queue["shares"]:
                seen += 1
                row = rows[share["name"]]
                assert row[2] == share["strategy"]
                assert counts(row[3]) == share["capacity_limits"]
                assert counts(row[4]) == share["can_reach"]
                assert (row[1] == "not declared") == (share["owner"] is None)
                text = share_section(section, share["name"])
                for grant in share["grants"]:
                    named = (grant["role_arn"] if grant["role_arn"] is not None
                             else grant["arn_output"]["output_key"])
                    assert named in text
                    ceiling = grant["max_priority"]
                    assert (f"priority at most {ceiling}" if ceiling is not None
                            else "(any priority)") in text
                submission = share["submission"]
                call = submission["submit_service_job"]
                assert call["quotaShareName"] == share["name"]
                assert call["tags"] == submission["tags"] == {
                    "quota-constructs:quota-share": share["name"]}
                assert f'quotaShareName="{share["name"]}"' in text
                assert f"schedulingPriority={call['schedulingPriority']}," in text
                ceilings = [g["max_priority"] for g in share["grants"]
                            if g["permission"] == "submit" and g["max_priority"] is not None]
                assert submission["max_priority"] == (min(ceilings) if ceilings else None)
                if submission["max_priority"] is not None:
                    assert call["schedulingPriority"] <= submission["max_priority"]
                budget = share["interruption_budget"]
                if budget is None:
                    assert "preemptionConfiguration" not in call
                else:
                    assert call["preemptionConfiguration"] == {
                        "preemptionRetriesBeforeTermination": budget}
                assert call["jobQueue"] == location["name"]
    assert seen == 6


class StackOutputs:
    """A CloudFormation stand-in that answers DescribeStacks with fixed outputs."""

    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs
        self.asked: list[str] = []

    def describe_stacks(self, *, StackName: str) -> dict[str, Any]:
        self.asked.append(StackName)
        return {"Stacks": [{"Outputs": [{"OutputKey": k, "OutputValue": v}
                                        for k, v in self.outputs.items()]}]}


def test_the_client_reads_each_share_s_terms_from_the_twin(
    written: dict[str, tuple[str, Any]], tmp_path: Path
) -> None:
    path = tmp_path / "Prod.json"
    path.write_text(json.dumps(written["Prod"][1]))
    nlp = ShareClient.from_agreement(path, share="nlp")
    assert (nlp.queue, nlp.max_priority, nlp.preemption_budget) == ("gpu-prod", 0, None)
    vision = ShareClient.from_agreement(path, share="vision")
    assert (vision.max_priority, vision.preemption_budget) == (30, 2)
    outputs = StackOutputs({"UnnamedJobQueueName": "Prod-Unnamed-x1y2"})
    adhoc = ShareClient.from_agreement(path, share="adhoc", cloudformation_client=outputs)
    assert (adhoc.queue, adhoc.max_priority) == ("Prod-Unnamed-x1y2", 5)
    assert outputs.asked == ["Prod"]
