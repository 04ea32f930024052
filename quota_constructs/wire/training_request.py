"""How long one attempt of a service job may hold its instances: the SageMaker
``CreateTrainingJob`` request a service job carries (``serviceRequestPayload``), read once for
the emulator (which runs each attempt that long) and the live start estimate (which bounds how
long a running job can keep its capacity).

SageMaker documents ``StoppingCondition.MaxRuntimeInSeconds`` as "the maximum length of time,
in seconds, that a training ... job can run before it is stopped"; "the default value is 1
day. The maximum value is 28 days." Each attempt of a service job is a training job of its own
(its ``serviceResourceId``), so the limit counts from the attempt's start.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

DEFAULT_MAX_RUNTIME_SECONDS: Final = 86400
"""SageMaker's default ``MaxRuntimeInSeconds`` (one day), for a request that names none."""
LONGEST_MAX_RUNTIME_SECONDS: Final = 28 * 86400
"""The most SageMaker allows (28 days)."""


def training_request(payload: object) -> Mapping[str, Any] | None:
    """The ``CreateTrainingJob`` request of a ``serviceRequestPayload`` (JSON text); None when it
    is absent or not a JSON object."""
    if not isinstance(payload, str):
        return None
    try:
        request = json.loads(payload)
    except ValueError:
        return None
    return request if isinstance(request, Mapping) else None


def max_runtime_seconds(request: Mapping[str, Any]) -> float | None:
    """``StoppingCondition.MaxRuntimeInSeconds`` of ``request``, SageMaker's default when it
    names none; None when it names one that is not a number of seconds >= 1 (SageMaker would
    refuse such a request, so no bound is known)."""
    stopping = request.get("StoppingCondition")
    if stopping is None:
        return float(DEFAULT_MAX_RUNTIME_SECONDS)
    if not isinstance(stopping, Mapping):
        return None
    runtime = stopping.get("MaxRuntimeInSeconds", DEFAULT_MAX_RUNTIME_SECONDS)
    if isinstance(runtime, bool) or not isinstance(runtime, int | float) or not runtime >= 1:
        return None
    return float(runtime)
