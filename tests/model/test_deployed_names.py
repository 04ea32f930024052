"""A deployed value in words: the literal, else the stack output holding it, else unknown."""

from __future__ import annotations

from quota_constructs.model.agreement_team import QueuePlace, where_markdown
from quota_constructs.model.deployed_names import DeployedName, OutputRef, QueueNames

OUTPUT = OutputRef("Ops", "QueueName")


def test_describe_picks_the_literal_then_the_output_then_unknown_in_the_callers_words() -> None:
    words = ("name `{}`", "name held by {}", "no name")
    assert DeployedName(value="q", output=OUTPUT).describe(*words) == "name `q`"
    assert DeployedName(output=OUTPUT).describe(*words) == (
        "name held by stack output `QueueName` of `Ops`")
    assert DeployedName().describe(*words) == "no name"
    assert DeployedName(output=OUTPUT).describe() == (
        "generated at deployment; stack output `QueueName` of `Ops`")


def test_the_team_page_names_the_queue_and_its_arn_however_much_is_known() -> None:
    unknown = where_markdown(QueueNames("S/Q", DeployedName(), DeployedName()), QueuePlace())
    assert unknown.startswith("job queue (name unknown in this app), in the account and region")
    assert "; ARN unknown in this app (the ARN names both)." in unknown
    held = where_markdown(QueueNames("S/Q", DeployedName(output=OUTPUT),
                                     DeployedName(output=OutputRef("Ops", "QueueArn"))),
                          QueuePlace(region="eu-west-1"))
    assert held == ("job queue named at deployment (stack output `QueueName` of `Ops`), in the "
                    "account and region its stack deploys to (region `eu-west-1`); ARN: stack "
                    "output `QueueArn` of `Ops` (the ARN names both).")
