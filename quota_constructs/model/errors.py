"""The one error type every validation in the library raises."""

from __future__ import annotations

from typing import Any


class QuotaConfigError(ValueError):
    """A quota-management declaration that AWS Batch would reject or that would misbehave.

    The message always names what is wrong (``subject``: a quota share, a queue or an
    environment), the ``field``, the ``value`` received and what is ``allowed``, so a platform
    engineer can fix the declaration without reading the AWS Batch API reference.
    """

    def __init__(self, subject: str, field: str, value: Any, allowed: str) -> None:
        self.subject = subject
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{subject}: {field} got {value!r}; allowed: {allowed}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.subject, self.field, self.value, self.allowed))
