"""The ``quota-constructs`` console script (also ``python -m quota_constructs``).

    quota-constructs COMMAND [options]        # quota-constructs COMMAND --help for each

Each command is a module with ``main(argv: Sequence[str] | None) -> int`` that parses its own
options (``prog`` = ``quota-constructs COMMAND``). The table below is the only place commands
are listed; modules are imported only when their command runs, so ``--help`` and a command that
reads AWS never load the simulator (``explain`` and ``estimate`` load its engine only to step
it), and nothing here imports ``aws_cdk``.

Commands that read a declaration (``--declaration FILE.py:ATTR|MODULE:ATTR``, or ``--env``)
read it through :mod:`quota_constructs.cli.declarations`, which documents its one shape; option
mistakes are one line (:class:`quota_constructs.cli.parsing.OneLineParser`).

Conventions every command keeps: results on stdout (``--json`` where a script reads them),
progress and errors on stderr, an error is one line naming what is wrong, exit status 0 on
success, 1 when the command ran and its answer is "no" (e.g. a refused preview), 2 on bad input
or an error.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib import import_module
from typing import NamedTuple

PROG = "quota-constructs"


class Command(NamedTuple):
    module: str
    summary: str


COMMANDS: dict[str, Command] = {
    "simulate": Command(
        "quota_constructs.simulation.cli",
        "replay a workload against a declaration; HTML report, metrics.json, jobs.csv",
    ),
    "recommend": Command(
        "quota_constructs.simulation.recommend_cli",
        "an allocation meeting every share's service targets on a workload, changing least",
    ),
    "history": Command(
        "quota_constructs.live.history",
        "export a queue's service jobs as a workload file (read-only: ListServiceJobs, "
        "DescribeServiceJob)",
    ),
    "usage": Command(
        "quota_constructs.usage.cli",
        "what each share used, borrowed, lent and lost, from a history export or the job "
        "ledger: usage.json, usage.csv, report.html",
    ),
    "status": Command(
        "quota_constructs.live.status",
        "a live queue per share and instance type: limits, use, borrowing, backlog, head job",
    ),
    "explain": Command(
        "quota_constructs.live.explain",
        "why a job (or a share's head job) is not running, as a reason code and a sentence",
    ),
    "estimate": Command(
        "quota_constructs.live.estimate",
        "by when a job not yet submitted would start at the latest, from the live queue",
    ),
    "preview": Command(
        "quota_constructs.live.preview",
        "what deploying a declaration would do to the live queue; exit 1 if it would be refused",
    ),
    "emulate": Command(
        "quota_constructs.emulator.cli",
        "serve a declared queue as the AWS Batch API on 127.0.0.1, for tests (not AWS)",
    ),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"usage: {PROG} COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {command.summary}" for name, command in COMMANDS.items()]
    lines += ["", f"'{PROG} COMMAND --help' describes a command's options."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(usage(), file=sys.stderr)
        return 2
    if args[0] in {"-h", "--help", "help"}:
        print(usage())
        return 0
    name, rest = args[0], args[1:]
    command = COMMANDS.get(name)
    if command is None:
        print(f"{PROG}: unknown command {name!r}; one of: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    run = import_module(command.module).main
    return int(run(rest, prog=f"{PROG} {name}"))
