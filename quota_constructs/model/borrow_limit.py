"""AWS Batch's ``borrowLimit`` and what one value of it allows a share to borrow.

Below both :mod:`.share` (a spec's ``borrow_limit`` and ``ceiling_of``) and :mod:`.borrowing`
(the rules between shares), so neither has to import the other to round a percentage. The
rounding is assumption 2 of :mod:`quota_constructs.model.borrowing`, stated there with its
reason.
"""

from __future__ import annotations

import math

UNLIMITED_BORROW = -1
"""What AWS Batch calls unlimited borrowing (``borrowLimit`` of -1)."""


def borrow_allowance(own: int, borrow_limit: int | None) -> float:
    """Instances of one type a share with ``own`` of it may borrow on top, under AWS Batch's
    ``borrowLimit`` (None: the strategy does not borrow; -1: unlimited, ``math.inf``).

    The rounding rule (assumption 2 of :mod:`.borrowing`): ``floor(borrow_limit × own / 100)``."""
    if borrow_limit is None or own <= 0:
        return 0
    if borrow_limit == UNLIMITED_BORROW:
        return math.inf
    return (borrow_limit * own) // 100


def borrow_ceiling(own: int, borrow_limit: int | None) -> float:
    """The most of one type the share may ever use: its own limit plus its allowance."""
    return own + borrow_allowance(own, borrow_limit)
