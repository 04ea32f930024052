"""The declaration the monitoring Lambdas read: the monitored shares and their agreements.

It is the custom resource's wire format (:func:`resource_properties`, PascalCase) for each share,
plus the share's agreement, so the declared configuration travels in one encoding rendered by
the model, and the runtime parses it back through the same strict parser
(:func:`spec_from_properties`). Left out: ``JobQueue`` (the Lambdas are told their queue in their
environment, and at synth time it is usually a token) and ``Tags`` (not monitored; they may hold
deploy-time tokens)::

    {"Version": 1,
     "Shares": [{"QuotaShareName": "QS1", "CapacityLimits": [...],
                 "ResourceSharingConfiguration": {...}, "PreemptionConfiguration": {...},
                 "State": "ENABLED",
                 "Agreement": {"Owner": "vision-team", "Purpose": "...",
                               "Recoverable": true, "InterruptionBudget": 2}}]}

A share declared without an agreement has no ``Agreement`` key: it is measured, and nobody is
notified about it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import Any

from quota_constructs.model.agreement import ShareAgreement
from quota_constructs.model.errors import QuotaConfigError
from quota_constructs.model.queue import check_share_set
from quota_constructs.model.share import QuotaShareSpec, share_subject
from quota_constructs.model.tokens import is_unresolved

from .share_codec import parse_bool, parse_int, resource_properties, spec_from_properties

DECLARATION_VERSION = 1
DECLARATION_SUBJECT = "monitoring declaration"
_NOT_RENDERED = ("JobQueue", "Tags")
_AGREEMENT_KEYS = frozenset({
    "Owner", "Purpose", "Recoverable", "InterruptionBudget", "TargetWaitP95Seconds",
    "MaxBudgetFailures",
})
# spec_from_properties wants a queue; the declaration's shares all belong to the monitored one,
# which the Lambda reads from its environment, so any non-empty placeholder will do.
_MONITORED_QUEUE = "monitored-job-queue"


def agreement_properties(agreement: ShareAgreement) -> dict[str, Any]:
    """The agreement in the declaration's PascalCase form.

    The service targets are written only when set, so a declaration without them renders as it
    did before they existed (no template change for existing users).
    """
    rendered: dict[str, Any] = {
        "Owner": agreement.owner,
        "Purpose": agreement.purpose,
        "Recoverable": agreement.recoverable,
        "InterruptionBudget": agreement.interruption_budget,
    }
    if agreement.target_wait_p95 is not None:
        rendered["TargetWaitP95Seconds"] = agreement.target_wait_p95_seconds
    if agreement.max_budget_failures is not None:
        rendered["MaxBudgetFailures"] = agreement.max_budget_failures
    return rendered


def monitoring_declaration(specs: Iterable[QuotaShareSpec]) -> dict[str, Any]:
    """The declaration of ``specs`` as a JSON-ready dict (see the module docstring).

    Every value must be known at synth time: a share whose name or limits are tokens cannot be
    compared with what AWS Batch reports, so it is refused naming the share and the field.
    """
    shares = check_share_set(list(specs), subject=DECLARATION_SUBJECT)
    rendered = []
    for spec in shares:
        props = {
            key: value
            for key, value in resource_properties(spec, _MONITORED_QUEUE).items()
            if key not in _NOT_RENDERED
        }
        if spec.agreement is not None:
            props["Agreement"] = agreement_properties(spec.agreement)
        _refuse_tokens(props, subject=share_subject(spec.name), path="")
        rendered.append(props)
    return {"Version": DECLARATION_VERSION, "Shares": rendered}


def monitoring_declaration_json(specs: Iterable[QuotaShareSpec]) -> str:
    """:func:`monitoring_declaration` as stable JSON text (sorted keys), for a file in an asset."""
    return json.dumps(monitoring_declaration(specs), indent=1, sort_keys=True) + "\n"


def parse_monitoring_declaration(document: Any) -> tuple[QuotaShareSpec, ...]:
    """The shares (with their agreements) of a declaration, parsed strictly through the model.

    Accepts what :func:`monitoring_declaration` renders, and numbers and booleans as strings
    (as CloudFormation would deliver them); anything else raises :class:`QuotaConfigError`.
    """
    if not isinstance(document, Mapping):
        raise QuotaConfigError(DECLARATION_SUBJECT, "document", document, "a JSON object")
    version = document.get("Version")
    if version != DECLARATION_VERSION or isinstance(version, bool):
        raise QuotaConfigError(
            DECLARATION_SUBJECT, "Version", version,
            f"{DECLARATION_VERSION} (the format this library writes)",
        )
    raw_shares = document.get("Shares")
    if not isinstance(raw_shares, list):
        raise QuotaConfigError(DECLARATION_SUBJECT, "Shares", raw_shares, "a list of shares")
    specs: list[QuotaShareSpec] = []
    for index, raw in enumerate(raw_shares):
        if not isinstance(raw, Mapping):
            raise QuotaConfigError(
                DECLARATION_SUBJECT, f"Shares[{index}]", raw, "an object of share properties"
            )
        # The one parser of share properties (also the custom resource's), so a rule or a fix
        # there applies here too.
        spec, _ = spec_from_properties({**raw, "JobQueue": _MONITORED_QUEUE})
        agreement = _parse_agreement(raw.get("Agreement"), subject=share_subject(spec.name))
        specs.append(dataclasses.replace(spec, agreement=agreement) if agreement else spec)
    return check_share_set(specs, subject=DECLARATION_SUBJECT)


def _parse_agreement(raw: Any, *, subject: str) -> ShareAgreement | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise QuotaConfigError(subject, "Agreement", raw, "an object or null")
    unknown = sorted(set(raw) - _AGREEMENT_KEYS)
    if unknown:
        raise QuotaConfigError(
            subject, "Agreement", unknown, "only the keys " + ", ".join(sorted(_AGREEMENT_KEYS))
        )
    budget = raw.get("InterruptionBudget")
    wait = raw.get("TargetWaitP95Seconds")
    failures = raw.get("MaxBudgetFailures")
    agreement = ShareAgreement(
        owner=raw.get("Owner"),  # type: ignore[arg-type]
        purpose=raw.get("Purpose", ""),
        recoverable=parse_bool(
            raw.get("Recoverable", False), subject=subject, field="Agreement.Recoverable"
        ),
        interruption_budget=None if budget is None else parse_int(
            budget, subject=subject, field="Agreement.InterruptionBudget"
        ),
        target_wait_p95=None if wait is None else _parse_seconds(
            wait, subject=subject, field="Agreement.TargetWaitP95Seconds"
        ),
        max_budget_failures=None if failures is None else parse_int(
            failures, subject=subject, field="Agreement.MaxBudgetFailures"
        ),
    )
    return agreement.validate(subject=subject, field="Agreement")


def _parse_seconds(raw: Any, *, subject: str, field: str) -> float:
    # Numbers may arrive as strings (CloudFormation turns every number into one).
    if isinstance(raw, bool):
        raise QuotaConfigError(subject, field, raw, "a number of seconds > 0")
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise QuotaConfigError(subject, field, raw, "a number of seconds > 0") from None


def _refuse_tokens(value: Any, *, subject: str, path: str) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            _refuse_tokens(item, subject=subject, path=f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _refuse_tokens(item, subject=subject, path=f"{path}[{index}]")
    elif is_unresolved(value):
        raise QuotaConfigError(
            subject, path, value,
            "a value known at synth time: the monitoring compares the live share with it",
        )
