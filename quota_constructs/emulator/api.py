"""The emulator as a context manager, for a team's tests of its submission code."""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Self

from ..model import CapacityLimit, QuotaShareSpec
from ..simulation.inputs import SimulationOptions
from .clock import Clock, Start
from .server import EmulatorServer
from .service import QueueService

DEFAULT_QUEUE_NAME = "emulated-training-queue"


class Emulator:
    """One declared queue served on ``127.0.0.1`` while the ``with`` block runs.

    ``declaration`` is any object (or mapping) with ``capacity_limits`` and ``shares``, and
    optionally ``queue_name``; or pass ``capacity_limits`` and ``shares`` directly. With
    ``set_environment`` the standard boto3 variable ``AWS_ENDPOINT_URL_BATCH`` (and a region
    and dummy credentials, when none are set) point every boto3 client at it until exit.

        with Emulator(declaration, queue_name="training") as emu:
            job_id = submit_my_job()          # your code, with boto3 as usual
            emu.advance(60)                   # a scheduling pass, 60 emulated seconds later
            emu.finish(job_id, "SUCCEEDED")
            emu.events()                      # the EventBridge events so far
    """

    def __init__(
        self, declaration: Any = None, *, capacity_limits: Sequence[CapacityLimit] | None = None,
        shares: Sequence[QuotaShareSpec] | None = None, queue_name: str | None = None,
        clock: str | Clock = "manual", speed: float = 1.0, start: Start = None,
        options: SimulationOptions | None = None,
        port: int = 0, region: str = "us-east-1", set_environment: bool = False,
    ) -> None:
        if declaration is not None:
            capacity_limits = capacity_limits or _field(declaration, "capacity_limits")
            shares = shares or _field(declaration, "shares")
            queue_name = queue_name or _field(declaration, "queue_name", None)
        if capacity_limits is None or shares is None:
            raise ValueError("Emulator: a declaration (capacity_limits and shares) is required")
        self.service = QueueService(
            capacity_limits=capacity_limits, shares=shares,
            queue_name=queue_name or DEFAULT_QUEUE_NAME,
            clock=clock if isinstance(clock, Clock) else Clock(clock, speed=speed, start=start),
            options=options, region=region,
        )
        self._port = port
        self._set_environment = set_environment
        self._saved: dict[str, str | None] = {}
        self._server: EmulatorServer | None = None

    @property
    def endpoint_url(self) -> str:
        if self._server is None:
            raise RuntimeError("Emulator: not started (use it in a with block)")
        return self._server.endpoint_url

    @property
    def queue_name(self) -> str:
        return self.service.queue_name

    @property
    def queue_arn(self) -> str:
        return self.service.queue_arn

    def start(self) -> Self:
        self._server = EmulatorServer(self.service, self._port).start()
        if self._set_environment:
            wanted = {"AWS_ENDPOINT_URL_BATCH": self.endpoint_url}
            for key, value in (("AWS_DEFAULT_REGION", self.service.region),
                               ("AWS_ACCESS_KEY_ID", "emulator"),
                               ("AWS_SECRET_ACCESS_KEY", "emulator")):
                if not os.environ.get(key) and not (
                    key == "AWS_DEFAULT_REGION" and os.environ.get("AWS_REGION")
                ):
                    wanted[key] = value
            for key, value in wanted.items():
                self._saved[key] = os.environ.get(key)
                os.environ[key] = value
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved.clear()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    def advance(self, seconds: float = 0) -> float:
        """Move the emulated clock by ``seconds`` and run scheduling; the new time (seconds
        since start)."""
        return self.service.advance(seconds)

    def finish(self, job_id: str, status: str = "SUCCEEDED") -> dict[str, Any]:
        """End a dispatched job (id or ARN) now; its DescribeServiceJob answer."""
        return self.service.finish(job_id, status)

    def events(self, since: int = 0) -> list[dict[str, Any]]:
        """The EventBridge events emitted so far (from the ``since``-th)."""
        return self.service.events_since(since)

    @property
    def now(self) -> float:
        """Emulated seconds since start."""
        return self.service.synced

    @property
    def now_ms(self) -> int:
        """The emulated time, in milliseconds since the epoch (as ``createdAt`` and every other
        time the emulator answers with)."""
        return self.service.ms(self.service.synced)

    @property
    def start_ms(self) -> int:
        """When emulated time started, in milliseconds since the epoch."""
        return self.service.clock.start_ms


def _field(declaration: Any, name: str, *default: Any) -> Any:
    if isinstance(declaration, dict):
        return declaration.get(name, *default) if default else declaration[name]
    return getattr(declaration, name, *default)
