"""What the live commands' command lines have in common: options, progress, errors, exit codes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from quota_constructs.cli.parsing import OneLineParser, error_line
from quota_constructs.model import QuotaConfigError
from quota_constructs.runtime.batch_gateway import BatchRequestError
from quota_constructs.runtime.preemption import two_clock_units
from quota_constructs.wire.monitoring_contract import DEFAULT_MAX_SNAPSHOT_AGE_SECONDS

from .queue_reader import LiveQueueError, QueueReader, readable_error

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

OK, REFUSED, ERROR, CANNOT_TELL = 0, 1, 2, 3
"""Exit statuses: answered; ``preview``: the deployment would be refused; any error; ``preview``:
whether the deployment would be refused cannot be told (distinct from refused)."""


def parser(prog: str, description: str, *, queue_required: bool = True
           ) -> argparse.ArgumentParser:
    """A parser with ``--queue``, ``--json``, ``--profile`` and ``--region``; its errors are one
    line."""
    result = OneLineParser(prog=prog, description=description)
    result.add_argument("--queue", required=queue_required, help="the job queue's name or ARN")
    result.add_argument("--json", action="store_true", help="print JSON for scripts")
    result.add_argument("--profile", help="AWS profile (default: AWS_PROFILE, else the default "
                        "profile)")
    result.add_argument("--region", help="AWS region (default: AWS_REGION, else "
                        "AWS_DEFAULT_REGION, else the profile's region)")
    return result


def add_unowned_borrowing(parser: argparse.ArgumentParser) -> None:
    """``--no-unowned-borrowing``: the rules model's other reading of capacity no share owns."""
    parser.add_argument("--no-unowned-borrowing", dest="unowned_capacity_borrowable",
                        action="store_false",
                        help="capacity no share owns is not borrowable (AWS's 'idle capacity "
                        "from other shares' taken literally; default: borrowable, as the "
                        "synth summary and simulate assume)")


def add_max_snapshot_age(parser: argparse.ArgumentParser) -> None:
    """``--max-snapshot-age``: how old AWS Batch's snapshot may be before the command says its
    figures may be out of date (the monitoring's limit by default)."""
    parser.add_argument("--max-snapshot-age", type=int, default=DEFAULT_MAX_SNAPSHOT_AGE_SECONDS,
                        metavar="SECONDS",
                        help="say so when the queue's snapshot was last updated longer ago "
                             f"than this (default {DEFAULT_MAX_SNAPSHOT_AGE_SECONDS}, the "
                             "monitoring's limit)")


def max_snapshot_age(options: argparse.Namespace) -> int:
    """``--max-snapshot-age``, checked before any AWS call."""
    seconds: int = options.max_snapshot_age
    if seconds < 1:
        raise LiveQueueError(f"--max-snapshot-age got {seconds}; allowed: a whole number of "
                             "seconds, at least 1")
    return seconds


def stale_snapshot_line(warning: str, figures: str) -> str:
    """The line a command prints under figures read from a snapshot that may be out of date."""
    return f"the queue's snapshot may be out of date ({warning}): {figures} are as of then."


def age_text(seconds: float) -> str:
    """A wait or an age as a person reads it: ``2m 0s``, ``1h 5m``, ``3d 2h``."""
    return two_clock_units(int(seconds), ((86400, "d"), (3600, "h"), (60, "m"), (1, "s")))


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def connect(options: argparse.Namespace) -> QueueReader:
    return QueueReader.connect(profile=options.profile, region=options.region, progress=progress)


def json_of(record: DataclassInstance, *, when_set: Collection[str] = (),
            spread: str | None = None) -> dict[str, Any]:
    """A result record as ``--json`` prints it: its fields in order, tuples as lists, the
    ``when_set`` fields only when not None, and the ``spread`` field's keys in its place.
    One rule for every command's records, so their JSON is shaped alike."""
    result: dict[str, Any] = {}
    for item in fields(record):
        value = getattr(record, item.name)
        if item.name == spread:
            result.update(value)
        elif value is not None or item.name not in when_set:
            result[item.name] = _plain(value)
    return result


def _plain(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    return dict(value) if isinstance(value, Mapping) else value


def run(prog: str, command: Callable[[], int]) -> int:
    """Run ``command``; any failure is one line on stderr and exit status 2."""
    try:
        return command()
    except BatchRequestError as error:
        failure: Exception = readable_error(error)
    except (LiveQueueError, QuotaConfigError) as error:
        failure = error
    except KeyboardInterrupt:
        failure = LiveQueueError("interrupted")
    print(error_line(prog, failure), file=sys.stderr)
    return ERROR
