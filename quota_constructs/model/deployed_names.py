"""Names people and tools use to reach deployed things: the literal name where the declaration
fixes it, otherwise the CloudFormation stack output that holds it after deployment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OutputRef:
    """Output ``output_key`` of stack ``stack`` (``aws cloudformation describe-stacks``)."""

    stack: str
    output_key: str

    def describe(self) -> str:
        return f"stack output `{self.output_key}` of `{self.stack}`"

    def as_json(self) -> dict[str, str]:
        return {"stack": self.stack, "output_key": self.output_key}


@dataclass(frozen=True)
class DeployedName:
    """A value that is either known at synth time (``value``) or held by ``output``."""

    value: str | None = None
    output: OutputRef | None = None

    def describe(self, known: str = "`{}`", held: str = "generated at deployment; {}",
                 unknown: str = "unknown in this app") -> str:
        """The value, else the output that holds it, else that it is unknown, in the caller's
        words: ``known`` and ``held`` are templates for the value and the output's description.
        Shared so that every sentence naming a deployed value picks among the three alike."""
        if self.value is not None:
            return known.format(self.value)
        if self.output is not None:
            return held.format(self.output.describe())
        return unknown

    def as_json(self) -> dict[str, Any]:
        return {"value": self.value, "output": self.output.as_json() if self.output else None}


@dataclass(frozen=True)
class QueueNames:
    """How to name a job queue: its construct path, physical name and ARN."""

    path: str
    name: DeployedName
    arn: DeployedName


@dataclass(frozen=True)
class PrincipalNames:
    """How to name a granted principal: ``kind`` is ``role``, ``user``, ``group`` or
    ``principal``; ``name`` and ``arn`` as far as they are known."""

    kind: str
    name: DeployedName
    arn: DeployedName
