"""``python3 dev.py simulate``: replay a workload against a declaration and write a report.

    python3 dev.py simulate                                  # dev environment, synthetic week
    python3 dev.py simulate --env prod --synthetic --jobs 100000 --hours 720 --seed 3
    python3 dev.py simulate --env dev --workload examples/workloads/walkthrough.csv
    python3 dev.py simulate --declaration my_platform.quotas:TRAINING --workload jobs.json

The declaration is a deployment environment of ``stacks/environments.py`` (``--env``) or any
object with ``capacity_limits`` and ``shares`` (``--declaration module:attribute``, or
``path/to/file.py:attribute``; dots after the colon walk attributes or mapping keys).
Progress goes to stderr; the report's paths and its one-line summary to stdout.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from . import compare_policies
from .inputs import NeverRunnable
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
ENVIRONMENTS = "stacks.environments:ENVIRONMENTS"


@dataclass(frozen=True)
class Declaration:
    name: str
    capacity_limits: Sequence[CapacityLimit]
    shares: Sequence[QuotaShareSpec]


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


def resolve(reference: str, *, command: str = "simulate", option: str = "--declaration") -> Any:
    """The object ``module:attr.attr`` (or ``file.py:attr``) names; dots walk mappings too.
    Errors name the ``command`` and the ``option`` the reference came from."""
    module_name, sep, path = reference.partition(":")
    if not sep or not module_name or not path:
        raise QuotaConfigError(command, option, reference,
                               "module:attribute or path/to/file.py:attribute")
    try:
        if module_name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(Path(module_name).stem, module_name)
            if spec is None or spec.loader is None:
                raise ImportError(module_name)
            target: Any = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(target)
        else:
            target = importlib.import_module(module_name)
    except (ImportError, FileNotFoundError) as error:
        raise QuotaConfigError(command, option, reference,
                               f"an importable module or file ({error})") from None
    for part in path.split("."):
        if isinstance(target, Mapping) and part in target:
            target = target[part]
        elif hasattr(target, part):
            target = getattr(target, part)
        else:
            known = sorted(target) if isinstance(target, Mapping) else []
            hint = f"; known: {', '.join(map(str, known))}" if known else ""
            raise QuotaConfigError(command, option, reference,
                                   f"a path to an existing attribute ({part!r} not found{hint})")
    return target


def declaration_of(
    reference: str, name: str, *, command: str = "simulate", option: str = "--declaration"
) -> Declaration:
    target = resolve(reference, command=command, option=option)
    if isinstance(target, Mapping):
        limits, shares = target.get("capacity_limits"), target.get("shares")
    else:
        limits = getattr(target, "capacity_limits", None)
        shares = getattr(target, "shares", None)
    if limits is None or shares is None:
        raise QuotaConfigError(command, option, reference,
                               "an object or mapping with capacity_limits and shares")
    return Declaration(name, tuple(limits), tuple(shares))


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


def environment(name: str) -> Declaration:
    environments = resolve(ENVIRONMENTS)
    if name not in environments:
        raise QuotaConfigError("simulate", "--env", name,
                               "one of " + ", ".join(sorted(environments)))
    return declaration_of(f"{ENVIRONMENTS}.{name}", name)


def add_declaration_arguments(parser: argparse.ArgumentParser) -> None:
    """``--env NAME`` or ``--declaration MODULE:ATTRIBUTE``: the declaration a command reads
    (:func:`environment`, :func:`declaration_of`)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--env", default=None,
                       help="a deployment environment of stacks/environments.py (default: dev)")
    where.add_argument("--declaration", metavar="MODULE:ATTRIBUTE",
                       help="any object with capacity_limits and shares")


def parser(prog: str = "quota-constructs simulate") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Replay a workload against a quota-share declaration, a hard partition and "
        "one shared pool; write an HTML report, metrics.json and a per-job CSV.",
    )
    add_declaration_arguments(p)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--workload", type=Path, metavar="FILE",
                      help="a .csv or .json job list (format: quota_constructs.simulation"
                      ".workloads.files)")
    what.add_argument("--synthetic", action="store_true",
                      help="generate the workload (the default without --workload)")
    p.add_argument("--jobs", type=int, default=500, help="synthetic: number of jobs (500)")
    p.add_argument("--hours", type=float, default=168.0,
                   help="synthetic: hours over which they arrive (168, a week)")
    p.add_argument("--seed", type=int, default=1, help="synthetic: random seed (1)")
    p.add_argument("--load", type=float, default=0.7,
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
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    # Every assumption where AWS is silent, derived from SimulationOptions (as recommend has).
    add_option_arguments(p)
    return p


def main(argv: Sequence[str] | None = None, *, prog: str = "quota-constructs simulate",
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out_stream = stdout or sys.stdout
    err_stream = stderr or sys.stderr
    args = parser(prog).parse_args(argv)
    progress = Progress(err_stream, quiet=args.quiet)
    options = options_from(args)
    try:
        if args.declaration:
            declaration = declaration_of(args.declaration, args.declaration)
        else:
            declaration = environment(args.env or "dev")
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
            alternatives=alternatives_of(args.compare),
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
        # Always shown, --quiet or not: it is the reason for the exit status.
        progress.note("stopped")
        print(f"error: {error}", file=err_stream)
        compared = error.subject.startswith("compared declaration")
        if args.workload is not None and not isinstance(error, WorkloadError):
            print(f"  (a job of {args.workload}, checked against the declaration)",
                  file=err_stream)
        if args.workload is not None or compared:
            blocking = options.never_runnable is NeverRunnable.BLOCK
            if error.field in ("instance_count", "instance_type") and not blocking:
                print("  (replaying real history? --blocked-jobs keeps such a job RUNNABLE, as "
                      "AWS does, and reports it as blocked)", file=err_stream)
        return 2
    except OSError as error:
        # An output directory or file that cannot be written: one line, not a traceback.
        progress.note("stopped")
        print(f"error: {type(error).__name__}: {error}", file=err_stream)
        return 2
    headline, _ = findings(comparison, capacity_limits=declaration.capacity_limits,
                           shares=declaration.shares)
    progress.note("done")
    print(headline, file=out_stream)
    for path in (files.html, files.metrics, files.jobs):
        print(f"wrote {path}", file=out_stream)
    return 0


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
