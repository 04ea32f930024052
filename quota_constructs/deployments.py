"""Choosing deployment environments with ``-c env=NAME``, for any CDK app.

An app declares its environments once (a mapping of name to whatever describes one) and
builds the ones the context selects: all of them without ``-c env=...``, exactly the one named
with it, and an unknown name fails naming the known ones. The same works when the app is run
directly (``python app.py -c env=prod``): :func:`app_settings` gives ``App`` the context the
CDK CLI would (``cdk.json``'s plus the ``-c`` flags) and ``cdk.out``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    # Only a type: reading flags and choosing environments must not start the jsii runtime.
    from constructs import IConstruct

ENVIRONMENT_CONTEXT_KEY: Final = "env"
LIBRARY_CONTEXT_KEYS: Final = ("quota_constructs:unownedCapacityBorrowable",)
"""Context keys the library's constructs read (``_share_ledger.UNOWNED_CAPACITY_CONTEXT``)."""
CLI_MARKERS: Final = ("CDK_OUTDIR", "CDK_CONTEXT_JSON")
"""Environment variables the CDK CLI sets for the app it runs."""

T = TypeVar("T")


class UnknownEnvironmentError(KeyError):
    """``-c env=NAME`` named no declared environment."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        self.name = name
        self.known = list(known)
        super().__init__(name)

    def __str__(self) -> str:
        return f"unknown deployment environment {self.name!r}; known: {', '.join(self.known)}"


class UnknownContextKeyError(UnknownEnvironmentError):
    """A context key the app does not read but that looks meant for one it does (``-c
    enviroment=prod``): without it, every environment would be built."""

    def __init__(self, key: str, value: object, context_key: str, known_keys: Sequence[str],
                 environments: Sequence[str]) -> None:
        super().__init__(str(value), environments)
        self.key, self.value = key, value
        self.context_key, self.known_keys = context_key, list(known_keys)

    def __str__(self) -> str:
        meant = (f"; to choose a deployment environment: -c {self.context_key}={self.value}"
                 if isinstance(self.value, str) and self.value in self.known else "")
        return (f"unknown context key {self.key!r} (-c {self.key}={self.value}){meant}; "
                f"known keys: {', '.join(self.known_keys)}")


def check_context_keys(
    context: Mapping[str, Any], environments: Mapping[str, Any], *,
    context_key: str = ENVIRONMENT_CONTEXT_KEY, known_keys: Sequence[str] = (),
) -> None:
    """Refuse a context key that looks like a mistyped known one (:class:`UnknownContextKeyError`).

    A CDK app's context holds many keys it never reads (cdk.json's feature flags, the CLI's
    own, lookups, ``acknowledged-issue-numbers``), so an unknown key alone is not a mistake.
    One is taken for a typo when the app reads no key of that name and it
    - names a declared environment (``-c enviroment=prod``, ``-c stage=prod``), or
    - starts like the environment key (``environment``, ``ENV``), or
    - is spelled within a few letters of a key the app or the library reads.
    """
    known = list(dict.fromkeys((context_key, *known_keys, *LIBRARY_CONTEXT_KEYS)))
    lowered = {key.lower(): key for key in known}
    for key, value in context.items():
        if key in known:
            continue
        names_environment = isinstance(value, str) and value in environments
        like_the_key = key.lower().startswith(context_key.lower())
        close = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.8)
        if names_environment or like_the_key or close:
            raise UnknownContextKeyError(key, value, context_key, known, sorted(environments))


def select_environments(environments: Mapping[str, T], name: str | None) -> list[T]:
    """Every environment (in declaration order) when ``name`` is None, else exactly the one
    named; :class:`UnknownEnvironmentError` for a name not declared."""
    if name is None:
        return list(environments.values())
    if not isinstance(name, str) or name not in environments:
        raise UnknownEnvironmentError(str(name), sorted(environments))
    return [environments[name]]


def environments_from_context(
    scope: IConstruct, environments: Mapping[str, T], *,
    context_key: str = ENVIRONMENT_CONTEXT_KEY, known_keys: Sequence[str] = (),
) -> dict[str, T]:
    """The environments ``-c <context_key>=NAME`` selects in ``scope``'s app, by name: all of
    them without it, the one named with it; :class:`UnknownEnvironmentError` (its message
    names the known ones) for a name not declared, and :class:`UnknownContextKeyError` for a
    mistyped context key (:func:`check_context_keys`; ``known_keys``: the app's own others)."""
    check_context_keys(scope.node.get_all_context(), environments, context_key=context_key,
                       known_keys=known_keys)
    selected = scope.node.try_get_context(context_key)
    if selected is None:
        return dict(environments)
    (chosen,) = select_environments(environments, str(selected))
    return {str(selected): chosen}


def app_settings(
    argv: Sequence[str], environ: Mapping[str, str], *, cdk_json: str | Path = "cdk.json"
) -> dict[str, Any]:
    """Keyword arguments for ``App`` that make ``python app.py [-c key=value ...]`` behave
    like ``cdk synth``: empty under the CDK CLI (which passes context and output directory
    itself); otherwise ``cdk_json``'s context (its feature flags) plus the ``-c`` flags, and
    ``cdk.out`` beside ``cdk_json``."""
    if any(marker in environ for marker in CLI_MARKERS):
        return {}
    path = Path(cdk_json)
    context: dict[str, Any] = {}
    if path.exists():
        context.update(json.loads(path.read_text(encoding="utf-8")).get("context", {}))
    context.update(parse_context_flags(argv))
    return {"context": context, "outdir": str(path.resolve().parent / "cdk.out")}


def parse_context_flags(argv: Sequence[str]) -> dict[str, str]:
    """``-c key=value`` / ``--context key=value`` pairs, as the CDK CLI accepts them;
    ``SystemExit`` with a one-line message for anything else."""
    flags: dict[str, str] = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg in ("-c", "--context"):
            if not args:
                raise SystemExit(f"error: {arg} needs key=value")
            pair = args.pop(0)
        elif arg.startswith("--context="):
            pair = arg.removeprefix("--context=")
        else:
            raise SystemExit(f"error: unexpected argument {arg!r}; use -c key=value")
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"error: context {pair!r} must be key=value")
        flags[key] = value
    return flags
