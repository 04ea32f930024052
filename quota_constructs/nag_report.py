"""Say that cdk-nag ran, and over what: a clean cdk-nag 3 run prints nothing, exactly like no run.

Wrap each pack in :class:`CountedNagPack` before registering it; after ``app.synth()``,
:func:`nag_summary` says which packs validated how many templates and resources::

    packs = [CountedNagPack(AwsSolutionsChecks(app)), CountedNagPack(ServerlessChecks(app))]
    Validations.of(app).add_plugins(*packs)
    app.synth()
    print(nag_summary(packs), file=sys.stderr)

A pack that fails the synth raises from ``app.synth()`` as it would unwrapped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import IPolicyValidationContext, IPolicyValidationPlugin


@jsii.implements(IPolicyValidationPlugin)
class CountedNagPack:
    """A cdk-nag 3 pack (any policy-validation plugin) that records the templates it validated."""

    def __init__(self, pack: Any) -> None:
        self._pack = pack
        self.template_paths: list[str] = []

    @property
    def name(self) -> str:
        return str(self._pack.name)

    @property
    def version(self) -> str | None:
        version = self._pack.version
        return None if version is None else str(version)

    @property
    def rule_ids(self) -> list[str] | None:
        ids = self._pack.rule_ids
        return None if ids is None else list(ids)

    def validate(self, context: IPolicyValidationContext) -> Any:
        self.template_paths.extend(context.template_paths)
        return self._pack.validate(context)

    @property
    def resource_count(self) -> int:
        """Resources in the templates this pack was given (each counted once)."""
        return sum(
            len(json.loads(Path(path).read_text()).get("Resources", {}))
            for path in sorted(set(self.template_paths))
        )


def nag_summary(packs: Sequence[CountedNagPack]) -> str:
    """One line: which packs ran over how many templates and resources, or which did not run."""
    ran = [pack for pack in packs if pack.template_paths]
    idle = [pack.name for pack in packs if not pack.template_paths]
    if not ran:
        return "cdk-nag: no pack ran (" + (", ".join(idle) or "none registered") + ")"
    templates = len({path for pack in ran for path in pack.template_paths})
    resources = max(pack.resource_count for pack in ran)
    line = (
        f"cdk-nag {' and '.join(pack.name for pack in ran)} checked {resources} resource"
        f"{'' if resources == 1 else 's'} in {templates} template{'' if templates == 1 else 's'}: "
        "no unacknowledged findings"
    )
    return line + (f"; did not run: {', '.join(idle)}" if idle else "")
