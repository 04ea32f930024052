"""Recognise CDK tokens without importing aws_cdk.

Values that are only known at deploy time (parameters, imported attributes) reach the model as
encoded tokens. They cannot be validated at synth time, so every rule skips them.
"""

from __future__ import annotations

from typing import Any

_STRING_TOKEN_MARKERS = ("${Token[", "#{Token[")
# aws-cdk encodes number tokens as doubles near -1.8881545897087e+289 (see
# aws-cdk-lib/core/lib/private/encoding.ts); no real capacity or priority is anywhere near.
_NUMBER_TOKEN_CEILING = -1e288


def is_unresolved(value: Any) -> bool:
    """True when ``value`` is (or contains) a CDK token that resolves only at deploy time."""
    if isinstance(value, str):
        return any(marker in value for marker in _STRING_TOKEN_MARKERS)
    if isinstance(value, float):
        return value <= _NUMBER_TOKEN_CEILING
    if isinstance(value, (list, tuple)):
        return any(is_unresolved(item) for item in value)
    return False
