"""QuotaShareSchedulingPolicy: the quota-share scheduling policy and its import."""

from __future__ import annotations

from types import SimpleNamespace

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match, Template

from quota_constructs import (
    IQuotaShareSchedulingPolicy,
    QuotaConfigError,
    QuotaShareSchedulingPolicy,
)

from .support import assert_config_error, logical_id, properties, resolve, scratch_stack

POLICY_ARN = "arn:aws:batch:eu-west-1:123456789012:scheduling-policy/shared-quota"


@pytest.fixture(scope="module")
def built() -> SimpleNamespace:
    app = cdk.App()
    default_stack = cdk.Stack(app, "Default")
    named_stack = cdk.Stack(app, "Named")
    return SimpleNamespace(
        default=QuotaShareSchedulingPolicy(default_stack, "Policy"),
        named=QuotaShareSchedulingPolicy(
            named_stack, "Policy", scheduling_policy_name="team-quota",
            tags={"team": "ml", "cost-center": "42"},
        ),
        imported=QuotaShareSchedulingPolicy.from_scheduling_policy_arn(
            default_stack, "Imported", POLICY_ARN
        ),
        token_import=QuotaShareSchedulingPolicy.from_scheduling_policy_arn(
            default_stack, "TokenImported",
            cdk.CfnParameter(default_stack, "PolicyArn").value_as_string,
        ),
    )


def test_defaults_give_a_fifo_quota_share_policy_with_a_generated_name(
    built: SimpleNamespace,
) -> None:
    stack = cdk.Stack.of(built.default)
    assert properties(stack, "AWS::Batch::SchedulingPolicy") == {
        "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"}
    }
    assert built.default.node.default_child.node.id == "Resource"
    assert resolve(built.default, built.default.scheduling_policy_arn) == {
        "Fn::GetAtt": [logical_id(built.default), "Arn"]
    }
    # Ref is the ARN, so the name is read from the ARN's last segment.
    assert "Fn::Select" in resolve(built.default, built.default.scheduling_policy_name)


def test_name_and_tags_are_rendered(built: SimpleNamespace) -> None:
    assert properties(cdk.Stack.of(built.named), "AWS::Batch::SchedulingPolicy") == {
        "Name": "team-quota",
        "QuotaSharePolicy": {"IdleResourceAssignmentStrategy": "FIFO"},
        "Tags": {"team": "ml", "cost-center": "42"},
    }
    assert built.named.scheduling_policy_name == "team-quota"


def test_both_created_and_imported_policies_satisfy_the_interface(
    built: SimpleNamespace,
) -> None:
    for policy in (built.default, built.named, built.imported, built.token_import):
        assert isinstance(policy, IQuotaShareSchedulingPolicy)


def test_import_from_a_literal_arn_reads_name_account_and_region(built: SimpleNamespace) -> None:
    imported = built.imported
    assert imported.scheduling_policy_arn == POLICY_ARN
    assert imported.scheduling_policy_name == "shared-quota"
    assert (imported.env.account, imported.env.region) == ("123456789012", "eu-west-1")


def test_import_from_a_token_arn_splits_the_name_at_deploy_time(built: SimpleNamespace) -> None:
    name = resolve(built.token_import, built.token_import.scheduling_policy_name)
    assert name["Fn::Select"][0] == 1
    assert "PolicyArn" in str(name)


@pytest.mark.parametrize(
    "arn",
    [
        "arn:aws:batch:eu-west-1:123456789012:job-queue/shared-quota",
        "shared-quota",
        "arn:aws:batch:eu-west-1:123456789012:scheduling-policy/a/b",
    ],
)
def test_a_malformed_literal_arn_is_rejected(arn: str) -> None:
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShareSchedulingPolicy.from_scheduling_policy_arn(scratch_stack(), "Imported", arn)
    assert_config_error(
        caught.value, "scheduling policy 'Scratch/Imported'", "scheduling_policy_arn", arn,
        "arn:<partition>:batch:<region>:<account>:scheduling-policy/<name>",
    )


def test_an_invalid_name_is_rejected() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShareSchedulingPolicy(scratch_stack(), "Policy", scheduling_policy_name="team quota")
    assert_config_error(
        caught.value, "scheduling policy 'team quota'", "scheduling_policy_name", "team quota",
        "1 to 128 characters",
    )


def test_reserved_tag_keys_are_rejected() -> None:
    with pytest.raises(QuotaConfigError) as caught:
        QuotaShareSchedulingPolicy(scratch_stack(), "Policy", tags={"aws:owner": "me"})
    assert_config_error(
        caught.value, "scheduling policy 'Scratch/Policy'", "tags key", "aws:owner", "aws:"
    )


def test_the_former_name_is_a_deprecated_alias_with_the_same_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from quota_constructs import QuotaSharePolicy, _deprecation

    # The warning is given once per process: a stack of this suite built earlier with the
    # former name (tests/stacks) must not decide whether this test sees it.
    monkeypatch.setattr(_deprecation, "_warned", set())
    old_stack, new_stack = scratch_stack(), scratch_stack()
    with pytest.warns(DeprecationWarning, match="QuotaShareSchedulingPolicy"):
        old = QuotaSharePolicy(old_stack, "Policy")
    QuotaShareSchedulingPolicy(new_stack, "Policy")
    assert isinstance(old, QuotaShareSchedulingPolicy)
    assert old.node.id == "Policy"
    assert Template.from_stack(old_stack).to_json() == Template.from_stack(new_stack).to_json()
    warnings = Annotations.from_stack(old_stack).find_warning("*", Match.any_value())
    assert any("deprecated" in str(w.entry.data) for w in warnings)
