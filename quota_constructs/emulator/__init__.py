"""A local emulator of one quota-managed AWS Batch queue, for tests and rehearsals.

``quota-constructs emulate`` (or :class:`Emulator` in Python) serves a declared queue as the
AWS Batch API (REST-JSON, botocore's own service model) on 127.0.0.1, scheduling with the
simulator's engine and the library's one rules model. It is not AWS: where AWS Batch is
silent it follows the simulator's stated assumptions (:class:`SimulationOptions`).

    with Emulator(capacity_limits=..., shares=..., queue_name="training") as emu:
        batch = boto3.client("batch", endpoint_url=emu.endpoint_url, region_name="us-east-1")
        ...
        emu.advance(60)
"""

from .api import Emulator
from .clock import Clock
from .protocol import ApiError
from .service import QueueService

__all__ = ["ApiError", "Clock", "Emulator", "QueueService"]
