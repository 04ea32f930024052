"""Read one share's terms from the agreement's JSON twin (``cdk.out/agreements/<stack>.json``,
written by ``write_allocation_agreements``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.agreement_json import AGREEMENT_FORMAT, AGREEMENT_VERSION
from ..model.agreement_submission import strictest_ceiling


class AgreementFileError(ValueError):
    """The agreement file cannot be read, or does not describe the share asked for."""


@dataclass(frozen=True)
class StackOutput:
    """A CloudFormation stack output that holds a value known only after deployment."""

    stack: str
    output_key: str


@dataclass(frozen=True)
class ShareTerms:
    """What a team needs to submit into its share: where (the queue, by name or by the stack
    output that holds the name), which share, the priority ceiling that applies and the
    interruption budget its jobs are submitted with."""

    share: str
    queue_name: str | None
    queue_output: StackOutput | None
    max_priority: int | None
    preemption_budget: int | None
    tags: Mapping[str, str]
    instance_types: tuple[str, ...] | None = None
    """The instance types the share can run (None: the agreement does not say)."""


def read_share_terms(path: str | Path, *, share: str, principal: str | None = None) -> ShareTerms:
    """The terms of ``share`` in the agreement file at ``path``.

    The ceiling is that of the submit grant made to ``principal`` (the label, role name or
    role ARN the agreement lists) when given; otherwise the strictest ceiling of all submit
    grants on the share, which every one of them allows.
    """
    document = _load(Path(path))
    found: list[tuple[dict[str, Any], dict[str, Any]]] = [
        (queue, entry)
        for queue in document.get("queues", [])
        for entry in queue.get("shares", [])
        if entry.get("name") == share
    ]
    if not found:
        known = sorted({
            str(entry.get("name"))
            for queue in document.get("queues", []) for entry in queue.get("shares", [])
        })
        raise AgreementFileError(
            f"agreement {path}: share {share!r} not found; shares in it: {', '.join(known)}"
        )
    if len(found) > 1:
        raise AgreementFileError(
            f"agreement {path}: share {share!r} is on {len(found)} queues; "
            "build ShareClient(queue=..., share=...) for the one you mean"
        )
    queue, entry = found[0]
    location = queue.get("queue") or {}
    output = location.get("name_output")
    submission = entry.get("submission") or {}
    return ShareTerms(
        share=share,
        queue_name=location.get("name"),
        queue_output=(
            StackOutput(str(output["stack"]), str(output["output_key"])) if output else None
        ),
        max_priority=_ceiling(path, share, entry.get("grants") or [], principal),
        preemption_budget=entry.get("interruption_budget"),
        tags=dict(submission.get("tags") or {}),
        instance_types=_instance_types(entry),
    )


def _instance_types(entry: Mapping[str, Any]) -> tuple[str, ...] | None:
    """``instance_types``, else the keys of ``capacity_limits`` (what an older twin has)."""
    listed = entry.get("instance_types")
    if listed is None and isinstance(entry.get("capacity_limits"), Mapping):
        listed = list(entry["capacity_limits"])
    if not isinstance(listed, list) or not all(isinstance(item, str) for item in listed):
        return None
    return tuple(listed)


def _load(path: Path) -> dict[str, Any]:
    twin = path.with_suffix(".json")
    if path.suffix.lower() != ".json" and (path.suffix.lower() in (".md", ".markdown")
                                           or twin.is_file()):
        # The agreement is written twice: the page for people, the JSON for programs.
        found = "" if twin.is_file() else " (not there: write_allocation_agreements writes both)"
        raise AgreementFileError(
            f"agreement {path}: this is the agreement's page for people; the client reads its "
            f"JSON twin, {twin}{found}"
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise AgreementFileError(f"agreement {path}: cannot read it ({error})") from error
    if not isinstance(document, dict) or document.get("format") != AGREEMENT_FORMAT:
        raise AgreementFileError(
            f"agreement {path}: not an allocation agreement (expected \"format\": "
            f"{AGREEMENT_FORMAT!r}; write it with write_allocation_agreements)"
        )
    if document.get("version") != AGREEMENT_VERSION:
        raise AgreementFileError(
            f"agreement {path}: version {document.get('version')!r}; this client reads "
            f"version {AGREEMENT_VERSION}"
        )
    return document


def _ceiling(
    path: str | Path, share: str, grants: list[dict[str, Any]], principal: str | None
) -> int | None:
    submits = [grant for grant in grants if grant.get("permission") == "submit"]
    if principal is not None:
        mine = [
            grant for grant in submits
            if principal in (grant.get("principal"), grant.get("role_name"), grant.get("role_arn"))
        ]
        if not mine:
            listed = sorted(str(grant.get("principal")) for grant in submits)
            raise AgreementFileError(
                f"agreement {path}: {principal!r} has no submit grant on share {share!r}; "
                f"granted: {', '.join(listed) or 'nobody'}"
            )
        submits = mine
    ceilings = [grant.get("max_priority") for grant in submits]
    return strictest_ceiling([c if isinstance(c, int) else None for c in ceilings])
