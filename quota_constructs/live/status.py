"""``quota-constructs status``: who holds what on a queue right now, per share and instance type.

Reads, whatever the backlog: DescribeJobQueues, DescribeServiceEnvironments, ListQuotaShares and
DescribeQuotaShare per share (for the lifecycle record its tags carry), one GetJobQueueSnapshot
(usage per share, the head job of every share and since when it has been there), and per share
at most :data:`~.queue_reader.RUNNABLE_PAGES` pages of RUNNABLE jobs.
A share with more RUNNABLE jobs than those pages hold shows the count read as a floor
(``runnable_capped``: "at least").

Figures per share and instance type: ``limit`` (its own), ``in_use`` (GetJobQueueSnapshot),
``borrowed`` (in use above its own limit), ``idle_own`` (the part of its own limit it does not
use and could take now: in an over-allocated environment, what other shares hold within their
own limits is not idle to it), ``reach`` (the most it can ever hold), and ``lent`` (the part of
its idle own capacity other shares are borrowing); per type, ``unowned``: capacity no share
owns. Reach, who lends to whom, what is idle and the capacity no share owns come from the one
rules model (:mod:`.rules`). Batch does not say who lent what: ``lent`` follows the one
attribution rule and its stated assumption, :mod:`quota_constructs.model.lending` (by strategy
alone when the environment's capacity is unknown).

The usage and the head jobs are AWS Batch's snapshot, which carries when it was last updated.
A snapshot older than ``--max-snapshot-age`` (default 10 minutes, the monitoring's own limit),
or of unknown age, is still shown, with a line saying so (``snapshot_warning`` in ``--json``):
the same rule the metrics function uses before it judges a share
(:func:`quota_constructs.runtime.share_metrics.snapshot_too_old`). Its age and the head jobs'
waits are judged on the clock of the endpoint that answered (its HTTP ``Date`` header:
:meth:`~quota_constructs.runtime.batch_reads.QueueSnapshot.endpoint_now_ms`), so a local
clock that is off, or the local emulator's clock, never distorts them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quota_constructs.model import LendingParties, UnitUse
from quota_constructs.runtime.batch_reads import QueueSnapshot
from quota_constructs.runtime.share_metrics import snapshot_too_old
from quota_constructs.runtime.share_request import GuardOptIns
from quota_constructs.wire.live_share import LiveShare
from quota_constructs.wire.monitoring_contract import DEFAULT_MAX_SNAPSHOT_AGE_SECONDS

from . import command_line
from .queue_reader import RUNNABLE_PAGES, QueueFacts, QueueReader, RunnableCount, judged_at_ms
from .rules import rules_of, unit_use


@dataclass(frozen=True)
class UnitStatus:
    instance_type: str
    limit: int
    in_use: float
    borrowed: float
    lent: float
    idle_own: float
    reach: int | None = None
    """The most of this type the share can ever hold (the rules model); None when the
    environment's capacity is unknown."""


@dataclass(frozen=True)
class HeadJob:
    job_id: str
    waiting_seconds: float | None
    """Since the job reached the front of its share (``earliestTimeAtPosition``)."""


@dataclass(frozen=True)
class ShareStatus:
    name: str
    state: str
    status: str
    strategy: str
    runnable: int
    runnable_capped: bool
    head_job: HeadJob | None
    units: tuple[UnitStatus, ...]
    lifecycle: GuardOptIns | None = None
    """The opt-ins the share's last deployment recorded (what a delete of it would be judged
    by); None when the share carries no record."""


@dataclass(frozen=True)
class UnitTotal:
    instance_type: str
    capacity: int
    """The service environment's capacity of this type (0 if unknown)."""
    limits: int
    in_use: float
    unowned: int | None = None
    """Capacity no share owns (the environment less the shares' limits); None if unknown."""


@dataclass(frozen=True)
class QueueStatus:
    queue: str
    queue_arn: str
    state: str
    status: str
    status_reason: str
    shares: tuple[ShareStatus, ...]
    totals: tuple[UnitTotal, ...]
    runnable_pages: int
    snapshot_warning: str | None = None
    """Why the snapshot's usage and head jobs may be out of date (too old, or of unknown age);
    None when it is recent enough."""

    def to_json(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "queue_arn": self.queue_arn,
            "state": self.state,
            "status": self.status,
            "shares": [
                {
                    "name": share.name,
                    "state": share.state,
                    "status": share.status,
                    "strategy": share.strategy,
                    "runnable": share.runnable,
                    "runnable_capped": share.runnable_capped,
                    "head_job": None if share.head_job is None else {
                        "job_id": share.head_job.job_id,
                        "waiting_seconds": share.head_job.waiting_seconds,
                    },
                    "lifecycle": None if share.lifecycle is None else {
                        "allow_preemption_on_shrink": share.lifecycle.allow_preemption_on_shrink,
                        "terminate_active_jobs_on_delete":
                            share.lifecycle.terminate_active_jobs_on_delete,
                    },
                    "units": [
                        {
                            "instance_type": unit.instance_type,
                            "limit": unit.limit,
                            "in_use": _number(unit.in_use),
                            "borrowed": _number(unit.borrowed),
                            "lent": _number(unit.lent),
                            "idle_own": _number(unit.idle_own),
                        }
                        for unit in share.units
                    ],
                }
                for share in self.shares
            ],
            "totals": [
                {"instance_type": t.instance_type, "capacity": t.capacity, "limits": t.limits,
                 "unowned": t.unowned, "in_use": _number(t.in_use),
                 "reach": {share.name: unit.reach for share in self.shares
                           for unit in share.units
                           if unit.instance_type == t.instance_type and unit.reach is not None}}
                for t in self.totals
            ],
            "runnable_capped_means": (
                f"runnable counts at most {self.runnable_pages} pages of ListServiceJobs per "
                "share; a capped figure is a floor (at least that many RUNNABLE jobs)"
            ),
            "snapshot_warning": self.snapshot_warning,
        }


def queue_status(
    facts: QueueFacts,
    shares: Sequence[LiveShare],
    snapshot: QueueSnapshot,
    runnable: Mapping[str, RunnableCount],
    *,
    now_ms: int,
    runnable_pages: int = RUNNABLE_PAGES,
    unowned_capacity_borrowable: bool = True,
    max_snapshot_age_seconds: int | None = DEFAULT_MAX_SNAPSHOT_AGE_SECONDS,
) -> QueueStatus:
    """The status from what was read (no I/O); ``max_snapshot_age_seconds`` None shows a
    snapshot of any age without a warning."""
    unit_names = _units(shares, snapshot)
    rules = rules_of(facts.environment_limits, shares,
                     unowned_capacity_borrowable=unowned_capacity_borrowable)
    uses = {unit: use for unit in unit_names
            if (use := unit_use(rules, unit, snapshot, [s.name for s in shares])) is not None}
    lent = {unit: uses[unit].lent() if unit in uses else _lent(unit, shares, snapshot)
            for unit in unit_names}
    share_rows = []
    for share in shares:
        usage = snapshot.usage_of(share.name)
        own_units = list(share.config.limits)
        own_units += sorted(u for u in usage if u not in share.config.limits)
        units = []
        for unit in own_units:
            limit = share.config.limit_of(unit)
            in_use = usage.get(unit, 0.0)
            use = uses.get(unit)
            units.append(UnitStatus(
                instance_type=unit,
                limit=limit,
                in_use=in_use,
                # The rules model's reading (idle own is what the share could take now, in an
                # over-allocated environment too); by the limits alone when it is unknown.
                borrowed=use.borrowed(share.name) if use else max(0.0, in_use - limit),
                lent=lent[unit].get(share.name, 0.0),
                idle_own=use.idle_own(share.name) if use else max(0.0, limit - in_use),
                reach=_reach(use, share.name),
            ))
        front = snapshot.head_of(share.name)
        head = None
        if front is not None:
            since = front.at_position_since_ms
            waited = None if since is None else max(0.0, (now_ms - since) / 1e3)
            head = HeadJob(front.job_id, None if waited is None else round(waited, 3))
        count = runnable.get(share.name, RunnableCount(0, False))
        share_rows.append(ShareStatus(
            share.name, share.config.state, share.status, share.config.strategy,
            count.count, count.capped, head, tuple(units), GuardOptIns.from_tags(share.tags),
        ))
    totals = tuple(
        UnitTotal(
            unit,
            facts.environment_limits.get(unit, 0),
            sum(share.config.limit_of(unit) for share in shares),
            snapshot.total_usage.get(unit, sum(snapshot.usage_of(s.name).get(unit, 0.0)
                                               for s in shares)),
            uses[unit].unowned if unit in uses else None,
        )
        for unit in unit_names
    )
    return QueueStatus(facts.name, facts.arn, facts.state, facts.status, facts.status_reason,
                       tuple(share_rows), totals, runnable_pages,
                       snapshot_too_old(snapshot, now_ms=now_ms,
                                        max_age_seconds=max_snapshot_age_seconds))


def read_status(
    queue: str,
    *,
    reader: QueueReader | None = None,
    runnable_pages: int = RUNNABLE_PAGES,
    now_ms: int | None = None,
    unowned_capacity_borrowable: bool = True,
    max_snapshot_age_seconds: int | None = DEFAULT_MAX_SNAPSHOT_AGE_SECONDS,
) -> QueueStatus:
    """Read the queue's status (see the module docstring for the calls it makes). Ages and
    waits are judged at ``now_ms`` when given, else on the queue endpoint's own clock
    (:func:`~.queue_reader.judged_at_ms`)."""
    reader = reader or QueueReader.connect()
    facts = reader.queue(queue)
    # Described one by one (at most 20 shares) for their tags: the lifecycle record.
    shares = reader.shares(facts.arn, with_tags=True)
    snapshot = reader.complete_usage(reader.snapshot_of(facts.arn), shares)
    runnable = {
        share.name: reader.runnable(facts.arn, share.name, max_pages=runnable_pages)
        for share in shares
    }
    return queue_status(
        facts, shares, snapshot, runnable,
        now_ms=judged_at_ms(snapshot, now_ms),
        runnable_pages=runnable_pages,
        unowned_capacity_borrowable=unowned_capacity_borrowable,
        max_snapshot_age_seconds=max_snapshot_age_seconds,
    )


def render_table(status: QueueStatus) -> str:
    """The status as a terminal table: one row per share and instance type, then totals."""
    header = ("SHARE", "STATE", "TYPE", "LIMIT", "IN USE", "BORROWED", "LENT", "IDLE OWN",
              "RUNNABLE", "HEAD JOB (WAITING)")
    rows: list[tuple[str, ...]] = []
    for share in status.shares:
        head = "-"
        if share.head_job is not None:
            waited = share.head_job.waiting_seconds
            head = share.head_job.job_id + (
                "" if waited is None else f" ({command_line.age_text(waited)})")
        runnable = f"{'>=' if share.runnable_capped else ''}{share.runnable}"
        state = share.state if share.status == "VALID" else f"{share.state}/{share.status}"
        for index, unit in enumerate(share.units or (None,)):
            first = index == 0
            cells = (
                share.name if first else "", state if first else "",
                *(("-",) * 6 if unit is None else (
                    unit.instance_type, str(unit.limit), _text(unit.in_use),
                    _text(unit.borrowed), _text(unit.lent), _text(unit.idle_own))),
                runnable if first else "", head if first else "",
            )
            rows.append(cells)
    for total in status.totals:
        rows.append(("(queue)", status.state, total.instance_type,
                     f"{total.limits}/{total.capacity}", _text(total.in_use), "", "",
                     _text(max(0.0, total.capacity - total.in_use)), "", ""))
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = [f"job queue {status.queue} ({status.state}, {status.status})"]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
              .rstrip() for row in (header, *rows)]
    lines.append("(queue) row: LIMIT is the shares' limits / the environment's capacity; "
                 "IDLE OWN is capacity no job uses.")
    over = [t for t in status.totals if t.capacity and t.limits > t.capacity]
    for total in over:
        lines.append(f"the shares' limits of {total.instance_type} add up to {total.limits}, "
                     f"more than the environment's {total.capacity}: IDLE OWN is what a share "
                     "could take now; the rest of its limit is held by other shares within "
                     "their own limits, never reclaimed (the rules model's assumption).")
    unowned = [f"{t.unowned} {t.instance_type}" for t in status.totals if t.unowned]
    if unowned:
        lines.append(f"no share owns {', '.join(unowned)}: LEND_AND_BORROW shares may borrow "
                     "it (the rules model's assumption).")
    if any(share.runnable_capped for share in status.shares):
        lines.append(f">=N: more RUNNABLE jobs than {status.runnable_pages} pages hold; "
                     "at least N.")
    if status.snapshot_warning is not None:
        lines.append(command_line.stale_snapshot_line(
            status.snapshot_warning, "IN USE, BORROWED, LENT, IDLE OWN and the head jobs"))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None, prog: str = "quota-constructs status") -> int:
    parser = command_line.parser(prog, "Per share and instance type: limit, in use, borrowed, "
                                       "lent, idle, RUNNABLE jobs and the head job's wait.")
    parser.add_argument("--runnable-pages", type=int, default=RUNNABLE_PAGES,
                        help=f"ListServiceJobs pages read per share at most "
                             f"(default {RUNNABLE_PAGES}); beyond, counts are floors")
    command_line.add_unowned_borrowing(parser)
    command_line.add_max_snapshot_age(parser)
    options = parser.parse_args(argv)

    def command() -> int:
        max_age = command_line.max_snapshot_age(options)
        status = read_status(options.queue, reader=command_line.connect(options),
                             runnable_pages=max(1, options.runnable_pages),
                             unowned_capacity_borrowable=options.unowned_capacity_borrowable,
                             max_snapshot_age_seconds=max_age)
        print(json.dumps(status.to_json(), indent=2) if options.json else render_table(status))
        return command_line.OK

    return command_line.run(prog, command)


def _units(shares: Sequence[LiveShare], snapshot: QueueSnapshot) -> list[str]:
    units: list[str] = []
    for share in shares:
        for unit in [*share.config.limits, *snapshot.usage_of(share.name)]:
            if unit not in units:
                units.append(unit)
    return units


def _reach(use: UnitUse | None, share: str) -> int | None:
    rule = None if use is None else use.rule(share)
    return None if rule is None else rule.reach


def _lent(unit: str, shares: Sequence[LiveShare], snapshot: QueueSnapshot) -> dict[str, float]:
    """Per lending share, how much of its idle own ``unit`` other shares borrow, when the
    environment's capacity (and so the rules model) is unknown: by strategy alone."""
    parties = LendingParties.by_strategy(
        {s.name: s.config.limit_of(unit) for s in shares},
        {s.name: s.config.strategy for s in shares},
    )
    return parties.lent({s.name: snapshot.usage_of(s.name).get(unit, 0.0) for s in shares})


def _number(value: float) -> float | int:
    return int(value) if math.isfinite(value) and float(value).is_integer() else round(value, 3)


def _text(value: float) -> str:
    return str(_number(value))


