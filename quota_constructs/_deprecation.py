"""Deprecated names warn once per process, naming their replacement and the release that removes
them (the same release the changelog lists)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from aws_cdk import Annotations
from constructs import Construct

_Alias = TypeVar("_Alias", bound=type[Construct])

_warned: set[str] = set()


def warn_deprecated(old: str, new: str, removed_in: str, *, stacklevel: int = 3) -> None:
    """A ``DeprecationWarning`` for ``old`` the first time it is used in this process.

    Once, because an app that builds many stacks would otherwise repeat it per construct; the
    CDK annotation a deprecated construct adds still marks every place it is used.
    """
    if old in _warned:
        return
    _warned.add(old)
    warnings.warn(
        f"{old} is deprecated and will be removed in quota-constructs {removed_in}: use {new} "
        "(the same behaviour and template)",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def deprecated_construct(
    old: str, new: str, removed_in: str, *, warning_id: str
) -> Callable[[_Alias], _Alias]:
    """Mark a construct class kept under its former name ``old``: each one created warns
    (:func:`warn_deprecated`) and carries a CDK warning annotation ``warning_id``.

    The class keeps its replacement's constructor, signature included, so the alias never
    restates (and never drifts from) the props of the construct it stands for.
    """

    def decorate(alias: _Alias) -> _Alias:
        construct = alias.__init__

        @functools.wraps(construct)
        def __init__(self: Construct, *args: Any, **kwargs: Any) -> None:
            warn_deprecated(old, new, removed_in)
            construct(self, *args, **kwargs)
            Annotations.of(self).add_warning_v2(
                warning_id, f"{old} is deprecated: use {new} (same construct, same template)."
            )

        alias.__init__ = __init__  # type: ignore[method-assign]
        return alias

    return decorate
