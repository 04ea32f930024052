"""Every :class:`SimulationOptions` assumption as a command-line option, derived from the class.

The options are read from the dataclass itself (a bool becomes ``--name``/``--no-name``, an
enum a choice of its values), so an assumption added to the simulator is settable from
``simulate`` and ``recommend`` without touching either command. A few have a shorter spelling
as well (``--blocked-jobs``, ``--requeue``, ``--no-unowned-borrowing``), the same in both.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import typing
from collections.abc import Collection
from typing import Any

from .inputs import NeverRunnable, SimulationOptions

_PREFIX = "option_"

_ALIASES: dict[str, tuple[str, ...]] = {"requeue_place": ("--requeue",)}
"""Shorter flags beside the generated one, per field."""

_SHORTHANDS: tuple[tuple[str, str, object, str], ...] = (
    ("--blocked-jobs", "never_runnable", NeverRunnable.BLOCK.value,
     "same as --never-runnable BLOCK: a job the declaration can never run stays RUNNABLE and "
     "is reported as blocked, as in AWS (for replays of real history)"),
    ("--no-unowned-borrowing", "unowned_capacity_borrowable", False,
     "same as --no-unowned-capacity-borrowable: capacity no share owns is not borrowable"),
)
"""Flags that set one field to one value."""


def add_option_arguments(
    parser: argparse.ArgumentParser, *, skip: Collection[str] = ()
) -> None:
    """An option per :class:`SimulationOptions` field, except those in ``skip`` (a command
    that spells them its own way)."""
    group = parser.add_argument_group(
        "simulator assumptions (where AWS documents no behaviour; defaults are the library's)"
    )
    hints = typing.get_type_hints(SimulationOptions)
    for item in dataclasses.fields(SimulationOptions):
        if item.name in skip:
            continue
        flags = ("--" + item.name.replace("_", "-"), *_ALIASES.get(item.name, ()))
        kind = hints[item.name]
        default = item.default
        if kind is bool:
            group.add_argument(*flags, dest=_PREFIX + item.name, default=None,
                               action=argparse.BooleanOptionalAction,
                               help=f"(default: {'on' if default else 'off'})")
        elif isinstance(kind, type) and issubclass(kind, enum.Enum):
            group.add_argument(*flags, dest=_PREFIX + item.name, default=None,
                               choices=[member.value for member in kind],
                               help=f"(default: {getattr(default, 'value', default)})")
        else:
            group.add_argument(*flags, dest=_PREFIX + item.name, default=None,
                               type=_converter(kind), help=f"(default: {default})")
    for flag, name, value, text in _SHORTHANDS:
        if name not in skip:
            group.add_argument(flag, dest=_PREFIX + name, action="store_const", const=value,
                               help=text)


def options_from(args: argparse.Namespace, **fixed: Any) -> SimulationOptions:
    """The options given on the command line; ``fixed`` (from hand-written options) wins."""
    hints = typing.get_type_hints(SimulationOptions)
    chosen: dict[str, Any] = {}
    for item in dataclasses.fields(SimulationOptions):
        value = getattr(args, _PREFIX + item.name, None)
        if value is None:
            continue
        kind = hints[item.name]
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            value = kind(value)
        chosen[item.name] = value
    return SimulationOptions(**{**chosen, **fixed})


def describe_options(options: SimulationOptions) -> dict[str, Any]:
    """The options as JSON-ready values (enum values as their strings)."""
    return {
        item.name: getattr(getattr(options, item.name), "value", getattr(options, item.name))
        for item in dataclasses.fields(options)
    }


def _converter(kind: Any) -> Any:
    if kind in (int, float, str):
        return kind
    return str
