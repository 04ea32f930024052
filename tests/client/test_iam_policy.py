"""The IAM stand-in against the IAM user guide's own statements of how conditions evaluate,
so that a grant passing the client tests would pass IAM for the same reasons."""

from __future__ import annotations

from typing import Any

import pytest

from .iam_policy import Authorization, Denied, authorize, tag_context

JOB = "arn:aws:batch:us-east-1:123456789012:service-job/1"


def allow(condition: dict[str, Any], action: str = "batch:TagResource") -> list[dict[str, Any]]:
    return [{"Effect": "Allow", "Action": action, "Resource": "arn:aws:batch:*:*:service-job/*",
             "Condition": condition}]


def allowed(policy: list[dict[str, Any]], **context: Any) -> bool:
    try:
        authorize(policy, [Authorization("batch:TagResource", JOB, context)])
    except Denied:
        return False
    return True


def tags(request: dict[str, str] | None = None,
         resource: dict[str, str] | None = None) -> dict[str, Any]:
    return tag_context(request_tags=request, resource_tags=resource)


def test_for_all_values_is_true_when_the_key_is_absent() -> None:
    # "The ForAllValues set operator also returns true if there are no context keys in the
    # request" (IAM user guide, multivalued context key examples).
    policy = allow({"ForAllValues:StringEquals": {"aws:TagKeys": ["a", "b"]}})
    assert allowed(policy, **tags())
    assert allowed(policy, **tags({"a": "1", "b": "2"}))
    assert not allowed(policy, **tags({"a": "1", "c": "3"}))


def test_for_any_value_is_false_when_the_key_is_absent() -> None:
    policy = allow({"ForAnyValue:StringEquals": {"aws:TagKeys": ["a"]}})
    assert not allowed(policy, **tags())
    assert allowed(policy, **tags({"a": "1", "z": "2"}))
    assert not allowed(policy, **tags({"z": "2"}))


def test_negated_set_operators_match_values_equal_to_none_of_the_policy_values() -> None:
    all_not = allow({"ForAllValues:StringNotEquals": {"aws:TagKeys": ["a", "b"]}})
    assert allowed(all_not, **tags({"x": "1", "y": "2"}))
    assert not allowed(all_not, **tags({"x": "1", "b": "2"}))
    assert allowed(all_not, **tags())  # absent: ForAllValues is true
    any_not = allow({"ForAnyValue:StringNotEquals": {"aws:TagKeys": ["a", "b"]}})
    assert allowed(any_not, **tags({"a": "1", "x": "2"}))
    assert not allowed(any_not, **tags({"a": "1", "b": "2"}))
    assert not allowed(any_not, **tags())


def test_a_missing_key_fails_positive_operators_and_passes_negated_ones() -> None:
    # "If the key ... is not present in the request context, the values do not match and the
    # condition is false. If the policy condition requires that the key is not matched, such as
    # StringNotLike ..., and the right key is not present, the condition is true."
    assert not allowed(allow({"StringEquals": {"aws:RequestTag/k": "v"}}), **tags())
    assert allowed(allow({"StringNotEquals": {"aws:RequestTag/k": "v"}}), **tags())
    assert allowed(allow({"StringEqualsIfExists": {"aws:RequestTag/k": "v"}}), **tags())
    assert not allowed(allow({"StringEqualsIfExists": {"aws:RequestTag/k": "v"}}),
                       **tags({"k": "w"}))


def test_null_checks_presence() -> None:
    absent = allow({"Null": {"aws:ResourceTag/k": "true"}})
    assert allowed(absent, **tags())
    assert not allowed(absent, **tags(resource={"k": "v"}))
    present = allow({"Null": {"aws:ResourceTag/k": "false"}})
    assert allowed(present, **tags(resource={"k": "v"}))


def test_values_of_one_key_are_ored_and_keys_and_operators_anded() -> None:
    policy = allow({"StringEquals": {"aws:RequestTag/k": ["v", "w"]},
                    "Null": {"aws:ResourceTag/k": "true"}})
    assert allowed(policy, **tags({"k": "w"}))
    assert not allowed(policy, **tags({"k": "w"}, {"k": "v"}))
    assert not allowed(policy, **tags({"k": "x"}))


def test_ignore_case_and_key_names() -> None:
    policy = allow({"ForAllValues:StringNotEqualsIgnoreCase": {"aws:TagKeys": ["Owner"]},
                    "StringEquals": {"AWS:REQUESTTAG/k": "v"}})
    assert allowed(policy, **tags({"k": "v"}))
    assert not allowed(policy, **tags({"k": "v", "OWNER": "x"}))
    assert not allowed(policy, **tags({"k": "V"}))  # values stay case-sensitive


def test_numeric_conditions() -> None:
    policy = allow({"NumericLessThanEquals": {"batch:SchedulingPriority": 50}},
                   action="batch:UpdateServiceJob")

    def update(priority: int | None) -> bool:
        context = {} if priority is None else {"batch:SchedulingPriority": priority}
        try:
            authorize(policy, [Authorization("batch:UpdateServiceJob", JOB, context)])
        except Denied:
            return False
        return True

    assert update(50) and update(0)
    assert not update(51)
    assert not update(None)


def test_an_explicit_deny_wins_and_nothing_allowed_is_denied() -> None:
    policy = [*allow({}), {"Effect": "Deny", "Action": "batch:Tag*", "Resource": "*",
                           "Condition": {"ForAnyValue:StringLike": {"aws:TagKeys": ["x*"]}}}]
    assert allowed(policy, **tags({"a": "1"}))
    assert not allowed(policy, **tags({"xy": "1"}))
    assert not allowed(allow({}, action="batch:SubmitServiceJob"), **tags())


def test_what_aws_warns_against_is_refused_not_guessed() -> None:
    with pytest.raises(NotImplementedError):
        allowed(allow({"StringEquals": {"aws:TagKeys": "a"}}), **tags({"a": "1"}))
    with pytest.raises(NotImplementedError):
        allowed(allow({"ForAnyValue:StringEquals": {"aws:RequestTag/a": "1"}}),
                **tags({"a": "1"}))
    with pytest.raises(NotImplementedError):
        allowed(allow({"DateGreaterThan": {"aws:CurrentTime": "2020-01-01"}}),
                **{"aws:CurrentTime": "2021-01-01"})
