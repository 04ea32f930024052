"""``quota-constructs emulate``: serve a declared queue as the AWS Batch API on 127.0.0.1.

    quota-constructs emulate --env dev
    quota-constructs emulate --declaration my_platform.quotas:TRAINING --queue-name training \\
        --port 0 --clock manual

The first line of stdout is the endpoint URL (``http://127.0.0.1:PORT``): point boto3 at it
with ``AWS_ENDPOINT_URL_BATCH``. Serves until SIGTERM or Ctrl-C, then exits 0. The simulator's
assumption flags choose what the emulator does where AWS Batch documents nothing.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from types import FrameType

from ..cli.declarations import add_declaration_arguments, load
from ..cli.parsing import OneLineParser, error_line
from ..model import QuotaConfigError
from ..simulation.options_cli import add_option_arguments, options_from
from .api import DEFAULT_QUEUE_NAME
from .clock import Clock, parse_start
from .protocol import ApiError
from .server import EmulatorServer
from .service import QueueService

DEFAULT_PORT = 8555


def parser(prog: str) -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=prog,
        description="Serve a declared quota-managed queue as the AWS Batch API on 127.0.0.1 "
                    "(an emulator, not AWS: where AWS is silent it follows the simulator's "
                    "assumptions).",
    )
    add_declaration_arguments(p)
    p.add_argument("--queue-name", default=None,
                   help="the job queue's name (default: the declaration's queue_name, else "
                        f"{DEFAULT_QUEUE_NAME})")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 takes a free port)")
    p.add_argument("--clock", choices=("wall", "manual"), default="wall",
                   help="wall: emulated time runs at --speed times real time; manual: it moves "
                        "only by POST /_emulator/advance (default wall)")
    p.add_argument("--speed", type=float, default=1.0,
                   help="emulated seconds per real second under the wall clock (default 1)")
    p.add_argument("--start", default=None, metavar="ISO",
                   help="when emulated time starts, e.g. 2026-05-04T09:00:00Z (UTC when no "
                        "offset is given; default: now)")
    p.add_argument("--region", default="us-east-1", help="region in ARNs (default us-east-1)")
    # A job the declaration can never run stays RUNNABLE with AWS's MISCONFIGURATION reason,
    # as in AWS: refusing it is not the emulator's to choose.
    add_option_arguments(p, skip=("never_runnable",))
    return p


def main(argv: Sequence[str] | None = None, *, prog: str = "quota-constructs emulate") -> int:
    args = parser(prog).parse_args(argv)
    try:
        declaration = load(args, command="emulate")
        if args.port < 0 or args.port > 65535:
            raise QuotaConfigError("emulate", "--port", args.port, "0 (a free port) to 65535")
        if not args.speed > 0:
            raise QuotaConfigError("emulate", "--speed", args.speed, "a number > 0")
        start = None if args.start is None else parse_start(args.start)
        service = QueueService(
            capacity_limits=declaration.capacity_limits, shares=declaration.shares,
            queue_name=args.queue_name or declaration.queue_name or DEFAULT_QUEUE_NAME,
            clock=Clock(args.clock, speed=args.speed, start=start), options=options_from(args),
            region=args.region,
            lifecycles=dict(declaration.lifecycles),
        )
        server = EmulatorServer(service, args.port)
    except (QuotaConfigError, ApiError, ValueError) as error:
        print(error_line(prog, error), file=sys.stderr)
        return 2
    except OSError as error:
        print(f"{prog}: error: --port {args.port}: cannot listen on 127.0.0.1 ({error})",
              file=sys.stderr)
        return 2
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    server.start()
    print(server.endpoint_url, flush=True)
    print(f"{prog}: queue {service.queue_name} ({service.queue_arn}) of {declaration.name}, "
          f"{len(service.shares)} shares, {args.clock} clock from {_iso(service.clock.start_ms)}"
          "; not AWS. Shares recorded as "
          f"deployed by stack {service.stack_id} (preview --stack-id). "
          f"AWS_ENDPOINT_URL_BATCH={server.endpoint_url}; stop with Ctrl-C",
          file=sys.stderr, flush=True)
    while not stop.wait(0.2):
        pass
    server.stop()
    return 0


def _iso(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")
