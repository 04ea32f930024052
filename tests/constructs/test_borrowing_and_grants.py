"""At synth: borrow limits that round to nothing warn; team grants tag only new jobs with the
share's tag; grants that cannot work are refused; two apps keep separate books."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Template

from quota_constructs import (
    BORROW_WARNING_ID,
    SHARE_TAG_KEY,
    CapacityLimit,
    QuotaConfigError,
    QuotaManagedTrainingQueue,
    QuotaShareSpec,
    SharingStrategy,
    allocation_summary,
    write_allocation_agreements,
)
from quota_constructs.model.tags import RESERVED_LIBRARY_TAG_KEYS

from .support import warnings_of

G5 = "ml.g5.xlarge"
G6 = "ml.g6.xlarge"
ENV = cdk.Environment(account="123456789012", region="eu-west-1")


def queue(stack: cdk.Stack, *, name: str = "gpu") -> QuotaManagedTrainingQueue:
    return QuotaManagedTrainingQueue(
        stack, "Queue", queue_name=name,
        capacity_limits=[CapacityLimit(G5, 4), CapacityLimit(G6, 2)],
        shares=[
            QuotaShareSpec(name="research", capacity_limits=[CapacityLimit(G5, 1),
                                                             CapacityLimit(G6, 1)],
                           strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=50),
            QuotaShareSpec(name="product", capacity_limits=[CapacityLimit(G5, 3),
                                                            CapacityLimit(G6, 1)],
                           strategy=SharingStrategy.LEND),
        ],
    )


def test_a_borrow_limit_that_rounds_to_nothing_warns_naming_share_type_and_figure() -> None:
    stack = cdk.Stack(cdk.App(), "Warned", env=ENV)
    built = queue(stack)
    warnings = [w for w in warnings_of(built.job_queue) if "can borrow no" in w]
    assert len(warnings) == 2
    for unit in (G5, G6):
        (warning,) = [w for w in warnings if f"can borrow no {unit}" in w]
        assert "'research'" in warning and "0.5 instances, rounded down to 0" in warning
    # Described consistently: research borrows from nobody, product lends to nobody.
    assert "can reach 1 x ml.g5.xlarge, 1 x ml.g6.xlarge" in "\n".join(
        allocation_summary(stack)
    )
    assert all("borrows from" not in line and "lends to" not in line
               for line in allocation_summary(stack))


def test_the_borrow_warning_can_be_acknowledged_by_its_id() -> None:
    stack = cdk.Stack(cdk.App(), "Acknowledged", env=ENV)
    built = queue(stack)
    cdk.Annotations.of(built.job_queue).acknowledge_warning(
        BORROW_WARNING_ID, "research borrows nothing on purpose"
    )
    assert not [w for w in warnings_of(built.job_queue) if "can borrow no" in w]


def tag_statements(stack: cdk.Stack) -> list[dict[str, Any]]:
    """TagResource statements on service jobs (the provider's own tagging of shares aside)."""
    template = Template.from_stack(stack).to_json()
    return [
        statement
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::IAM::Policy"
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
        if "batch:TagResource" in (statement["Action"] if isinstance(statement["Action"], list)
                                   else [statement["Action"]])
        and "service-job" in str(statement["Resource"])
    ]


def test_team_grants_tag_only_new_jobs_with_the_share_tag_and_no_reserved_key() -> None:
    stack = cdk.Stack(cdk.App(), "Grants", env=ENV)
    built = queue(stack)
    role = iam.Role(stack, "Team", assumed_by=iam.AccountPrincipal("123456789012"))
    built.share("research").grant_submit(role)
    built.share("research").grant_update_priority(role)
    (statement,) = tag_statements(stack)
    condition = statement["Condition"]
    # The share tag must be set, with this share's name; no key the library reserves (every
    # library key but the share tag, from the one place the model names them) ...
    assert condition["StringEquals"] == {f"aws:RequestTag/{SHARE_TAG_KEY}": "research"}
    reserved = condition["ForAllValues:StringNotEqualsIgnoreCase"]["aws:TagKeys"]
    assert set(reserved) == set(RESERVED_LIBRARY_TAG_KEYS)
    assert SHARE_TAG_KEY not in reserved
    # ... and only on a job carrying no share tag yet: never on another share's job.
    assert condition["Null"] == {f"aws:ResourceTag/{SHARE_TAG_KEY}": "true"}
    assert set(condition) == {"ForAllValues:StringNotEqualsIgnoreCase", "StringEquals", "Null"}


def test_every_library_tag_key_in_the_code_is_the_share_tag_or_reserved() -> None:
    """A key the library starts setting must be named in the model's one list, or a team's
    grant would let it be set on a job."""
    import re
    from pathlib import Path

    import quota_constructs

    root = Path(quota_constructs.__file__).parent
    found = {
        match
        for path in root.rglob("*.py")
        for match in re.findall(r"[\"'](quota-constructs:[A-Za-z0-9_.:/=+@-]+)[\"']",
                                path.read_text(encoding="utf-8"))
    }
    assert found, "the scan found no library tag key at all"
    assert found <= {SHARE_TAG_KEY, *RESERVED_LIBRARY_TAG_KEYS}, found


@pytest.mark.parametrize(
    "principal",
    [iam.ArnPrincipal("arn:aws:iam::210987654321:role/other-team"),
     iam.AccountPrincipal("210987654321")],
)
def test_a_grant_to_a_principal_without_a_policy_here_is_refused(principal: Any) -> None:
    stack = cdk.Stack(cdk.App(), "Refused", env=ENV)
    built = queue(stack)
    with pytest.raises(QuotaConfigError) as raised:
        built.share("research").grant_submit(principal)
    error = raised.value
    assert error.subject == "quota share 'research'" and error.field == "grantee"
    assert "210987654321" in str(error.value) and "object at" not in str(error.value)
    assert built.share("research").grants == ()


def test_two_apps_in_one_process_keep_separate_books(tmp_path: Any) -> None:
    first, second = cdk.App(outdir=str(tmp_path / "one")), cdk.App(outdir=str(tmp_path / "two"))
    queue(cdk.Stack(first, "Platform", env=ENV))
    # The same queue name in the same account and region: refused within one app, fine in
    # another app (their records of queues and shares are their own).
    queue(cdk.Stack(second, "Platform", env=ENV))
    with pytest.raises(QuotaConfigError):
        queue(cdk.Stack(first, "Again", env=ENV))
    role = iam.Role(cdk.Stack(second, "Teams", env=ENV), "Team",
                    assumed_by=iam.AccountPrincipal("123456789012"))
    second_queue = next(c for c in second.node.find_all()
                        if isinstance(c, QuotaManagedTrainingQueue))
    second_queue.share("research").grant_submit(role)
    first.synth()
    second.synth()
    (one,) = write_allocation_agreements(first)
    (two,) = write_allocation_agreements(second)
    assert "Teams/Team" not in one.read_text() and "Teams/Team" in two.read_text()
    assert Annotations.from_stack(cdk.Stack.of(second_queue))  # synthesizes cleanly


@pytest.mark.parametrize("borrowable, reach", [(None, 4), (True, 4), ("false", 2)])
def test_the_unowned_capacity_assumption_is_an_app_context_switch(
    borrowable: Any, reach: int
) -> None:
    context = {} if borrowable is None else {"quota_constructs:unownedCapacityBorrowable":
                                             borrowable}
    stack = cdk.Stack(cdk.App(context=context), "Unowned", env=ENV)
    built = QuotaManagedTrainingQueue(
        stack, "Queue", capacity_limits=[CapacityLimit(G5, 4)],
        shares=[
            QuotaShareSpec(name="borrower", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND_AND_BORROW),
            QuotaShareSpec(name="lender", capacity_limits=[CapacityLimit(G5, 1)],
                           strategy=SharingStrategy.LEND),
        ],
    )
    assert built.allocation.reach("borrower") == {G5: reach}
    assert f"can reach {reach} x {G5}" in allocation_summary(stack)[1]
