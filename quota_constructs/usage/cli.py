"""``quota-constructs usage``: what each share used, borrowed, lent and lost over a window.

    quota-constructs usage --history jobs.csv --declaration my_platform.quotas:PROD \\
        [--prices prices.csv] [--since 2026-11-01T00:00:00Z] [--until 2026-12-01T00:00:00Z] \\
        [--half-life 7d] [--ledger s3://bucket/job-ledger/gpu-prod] --out usage/

Every option is checked before anything is read; an error is one line (exit status 2).
``--history`` may be repeated (exports joined: a job in several is one job) and combined with
``--ledger``; at least one of them is needed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from ..cli import declarations
from ..cli.parsing import OneLineParser
from ..model import QuotaConfigError
from . import write_usage
from .figures import DEFAULT_HALF_LIFE_HOURS, default_window, measure
from .inputs import HALF_LIFE_SYNTAX, INSTANT_SYNTAX, parse_half_life, parse_instant, read_prices
from .jobs import JobTable, UsageInputError, merge_records, read_history

OK, ERROR = 0, 2


def parser(prog: str) -> argparse.ArgumentParser:
    p = OneLineParser(prog=prog, description="What each quota share used, borrowed, lent and "
                      "lost, in instance-hours and money, from a queue's recorded history: "
                      "usage.json, usage.csv and report.html.")
    p.add_argument("--history", action="append", type=Path, default=[], metavar="FILE",
                   help="a quota-constructs history export (.csv or .json); repeatable")
    p.add_argument("--ledger", metavar="S3_URL",
                   help="the job ledger's folder of the queue, s3://BUCKET/PREFIX/QUEUE "
                   "(QuotaShareMonitoring(job_ledger=True))")
    declarations.add_declaration_arguments(p)
    p.add_argument("--prices", type=Path, metavar="FILE.csv",
                   help="price per instance-hour: a CSV with the header "
                   "instance_type,price_per_hour (no prices: cost is null)")
    p.add_argument("--since", help=f"the window's start, {INSTANT_SYNTAX} (default: the "
                   "first submission)")
    p.add_argument("--until", help=f"the window's end, {INSTANT_SYNTAX} (default: the last "
                   "attempt's end; a running attempt's: the export's moment)")
    p.add_argument("--half-life", default=None,
                   help=f"fair share's half-life, {HALF_LIFE_SYNTAX} (default "
                   f"{DEFAULT_HALF_LIFE_HOURS / 24:g}d, Slurm's)")
    p.add_argument("--no-unowned-borrowing", dest="unowned_capacity_borrowable",
                   action="store_false",
                   help="capacity no share owns is not borrowable (the rules model's other "
                   "reading; default: borrowable, and borrowed before any lender's)")
    p.add_argument("--out", type=Path, required=True, help="directory for the three files")
    p.add_argument("--title", default="Quota share usage", help="the report's title")
    p.add_argument("--json", action="store_true", help="print a JSON summary for scripts")
    p.add_argument("--profile", help="AWS profile for --ledger")
    p.add_argument("--region", help="AWS region for --ledger")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def main(argv: Sequence[str] | None = None, *, prog: str = "quota-constructs usage",
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out_stream, err_stream = stdout or sys.stdout, stderr or sys.stderr
    options = parser(prog).parse_args(argv)

    def note(message: str) -> None:
        if not options.quiet:
            print(message, file=err_stream, flush=True)

    try:
        return _run(options, prog, note, out_stream)
    except (UsageInputError, QuotaConfigError) as error:
        message = str(error)
    except OSError as error:
        message = f"{error.strerror or error}: {error.filename or ''}".strip(": ")
    except KeyboardInterrupt:
        message = "interrupted"
    print(f"{prog}: error: {' '.join(message.split())}", file=err_stream)
    return ERROR


def _run(options: argparse.Namespace, prog: str, note: Callable[[str], None],
         out: TextIO) -> int:
    # Every option first: a mistake is reported before any file or bucket is read.
    if not options.history and not options.ledger:
        raise UsageInputError("give --history FILE (a quota-constructs history export) or "
                              "--ledger s3://BUCKET/PREFIX/QUEUE, or both")
    since = parse_instant(options.since, "--since") if options.since else None
    until = parse_instant(options.until, "--until") if options.until else None
    if since is not None and until is not None and until <= since:
        raise UsageInputError(f"--until {options.until} is not after --since {options.since}; "
                              "allowed: a window that ends after it starts")
    half_life = (parse_half_life(options.half_life) if options.half_life is not None
                 else DEFAULT_HALF_LIFE_HOURS)
    if options.out.exists() and not options.out.is_dir():
        raise UsageInputError(f"--out got {str(options.out)!r}; allowed: a directory")
    location = None
    if options.ledger:
        from .ledger import parse_location
        location = parse_location(options.ledger)
    declaration = declarations.load(options, command="usage")
    prices = read_prices(options.prices) if options.prices else None

    table = JobTable()
    sources = []
    for path in options.history:
        started = time.monotonic()
        read_history(path, table)
        sources.append(str(path))
        note(f"read {path}: {len(table):,} jobs so far ({time.monotonic() - started:.1f} s)")
    if location is not None:
        from .ledger import read_ledger, s3_client
        client = s3_client(profile=options.profile, region=options.region)
        merge_records(table, read_ledger(client, location, since_ms=since, progress=note))
        sources.append(location.url)
    if prices is not None:
        _check_prices(prices, declaration.capacity_limits, table)
    window = default_window(table, since_ms=since, until_ms=until)
    started = time.monotonic()
    result = measure(table, capacity_limits=declaration.capacity_limits,
                     shares=declaration.shares, window=window, half_life_hours=half_life,
                     prices=prices,
                     unowned_capacity_borrowable=options.unowned_capacity_borrowable)
    note(f"measured {len(table):,} jobs in {time.monotonic() - started:.1f} s")
    if prices is not None:
        unpriced = [unit for unit in result.instance_types if unit not in prices]
        if unpriced:
            note(f"no price for {', '.join(unpriced)}: their cost is null")
    files = write_usage(options.out, result, capacity_limits=declaration.capacity_limits,
                        shares=declaration.shares, title=options.title, sources=sources)
    summary = {"out": str(options.out), "jobs": len(table),
               "window": {"start": window.start_ms, "end": window.end_ms,
                          "hours": window.hours},
               "files": [str(files.json), str(files.csv), str(files.html)]}
    if options.json:
        print(json.dumps(summary, indent=2), file=out)
    else:
        print(f"wrote {files.json}, {files.csv} ({files.rows} rows) and {files.html}: "
              f"{len(table):,} jobs over {window.hours:,.1f} hours", file=out)
    return OK


def _check_prices(prices: dict[str, float], capacity_limits: Sequence[object],
                  table: JobTable) -> None:
    """A price for a type neither the environment nor the history has is a typo, said now."""
    known = {str(getattr(limit, "capacity_unit", "")) for limit in capacity_limits}
    known |= set(table.types)
    strangers = [unit for unit in prices if unit not in known]
    if strangers:
        raise UsageInputError(
            f"--prices names {', '.join(strangers)}, which neither the environment nor the "
            f"history has; allowed: {', '.join(sorted(known - {''}))}")
