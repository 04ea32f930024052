"""Deprecated names warn once per process, naming their replacement and the release that removes
them (the same release the changelog lists)."""

from __future__ import annotations

import warnings

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
