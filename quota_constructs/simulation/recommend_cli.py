"""``quota-constructs recommend``: an allocation that meets every share's service targets.

    quota-constructs recommend --declaration my_platform.quotas:PROD --workload jobs.csv \\
        --target 'vision:wait_p95<=4h' --target 'nlp:budget_failures<=0' --holdout 0.2 --out rec

Writes into ``--out``:

- ``recommendation.json`` — ``{"meets_targets", "unmet", "shares": [{"name", "strategy",
  "borrow_limit_percent" (null = unlimited), "in_share_preemption", "capacity_limits":
  {"ml.g5.xlarge": 2, ...}}]}``, exactly this shape;
- ``search.json`` — every target met or missed (today, recommended, held out), the reasons,
  the environment needed, every line of an agreement given up (``trades``: only those
  ``--allow-trade`` allowed, unless nothing keeps them), the simulations run and why
  (``replays``);
- ``recommended.py`` — the recommended declaration as code to paste, which every command loads
  as it is (``--declaration OUT/recommended.py:DECLARATION``, e.g. ``simulate --compare`` or
  ``preview``); ``declaration.diff`` — against today's; ``advised_environment.py`` — the
  declaration for the advised environment (its sizes and shares), the same way, when one was
  confirmed;
- ``report.html`` — today against the recommendation, each target met or missed, with the full
  simulator reports of both (``today/``, ``recommended/``, the same charts) unless
  ``--no-report``.

Every share's agreement is a constraint of the search (``recommend.contract``): no advice fails
more of a share's jobs by its declared interruption budget than today's declaration, or misses a
target today's declaration meets, unless ``--allow-trade SHARE`` lets it, and then the trade is
named (stdout, the page, ``search.json``).

Exit status 0 when every target is met, 1 when some cannot be (they are named), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from concurrent.futures import Executor
from html import escape
from pathlib import Path
from typing import Any, TextIO

from ..cli.declarations import CUSTOM_RESOURCE, Declaration, load
from ..model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from . import compare_policies
from .cli import CommandRun, Progress, command_parser, finish_command_parser
from .declaration_code import declaration_code, declaration_diff
from .durations import human_duration
from .options_cli import describe_options, options_from
from .recommend import (
    DEFAULT_MAX_SIMULATIONS,
    DEFAULT_SCREEN_JOBS,
    MEASURES,
    Pin,
    Recommendation,
    ShareScore,
    recommend,
)
from .report import write_report
from .targets import TargetOutcome, parse_target, targets_of
from .workloads import read_workload

RECOMMENDATION_FILE = "recommendation.json"
ADVISED_ENVIRONMENT_FILE = "advised_environment.py"


def recommendation_document(rec: Recommendation) -> dict[str, Any]:
    """The documented ``recommendation.json`` (see the module docs)."""
    return {
        "meets_targets": rec.meets_targets,
        "unmet": list(rec.unmet),
        "shares": [share_document(spec) for spec in rec.shares],
    }


def share_document(spec: QuotaShareSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "strategy": spec.strategy.value,
        "borrow_limit_percent": spec.borrow_limit_percent,
        "in_share_preemption": spec.in_share_preemption,
        "capacity_limits": {str(c.unit): c.max_capacity for c in spec.capacity_limits},
    }


def parse_pin(text: str) -> Pin:
    """``SHARE:strategy``, ``SHARE:limits`` or ``SHARE:min:TYPE=N``."""
    allowed = "SHARE:strategy, SHARE:limits or SHARE:min:INSTANCE_TYPE=N"
    share, _, rest = text.partition(":")
    if not share or not rest:
        raise QuotaConfigError("recommend", "--pin", text, allowed)
    if rest == "strategy":
        return Pin(share, strategy=True)
    if rest == "limits":
        return Pin(share, limits=True)
    kind, _, minimum = rest.partition(":")
    unit, _, count = minimum.partition("=")
    if kind != "min" or not unit or not count.isdigit():
        raise QuotaConfigError("recommend", "--pin", text, allowed)
    return Pin(share, minimum={unit: int(count)})


def merge_pins(pins: Sequence[Pin]) -> list[Pin]:
    merged: dict[str, Pin] = {}
    for pin in pins:
        was = merged.get(pin.share, Pin(pin.share))
        merged[pin.share] = Pin(
            pin.share, strategy=was.strategy or pin.strategy, limits=was.limits or pin.limits,
            minimum={**was.minimum, **pin.minimum},
        )
    return list(merged.values())


def parser(prog: str = "quota-constructs recommend") -> argparse.ArgumentParser:
    p = command_parser(prog, "Search allocations of the environment for one that meets every "
                       "share's service targets (from the agreements, or --target), changing "
                       "least from today's.")
    p.add_argument("--workload", type=Path, metavar="FILE", required=True,
                   help="the history to meet the targets on (.csv or .json; e.g. from "
                   "'quota-constructs history')")
    p.add_argument("--target", action="append", default=[], metavar="SHARE:WHAT<=VALUE",
                   help="'SHARE:wait_p95<=4h' or 'SHARE:budget_failures<=0' (quoted: < is a "
                   "shell redirection; repeatable; replaces that target of the share's "
                   "agreement)")
    p.add_argument("--pin", action="append", default=[], metavar="SHARE:WHAT",
                   help="keep SHARE:strategy, SHARE:limits, or a minimum guarantee "
                   "SHARE:min:ml.g5.xlarge=2 (repeatable)")
    p.add_argument("--holdout", type=float, default=0.0, metavar="FRACTION",
                   help="keep the last FRACTION of jobs out of the search and report the "
                   "recommendation on them separately (e.g. 0.2)")
    p.add_argument("--executor", default="local", metavar="local|dask:ADDRESS",
                   help="where replays run: local processes (default) or a Dask scheduler")
    p.add_argument("--workers", type=int, default=None,
                   help="local processes (default: every core)")
    p.add_argument("--max-simulations", type=int, default=DEFAULT_MAX_SIMULATIONS,
                   help="replays spent improving a candidate, and again undoing its "
                   f"changes ({DEFAULT_MAX_SIMULATIONS})")
    p.add_argument("--screen-jobs", type=int, default=DEFAULT_SCREEN_JOBS,
                   help="histories of more than twice this many jobs rank candidates on a "
                   f"stretch of this many first ({DEFAULT_SCREEN_JOBS:,}; 0 = never)")
    p.add_argument("--allow-trade", action="append", default=[], metavar="SHARE",
                   help="let the search give up a line of SHARE's agreement (its declared "
                   "interruption budget, a target today's declaration meets) for other "
                   "shares' targets; every line given up is named (repeatable; '*' for every "
                   "share). Without it, no recommendation fails more of a share's jobs by its "
                   "budget than today's declaration, or misses a target it meets")
    p.add_argument("--no-report", action="store_true",
                   help="skip the HTML reports (six more replays of the whole history)")
    p.add_argument("--out", type=Path, default=Path("recommendation"),
                   help="output directory (recommendation/)")
    return finish_command_parser(p)


def main(argv: Sequence[str] | None = None, *, prog: str = "quota-constructs recommend",
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    run = CommandRun.start(parser(prog), argv, stdout, stderr)
    args, progress = run.args, run.progress
    try:
        declaration = load(args, command="recommend")
        targets = [parse_target(text) for text in args.target]
        pins = merge_pins([parse_pin(text) for text in args.pin])
        options = options_from(args)
        if not targets_of(declaration.shares, targets):
            raise QuotaConfigError("recommend", "targets", None,
                                   "at least one: a share agreement's target_wait_p95 or "
                                   "max_budget_failures, or --target")
        progress.note(f"reading {args.workload}")
        workload = read_workload(args.workload)
        executor, close = _executor(args.executor)
        try:
            rec = recommend(
                capacity_limits=declaration.capacity_limits, shares=declaration.shares,
                jobs=workload.jobs, priority_changes=workload.priority_changes,
                targets=targets, pins=pins, holdout=args.holdout, executor=executor,
                workers=args.workers, options=options, max_simulations=args.max_simulations,
                screen_jobs=args.screen_jobs, progress=progress.note,
                allow_trades=args.allow_trade,
            )
        finally:
            close()
        files = write_outputs(args.out, rec, declaration, options_document=describe_options(
            options), full_reports=not args.no_report)
        if not args.no_report:
            progress.note("writing the reports of today's and the recommended declaration")
            files += write_reports(args.out, rec, declaration, workload.jobs,
                                   workload.priority_changes, options, progress)
    except QuotaConfigError as error:
        return run.fail(str(error))
    except (OSError, ImportError, ValueError) as error:
        return run.fail(f"{type(error).__name__}: {error}")
    progress.note("done")
    print(headline(rec), file=run.out)
    for name in rec.unmet:
        print(f"  cannot meet {name}: {rec.reasons.get(name, '')}", file=run.out)
    for trade in rec.trades:
        print(f"  gives up {trade.describe()}", file=run.out)
    for trade in rec.environment_trades:
        print(f"  on the advised environment, gives up {trade.describe()}", file=run.out)
    print(replays_text(rec), file=run.out)
    for path in files:
        print(f"wrote {path}", file=run.out)
    return 0 if rec.meets_targets else 1


def _executor(spec: str) -> tuple[Executor | None, Any]:
    if spec == "local":
        return None, lambda: None
    kind, _, address = spec.partition(":")
    if kind != "dask" or not address:
        raise QuotaConfigError("recommend", "--executor", spec, "local or dask:ADDRESS")
    from dask.distributed import Client  # only for this option: not a runtime dependency

    client = Client(address)  # type: ignore[no-untyped-call]
    executor: Executor = client.get_executor()  # type: ignore[no-untyped-call]
    return executor, client.close


def replays_text(rec: Recommendation) -> str:
    """``replays: 44 run (demand analysis 30, candidates 6, ...); 12 read from earlier ones``:
    how many replays the search ran, and why."""
    why = ", ".join(f"{reason} {count:,}" for reason, count in rec.replays.items() if count)
    return (f"replays: {rec.simulations:,} run ({why or 'none'}), {rec.jobs_simulated:,} jobs "
            f"simulated; {rec.reused_replays:,} asked again and read from an earlier replay")


def headline(rec: Recommendation) -> str:
    broken = [trade for trade in rec.trades if not trade.allowed]
    if broken and not rec.unmet:
        return ("no allocation found keeps every share's agreement: "
                + "; ".join(trade.describe() for trade in broken))
    if rec.meets_targets:
        what = ("today's declaration already meets every target" if rec.change == 0 else
                f"an allocation {rec.change} step{'s' if rec.change != 1 else ''} from today's "
                "meets every target")
    else:
        what = "no allocation found meets every target: " + ", ".join(rec.unmet)
    return what + (f"; {environment_text(rec)}" if any(rec.environment_change().values())
                   else "")


def environment_text(rec: Recommendation) -> str:
    """``ml.g5.xlarge could shrink by 2`` (``may`` when no replay confirmed it)."""
    modal = "could" if rec.environment_needed_verified else "may"
    return ", ".join(
        f"{unit} {modal} shrink by {-delta}" if delta < 0 else
        f"{unit} must grow by {delta}" + ("" if rec.environment_needed_verified
                                           else " (not confirmed by a replay)")
        for unit, delta in rec.environment_change().items() if delta
    )


def search_document(rec: Recommendation, options: dict[str, Any]) -> dict[str, Any]:
    def outcomes(items: Sequence[TargetOutcome]) -> list[dict[str, object]]:
        return [o.as_json() for o in items]

    return {
        "meets_targets": rec.meets_targets,
        "unmet": list(rec.unmet),
        "reasons": dict(rec.reasons),
        "change_from_today": rec.change,
        "environment": {str(c.unit): c.max_capacity for c in rec.capacity_limits},
        "environment_needed": rec.environment_needed,
        "environment_needed_verified": rec.environment_needed_verified,
        "environment_basis": rec.environment_basis,
        "environment_shares": [share_document(spec) for spec in rec.environment_shares],
        "environment_change": rec.environment_change(),
        "targets": {"today": outcomes(rec.today_outcomes),
                    "recommended": outcomes(rec.outcomes)},
        "holdout": None if rec.holdout is None else {
            "jobs": rec.holdout.jobs,
            "meets_targets": rec.holdout.meets_targets,
            "today": outcomes(rec.holdout.today),
            "recommended": outcomes(rec.holdout.recommended),
        },
        "costs": [
            {"share": c.share, "change": c.change,
             "today": None if c.today is None else _cost_document(c.today),
             "recommended": None if c.recommended is None else _cost_document(c.recommended)}
            for c in rec.costs
        ],
        "environment_reasons": dict(rec.environment_reasons),
        "demand": [
            {"share": d.share, "instance_type": d.unit, "reserved_capacity": d.capacity}
            for d in rec.demand
        ],
        "trades": [trade.as_json() for trade in rec.trades],
        "environment_trades": [trade.as_json() for trade in rec.environment_trades],
        "searched_jobs": rec.searched_jobs,
        "replays": dict(rec.replays),
        "replayed_jobs": dict(rec.replayed_jobs),
        "reused_replays": rec.reused_replays,
        "simulations": rec.simulations,
        "jobs_simulated": rec.jobs_simulated,
        "seconds": round(rec.seconds, 3),
        "options": options,
    }


def _cost_document(score: ShareScore) -> dict[str, Any]:
    return {"cross_share_preemptions": score.cross_share_preemptions,
            "in_share_preemptions": score.in_share_preemptions,
            "budget_failures": score.budget_failures,
            "lost_instance_hours": score.lost_instance_hours}


def cost_table(rec: Recommendation) -> str:
    """Per share: what the recommendation changes, and its preemptions and jobs lost to an
    exhausted interruption budget today and recommended (replays of the searched history).
    A strategy change is a trade: one share's borrowing is another's preemptions."""
    def cell(before: int | float, after: int | float, digits: int = 0) -> str:
        tone = "" if after == before else (" class='missed'" if after > before else
                                            " class='met'")
        return f"<td{tone}>{before:,.{digits}f} → {after:,.{digits}f}</td>"

    rows = []
    for cost in rec.costs:
        today, after = cost.today, cost.recommended
        if today is None or after is None:
            figures = "<td colspan='4'>no replay (a job could not start)</td>"
        else:
            figures = (cell(today.cross_share_preemptions, after.cross_share_preemptions)
                       + cell(today.in_share_preemptions, after.in_share_preemptions)
                       + cell(today.budget_failures, after.budget_failures)
                       + cell(today.lost_instance_hours, after.lost_instance_hours, 1))
        change = cost.change or "no change"
        mark = " style='font-weight:600'" if cost.strategy_changed else ""
        rows.append(f"<tr><td class='l'>{escape(cost.share)}</td>"
                    f"<td class='l'{mark}>{escape(change)}</td>{figures}</tr>")
    return (
        "<h2>What the changes cost each share</h2>"
        "<p>Replays of the searched history, today → recommended: preemptions its jobs suffer "
        "(cross-share: borrowed capacity reclaimed; in-share: a higher-priority job of the "
        "share), jobs that failed because they were preempted more often than their "
        "interruption budget allows, and the work lost. A strategy change (in bold) moves "
        "these between shares: whoever borrows more is preempted more, and a lender's jobs "
        "wait for what it lent.</p>"
        "<table><tr><th class='l'>Share</th><th class='l'>Change</th>"
        "<th>Cross-share preemptions</th><th>In-share preemptions</th>"
        "<th>Jobs lost to the interruption budget</th><th>Work lost (instance-hours)</th></tr>"
        + "".join(rows) + "</table>"
    )


def write_outputs(
    out: Path, rec: Recommendation, declaration: Declaration, *, options_document: dict[str, Any],
    full_reports: bool = True,
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    today_code = declaration_code(declaration.capacity_limits, declaration.shares,
                                  **carried_over(declaration))
    code = declaration_code(declaration.capacity_limits, rec.shares, **carried_over(declaration))
    files = {
        RECOMMENDATION_FILE: json.dumps(recommendation_document(rec), indent=1) + "\n",
        "search.json": json.dumps(search_document(rec, options_document), indent=1) + "\n",
        "recommended.py": code,
        "declaration.diff": declaration_diff(today_code, code) or "(no change)\n",
        "report.html": summary_page(rec, declaration, declaration_diff(today_code, code),
                                    full_reports=full_reports),
    }
    if rec.environment_shares:
        limits = [CapacityLimit(unit, count) for unit, count in rec.environment_needed.items()]
        files[ADVISED_ENVIRONMENT_FILE] = declaration_code(limits, rec.environment_shares,
                                                           **carried_over(declaration))
    written = []
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    return written


def carried_over(declaration: Declaration) -> dict[str, Any]:
    """What the written declaration keeps of today's beside the limits and shares, so that
    ``preview`` judges it with the same queue, switches and provisioning."""
    return {"queue_name": declaration.queue_name, "lifecycles": declaration.lifecycles,
            "provisioning": None if declaration.provisioning == CUSTOM_RESOURCE
            else declaration.provisioning}


def write_reports(
    out: Path, rec: Recommendation, declaration: Declaration, jobs: Sequence[Any],
    changes: Sequence[Any], options: Any, progress: Progress,
) -> list[Path]:
    written = []
    for folder, shares, title in (
        ("today", declaration.shares, "today's declaration"),
        ("recommended", rec.shares, "the recommended declaration"),
    ):
        comparison = compare_policies(
            capacity_limits=declaration.capacity_limits, shares=shares, jobs=jobs,
            priority_changes=changes, options=options, progress=progress.step,
        )
        files = write_report(out / folder, comparison, capacity_limits=declaration.capacity_limits,
                             shares=shares, title=f"Quota share simulation: {title}",
                             workload={"source": "the workload given to recommend",
                                       "jobs": len(jobs)})
        written.append(files.html)
    return written


def summary_page(
    rec: Recommendation, declaration: Declaration, diff: str, *, full_reports: bool = True
) -> str:
    def rows(today: Sequence[TargetOutcome], recommended: Sequence[TargetOutcome]) -> str:
        out = []
        for before, after in zip(today, recommended, strict=True):
            out.append(
                f"<tr><td class='l'>{escape(before.share)}</td>"
                f"<td class='l'>{escape(before.target.describe())}</td>"
                f"<td class='l {_mark(before)}'>{escape(before.describe())}</td>"
                f"<td class='l {_mark(after)}'>{escape(after.describe())}</td></tr>"
            )
        return "".join(out)

    head = ("<tr><th class='l'>Share</th><th class='l'>Target</th><th class='l'>Today</th>"
            "<th class='l'>Recommended</th></tr>")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>Recommended allocation</title><style>",
        "body{font-family:system-ui,sans-serif;max-width:1200px;margin:24px auto;padding:0 16px;"
        "color:#222}table{border-collapse:collapse;font-size:14px}td,th{border:1px solid #ddd;"
        "padding:4px 8px}th{background:#f2f2f2}.met{background:#e6f4ea}.missed{background:"
        "#fdecea}td{text-align:right}td.l,th.l{text-align:left}"
        "pre{background:#f6f8fa;padding:10px;overflow-x:auto}.l{text-align:left}",
        "</style></head><body><h1>Recommended allocation</h1>",
        f"<p><b>{escape(headline(rec))}</b></p>",
        f"<p>Environment: {escape(_env(declaration))}. Replayed {rec.searched_jobs:,} jobs; "
        f"{rec.simulations:,} simulations ({rec.jobs_simulated:,} jobs) in "
        f"{human_duration(rec.seconds)}.</p>",
        f"<p class='l'>{escape(replays_text(rec))}.</p>",
        "<h2>Targets on the searched history</h2>",
        f"<table>{head}{rows(rec.today_outcomes, rec.outcomes)}</table>",
        trades_section(rec),
    ]
    if rec.unmet:
        parts.append("<h2>Targets that cannot be met</h2><ul>")
        parts += [f"<li><b>{escape(n)}</b>: {escape(rec.reasons.get(n, ''))}</li>"
                  for n in rec.unmet]
        parts.append("</ul>")
    parts.append(cost_table(rec))
    if rec.holdout is not None:
        parts += [
            f"<h2>Held-out history (last {rec.holdout.jobs:,} jobs, not searched)</h2>",
            f"<table>{head}{rows(rec.holdout.today, rec.holdout.recommended)}</table>",
        ]
    needed = ", ".join(f"{count} x {unit}" for unit, count in rec.environment_needed.items())
    checked = ("replayed: every target met" if rec.environment_needed_verified
               else "not confirmed by a replay")
    change = environment_text(rec) or "no instance type can shrink"
    shrunk = ""
    if rec.environment_shares:
        limits = [CapacityLimit(unit, count) for unit, count in rec.environment_needed.items()]
        shrunk = ("<details><summary>The declaration for that environment</summary><pre>"
                  f"{escape(declaration_code(limits, rec.environment_shares))}</pre></details>")
    reasons = "".join(f"<li><b>{escape(unit)}</b>: {escape(why)}</li>"
                      for unit, why in rec.environment_reasons.items())
    parts += [
        "<h2>Environment, per instance type</h2>",
        f"<p>Smallest environment found that meets every target: {escape(needed)} "
        f"({escape(rec.environment_basis)}; {checked}): {escape(change)}.</p>",
        f"<ul>{reasons}</ul>" if reasons else "",
        shrunk,
        "<h2>Change against today's declaration</h2>",
        f"<pre>{escape(diff or '(no change)')}</pre>",
        # With --no-report those pages are not written: no link to a missing file.
        ("<p>Full simulator reports, the same charts for both: "
         "<a href='today/report.html'>today</a> · "
         "<a href='recommended/report.html'>recommended</a>.</p>") if full_reports else
        "<p>Full simulator reports were skipped (--no-report).</p>",
        "</body></html>",
    ]
    return "".join(parts)


def trades_section(rec: Recommendation) -> str:
    """Every line of an agreement the advice gives up (none unless the user allowed it, or
    nothing could keep it), with today's figure and the recommended one."""
    if not rec.trades and not rec.environment_trades:
        return ("<p>Every share's agreement is kept: no share loses more jobs to its "
                "interruption budget than today, and every target met today is met.</p>")
    rows = "".join(
        f"<tr><td class='l'>{escape(where)}</td><td class='l'>{escape(t.share)}</td>"
        f"<td class='l'>{escape(t.line)}</td><td class='l'>{escape(MEASURES[t.measure])}</td>"
        f"<td class='missed'>{escape(t.today)} → {escape(t.recommended)}</td>"
        f"<td class='l'>{'allowed (--allow-trade)' if t.allowed else 'NOT allowed'}</td></tr>"
        for where, trades in (("recommended", rec.trades),
                              ("advised environment", rec.environment_trades))
        for t in trades
    )
    return ("<h2>Agreements given up</h2><table><tr><th class='l'>Declaration</th>"
            "<th class='l'>Share</th><th class='l'>Line of its agreement</th>"
            "<th class='l'>Measure</th><th>Today → recommended</th><th class='l'>Trade</th>"
            f"</tr>{rows}</table>")


def _mark(outcome: TargetOutcome) -> str:
    return "met" if outcome.met else "missed"


def _env(declaration: Declaration) -> str:
    return ", ".join(f"{c.max_capacity} x {c.unit}" for c in declaration.capacity_limits)


if __name__ == "__main__":
    sys.exit(main())
