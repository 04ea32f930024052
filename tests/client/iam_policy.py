"""A stand-in for IAM's evaluation of identity-based policies, for the requests a team makes.

Written from the IAM user guide, not from the library (nothing here imports quota_constructs):

- "Policy evaluation logic": an explicit Deny wins; otherwise a request is allowed when an
  Allow statement matches its action, its resource and every condition; otherwise it is
  implicitly denied. An action on several resources (SubmitServiceJob names the queue, the
  share and the new job) must be allowed on each.
- "Condition" / "Condition operators": every operator of a block, and every key of an operator,
  must match (AND); several policy values of one key match when any does (OR) — for a negated
  operator (``StringNotEquals``, ``StringNotLike``, ``NumericNotEquals``) when the request's
  value equals none of them. A key absent from the request context makes a positive operator
  false and a negated one true; ``...IfExists`` makes any operator true on an absent key;
  ``Null`` "true" matches only an absent key, "false" only a present one. Condition key names
  are not case-sensitive; values are, except under ``...IgnoreCase``.
- "Multivalued context keys": ``ForAllValues:<op>`` is true when every request value matches
  under ``<op>`` (at least one policy value for a positive operator, none for a negated one),
  and also when the key is absent or its set empty; ``ForAnyValue:<op>`` is true when at least
  one request value does, and false when the key is absent or empty. A multivalued key
  (``aws:TagKeys``) without a set operator, or a set operator on a single-valued key, is a
  policy error here (AWS warns against both): the stand-in refuses it rather than guess.

Anything else in a policy (NotAction, NotResource, Principal, other operators) raises
:class:`NotImplementedError`, so a grant using it cannot pass untested.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ContextValue = str | int | Sequence[str]

MULTIVALUED_KEYS = frozenset({"aws:tagkeys"})
NEGATED = frozenset({"StringNotEquals", "StringNotEqualsIgnoreCase", "StringNotLike",
                     "NumericNotEquals", "ArnNotEquals", "ArnNotLike"})


@dataclass(frozen=True)
class Authorization:
    """One IAM action on one resource, with the request context IAM evaluates it in."""

    action: str
    resource: str
    context: Mapping[str, ContextValue] = field(default_factory=dict)


def tag_context(*, request_tags: Mapping[str, str] | None,
                resource_tags: Mapping[str, str] | None) -> dict[str, ContextValue]:
    """``aws:RequestTag/<key>`` and ``aws:TagKeys`` for the tags sent (absent when none are),
    ``aws:ResourceTag/<key>`` for the tags the resource already has."""
    context: dict[str, ContextValue] = {}
    for key, value in (request_tags or {}).items():
        context[f"aws:RequestTag/{key}"] = value
    if request_tags:
        context["aws:TagKeys"] = list(request_tags)
    for key, value in (resource_tags or {}).items():
        context[f"aws:ResourceTag/{key}"] = value
    return context


class Denied(Exception):
    def __init__(self, authorization: Authorization, why: str) -> None:
        super().__init__(f"{authorization.action} on {authorization.resource}: {why}")
        self.authorization = authorization


def authorize(statements: Sequence[Mapping[str, Any]],
              authorizations: Iterable[Authorization]) -> None:
    """Raises :class:`Denied` for the first authorization the policy does not allow."""
    for authorization in authorizations:
        allowed = False
        for statement in statements:
            if not _applies(statement, authorization):
                continue
            if statement["Effect"] == "Deny":
                raise Denied(authorization, "explicitly denied")
            allowed = True
        if not allowed:
            raise Denied(authorization, "no statement allows it (implicit deny)")


def _applies(statement: Mapping[str, Any], authorization: Authorization) -> bool:
    for unsupported in ("NotAction", "NotResource", "Principal", "NotPrincipal"):
        if unsupported in statement:
            raise NotImplementedError(f"{unsupported} in an identity policy statement")
    if statement.get("Effect") not in ("Allow", "Deny"):
        raise ValueError(f"Effect must be Allow or Deny: {statement.get('Effect')!r}")
    actions = _listed(statement["Action"])
    # Action names are not case-sensitive.
    if not any(_like(authorization.action.lower(), a.lower()) for a in actions):
        return False
    if not any(_like(authorization.resource, r) for r in _listed(statement["Resource"])):
        return False
    return all(
        _operator_matches(operator, keys, authorization.context)
        for operator, keys in (statement.get("Condition") or {}).items()
    )


def _operator_matches(operator: str, keys: Mapping[str, Any],
                      context: Mapping[str, ContextValue]) -> bool:
    set_operator, _, base = operator.rpartition(":")
    if_exists = base.endswith("IfExists")
    base = base.removesuffix("IfExists")
    # Condition key names are not case-sensitive.
    lowered = {name.lower(): value for name, value in context.items()}
    for key, policy_values in keys.items():
        values = [str(v) for v in _listed(policy_values)]
        present = key.lower() in lowered
        request = lowered.get(key.lower())
        if base == "Null":
            matched = _null_matches(set_operator, present and request not in ([], ""), values)
        elif key.lower() in MULTIVALUED_KEYS:
            matched = _set_matches(set_operator, base, key,
                                   [str(v) for v in _listed(request)] if present else [],
                                   values)
        elif set_operator:
            raise NotImplementedError(f"{set_operator} on the single-valued key {key}")
        elif not present:
            matched = if_exists or base in NEGATED
        else:
            matched = _value_matches(base, str(request), values)
        if not matched:
            return False
    return True


def _null_matches(set_operator: str, present: bool, values: Sequence[str]) -> bool:
    """``Null`` "true": the key is absent (or empty); "false": it is present."""
    if set_operator:
        raise NotImplementedError("a set operator on Null")
    return {"true": not present, "false": present}[values[0].lower()]


def _set_matches(set_operator: str, base: str, key: str, members: Sequence[str],
                 values: Sequence[str]) -> bool:
    """A multivalued key: ForAllValues (true on an absent or empty key) or ForAnyValue (false
    on one)."""
    if set_operator == "ForAllValues":
        return all(_value_matches(base, member, values) for member in members)
    if set_operator == "ForAnyValue":
        return any(_value_matches(base, member, values) for member in members)
    if not set_operator:
        raise NotImplementedError(f"{base} on the multivalued key {key} (needs a set operator)")
    raise NotImplementedError(f"set operator {set_operator}")


def _value_matches(base: str, value: str, policy_values: Sequence[str]) -> bool:
    """One request value against a key's policy values: any of them for a positive operator,
    none of them for a negated one."""
    positive = base.replace("Not", "", 1) if base in NEGATED else base
    hit = any(_compare(positive, value, expected) for expected in policy_values)
    return not hit if base in NEGATED else hit


def _compare(operator: str, value: str, expected: str) -> bool:
    if operator == "StringEquals":
        return value == expected
    if operator == "StringEqualsIgnoreCase":
        return value.lower() == expected.lower()
    if operator in ("StringLike", "ArnLike"):
        return _like(value, expected)
    if operator == "ArnEquals":
        return value == expected
    numeric = {
        "NumericEquals": lambda a, b: a == b,
        "NumericLessThan": lambda a, b: a < b,
        "NumericLessThanEquals": lambda a, b: a <= b,
        "NumericGreaterThan": lambda a, b: a > b,
        "NumericGreaterThanEquals": lambda a, b: a >= b,
    }
    if operator in numeric:
        try:
            return bool(numeric[operator](float(value), float(expected)))
        except ValueError:
            return False
    raise NotImplementedError(f"condition operator {operator}")


def _like(value: str, pattern: str) -> bool:
    """IAM's ``*`` (any run of characters) and ``?`` (one character), case-sensitive; every
    other character stands for itself."""
    regex = "".join(
        ".*" if char == "*" else "." if char == "?" else re.escape(char) for char in pattern
    )
    return re.fullmatch(regex, value, flags=re.DOTALL) is not None


def _listed(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else [value]
