"""The failure the handler reports to CloudFormation with its message as the reason."""

from __future__ import annotations


class QuotaShareLifecycleError(Exception):
    """A step of the quota-share lifecycle refused or failed; the message says why and what to do.

    The Provider framework forwards the message of whatever ``on_event`` or ``is_complete``
    raises to CloudFormation, so every message is written for the person reading the stack
    events, not for a developer reading a traceback.
    """
