"""``python3 dev.py simulate``: replay a workload against a declaration and write a report.

    python3 dev.py simulate                                  # dev environment, synthetic week
    python3 dev.py simulate --env prod --synthetic --jobs 100000 --hours 720 --seed 3
    python3 dev.py simulate --env dev --workload examples/workloads/walkthrough.csv
    python3 dev.py simulate --declaration my_platform.quotas:TRAINING --workload jobs.json

The declaration is a deployment environment of ``stacks/environments.py`` (``--env``) or any
object with ``capacity_limits`` and ``shares`` (``--declaration module:attribute``, or
``path/to/file.py:attribute``): read by every command's one loader,
:mod:`quota_constructs.cli.declarations`, which documents the shape.
Progress goes to stderr; the report's paths and its one-line summary to stdout.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..cli.declarations import (
    Declaration,
    add_declaration_arguments,
    declaration_of,
    environment,
    load,
    resolve,
)
from ..cli.parsing import OneLineParser
from ..model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from . import compare_policies
from .inputs import NeverRunnable, SimulationOptions
from .options_cli import add_option_arguments, options_from
from .report import write_report
from .report.summary import findings
from .workloads import (
    Workload,
    WorkloadError,
    default_traffic,
    iter_synthetic,
    read_workload,
    write_workload,
)

DEFAULT_OUT = "simulation-report"
SYNTHETIC_DEFAULTS = {"jobs": 500, "hours": 168.0, "seed": 1, "load": 0.7}
"""The synthetic workload's options: given with ``--workload`` they are an error, not ignored."""
# The declaration loader and its shape are every command's (quota_constructs.cli.declarations);
# these names stay importable from here.
__all__ = ["Declaration", "add_declaration_arguments", "declaration_of", "environment", "main",
           "parser", "resolve"]


class Progress:
    """Percent done and elapsed time on stderr: rewritten in place on a terminal, otherwise a
    line every two seconds per task and one when it finishes (CI logs stay short)."""

    INTERVAL = 2.0
    """Seconds between two lines for one task: short runs print only their last line."""

    def __init__(self, stream: TextIO, *, quiet: bool = False) -> None:
        self.stream = stream
        self.quiet = quiet
        self.live = stream.isatty()
        self.started = time.monotonic()
        self.last: dict[str, float] = {}
        self.open_line = False

    def note(self, message: str) -> None:
        if not self.quiet:
            self._end_line()
            print(f"[{self.elapsed()}] {message}", file=self.stream, flush=True)

    def step(self, label: str, done: int, total: int) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        finished = done >= total
        if finished and self.last.get(label) == math.inf:
            return
        interval = 0.2 if self.live else self.INTERVAL
        if not finished and now - self.last.setdefault(label, now) < interval:
            return
        self.last[label] = math.inf if finished else now
        percent = 100 if total <= 0 else min(100, done * 100 // total)
        text = f"[{self.elapsed()}] {label}: {percent:3d} % ({done:,} of {total:,})"
        if self.live:
            print("\r" + text, end="\n" if finished else "", file=self.stream, flush=True)
            self.open_line = not finished
        else:
            print(text, file=self.stream, flush=True)

    def elapsed(self) -> str:
        return f"{time.monotonic() - self.started:6.1f} s"

    def _end_line(self) -> None:
        if self.open_line:
            print(file=self.stream)
            self.open_line = False


@dataclass(frozen=True)
class CommandRun:
    """One run of a simulator command (simulate, recommend): its parsed arguments, where its
    result (``out``) and its progress and errors (``err``) go."""

    args: argparse.Namespace
    out: TextIO
    err: TextIO
    progress: Progress

    @classmethod
    def start(cls, parser: argparse.ArgumentParser, argv: Sequence[str] | None,
              stdout: TextIO | None, stderr: TextIO | None) -> CommandRun:
        """``argv`` parsed (the command's ``--quiet`` silences progress); sys.stdout and
        sys.stderr unless other streams are given."""
        err = stderr or sys.stderr
        args = parser.parse_args(argv)
        return cls(args, stdout or sys.stdout, err, Progress(err, quiet=args.quiet))

    def fail(self, message: str, *notes: str) -> int:
        """Exit status 2 after the error, and each note under it in parentheses, on stderr:
        always shown, --quiet or not, as the reason for the status."""
        self.progress.note("stopped")
        print(f"error: {message}", file=self.err)
        for note in notes:
            print(f"  ({note})", file=self.err)
        return 2


def command_parser(prog: str, description: str) -> OneLineParser:
    """A simulator command's parser, with the declaration arguments every command takes."""
    p = OneLineParser(prog=prog, description=description)
    add_declaration_arguments(p)
    return p


def finish_command_parser(p: OneLineParser) -> OneLineParser:
    """``p`` with what every simulator command's arguments end with: ``--quiet`` and every
    assumption where AWS is silent, derived from SimulationOptions."""
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_option_arguments(p)
    return p


def alternatives_of(
    references: Sequence[str],
) -> dict[str, tuple[Sequence[CapacityLimit], Sequence[QuotaShareSpec]]]:
    """``--compare [NAME=]MODULE:ATTRIBUTE`` values as named declarations."""
    found: dict[str, tuple[Sequence[CapacityLimit], Sequence[QuotaShareSpec]]] = {}
    for text in references:
        name, sep, reference = text.partition("=")
        if not sep:
            name, reference = text, text
        if name in found:
            raise QuotaConfigError("simulate", "--compare", text, "a name used once")
        declaration = declaration_of(reference, name, option="--compare")
        found[name] = (declaration.capacity_limits, declaration.shares)
    return found


def parser(prog: str = "quota-constructs simulate") -> argparse.ArgumentParser:
    p = command_parser(prog, "Replay a workload against a quota-share declaration, a hard "
                       "partition and one shared pool; write an HTML report, metrics.json and "
                       "a per-job CSV.")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--workload", type=Path, metavar="FILE",
                      help="a .csv or .json job list (format: quota_constructs.simulation"
                      ".workloads.files)")
    what.add_argument("--synthetic", action="store_true",
                      help="generate the workload (the default without --workload)")
    p.add_argument("--jobs", type=int, help="synthetic: number of jobs (500)")
    p.add_argument("--hours", type=float,
                   help="synthetic: hours over which they arrive (168, a week)")
    p.add_argument("--seed", type=int, help="synthetic: random seed (1)")
    p.add_argument("--load", type=float,
                   help="synthetic: demand scale (0.7); 1.0 = borrowers ask 1.5×, lenders 0.7×, "
                   "reservers 0.5× their allocation")
    p.add_argument("--save-workload", type=Path, metavar="FILE",
                   help="also write the (synthetic) workload to this .csv or .json file")
    p.add_argument("--compare", action="append", default=[], metavar="[NAME=]MODULE:ATTRIBUTE",
                   help="also replay another declaration (capacity_limits and shares) on the "
                   "same jobs, named NAME (default: the reference) in the report and "
                   "metrics.json (repeatable)")
    p.add_argument("--out", type=Path, default=Path(DEFAULT_OUT),
                   help=f"output directory ({DEFAULT_OUT}/)")
    p.add_argument("--title", default=None, help="report title")
    return finish_command_parser(p)


def main(argv: Sequence[str] | None = None, *, prog: str = "quota-constructs simulate",
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    run = CommandRun.start(parser(prog), argv, stdout, stderr)
    args, progress = run.args, run.progress
    given = [f"--{name}" for name in SYNTHETIC_DEFAULTS if getattr(args, name) is not None]
    if args.workload is not None and given:
        print(f"error: simulate: {', '.join(given)} only shape a synthetic workload, but the "
              f"jobs come from --workload {args.workload}; drop {', '.join(given)} or "
              "--workload", file=run.err)
        return 2
    for name, default in SYNTHETIC_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    options = options_from(args)
    try:
        declaration = load(args, command="simulate")
        # Every compared declaration is read before anything is simulated, so a reference
        # that names nothing is reported at once, in one line, with no workload row beside it.
        alternatives = alternatives_of(args.compare)
    except QuotaConfigError as error:
        # A declaration that cannot be read: nothing about the workload's jobs to add.
        print(f"error: {error}", file=run.err)
        return 2
    try:
        progress.note(
            f"declaration {declaration.name}: "
            + ", ".join(f"{c.max_capacity} × {c.unit}" for c in declaration.capacity_limits)
            + f", {len(declaration.shares)} shares"
        )
        workload, described = _workload(args, declaration, progress)
        if args.save_workload:
            write_workload(args.save_workload, workload)
            progress.note(f"workload saved to {args.save_workload}")
        progress.note(f"simulating {len(workload.jobs):,} jobs under three arrangements "
                      "(progress: jobs ended)")
        comparison = compare_policies(
            capacity_limits=declaration.capacity_limits,
            shares=declaration.shares,
            jobs=workload.jobs,
            priority_changes=workload.priority_changes,
            options=options,
            progress=progress.step,
            alternatives=alternatives,
        )
        files = write_report(
            args.out,
            comparison,
            capacity_limits=declaration.capacity_limits,
            shares=declaration.shares,
            title=args.title or f"Quota share simulation: {declaration.name}",
            workload=described,
            progress=progress.step,
        )
    except QuotaConfigError as error:
        return run.fail(str(error), *_error_notes(error, args, options))
    except OSError as error:
        # An output directory or file that cannot be written: one line, not a traceback.
        return run.fail(f"{type(error).__name__}: {error}")
    headline, _ = findings(comparison, capacity_limits=declaration.capacity_limits,
                           shares=declaration.shares)
    progress.note("done")
    print(headline, file=run.out)
    for path in (files.html, files.metrics, files.jobs):
        print(f"wrote {path}", file=run.out)
    return 0


def _error_notes(error: QuotaConfigError, args: argparse.Namespace,
                 options: SimulationOptions) -> list[str]:
    """What to add under a rejected input: which file a job came from, and the option that
    replays a real history's never-runnable jobs as AWS does."""
    notes = []
    compared = error.subject.startswith("compared declaration")
    if args.workload is not None and not isinstance(error, WorkloadError):
        notes.append(f"a job of {args.workload}, checked against the declaration")
    if args.workload is not None or compared:
        blocking = options.never_runnable is NeverRunnable.BLOCK
        if error.field in ("instance_count", "instance_type") and not blocking:
            notes.append("replaying real history? --blocked-jobs keeps such a job RUNNABLE, as "
                         "AWS does, and reports it as blocked")
    return notes


def _workload(
    args: argparse.Namespace, declaration: Declaration, progress: Progress
) -> tuple[Workload, dict[str, Any]]:
    if args.workload is not None:
        progress.note(f"reading {args.workload}")
        # Checked against the declaration while reading, so every job of an unknown share or
        # instance type is reported with its line, not the first one found by simulate.
        workload = read_workload(args.workload, shares=declaration.shares,
                                 capacity_limits=declaration.capacity_limits)
        return workload, {
            "source": str(args.workload),
            "jobs": len(workload.jobs),
            "priority_changes": len(workload.priority_changes),
        }
    traffic = default_traffic(
        declaration.capacity_limits, declaration.shares,
        jobs=args.jobs, hours=args.hours, load=args.load,
    )
    progress.note(f"generating {args.jobs:,} synthetic jobs (seed {args.seed})")
    jobs, changes = [], []
    for job, change in iter_synthetic(traffic, seed=args.seed, jobs=args.jobs):
        jobs.append(job)
        if change is not None:
            changes.append(change)
        if len(jobs) % 50_000 == 0:
            progress.step("generating", len(jobs), args.jobs)
    progress.step("generating", len(jobs), len(jobs))
    changes.sort(key=lambda c: c.at)
    return Workload(jobs, changes), {
        "source": f"synthetic (seed {args.seed}, {args.hours:g} h, load {args.load:g})",
        "synthetic": {"seed": args.seed, "jobs": args.jobs, "hours": args.hours,
                      "load": args.load},
        "jobs": len(jobs),
        "priority_changes": len(changes),
    }


if __name__ == "__main__":
    sys.exit(main(prog="python3 dev.py simulate"))
