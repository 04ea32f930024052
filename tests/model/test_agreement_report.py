"""The allocation agreement Markdown: what it states per share, from the model alone."""

from __future__ import annotations

import json
from dataclasses import dataclass

from quota_constructs.model import (
    CapacityLimit,
    CapacityUnit,
    QuotaAllocation,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
)
from quota_constructs.model.agreement_json import allocation_agreement_json
from quota_constructs.model.agreement_report import QueueAgreement, allocation_agreement_markdown
from quota_constructs.model.agreement_team import AlertEndpoint
from quota_constructs.model.deployed_names import DeployedName

G5 = CapacityUnit.ML_G5_XLARGE


@dataclass(frozen=True)
class Grant:
    principal: str
    permission: str
    max_priority: int | None


SHARES = (
    QuotaShareSpec(
        name="QS1", capacity_limits=[CapacityLimit(G5, 1)],
        strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=200,
        in_share_preemption=True,
        agreement=ShareAgreement(owner="Research | ML", purpose="Checkpointed sweeps",
                                 recoverable=True, interruption_budget=2),
    ),
    QuotaShareSpec(name="QS2", capacity_limits=[CapacityLimit(G5, 1)],
                   strategy=SharingStrategy.LEND,
                   agreement=ShareAgreement(owner="product", interruption_budget=0)),
    QuotaShareSpec(name="QS3", capacity_limits=[CapacityLimit(G5, 1)],
                   strategy=SharingStrategy.RESERVE, enabled=False),
)
ALLOCATION = QuotaAllocation.check(environment_limits=[CapacityLimit(G5, 3)], shares=SHARES)


def render(**overrides: object) -> str:
    queue = QueueAgreement(
        title="`Q/JobQueue`", shares=SHARES, allocation=ALLOCATION,
        grants={"QS1": [Grant("Team/Submitter", "submit", 50),
                        Grant("Team/Submitter", "update_priority", None)]},
        submission_tags={"QS1": {"quota-constructs:quota-share": "QS1"}},
        budget_enforced=False,
    )
    fields = {**queue.__dict__, **overrides}
    return allocation_agreement_markdown(title="Prod", queues=[QueueAgreement(**fields)])


def section(text: str, share: str) -> str:
    return text.split(f"### {share}", 1)[1].split("\n### ", 1)[0]


def test_summary_table_has_one_row_per_share_with_reach_and_budget() -> None:
    text = render()
    assert text.startswith("# Allocation agreement: Prod\n")
    assert "Service environment: 3 × ml.g5.xlarge." in text
    # The owner's pipe is escaped so the table keeps its columns.
    assert ("| QS1 | Research \\| ML | LEND_AND_BORROW | 1 × ml.g5.xlarge | 2 × ml.g5.xlarge "
            "| at most 2 preemptions per job |") in text
    assert "| QS2 | product | LEND | 1 × ml.g5.xlarge | 1 × ml.g5.xlarge | no preemption allowed |"\
        in text
    assert "| QS3 | not declared | RESERVE |" in text


def test_share_section_states_owner_purpose_lending_and_contract() -> None:
    qs1 = section(render(), "QS1")
    assert "**Owner:** Research | ML" in qs1
    assert "**Purpose:** Checkpointed sweeps" in qs1
    assert ("**Borrow limit:** 200% of its own limit per instance type, rounded down to whole "
            "instances (2 × ml.g5.xlarge).") in qs1
    assert "**Most it can ever reach:** 2 × ml.g5.xlarge" in qs1
    assert "**Borrows from:** QS2: up to 1 × ml.g5.xlarge (only what is left idle)." in qs1
    assert "accept cross-share preemption" in qs1
    assert "In-share preemption is on" in qs1
    assert "Workloads are recoverable" in qs1
    assert "reported to the owner (not terminated" in qs1
    qs2 = section(render(), "QS2")
    assert "**Lends to:** QS1" in qs2
    assert "Its own jobs reclaim lent capacity" in qs2


def test_borrowing_sources_include_unowned_capacity_and_say_when_there_is_none() -> None:
    borrower = QuotaShareSpec(name="vision", capacity_limits=[CapacityLimit(G5, 2)],
                              strategy=SharingStrategy.LEND_AND_BORROW)

    def borrows_from(environment: int) -> str:
        allocation = QuotaAllocation.check(
            environment_limits=[CapacityLimit(G5, environment)], shares=[borrower]
        )
        text = render(shares=(borrower,), allocation=allocation, grants={}, submission_tags={})
        return section(text, "vision").split("**Borrows from:** ", 1)[1].split("\n", 1)[0]

    assert borrows_from(3) == (
        "capacity no share owns: up to 1 × ml.g5.xlarge (only what is left idle)."
    )
    assert borrows_from(2).startswith("nobody: ")
    unknown = render(shares=(borrower,), allocation=None, grants={}, submission_tags={})
    assert "**Borrows from:** not computed (environment capacity not declared" in unknown


def test_grants_list_who_may_submit_with_priority_ceilings() -> None:
    qs1 = section(render(), "QS1")
    assert "`Team/Submitter` may submit jobs (priority at most 50)." in qs1
    assert "`Team/Submitter` may change the priorities of this share's jobs (any priority)." \
        in qs1
    qs2 = section(render(), "QS2")
    assert "No grants declared in this app" in qs2
    # No grant, so nothing a grant requires; the how-to-submit block still shows the call.
    assert "Every submission names the share" not in qs2
    assert 'quotaShareName="QS2"' in qs2 and "no priority ceiling" in qs2


def test_grants_say_what_a_submission_must_carry() -> None:
    qs1 = section(render(), "QS1")
    assert ('Every submission names the share (`quotaShareName="QS1"`) and carries its tag '
            '(`tags={"quota-constructs:quota-share": "QS1"}`); a request without it is denied.'
            ) in qs1
    assert "a `schedulingPriority` no higher than it" in qs1
    assert "drops a priority of 0" in qs1
    without_ceiling = render(grants={"QS1": [Grant("Team/Submitter", "submit", None)]})
    assert "Under a priority ceiling" not in section(without_ceiling, "QS1")


def test_reserve_and_disabled_shares_say_so() -> None:
    qs3 = section(render(), "QS3")
    assert "**Lends to:** nobody (RESERVE)." in qs3
    assert "held for it even when idle" in qs3
    assert "DISABLED" in qs3
    assert "Owner:** not declared" in qs3


def test_enforcement_and_unmonitored_budgets_are_told_apart() -> None:
    assert "is terminated by the monitoring" in section(render(budget_enforced=True), "QS1")
    assert "Not watched in this app" in section(render(budget_enforced=None), "QS1")


def test_unknown_capacity_is_said_rather_than_guessed() -> None:
    text = render(allocation=None)
    assert "capacity not declared in this app" in text
    assert "unknown (environment capacity not declared)" in section(text, "QS1")


def test_allocation_warnings_are_listed() -> None:
    shares = SHARES[:2]
    allocation = QuotaAllocation.check(environment_limits=[CapacityLimit(G5, 3)], shares=shares)
    text = render(shares=shares, allocation=allocation)
    assert allocation.warnings
    for warning in allocation.warnings:
        assert f"- {warning}" in text


def test_rendering_is_deterministic() -> None:
    assert render() == render()
    assert render().endswith("\n") and not render().endswith("\n\n")


def test_what_a_shrinking_deployment_does_follows_the_share_s_guard() -> None:
    text = render(shrink_guards={"QS1": "guarded", "QS2": "waived", "QS3": "unguarded"})
    assert "lowers its limits below what its jobs use is refused" in section(text, "QS1")
    assert "allow_preemption_on_shrink=True)`): its jobs above" in section(text, "QS2")
    assert "preemptible at once (CloudFormation provisioning has no guard)" in section(text, "QS3")
    # Not known (a share this app did not create): what AWS Batch does.
    assert "makes its own jobs above the new limit preemptible." in section(render(), "QS1")


def alerts_line(text: str, share: str) -> str:
    return section(text, share).split("**Alerts** ", 1)[1].split("\n", 1)[0]


def test_alerts_say_where_they_actually_go() -> None:
    topic = DeployedName(value="arn:aws:sns:eu-west-1:123456789012:research")
    monitored = {"monitored": True, "owner_topics": {"Research | ML": topic}}
    subscribed = render(**monitored, owner_endpoints={"Research | ML": [
        AlertEndpoint("email", "ml@example.com", "ml@example.com"),
        AlertEndpoint("sqs", None, "`Inbox` of stack `Ops`")]})
    assert alerts_line(subscribed, "QS1") == (
        "(preemptions, starvation, drift, blocked jobs): SNS topic "
        "`arn:aws:sns:eu-west-1:123456789012:research`, delivered to email `ml@example.com`; "
        "sqs `Inbox` of stack `Ops`.")
    nobody = alerts_line(render(**monitored), "QS1")
    assert "nobody is subscribed in this app, so nobody receives them" in nobody
    assert "subscribe_owner('Research | ML', ...)" in nobody
    given = alerts_line(render(**monitored, topics_given=frozenset({"Research | ML"})), "QS1")
    assert "its subscriptions are made outside this app" in given
    assert "the queue is not monitored in this app" in alerts_line(render(), "QS1")
    assert "the share has no owner" in alerts_line(render(monitored=True), "QS3")


def test_the_twin_names_whom_each_share_lends_to_and_borrows_from_as_the_markdown_does() -> None:
    g6 = CapacityUnit.ML_G6_XLARGE
    shares = (
        QuotaShareSpec(name="a", capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(g6, 1)],
                       strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100),
        QuotaShareSpec(name="b", capacity_limits=[CapacityLimit(G5, 1)],
                       strategy=SharingStrategy.LEND),
        QuotaShareSpec(name="c", capacity_limits=[CapacityLimit(g6, 1)],
                       strategy=SharingStrategy.RESERVE),
    )
    allocation = QuotaAllocation.check(
        environment_limits=[CapacityLimit(G5, 4), CapacityLimit(g6, 2)], shares=shares)
    queue = QueueAgreement(title="q", shares=shares, allocation=allocation)
    text = allocation_agreement_markdown(title="T", queues=[queue])
    twin = json.loads(allocation_agreement_json(title="T", queues=[queue]))
    by_name = {entry["name"]: entry for entry in twin["queues"][0]["shares"]}
    assert by_name["a"]["borrows_from"] == {
        G5: {"lenders": ["b"], "unowned": 1, "up_to": 2}}
    assert "**Borrows from:** b, capacity no share owns: up to 2 × ml.g5.xlarge" in section(
        text, "a")
    assert by_name["b"]["lends_to"] == {G5: ["a"]}
    assert "**Lends to:** a (ml.g5.xlarge)." in section(text, "b")
    assert by_name["b"]["borrows_from"] == {}
    assert by_name["c"]["lends_to"] == {g6: []}
    assert by_name["a"]["instance_types"] == [G5, g6]
    unknown = json.loads(allocation_agreement_json(title="T", queues=[
        QueueAgreement(title="q", shares=shares)]))["queues"][0]["shares"][0]
    assert unknown["lends_to"] is None and unknown["borrows_from"] is None


def test_in_share_preemption_under_a_budget_of_zero_is_among_the_agreement_warnings() -> None:
    risky = QuotaShareSpec(name="risky", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND, in_share_preemption=True,
                           agreement=ShareAgreement(owner="x", interruption_budget=0))
    for allocation in (QuotaAllocation.check(environment_limits=[CapacityLimit(G5, 1)],
                                             shares=[risky]), None):
        queue = QueueAgreement(title="q", shares=(risky,), allocation=allocation)
        text = allocation_agreement_markdown(title="T", queues=[queue])
        twin = json.loads(allocation_agreement_json(title="T", queues=[queue]))
        [warning] = twin["queues"][0]["warnings"]
        assert "in-share preemption is on but its interruption budget is 0" in warning
        assert f"- {warning}" in text


def test_what_turning_in_share_preemption_on_does_follows_the_share_s_guard() -> None:
    guarded = render(in_share_guards={"QS1": "guarded", "QS2": "guarded", "QS3": "waived"})
    unguarded = render(in_share_guards={"QS2": "unguarded"})
    refused = "turns in-share preemption on while a waiting job would preempt"
    assert refused in section(guarded, "QS2")
    assert "allow_preemption_on_in_share_enable=True)`): its lower-priority" in section(
        guarded, "QS3")
    assert ("Turning in-share preemption on may preempt its lower-priority running jobs at "
            "once (CloudFormation provisioning has no guard)") in section(unguarded, "QS2")
    # Already on (QS1), or not known (a share this app did not create): nothing to say.
    assert refused not in section(guarded, "QS1")
    assert "in-share preemption on" not in render()
