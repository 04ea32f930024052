"""Every synth warning of many declarations, as the CDK CLI, the summary and the agreement show
it, is a whole sentence; the in-share preemption warning can be acknowledged like the others."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Annotations, Match

from quota_constructs import (
    PREEMPTION_BUDGET_WARNING_ID,
    CapacityLimit,
    QuotaManagedTrainingQueue,
    QuotaShare,
    QuotaShareMonitoring,
    QuotaSharePolicy,
    QuotaShareSpec,
    ShareAgreement,
    SharingStrategy,
    TrainingJobQueue,
    allocation_summary,
    write_allocation_agreements,
)

G5, P4D = "ml.g5.xlarge", "ml.p4d.24xlarge"
SENTENCE_END = re.compile(r"[.!?][)\"'`]?$")


def spec(name: str, strategy: SharingStrategy, *, limit: int = 1, percent: int | None = None,
         preemption: bool = False, budget: int | None = None, owner: bool = True,
         unit: str = G5) -> QuotaShareSpec:
    return QuotaShareSpec(
        name=name, capacity_limits=[CapacityLimit(unit, limit)], strategy=strategy,
        borrow_limit_percent=percent, in_share_preemption=preemption,
        agreement=ShareAgreement(owner=f"{name}-team", interruption_budget=budget)
        if owner else None,
    )


def build(outdir: Path) -> tuple[cdk.App, list[cdk.Stack]]:
    app = cdk.App(outdir=str(outdir))
    unpinned = cdk.Stack(app, "Unpinned")
    # Capacity no share owns, a borrow percent that rounds to nothing, in-share preemption
    # with a budget of 0, a share without an owner under monitoring, an imported owner topic.
    queue = QuotaManagedTrainingQueue(
        unpinned, "Unowned", capacity_limits=[CapacityLimit(G5, 5), CapacityLimit(P4D, 1)],
        shares=[
            spec("a", SharingStrategy.LEND_AND_BORROW, percent=50, preemption=True, budget=0),
            spec("b", SharingStrategy.LEND, owner=False),
            spec("c", SharingStrategy.RESERVE, unit=P4D, owner=False),
        ],
    )
    topic = sns.Topic.from_topic_arn(unpinned, "Topic",
                                     "arn:aws:sns:us-east-1:123456789012:a-team")
    QuotaShareMonitoring(unpinned, "Monitoring", job_queue=queue, owner_topics={"a-team": topic})
    # A grant to a role naming an account, in a stack whose account is not pinned.
    queue.share("b").grant_submit(
        iam.Role.from_role_arn(unpinned, "Other", "arn:aws:iam::210987654321:role/ci"))
    # Over-allocation, with unowned capacity not borrowable, and the deprecated policy name.
    strict = cdk.Stack(app, "Strict")
    strict.node.set_context("quota_constructs:unownedCapacityBorrowable", False)
    QuotaManagedTrainingQueue(
        strict, "Over", capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(P4D, 3)],
        shares=[spec("d", SharingStrategy.LEND, limit=2), spec("e", SharingStrategy.LEND, limit=2),
                spec("f", SharingStrategy.LEND_AND_BORROW, unit=P4D, limit=1, percent=0)],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        QuotaSharePolicy(strict, "OldPolicy")
    # A team stack's share, with in-share preemption and a budget of 0, on an imported queue.
    team = cdk.Stack(app, "Team")
    imported = TrainingJobQueue.from_job_queue_arn(
        team, "Queue", "arn:aws:batch:us-east-1:123456789012:job-queue/shared")
    QuotaShare(team, "Share", job_queue=imported,
               spec=spec("g", SharingStrategy.LEND, preemption=True, budget=0))
    app.synth()
    return app, [unpinned, strict, team]


def test_every_synth_warning_is_a_full_sentence(tmp_path: Path) -> None:
    app, stacks = build(tmp_path)
    messages = [
        str(message.entry.data)
        for stack in stacks
        for message in Annotations.from_stack(stack).find_warning("*", Match.any_value())
    ]
    ids = " ".join(messages)
    for expected in ("belong to no share", "can borrow no", "in-share preemption is on",
                     "has no agreement (owner)", "is deprecated", "is not pinned",
                     "is not defined in this app", "not every share can reach its limit"):
        assert expected in ids, expected
    # The CDK appends its own "[ack: <id>]"; what the library wrote comes before it.
    for message in messages:
        text = re.sub(r"\s*\[ack: [^\]]+\]$", "", message)
        assert SENTENCE_END.search(text), f"not a full sentence: {text!r}"
    summary = [line.split("warning: ", 1)[1] for line in allocation_summary(app)
               if "warning: " in line]
    assert len(summary) >= 5
    written = write_allocation_agreements(app)
    in_agreements = [
        warning
        for path in written
        for queue in json.loads(path.with_suffix(".json").read_text())["queues"]
        for warning in queue["warnings"]
    ]
    assert set(summary) <= set(in_agreements)
    for text in [*summary, *in_agreements]:
        assert SENTENCE_END.search(text), f"not a full sentence: {text!r}"
        assert f"- {text}" in "".join(path.read_text() for path in written)


def test_the_in_share_preemption_warning_is_acknowledged_like_the_others(
    tmp_path: Path,
) -> None:
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Quotas")
    queue = QuotaManagedTrainingQueue(
        stack, "TrainingQueue", capacity_limits=[CapacityLimit(G5, 2)],
        shares=[spec("a", SharingStrategy.LEND, preemption=True, budget=0),
                spec("b", SharingStrategy.LEND, preemption=True, budget=0)],
    )
    cdk.Annotations.of(queue.share("a")).acknowledge_warning(
        PREEMPTION_BUDGET_WARNING_ID, "Jobs of this share are short and restartable.")
    app.synth()
    found = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("in-share preemption is on"))
    assert [str(message.entry.data).split(":", 1)[0] for message in found] == ["quota share 'b'"]
