"""The discrete-event scheduler: one pass over time, O(1) work per event but for small heaps.

One simulated moment, in order (:meth:`_Engine.advance`):

1. **End jobs** whose run time is over: their capacity is free and their queue is looked at
   again.
2. **Submit** jobs that arrive now.
3. **Apply priority changes** (:meth:`_Engine.apply_priority_changes`): a waiting job moves in
   its queue, a running one in the victim order.
4. **Schedule** each instance type these touched (:meth:`_Engine.schedule_unit`), offering its
   capacity to queue heads in scheduling order (jobs within their share's limit first, then
   borrowers). Each head tries, in order (:meth:`_Engine.try_start`): to start within its
   share's limit on free capacity; to **reclaim** lent capacity from borrowers
   (:meth:`_Engine.reclaim`); to **borrow** idle capacity; to **preempt in-share**
   (:meth:`_Engine.preempt_in_share`); and, without head-of-line blocking, its queue
   **backfills** (:meth:`_Engine.backfill_queue`). Heads that still wait are filed where the
   capacity they lack will find them (:meth:`_Engine.file_waiting_heads`).

State is kept in flat lists indexed by job and by (share, unit) (a queue), held in the slots of
one :class:`_Engine`. A replay runs every moment at once (:meth:`_Engine.run`); the local
emulator's :class:`SteppingEngine` runs the same phases up to its clock's time
(:meth:`_Engine.advance`), adding jobs, priority changes and share changes as they come.

What it costs, and why it is written as it is
---------------------------------------------
A replay of a million jobs runs some three million moments, and CPython's cost is in
operations, not in the work they stand for: a method call costs as much as a dozen list reads,
a tuple or a float is an allocation, a ``bytearray`` element costs twice a list's, and a heap
of tuples costs a few hundred machine instructions per level. So (measured with
``valgrind --tool=callgrind``, see the development guide):

* The phases that run at nearly every moment are inline in :meth:`_Engine.advance`, their
  columns bound to locals: a job's end (its share's books: :meth:`_Engine.release` is the same
  for a preempted job), an arrival (:meth:`_Engine.enqueue` is the same for a requeued one),
  and, when the moment touched one queue and nothing else waits on its unit, starting that
  queue's heads while they fit within their share's limit on free capacity
  (:meth:`_Engine.start_within_limit` and :meth:`_Engine.start` do the same elsewhere). Each
  inline copy is its method's commonest case, nothing more; ``tests/simulation`` replays seeded
  workloads with the inline copies switched off (:data:`INLINE_PHASES`) and requires the same
  run, job for job.
* A list item is updated as ``use[q] = use[q] + n``, never ``use[q] += n``: the compiled
  engine (mypyc) makes an augmented assignment to an item a generic, boxed addition,
  several times the cost of the typed one.
* Columns are lists, handed to the run's record as they are (:func:`replay`). The usage
  log is one column besides its times, the job whose run started (j) or ended (~j): the
  share, unit and count of each change are the job's (:class:`RunData` derives them when
  read).
* Waiting jobs are not one heap per queue (a hot share's queue holds tens of thousands): each
  queue keeps its head apart, a FIFO per priority level that arrivals join at the back (they
  come in order), and a small heap for entries that come out of order (requeued, re-prioritised)
  (:meth:`_Engine.enqueue`, :meth:`_Engine.find_head`): O(1) per job, not O(log n).
* Running jobs that could be preempted sit in one heap per queue (in-share victims) and one per
  unit (borrowed attempts), ordered by the victim order; runs end through one heap of running
  jobs. Both are as small as what runs.

A priority change files a fresh entry and leaves the old one behind; entries carry a token and
stale ones are dropped when they are met (lazy deletion), and the victim heaps are compacted
when stale entries outnumber live ones.

Scheduling re-examines only what an event can affect. A queue whose head changed, whose
running job's priority changed or whose own job ended is tried with every power (start,
reclaim, in-share preemption). A head that failed only for want of free capacity is filed by
unit and job size; freed capacity wakes the first of those that could fit, in scheduling
order, without looking at every queue. A head that could preempt in-share but lacked free
capacity is woken when enough is freed on its unit.
"""

from __future__ import annotations

import gc
import sys
from bisect import insort
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from heapq import heapify, heappop, heappush
from itertools import islice, repeat
from operator import add, le, mul
from typing import ClassVar, Final, Protocol

from .inputs import BorrowerOrder, HeadOfLine, RequeuePlace, SimulationOptions, VictimOrder
from .problem import Problem
from .results import (
    CROSS_SHARE,
    ENDED_PREEMPTED,
    ENDED_SUCCEEDED,
    IN_SHARE,
    NO_PREEMPTION,
    RawAttempt,
    RunData,
)

Progress = Callable[[int, int], None]

# Final: the compiled engine takes these as constants (INLINE_PHASES is read at run time).
_NEW: Final = 0
_WAITING: Final = 1
_RUNNING: Final = 2
_ENDED: Final = 3
INLINE_PHASES = True
"""Whether :meth:`_Engine.advance` runs the commonest phases inline (see the module's notes);
False runs them through their methods only, as tests do to check the copies agree (a module
variable, read at each call, so that the compiled engine can be switched too)."""
_INF: Final = float("inf")
_LATEST: Final = sys.float_info.max

QueueEntry = tuple[int, float, int, int]
"""(-priority, order time, job, token): a waiting job in scheduling order."""
_NO_ENTRY: QueueEntry = (0, 0.0, -1, -1)
Victim = tuple[int, float, int, int, int]
"""(priority or 0, -started, -run token, job, token): the victim order, first taken first."""
Candidate = tuple[int, float, float, int, int, int]
"""(over its limit?, order..., job, queue, token): a queue head in scheduling order."""


def replay(
    problem: Problem, options: SimulationOptions, progress: Progress | None = None
) -> RunData:
    """Simulate ``problem`` to the end; every job ends (the inputs were checked to fit). The
    record holds the run's own lists (and the problem's job columns): for a run measured
    once; :func:`run` for one that is kept."""
    with collection_paused():
        return _Engine(problem, options).run(progress)


def run(problem: Problem, options: SimulationOptions, progress: Progress | None = None) -> RunData:
    """:func:`replay`, its record compacted into arrays (:meth:`RunData.compacted`)."""
    return replay(problem, options, progress).compacted()


@contextmanager
def collection_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, on again after it if it was on.

    A replay makes no reference cycles, but its many tuples (and the problem compiler's and
    the figures' columns) would set off the collector's passes over every object the caller
    holds (a million jobs, say): about 5 % of a replay, for nothing."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class JobReports(Protocol):
    """What hears of each job's start, preemption and end from a :class:`SteppingEngine` (the
    emulator's service), at the engine's moment in emulated seconds."""

    def job_started(self, j: int, now: float, borrowed: bool) -> None: ...

    def job_preempted(self, j: int, now: float, by: int, cross_share: bool,
                      failed: bool) -> None: ...

    def job_ended(self, j: int, now: float) -> None: ...


class _Engine:
    """The whole state of one run; its methods are the phases of a simulated moment."""

    # One slot per field annotated below (where they are grouped by what they hold), and per
    # job column of the problem the engine reads (job_unit, job_count, duration, submitted,
    # priority, checkpoint, retries, job_group): those are the problem's own lists (priority a
    # copy), typed where JobColumns declares them.
    __slots__ = (
        "arrival_order", "attempts", "backfill", "blocked", "blocked_sizes",
        "blocked_token", "borrowed_now", "borrowed_running", "borrowed_total",
        "borrowed_victims", "borrows", "by_priority", "ceiling", "change_at", "change_job",
        "change_priority", "checkpoint", "dirty", "dirty_mark", "duration", "ended_jobs",
        "env", "failed", "fifo_borrowers", "finished", "finishing", "freed_flag",
        "full_sets", "head_entry", "head_job", "held_back", "held_queue", "in_share",
        "in_share_blocked", "in_share_later", "in_share_need", "in_share_victims", "in_use",
        "job_count", "job_group", "job_queue", "job_unit", "keep_progress", "later_units",
        "level_entries", "levels", "limit", "log_job", "log_time",
        "lost", "minimal", "n_changes", "n_jobs", "n_queues", "n_shares", "n_units",
        "n_waiting", "next_arrival", "next_change", "now", "order_time", "partly",
        "per_share_head", "preempted", "priority", "problem", "queue_borrows",
        "queue_in_share", "queue_reserve", "queue_share", "queue_token", "queues_of_share",
        "queues_of_unit", "requeue_at_back", "reserve", "reserved_idle", "retries",
        "run_token", "running", "saved", "spill", "started", "state", "submitted", "tokens",
        "use", "victim_token",
    )

    reports: ClassVar[bool] = False
    """Whether starts, preemptions and ends are reported (``on_*``): the stepping engine's
    are, a replay's not."""

    # The compiled problem and the options, as flat lists and flags.
    problem: Problem
    n_jobs: int
    n_units: int
    n_shares: int
    n_queues: int
    job_queue: list[int]
    env: list[int]
    limit: list[int]
    ceiling: list[float]
    reserve: list[bool]
    borrows: list[bool]
    in_share: list[bool]
    queue_share: list[int]
    queue_reserve: list[bool]
    queue_borrows: list[bool]
    queue_in_share: list[bool]
    queues_of_unit: list[list[int]]
    queues_of_share: list[list[int]]
    by_priority: bool
    fifo_borrowers: bool
    minimal: bool
    backfill: bool
    per_share_head: bool
    requeue_at_back: bool
    partly: bool
    keep_progress: bool
    # Jobs, indexed by job.
    order_time: list[float]
    state: list[int]
    saved: list[float]
    started: list[float]
    borrowed_now: list[int]
    queue_token: list[int]
    victim_token: list[int]
    run_token: list[int]
    preempted: list[int]
    failed: list[int]
    finished: list[float]
    lost: list[float]
    attempts: list[RawAttempt | list[RawAttempt] | None]
    # Capacity and queues, indexed by queue (share * n_units + unit) or unit.
    use: list[int]
    running: list[int]
    in_use: list[int]
    reserved_idle: list[int]
    borrowed_total: list[int]
    borrowed_running: list[int]
    head_entry: list[QueueEntry]
    head_job: list[int]
    levels: list[list[int]]
    level_entries: list[dict[int, deque[QueueEntry]]]
    spill: list[list[QueueEntry]]
    n_waiting: list[int]
    in_share_victims: list[list[Victim]]
    borrowed_victims: list[list[Victim]]
    finishing: list[tuple[float, int, int]]
    # The usage log: every change of a share's use of a unit.
    log_time: list[float]
    log_job: list[int]
    """The job whose run started (j) or ended (~j, negative) at each change: its share, unit
    and instances are the run's columns (:meth:`run_data`)."""
    # What scheduling remembers between passes and moments.
    held_back: list[int]
    held_queue: list[int]
    blocked: list[dict[int, list[Candidate]]]
    blocked_sizes: list[list[int]]
    blocked_token: list[int]
    in_share_blocked: list[set[int]]
    in_share_later: list[set[int]]
    in_share_need: dict[int, int | None]
    later_units: list[int]
    # The current moment and what comes next.
    tokens: int
    now: float
    ended_jobs: list[int]
    dirty: list[int]
    dirty_mark: list[int]
    freed_flag: list[int]
    full_sets: list[set[int]]
    arrival_order: list[int]
    next_arrival: int
    change_at: list[float]
    change_job: list[int]
    change_priority: list[int]
    n_changes: int
    next_change: int

    def __init__(self, p: Problem, options: SimulationOptions) -> None:
        self.problem = p
        n_jobs = self.n_jobs = len(p.job_ids)
        n_units = self.n_units = p.n_units
        n_shares = self.n_shares = len(p.share_names)
        n_queues = self.n_queues = n_shares * n_units

        job_share = p.job_share
        self.job_unit = job_unit = p.job_unit
        self.job_count = p.job_count
        self.duration = p.duration
        self.submitted = submitted = p.submitted
        self.priority = list(p.priority)  # changes apply to this copy
        self.checkpoint = p.checkpoint
        self.retries = p.retries
        if len(job_share) != n_jobs or len(job_unit) != n_jobs:
            raise ValueError("a problem's job columns differ in length")
        # (map in C: a comprehension over a zip costs a tuple per job, compiled or not.)
        self.job_queue = list(map(add, map(mul, job_share, repeat(n_units, n_jobs)), job_unit))
        self.job_group = p.job_group

        self.env = p.capacity  # what jobs can use: the rules model's usable capacity
        self.limit = limit = p.limit
        self.ceiling = p.ceiling
        self.reserve = reserve = p.reserve
        self.borrows = p.borrows
        self.in_share = p.in_share
        self.index_queues()

        self.by_priority = options.victim_order is VictimOrder.LOWEST_PRIORITY_THEN_NEWEST
        self.fifo_borrowers = options.borrower_order is BorrowerOrder.FIFO
        self.minimal = options.minimal_victim_set
        head_scope = options.head_scope
        self.backfill = head_scope is HeadOfLine.NONE
        self.per_share_head = head_scope is HeadOfLine.PER_SHARE
        self.requeue_at_back = options.requeue_place is RequeuePlace.BACK
        self.partly = options.reclaim_partly_borrowed_jobs
        self.keep_progress = options.keep_checkpoint_progress

        # The time a waiting job is ordered by: its submission, or its last preemption when
        # requeued at the back.
        self.order_time = list(submitted)
        self.state = [_NEW] * n_jobs
        self.saved = [0.0] * n_jobs  # run time secured by checkpoints
        self.started = [0.0] * n_jobs
        self.borrowed_now = [0] * n_jobs
        self.queue_token = [0] * n_jobs  # a waiting job's live entry's token, else 0
        self.victim_token = [0] * n_jobs
        self.run_token = [0] * n_jobs  # a running job's live end's token, else 0
        self.preempted = [0] * n_jobs
        self.failed = [0] * n_jobs
        self.finished = [0.0] * n_jobs
        self.lost = [0.0] * n_jobs
        self.attempts = [None] * n_jobs

        self.use = [0] * n_queues
        self.running = [0] * n_queues
        self.in_use = [0] * n_units
        self.reserved_idle = [
            sum(limit[i * n_units + k] for i in range(n_shares) if reserve[i])
            for k in range(n_units)
        ]
        self.borrowed_total = [0] * n_units
        self.borrowed_running = [0] * n_units
        # Waiting jobs, per queue: the head's entry, kept apart; a FIFO of entries per
        # priority level, which arrivals join at the back (they come in order); and a heap of
        # the entries that came out of order (requeued, re-prioritised).
        self.head_entry = [_NO_ENTRY] * n_queues
        self.head_job = [-1] * n_queues  # the head entry's job, -1 for an empty queue
        self.levels = [[] for _ in range(n_queues)]  # the levels' -priority, a heap
        self.level_entries = [{} for _ in range(n_queues)]  # -priority -> FIFO
        self.spill = [[] for _ in range(n_queues)]
        self.n_waiting = [0] * n_queues
        self.in_share_victims = [[] for _ in range(n_queues)]
        self.borrowed_victims = [[] for _ in range(n_units)]
        self.finishing = []

        self.log_time = []
        self.log_job = []

        # Shares with a head held back behind another type's head: only they need waking when
        # that head starts or its priority changes.
        self.held_back = [0] * n_shares
        self.held_queue = [0] * n_queues  # queues whose head is held back that way
        # Heads that failed only for want of free capacity, per unit and job size, so that
        # freed capacity wakes the first of them in order without looking at every queue.
        self.blocked = [{} for _ in range(n_units)]
        self.blocked_sizes = [[] for _ in range(n_units)]  # the buckets' sizes, sorted
        self.blocked_token = [0] * n_queues
        # Heads that could not preempt in-share only because too little was free: capacity
        # freed elsewhere on the unit may be what they lack.
        self.in_share_blocked = [set() for _ in range(n_units)]
        self.in_share_later = [set() for _ in range(n_units)]
        self.in_share_need = {}  # free capacity such a head's victims lack
        self.later_units = []  # units with such heads, to look at again at the next moment

        self.tokens = 0
        self.now = 0.0
        self.ended_jobs = []  # jobs that ended without releasing capacity, counted per moment
        # Units the events at one moment touched, to schedule once they are all applied.
        self.dirty = []
        self.dirty_mark = [0] * n_units
        self.freed_flag = [0] * n_units
        self.full_sets = [set() for _ in range(n_units)]
        # A history usually comes in submission order: then no sort (stable, so the same).
        self.arrival_order = (
            list(range(n_jobs)) if all(map(le, submitted, islice(submitted, 1, None)))
            else sorted(range(n_jobs), key=submitted.__getitem__)
        )
        self.next_arrival = 0
        self.change_at = p.change_at
        self.change_job = p.change_job
        self.change_priority = p.change_priority
        self.n_changes = len(p.change_at)
        self.next_change = 0

    def index_queues(self) -> None:
        """Each queue's share and its share's flags, and the queues each unit and each share
        has (those with a limit): derived from the limits when the engine starts and whenever
        they change."""
        n_units, n_shares, limit = self.n_units, self.n_shares, self.limit
        self.queue_share = [q // n_units for q in range(self.n_queues)]
        self.queue_reserve = [self.reserve[i] for i in self.queue_share]
        self.queue_borrows = [self.borrows[i] for i in self.queue_share]
        self.queue_in_share = [self.in_share[i] for i in self.queue_share]
        self.queues_of_unit = [
            [i * n_units + k for i in range(n_shares) if limit[i * n_units + k] > 0]
            for k in range(n_units)
        ]
        self.queues_of_share = [
            [i * n_units + k for k in range(n_units) if limit[i * n_units + k] > 0]
            for i in range(n_shares)
        ]

    # --------------------------------------------------------------------- what is reported

    def on_started(self, j: int, borrowed: bool) -> None:
        """j started (on borrowed capacity when ``borrowed``); told when :attr:`reports`
        (the stepping engine tells its listener)."""

    def on_preempted(self, j: int, by: int, kind: int, failed: bool) -> None:
        """j was preempted by ``by`` (CROSS_SHARE or IN_SHARE); it waits again unless failed
        (its retry budget was spent). Told when :attr:`reports`."""

    def on_ended(self, j: int) -> None:
        """j's run ended: its run time was over, or it was ended early. Told when
        :attr:`reports`."""

    # ------------------------------------------------------------------ one moment after another

    def run(self, progress: Progress | None) -> RunData:
        """Every moment something happens, its phases in order, until nothing is left."""
        self.advance(_INF, progress)
        return self.run_data()

    def advance(self, until: float, progress: Progress | None = None) -> None:
        """Every moment up to and including ``until``, its phases in order (a replay runs
        them all; the emulator, up to its clock's time).

        With :data:`INLINE_PHASES`, the commonest phases run here, their columns bound to locals: a
        job's end is :meth:`end_jobs`, an arrival :meth:`submit`, and a moment that touched
        one queue of a unit nothing else waits on starts that queue's heads as
        :meth:`schedule_unit` would, while they fit within their share's limit on free
        capacity, handing the first that does not to :meth:`offer`."""
        inline = INLINE_PHASES
        reports = self.reports
        n_jobs = self.n_jobs
        submitted = self.submitted
        arrival_order = self.arrival_order
        change_at = self.change_at
        n_changes = self.n_changes
        finishing = self.finishing
        state = self.state
        run_token = self.run_token
        queue_token = self.queue_token
        priority = self.priority
        order_time = self.order_time
        job_queue = self.job_queue
        job_unit = self.job_unit
        job_count = self.job_count
        duration = self.duration
        saved = self.saved
        started = self.started
        borrowed_now = self.borrowed_now
        finished = self.finished
        attempts = self.attempts
        env = self.env
        use = self.use
        limit = self.limit
        running = self.running
        in_use = self.in_use
        reserved_idle = self.reserved_idle
        borrowed_total = self.borrowed_total
        queue_reserve = self.queue_reserve
        queue_in_share = self.queue_in_share
        in_share_victims = self.in_share_victims
        victim_token = self.victim_token
        n_waiting = self.n_waiting
        head_job = self.head_job
        head_entry = self.head_entry
        levels = self.levels
        spill = self.spill
        blocked = self.blocked
        blocked_token = self.blocked_token
        in_share_blocked = self.in_share_blocked
        in_share_later = self.in_share_later
        log_time = self.log_time
        log_job = self.log_job
        later_units = self.later_units
        dirty = self.dirty
        ended_jobs = self.ended_jobs
        backfill = self.backfill
        by_priority = self.by_priority
        level_entries = self.level_entries
        borrowed_victims = self.borrowed_victims
        borrowed_running = self.borrowed_running
        ceiling = self.ceiling
        queue_borrows = self.queue_borrows
        in_share_need = self.in_share_need
        # Whether a moment's one queue can be served here: never with one head per share
        # (a head may be held back by another type's) or with backfill (every queue of the
        # unit is offered capacity).
        one_queue_here = inline and not backfill and not self.per_share_head
        completed = 0
        report_every = max(1, n_jobs // 100)
        next_report = report_every
        if until == _INF:
            until = _LATEST  # (so that one comparison stops at the end: no time is later)
        next_arrival = self.next_arrival
        arrival_at = submitted[arrival_order[next_arrival]] if next_arrival < n_jobs else _INF
        change_next = (change_at[self.next_change] if self.next_change < n_changes
                       else _INF)

        while True:
            # The next moment: the earliest arrival, priority change or live end (a run's
            # end is live while its token is the job's).
            t = arrival_at if arrival_at < change_next else change_next
            while finishing:
                top = finishing[0]
                if run_token[top[2]] == top[1]:
                    if top[0] < t:
                        t = top[0]
                    break
                heappop(finishing)
            if t > until:
                break
            self.now = now = t
            if later_units:
                self.recall_later_in_share_heads()
            # The queue the moment's inline events touched, while it is the only one (-1:
            # none yet; -2: more than one, all filed for schedule_touched as touch_queue
            # files them), its unit and whether a run there ended.
            touched = -1
            touched_unit = 0
            touched_freed = 0

            # Each phase is entered only when it has work: most moments have one event.
            if finishing and finishing[0][0] <= now:
                if not inline:
                    completed += self.end_jobs(now)
                else:
                    # end_jobs, inline (release's books for a run that ended).
                    while finishing and finishing[0][0] <= now:
                        _, token, j = heappop(finishing)
                        if run_token[j] != token:
                            continue
                        state[j] = _ENDED
                        q = job_queue[j]
                        k = job_unit[j]
                        n = job_count[j]
                        lim = limit[q]
                        before = use[q]
                        use[q] = after = before - n
                        in_use[k] = in_use[k] - n
                        if queue_reserve[q]:
                            reserved_idle[k] = reserved_idle[k] + n
                        if before > lim:
                            borrowed_total[k] = borrowed_total[k] - (
                                before - lim if after <= lim else n)
                        running[q] = running[q] - 1
                        borrowed = borrowed_now[j] == 1
                        if borrowed:
                            self.forget_borrowed_run(k)
                        record = (started[j], now, ENDED_SUCCEEDED, -1, NO_PREEMPTION, borrowed)
                        if attempts[j] is None:
                            attempts[j] = record
                        else:
                            self.add_attempt(j, record)
                        log_time.append(now)
                        log_job.append(~j)
                        if reports:
                            self.on_ended(j)
                        finished[j] = now
                        completed += 1
                        if touched == q:
                            touched_freed = 1
                        elif touched == -1:
                            touched, touched_unit, touched_freed = q, k, 1
                        else:
                            if touched >= 0:
                                self.touch_queue(touched_unit, touched, touched_freed)
                                touched = -2
                            self.touch_queue(k, q, 1)

            if arrival_at <= now:
                if not inline:
                    self.next_arrival = next_arrival
                    self.submit(now)
                    next_arrival = self.next_arrival
                    arrival_at = (submitted[arrival_order[next_arrival]]
                                  if next_arrival < n_jobs else _INF)
                else:
                    # submit, inline (enqueue for a job that arrives).
                    while arrival_at <= now:
                        j = arrival_order[next_arrival]
                        next_arrival += 1
                        arrival_at = (submitted[arrival_order[next_arrival]]
                                      if next_arrival < n_jobs else _INF)
                        self.tokens = token = self.tokens + 1
                        queue_token[j] = token
                        state[j] = _WAITING
                        q = job_queue[j]
                        n_waiting[q] = n_waiting[q] + 1
                        entry = (-priority[j], order_time[j], j, token)
                        if head_job[q] < 0:
                            head_entry[q] = entry
                            head_job[q] = j
                        elif entry < head_entry[q]:
                            self.file_entry(q, head_entry[q])
                            head_entry[q] = entry
                            head_job[q] = j
                        else:
                            # file_entry, inline for an arrival joining its level's FIFO.
                            fifo = level_entries[q].get(entry[0])
                            if fifo and entry > fifo[-1]:
                                fifo.append(entry)
                            else:
                                self.file_entry(q, entry)
                            if not backfill:
                                continue
                        if touched == q:
                            continue
                        if touched == -1:
                            touched, touched_unit, touched_freed = q, job_unit[j], 0
                        else:
                            if touched >= 0:
                                self.touch_queue(touched_unit, touched, touched_freed)
                                touched = -2
                            self.touch_queue(job_unit[j], q, 0)

            if change_next <= now:
                self.apply_priority_changes()
                change_next = (change_at[self.next_change] if self.next_change < n_changes
                               else _INF)

            if touched >= 0:
                k = touched_unit
                q = touched
                if dirty or not one_queue_here or in_share_later[k] or (
                    touched_freed and (blocked[k] or in_share_blocked[k])
                ):
                    self.touch_queue(k, q, touched_freed)
                    self.schedule_touched()
                else:
                    # schedule_unit for one queue and nothing else, inline: its heads start
                    # while they fit within their share's limit on free capacity.
                    j = head_job[q]
                    if j >= 0:
                        blocked_token[q] = 0  # q's filed head goes stale, as in schedule_unit
                        capacity = env[k]
                        lim = limit[q]
                        reserved = queue_reserve[q]
                        while True:
                            n = job_count[j]
                            current = use[q]
                            after = current + n
                            free = capacity - in_use[k] - reserved_idle[k]
                            if reserved:
                                free += lim - current
                            if n > free:
                                if after > lim:
                                    if not queue_in_share[q] and not (
                                        queue_borrows[q] and after <= ceiling[q]
                                    ):
                                        # cannot_start_over_limit's commonest case, inline:
                                        # it may neither borrow that much nor preempt
                                        # in-share.
                                        in_share_need.pop(q, None)
                                        j = -1
                                    elif self.cannot_start_over_limit(j, q, after, free):
                                        j = -1  # as offer would find: nothing to do
                                break
                            if after > lim:
                                # Over its share's limit: it starts here only by borrowing
                                # what is free (try_start's case), else offer decides.
                                if not queue_borrows[q] or after > ceiling[q]:
                                    if self.cannot_start_over_limit(j, q, after, free):
                                        j = -1
                                    break
                                borrowed = True
                            else:
                                borrowed = False
                            remaining = duration[j] - saved[j]
                            if remaining <= 0.0:
                                self.start(j, q, k, borrowed)
                            else:
                                # start, inline (on free capacity, nobody preempted).
                                n_waiting[q] = n_waiting[q] - 1
                                state[j] = _RUNNING
                                queue_token[j] = 0
                                # find_head, inline for its commonest case: the first entry
                                # of the highest level's FIFO is live and comes before every
                                # entry that came out of order (the heap's first, live or
                                # stale, is the least of them).
                                if levels[q]:
                                    fifo = level_entries[q][levels[q][0]]
                                    if fifo and queue_token[fifo[0][2]] == fifo[0][3] and (
                                        not spill[q] or fifo[0] < spill[q][0]
                                    ):
                                        entry = fifo.popleft()
                                        head_entry[q] = entry
                                        head_job[q] = entry[2]
                                    else:
                                        self.find_head(q)
                                elif spill[q]:
                                    self.find_head(q)
                                else:
                                    head_job[q] = -1
                                started[j] = now
                                self.tokens = token = self.tokens + 1
                                run_token[j] = token
                                # (Any victim entry of an earlier attempt goes stale.)
                                victim_token[j] = token
                                heappush(finishing, (now + remaining, token, j))
                                use[q] = after
                                in_use[k] = in_use[k] + n
                                if reserved:
                                    reserved_idle[k] = reserved_idle[k] - n
                                running[q] = running[q] + 1
                                borrowed_now[j] = borrowed
                                if borrowed:
                                    borrowed_total[k] = borrowed_total[k] + (
                                        after - lim if current <= lim else n)
                                    borrowed_running[k] = borrowed_running[k] + 1
                                    victim = (priority[j] if by_priority else 0, -now, -token, j,
                                              token)
                                    heappush(borrowed_victims[k], victim)
                                elif queue_in_share[q]:
                                    victim = (priority[j] if by_priority else 0, -now, -token, j,
                                              token)
                                if queue_in_share[q]:
                                    # push_victim, inline; stale entries (of runs that ended)
                                    # are dropped when they outnumber live ones.
                                    heap = in_share_victims[q]
                                    heappush(heap, victim)
                                    if len(heap) > 2 * running[q] + 64:
                                        self.compact_in_share_victims(q)
                                log_time.append(now)
                                log_job.append(j)
                                if reports:
                                    self.on_started(j, borrowed)
                            j = head_job[q]
                            if j < 0:
                                break
                        if j >= 0:
                            self.offer(k, [self.candidate(q, j)], {q}, touched_freed == 1)
            elif dirty:
                self.schedule_touched()

            if progress is not None:
                completed += len(ended_jobs)
                ended_jobs.clear()
                if completed >= next_report:
                    progress(completed, n_jobs)
                    next_report = completed + report_every

        self.next_arrival = next_arrival
        ended_jobs.clear()  # (jobs that ended without a run to end: counted for progress)
        if progress is not None:
            progress(completed, n_jobs)

    def end_jobs(self, now: float) -> int:
        """Jobs whose run time is over end; each frees capacity, and its share's own head may
        now fit within its limit or preempt in-share. Returns how many ended."""
        finishing = self.finishing
        ended = 0
        while finishing and finishing[0][0] <= now:
            _, token, j = heappop(finishing)
            if self.run_token[j] != token:
                continue
            self.state[j] = _ENDED
            q = self.job_queue[j]
            k = self.job_unit[j]
            self.release(j, q, k, (self.started[j], now, ENDED_SUCCEEDED, -1, NO_PREEMPTION,
                                   self.borrowed_now[j] == 1))
            if self.reports:
                self.on_ended(j)
            self.finished[j] = now
            ended += 1
            self.touch(k)
            self.freed_flag[k] = 1
            self.full_sets[k].add(q)
        return ended

    def submit(self, now: float) -> None:
        """Jobs arriving now join their queue; a new head (or, with backfill, any arrival)
        has its unit scheduled with every power."""
        submitted = self.submitted
        arrival_order = self.arrival_order
        n_jobs = self.n_jobs
        next_arrival = self.next_arrival
        while next_arrival < n_jobs and submitted[arrival_order[next_arrival]] <= now:
            j = arrival_order[next_arrival]
            next_arrival += 1
            self.enqueue(j)
            q = self.job_queue[j]
            if self.backfill or self.head_job[q] == j:
                k = self.job_unit[j]
                self.touch(k)
                self.full_sets[k].add(q)
        self.next_arrival = next_arrival

    def schedule_touched(self) -> None:
        """Schedule every unit this moment touched, in unit order (a fixed order keeps runs
        reproducible)."""
        dirty = self.dirty
        if len(dirty) > 1:
            dirty.sort()
        full_sets = self.full_sets
        freed_flag = self.freed_flag
        dirty_mark = self.dirty_mark
        for k in dirty:
            full_queues = full_sets[k]
            self.schedule_unit(k, full_queues, freed_flag[k] == 1)
            full_queues.clear()
            freed_flag[k] = 0
            dirty_mark[k] = 0
        dirty.clear()

    def touch_queue(self, k: int, q: int, freed: int) -> None:
        """Schedule unit k, with q's head given every power (and capacity freed on k when
        ``freed``), once this moment's events are all applied."""
        self.touch(k)
        if freed:
            self.freed_flag[k] = 1
        self.full_sets[k].add(q)

    def touch(self, k: int) -> None:
        """Schedule unit k once this moment's events are all applied."""
        if not self.dirty_mark[k]:
            self.dirty_mark[k] = 1
            self.dirty.append(k)

    def recall_later_in_share_heads(self) -> None:
        """Heads denied in-share preemption at the moment their share was reclaimed from get
        it now (see :meth:`file_waiting_heads`): their units are scheduled again."""
        dirty_mark = self.dirty_mark
        dirty = self.dirty
        for k in self.later_units:
            if not dirty_mark[k]:
                dirty_mark[k] = 1
                dirty.append(k)
        self.later_units.clear()

    def apply_priority_changes(self) -> None:
        """Priority changes due now: a waiting job takes its new place in its queue (the old
        entry goes stale), a running one its new place in the victim order; either way its
        queue is tried again with every power."""
        now = self.now
        change_at = self.change_at
        state = self.state
        priority = self.priority
        n_changes = self.n_changes
        next_change = self.next_change
        while next_change < n_changes and change_at[next_change] <= now:
            j = self.change_job[next_change]
            new = self.change_priority[next_change]
            next_change += 1
            if state[j] == _ENDED or priority[j] == new:
                continue
            priority[j] = new
            q = self.job_queue[j]
            k = self.job_unit[j]
            if state[j] == _WAITING:
                if self.head_job[q] == j:
                    self.find_head(q)  # the next one, until j takes its new place
                self.enqueue(j)
                # Requeued, not added: the old entry is now stale.
                self.n_waiting[q] = self.n_waiting[q] - 1
                if self.per_share_head:
                    self.wake_share(q)
            else:
                self.push_victim(j, q, k)
            self.touch(k)
            self.full_sets[k].add(q)
        self.next_change = next_change

    def run_data(self) -> RunData:
        p = self.problem
        return RunData(
            job_ids=p.job_ids,
            share_names=p.group_names,
            unit_names=p.unit_names,
            job_share=self.job_group,
            job_unit=self.job_unit,
            job_count=self.job_count,
            submitted=self.submitted,
            priority=self.priority,
            status_failed=self.failed,
            finished=self.finished,
            lost=self.lost,
            attempts=self.attempts,
            own_limits=p.group_limits,
            log_time=self.log_time,
            log_job=self.log_job,
        )

    # ---------------------------------------------------------------- scheduling one unit

    def schedule_unit(self, k: int, full_queues: set[int], freed: bool) -> None:
        """Start what can start on unit k, in order: jobs within their share's limit first,
        then borrowers, each group first come first served. Queues in ``full_queues`` (a new
        head, a changed priority, their own job ended) may also preempt.

        Gathers the heads this moment may have helped and offers them capacity
        (:meth:`offer`)."""
        head_job = self.head_job
        blocked = self.blocked[k]
        in_share_blocked = self.in_share_blocked[k]
        work: list[Candidate]
        full: set[int]
        if len(full_queues) == 1 and not self.in_share_later[k] and not (
            freed and (blocked or in_share_blocked or self.backfill)
        ) and not self.per_share_head:
            # Most moments touch one queue and nothing else waits for what they free: its
            # heads are offered capacity one after another, those that fit within its
            # share's limit on free capacity started here (as the loop below would), and
            # the loop gets the first that does not.
            (q,) = full_queues
            j = head_job[q]
            if j < 0:
                return
            self.blocked_token[q] = 0  # q's filed head goes stale, as a candidate makes it
            j = self.start_within_limit(j, q, k)
            if j < 0:
                return
            work = [self.candidate(q, j)]
            full = {q}
        else:
            # The heads to offer capacity to, and which of them may use every power: the
            # touched queues, in-share heads that waited for free capacity (when some was
            # freed, or their delay is over) and, with backfill, every queue of k.
            work = []
            full = set()
            for q in full_queues:
                j = head_job[q]
                if j >= 0:
                    work.append(self.candidate(q, j))
                    full.add(q)
            later = self.in_share_later[k]
            if later:
                in_share_blocked |= later
                later.clear()
                self.wake_in_share(k, work, full)
            elif freed and in_share_blocked:
                self.wake_in_share(k, work, full)
            if freed and self.backfill:
                for q in self.queues_of_unit[k]:
                    if q not in full:
                        j = head_job[q]
                        if j >= 0:
                            work.append(self.candidate(q, j))
            if not work and not (freed and blocked):
                return  # (a job of an otherwise empty queue ended)
            if len(work) > 1:
                heapify(work)
        self.offer(k, work, full, freed)

    def offer(self, k: int, work: list[Candidate], full: set[int], freed: bool) -> None:
        """Offer k's capacity to the heads in ``work`` (those of ``full`` with every power),
        merged with the heads filed earlier as waiting for free capacity, in scheduling order
        (:meth:`try_start` each, its commonest case inline); file the heads that still wait
        (:meth:`file_waiting_heads`); and pass again while a preemption freed more than its
        preemptor took, since heads that failed before it may fit now."""
        head_job = self.head_job
        blocked = self.blocked[k]
        in_share_blocked = self.in_share_blocked[k]
        blocked_token = self.blocked_token
        use = self.use
        limit = self.limit
        job_count = self.job_count
        in_use = self.in_use
        queue_reserve = self.queue_reserve
        simple_heads = not self.per_share_head  # no head is held back by another type's
        capacity = self.env[k]
        releases = 0  # how often a preemption left more capacity free than before
        woken_at = 0  # releases when in-share heads were last woken
        while True:
            # One pass. Most offer one or two heads.
            retry: list[tuple[int, int, int]] = []
            while True:
                # Without freed capacity no blocked head can start: every pass leaves them
                # needing more than is free, and starts and requeues never add to it.
                found = self.best_blocked(k) if freed and blocked else None
                if work and (found is None or work[0] < found[0]):
                    entry = heappop(work)
                    from_work = True
                elif found is not None:
                    entry = heappop(found[1])
                    from_work = False
                else:
                    break
                j = entry[3]
                q = entry[4]
                if blocked_token[q] != entry[5] or head_job[q] != j:
                    continue
                n = job_count[j]
                current = use[q]
                within = current + n <= limit[q]
                if within == entry[0]:  # (phase 0 is within the limit)
                    heappush(work, self.candidate(q, j))
                    continue
                if within and simple_heads:
                    free = capacity - in_use[k] - self.reserved_idle[k]
                    if queue_reserve[q]:
                        free += limit[q] - current
                    if n <= free:
                        # try_start's commonest case: nobody is preempted.
                        self.start(j, q, k, False)
                        full.add(q)
                        h = head_job[q]
                        if h >= 0:
                            heappush(work, self.candidate(q, h))
                        continue
                touched: list[int] = []
                before = in_use[k]
                if self.try_start(j, q, k, from_work and q in full, touched):
                    if in_use[k] < before:
                        freed = True  # a preemption freed more than the preemptor took
                        releases += 1
                    # The share's next job may start too, with every power. A share that
                    # lost borrowed capacity may start again only on what is free: letting
                    # its requeued job preempt in-share at the same moment would push the
                    # share below its own limit right after a reclaim that must not; it may
                    # preempt in-share at its share's next event.
                    full.add(q)
                    for other in (q, *touched):
                        other_head = head_job[other]
                        if other_head >= 0:
                            heappush(work, self.candidate(other, other_head))
                else:
                    if self.backfill:
                        self.backfill_queue(q, k)
                    retry.append((j, q, releases))
            again = self.file_waiting_heads(k, retry, full, releases) if retry else False
            if in_share_blocked and releases > woken_at:
                again = True
            if not again:
                break
            woken_at = releases
            self.wake_in_share(k, work, full)
            # Capacity was freed after some of these failed: offer it to them too.

    def start_within_limit(self, j: int, q: int, k: int) -> int:
        """Start q's heads, from j on, while each fits within its share's limit on free
        capacity (try_start's commonest case: nobody is preempted); returns the first that
        does not, or -1 when none is left."""
        job_count = self.job_count
        use = self.use
        limit = self.limit
        in_use = self.in_use
        reserved_idle = self.reserved_idle
        head_job = self.head_job
        capacity = self.env[k]
        reserved = self.queue_reserve[q]
        lim = limit[q]
        while True:
            n = job_count[j]
            current = use[q]
            if current + n > lim:
                return j
            free = capacity - in_use[k] - reserved_idle[k]
            if reserved:
                free += lim - current
            if n > free:
                return j
            self.start(j, q, k, False)
            j = head_job[q]
            if j < 0:
                return j

    def cannot_start_over_limit(self, j: int, q: int, wanted: int, free: int) -> bool:
        """For a head j of q that would take its share to ``wanted`` instances, over its
        limit, with ``free`` instances free and nothing else offered capacity on its unit:
        whether :meth:`offer` is sure to start nothing and file nothing, only to update what
        is known of q's in-share victims (which is done here). So it is when the share may
        not borrow that much and cannot preempt in-share: it runs nothing of the unit, or
        nothing that j outranks."""
        if self.queue_borrows[q] and wanted <= self.ceiling[q]:
            return False  # it may borrow, or be filed to borrow when capacity is freed
        in_share_need = self.in_share_need
        if not self.queue_in_share[q] or not self.running[q]:
            in_share_need.pop(q, None)
            return True
        if (not self.by_priority or free + self.use[q] < self.job_count[j]
                or self.lowest_victim_priority(self.in_share_victims[q]) < self.priority[j]):
            return False  # it may preempt in-share, or wait for capacity to
        in_share_need[q] = None  # (in_share_victim_set's answer: no amount would do)
        return True

    def file_waiting_heads(
        self, k: int, retry: list[tuple[int, int, int]], full: set[int], releases: int
    ) -> bool:
        """File the heads that could not start where what they lack will wake them: free
        capacity (:meth:`defer`) or, for in-share preemption, enough free capacity on k.
        Returns whether one failed before a later preemption freed capacity (try again)."""
        held_queue = self.held_queue
        in_share_need = self.in_share_need
        again = False
        for j, q, seen in retry:
            if held_queue[q]:
                continue  # woken by its share's head, not by freed capacity
            if self.head(q) == j:
                self.defer(j, q, k)
                if self.could_preempt_in_share(q, j):
                    # A job just reclaimed from gets this power only at a later moment.
                    if q in full:
                        if in_share_need.get(q, 0) is not None:
                            self.in_share_blocked[k].add(q)
                    else:
                        in_share_need.pop(q, None)
                        self.in_share_later[k].add(q)
                        self.later_units.append(k)
                again = again or seen < releases
        return again

    def try_start(self, j: int, q: int, k: int, full: bool, touched: list[int]) -> bool:
        """Start j (the head of q) if the rules allow, preempting where they allow it: within
        its share's limit on free capacity, else by reclaiming lent capacity; over its limit
        only on idle capacity (borrowing); with every power (``full``), by preempting
        lower-priority jobs of its share. Queues that lost jobs are added to ``touched``."""
        share = self.queue_share[q]
        if self.per_share_head:
            if self.behind_share_head(j, q):
                # Held back by its share's head, not by capacity: only that head starting
                # (or changing priority) can release it, and wake_share then does.
                self.held_back[share] = 1
                self.held_queue[q] = 1
                return False
            self.held_queue[q] = 0
        n = self.job_count[j]
        current = self.use[q]
        free = self.available(q, k)
        if current + n <= self.limit[q]:
            if n <= free:
                self.start(j, q, k, False)
                return True
            lent = self.borrowed_total[k]
            if lent and free + lent >= n and self.reclaim(j, q, k, n - free, touched):
                return True
        elif self.borrows[share] and current + n <= self.ceiling[q] and n <= free:
            self.start(j, q, k, True)
            return True
        # (free + current < n: even preempting all of the share would not make room.)
        if full:
            self.in_share_need.pop(q, None)  # whatever was learnt about an earlier head
            if self.running[q] and self.in_share[share] and free + current >= n:
                return self.preempt_in_share(j, q, k, free)
        return False

    def reclaim(self, j: int, q: int, k: int, need: int, touched: list[int]) -> bool:
        """Cross-share preemption: take back ``need`` lent instances of k for j, which fits
        within its share's limit, if borrowers hold enough."""
        victims = self.cross_share_victims(k, need)
        if victims is None:
            return False
        job_queue = self.job_queue
        for v in victims:
            self.preempt(v, j, CROSS_SHARE)
            touched.append(job_queue[v])
        self.start(j, q, k, False)
        return True

    def preempt_in_share(self, j: int, q: int, k: int, free: int) -> bool:
        """In-share preemption: make room for j by preempting lower-priority jobs of its
        share, if that (with what is free) is enough."""
        victims = self.in_share_victim_set(q, j, free)
        if victims is None:
            return False
        for v in victims:
            self.preempt(v, j, IN_SHARE)
        self.start(j, q, k, self.use[q] + self.job_count[j] > self.limit[q])
        return True

    def backfill_queue(self, q: int, k: int) -> bool:
        """Start later jobs of q that fit now, in queue order, without preempting anyone."""
        started_any = False
        lim = self.limit[q]
        can_borrow = self.borrows[self.queue_share[q]]
        queue_token = self.queue_token
        job_count = self.job_count
        use = self.use
        for entry in sorted(self.entries(q)):
            free = self.available(q, k)
            if free <= 0:
                break
            j = entry[2]
            if queue_token[j] != entry[3]:
                continue
            n = job_count[j]
            if n > free:
                continue
            current = use[q]
            if current + n <= lim:
                self.start(j, q, k, False)
            elif can_borrow and current + n <= self.ceiling[q]:
                self.start(j, q, k, True)
            else:
                continue
            started_any = True
        return started_any

    # ------------------------------------------------------------- queues and the capacity books

    def head(self, q: int) -> int:
        """The first waiting job of queue q, or -1."""
        return self.head_job[q]

    def enqueue(self, j: int) -> None:
        """j waits in its queue, at its place in scheduling order (the head's place, or
        filed behind it)."""
        self.tokens = token = self.tokens + 1
        self.queue_token[j] = token
        self.state[j] = _WAITING
        q = self.job_queue[j]
        self.n_waiting[q] = self.n_waiting[q] + 1
        entry = (-self.priority[j], self.order_time[j], j, token)
        if self.head_job[q] < 0:
            pass  # the only one: it waits as the head alone
        elif entry < self.head_entry[q]:
            self.file_entry(q, self.head_entry[q])  # the head it overtakes waits behind it
        else:
            self.file_entry(q, entry)
            return
        self.head_entry[q] = entry
        self.head_job[q] = j

    def file_entry(self, q: int, entry: QueueEntry) -> None:
        """A waiting job's entry, not the head's, into queue q: at the back of its priority
        level's FIFO when it comes in order (arrivals do), at its front when it comes before
        all of it (a head overtaken), else into the heap of out-of-order entries."""
        level = entry[0]
        entries = self.level_entries[q]
        fifo = entries.get(level)
        if fifo is None:
            entries[level] = deque((entry,))
            heappush(self.levels[q], level)
        elif not fifo or entry > fifo[-1]:  # (a FIFO its head left may be empty)
            fifo.append(entry)
        elif entry < fifo[0]:
            fifo.appendleft(entry)
        else:
            heappush(self.spill[q], entry)

    def find_head(self, q: int) -> None:
        """Queue q's next head, its head having left: the first live entry of the highest
        level's FIFO or of the heap of out-of-order entries, taken out of them (stale
        entries before it are dropped)."""
        levels = self.levels[q]
        spill = self.spill[q]
        if not levels and not spill:
            self.head_job[q] = -1
            return
        queue_token = self.queue_token
        entries = self.level_entries[q]
        best: QueueEntry | None = None
        fifo: deque[QueueEntry] | None = None
        while levels:
            fifo = entries[levels[0]]
            while fifo:
                entry = fifo[0]
                if queue_token[entry[2]] == entry[3]:
                    best = entry
                    break
                fifo.popleft()
            if best is not None:
                break
            del entries[heappop(levels)]
        while spill:
            entry = spill[0]
            if queue_token[entry[2]] == entry[3]:
                if best is None or entry < best:
                    best = heappop(spill)
                    fifo = None
                break
            heappop(spill)
        if best is None:
            self.head_job[q] = -1
            return
        if fifo is not None:
            fifo.popleft()
        self.head_entry[q] = best
        self.head_job[q] = best[2]

    def entries(self, q: int) -> list[QueueEntry]:
        """Every entry of queue q, its head's first (stale ones included), in no order."""
        found = [self.head_entry[q]] if self.head_job[q] >= 0 else []
        found += self.spill[q]
        for fifo in self.level_entries[q].values():
            found += fifo
        return found

    def push_victim(self, j: int, q: int, k: int) -> None:
        self.tokens = tokens = self.tokens + 1
        self.victim_token[j] = tokens
        entry = (self.priority[j] if self.by_priority else 0, -self.started[j],
                 -self.run_token[j], j, tokens)
        if self.queue_in_share[q]:
            heappush(self.in_share_victims[q], entry)
        if self.borrowed_now[j]:
            heappush(self.borrowed_victims[k], entry)

    def start(self, j: int, q: int, k: int, borrowed: bool) -> None:
        """j, a waiting job of q, starts now (its share over its limit when ``borrowed``)."""
        now = self.now
        n = self.job_count[j]
        self.n_waiting[q] = self.n_waiting[q] - 1
        state = self.state
        state[j] = _RUNNING
        self.queue_token[j] = 0  # its queue entry goes stale
        if self.head_job[q] == j:  # (a backfilled job need not be the head)
            self.find_head(q)
        if self.per_share_head:
            self.wake_share(q)
        remaining = self.duration[j] - self.saved[j]
        if remaining <= 0.0:
            # A job with no work left ends as it starts: it never holds capacity, so it
            # can neither be a victim nor make its share look busier than it is.
            state[j] = _ENDED
            self.finished[j] = now
            record: RawAttempt = (now, now, ENDED_SUCCEEDED, -1, NO_PREEMPTION, borrowed)
            if self.attempts[j] is None:
                self.attempts[j] = record
            else:
                self.add_attempt(j, record)
            self.ended_jobs.append(j)
            if self.reports:
                self.on_started(j, borrowed)
                self.on_ended(j)
            return
        self.started[j] = now
        self.tokens = tokens = self.tokens + 1
        self.run_token[j] = tokens
        heappush(self.finishing, (now + remaining, tokens, j))
        lim = self.limit[q]
        use = self.use
        before = use[q]
        after = before + n
        use[q] = after
        self.in_use[k] = self.in_use[k] + n
        if self.queue_reserve[q]:
            self.reserved_idle[k] = self.reserved_idle[k] - n
        if after > lim:
            self.borrowed_total[k] = self.borrowed_total[k] + (after - lim if before <= lim else n)
        self.running[q] = self.running[q] + 1
        self.borrowed_now[j] = borrowed
        if borrowed:
            self.borrowed_running[k] = self.borrowed_running[k] + 1
        if self.queue_in_share[q] or borrowed:
            self.push_victim(j, q, k)
        elif self.victim_token[j]:
            # Not a victim candidate this time: entries left from an earlier (borrowed)
            # attempt must not look valid.
            self.tokens = tokens = tokens + 1
            self.victim_token[j] = tokens
        self.log_time.append(now)
        self.log_job.append(j)
        if self.reports:
            self.on_started(j, borrowed)

    def release(self, j: int, q: int, k: int, record: RawAttempt) -> None:
        """j's run on q ended as ``record`` says: its instances go back to the books."""
        n = self.job_count[j]
        lim = self.limit[q]
        use = self.use
        before = use[q]
        after = before - n
        use[q] = after
        self.in_use[k] = self.in_use[k] - n
        if self.queue_reserve[q]:
            self.reserved_idle[k] = self.reserved_idle[k] + n
        if before > lim:
            self.borrowed_total[k] = self.borrowed_total[k] - (before - lim if after <= lim else n)
        running = self.running
        running[q] = running[q] - 1
        if self.borrowed_now[j]:
            self.forget_borrowed_run(k)
        if self.queue_in_share[q] and len(self.in_share_victims[q]) > 2 * running[q] + 64:
            self.compact_in_share_victims(q)
        if self.attempts[j] is None:
            self.attempts[j] = record
        else:
            self.add_attempt(j, record)
        self.log_time.append(self.now)
        self.log_job.append(~j)

    def forget_borrowed_run(self, k: int) -> None:
        """One borrowed run of k fewer; its victim heap is compacted when stale entries
        outnumber live ones."""
        borrowed_running = self.borrowed_running
        borrowed_running[k] = borrowed_running[k] - 1
        heap = self.borrowed_victims[k]
        if len(heap) > 2 * borrowed_running[k] + 64:
            self.borrowed_victims[k] = _compact(heap, self.state, self.victim_token)

    def compact_in_share_victims(self, q: int) -> None:
        self.in_share_victims[q] = _compact(self.in_share_victims[q], self.state,
                                            self.victim_token)

    def add_attempt(self, j: int, record: RawAttempt) -> None:
        """j's second or later attempt: its attempts become a list."""
        previous = self.attempts[j]
        if isinstance(previous, tuple):
            self.attempts[j] = [previous, record]
        elif previous is None:
            self.attempts[j] = record
        else:
            previous.append(record)

    def preempt(self, v: int, by: int, kind: int) -> None:
        """End v's attempt: checkpointed progress is kept, the rest lost; v waits again, or
        fails when its retry budget is spent."""
        now = self.now
        q = self.job_queue[v]
        k = self.job_unit[v]
        ran = now - self.started[v]
        interval = self.checkpoint[v]
        kept = (ran // interval) * interval if self.keep_progress and interval > 0.0 else 0.0
        self.saved[v] = self.saved[v] + kept
        self.lost[v] = self.lost[v] + (ran - kept)
        self.state[v] = _ENDED  # stale in every heap until requeued
        self.run_token[v] = 0  # its planned end goes stale
        self.release(v, q, k, (self.started[v], now, ENDED_PREEMPTED, by, kind,
                               self.borrowed_now[v] == 1))
        self.preempted[v] = self.preempted[v] + 1
        budget = self.retries[v]
        if 0 <= budget < self.preempted[v]:
            self.failed[v] = 1
            self.finished[v] = now
            self.ended_jobs.append(v)
        else:
            if self.requeue_at_back:
                self.order_time[v] = now
            self.enqueue(v)
        if self.reports:
            self.on_preempted(v, by, kind, self.failed[v] == 1)

    def available(self, q: int, k: int) -> int:
        """Instances the share of q could start on now without preempting anyone."""
        free = self.env[k] - self.in_use[k] - self.reserved_idle[k]
        if self.queue_reserve[q]:
            free += self.limit[q] - self.use[q]
        return free

    # ----------------------------------------------------------------------- choosing victims

    def cross_share_victims(self, k: int, need: int) -> list[int] | None:
        # Jobs wholly on borrowed capacity first: reclaiming them leaves every share at or
        # above its own limit. Only when they free too little are jobs that straddle their
        # share's limit taken too: AWS promises a lender gets back what it lent ("preemption
        # will allow any quota share to reclaim resources that it has lent to others") and
        # weighs "the number ... of instances a job is borrowing", so a job borrowing part of
        # its instances is reclaimable; without this a lender waits behind a multi-instance
        # borrower until that job ends.
        chosen = self.reclaim_set(k, need, False)
        if chosen is None and self.partly:
            chosen = self.reclaim_set(k, need, True)
        return chosen

    def reclaim_set(self, k: int, need: int, straddling: bool) -> list[int] | None:
        state = self.state
        victim_token = self.victim_token
        job_queue = self.job_queue
        job_count = self.job_count
        use = self.use
        limit = self.limit
        taken: list[Victim] = []
        chosen: list[int] = []
        after: dict[int, int] = {}
        freed = 0
        for v in _live_victims(self.borrowed_victims[k], state, victim_token, taken):
            qv = job_queue[v]
            now_use = after.get(qv, use[qv])
            nv = job_count[v]
            lim = limit[qv]
            if now_use <= lim or (not straddling and now_use - nv < lim):
                continue  # its share is not borrowing, or would drop below its own limit
            after[qv] = now_use - nv
            chosen.append(v)
            freed += nv
            if freed >= need:
                break
        _put_back(self.borrowed_victims[k], taken)
        if freed < need:
            return None
        if self.minimal:
            return _fewest(chosen, freed, job_count, lambda left: left >= need)
        return chosen

    def in_share_victim_set(self, q: int, j: int, free: int) -> list[int] | None:
        priority = self.priority
        job_count = self.job_count
        by_priority = self.by_priority
        wanted = priority[j]
        n = job_count[j]
        lim = self.limit[q]
        top = self.ceiling[q] if self.borrows[self.queue_share[q]] else lim
        current = self.use[q]

        def fits(freed: int) -> bool:
            return current - freed + n <= top and free + freed >= n

        heap = self.in_share_victims[q]
        if by_priority and self.lowest_victim_priority(heap) >= wanted:
            # Most tries end here: no running job of the share ranks below j.
            self.in_share_need[q] = None
            return None
        taken: list[Victim] = []
        chosen: list[int] = []
        freed = 0
        for v in _live_victims(heap, self.state, self.victim_token, taken):
            if priority[v] >= wanted:
                if by_priority:
                    break  # the heap is in priority order: no lower priority remains
                continue
            chosen.append(v)
            freed += job_count[v]
            if fits(freed):
                break
        _put_back(heap, taken)
        if not chosen or not fits(freed):
            # Remember how much would have to be free for these victims to make room; None
            # when no amount would (the share's own limit or borrow limit stands in the way).
            self.in_share_need[q] = n - freed if chosen and current - freed + n <= top else None
            return None
        if self.minimal:
            return _fewest(chosen, freed, job_count, fits)
        return chosen

    def lowest_victim_priority(self, heap: list[Victim]) -> float:
        """The priority of the first live entry of a victim heap in priority order (stale
        entries above it dropped), or infinity for none."""
        top = self.first_live_victim(heap)
        return _INF if top is None else top[0]

    def first_live_victim(self, heap: list[Victim]) -> Victim | None:
        """The first live entry of a victim heap (stale entries above it dropped), or None."""
        state = self.state
        victim_token = self.victim_token
        while heap:
            top = heap[0]
            if state[top[3]] == _RUNNING and victim_token[top[3]] == top[4]:
                return top
            heappop(heap)
        return None

    # --------------------------------------------------------- heads waiting, and what wakes them

    def behind_share_head(self, j: int, q: int) -> bool:
        """Whether another type's first waiting job of j's share ranks ahead of j (and so, with
        one head per share, holds j back)."""
        priority = self.priority
        order_time = self.order_time
        n_waiting = self.n_waiting
        mine = (-priority[j], order_time[j], j)
        for other in self.queues_of_share[self.queue_share[q]]:
            if other != q and n_waiting[other]:
                h = self.head(other)
                if h >= 0 and (-priority[h], order_time[h], h) < mine:
                    return True
        return False

    def wake_share(self, q: int) -> None:
        """The share of q may have a new head: its queues of other types, if any was held
        back, are examined again."""
        share = self.queue_share[q]
        held_back = self.held_back
        if not held_back[share]:
            return
        held_back[share] = 0
        n_units = self.n_units
        n_waiting = self.n_waiting
        for other in self.queues_of_share[share]:
            if other != q and n_waiting[other]:
                k = other % n_units
                self.full_sets[k].add(other)
                self.touch(k)

    def candidate(self, q: int, j: int) -> Candidate:
        """j, the head of q, as a candidate in scheduling order; any older one of q goes
        stale."""
        self.tokens = tokens = self.tokens + 1
        self.blocked_token[q] = tokens  # any older blocked entry of q is now stale
        phase = 0 if self.use[q] + self.job_count[j] <= self.limit[q] else 1
        if self.fifo_borrowers:
            return (phase, self.order_time[j], 0.0, j, q, tokens)
        return (phase, -self.priority[j], self.order_time[j], j, q, tokens)

    def defer(self, j: int, q: int, k: int) -> None:
        """Remember a head that waits for free capacity (and nothing else)."""
        n = self.job_count[j]
        use = self.use[q]
        if use + n > self.limit[q] and not (
            self.borrows[self.queue_share[q]] and use + n <= self.ceiling[q]
        ):
            return  # only its own share's jobs ending can help it: they re-examine it
        entry = self.candidate(q, j)
        buckets = self.blocked[k]
        bucket = buckets.get(n)
        if bucket is None:
            buckets[n] = [entry]
            insort(self.blocked_sizes[k], n)
        else:
            heappush(bucket, entry)
            if len(bucket) > 4 * self.n_queues + 64:
                # Entries of queues that moved on pile up where nothing is ever free enough.
                blocked_token = self.blocked_token
                live = [e for e in bucket if blocked_token[e[4]] == e[5]]
                heapify(live)
                buckets[n] = live

    def best_blocked(self, k: int) -> tuple[Candidate, list[Candidate]] | None:
        """The first filed head of k, in scheduling order, that what is free (or, for a job
        within its limit, what could be reclaimed) could fit, with its bucket."""
        free = self.env[k] - self.in_use[k] - self.reserved_idle[k]
        reach = free + self.borrowed_total[k]
        if reach <= 0:
            return None
        blocked_token = self.blocked_token
        best: Candidate | None = None
        best_bucket: list[Candidate] = []
        buckets = self.blocked[k]
        emptied: list[int] = []
        for n in self.blocked_sizes[k]:
            if n > reach:
                break
            bucket = buckets[n]
            while bucket:
                top = bucket[0]
                q = top[4]
                if blocked_token[q] == top[5] and self.head(q) == top[3]:
                    break
                heappop(bucket)
            if not bucket:
                emptied.append(n)
                continue
            top = bucket[0]
            if n > free and top[0] == 1:
                continue  # a borrower needs free capacity; reclaiming is not for borrowing
            if best is None or top < best:
                best, best_bucket = top, bucket
        for n in emptied:
            del buckets[n]
            self.blocked_sizes[k].remove(n)
        if best is None:
            return None
        return best, best_bucket

    def could_preempt_in_share(self, q: int, j: int) -> bool:
        """Whether q's share preempts in-share and runs a job j outranks (cheap, may say yes
        wrongly under the NEWEST victim order, whose heap is not in priority order)."""
        if not self.queue_in_share[q] or not self.running[q]:
            return False
        top = self.first_live_victim(self.in_share_victims[q])
        if top is None:
            return False
        return not self.by_priority or self.priority[top[3]] < self.priority[j]

    def wake_in_share(self, k: int, work: list[Candidate], full: set[int]) -> None:
        """Offer again, with every power, the in-share heads of k whose victims lacked free
        capacity, unless still too little is free for them."""
        waiting_heads = self.in_share_blocked[k]
        in_share_need = self.in_share_need
        kept: list[int] = []
        for q in waiting_heads:
            need = in_share_need.get(q)
            if need is not None and self.available(q, k) < need:
                kept.append(q)  # still too little free for what its victims would give
                continue
            j = self.head(q)
            if j >= 0:
                heappush(work, self.candidate(q, j))
                full.add(q)
        waiting_heads.clear()
        waiting_heads.update(kept)


def _live_victims(
    heap: list[Victim], state: list[int], token: list[int], taken: list[Victim]
) -> Iterator[int]:
    """The running jobs of a victim heap in victim order, stale entries dropped on the way
    and the live ones walked kept in ``taken`` for :func:`_put_back`: both kinds of
    preemption choose their victims this way, preempting nobody until the choice is made."""
    while heap:
        entry = heappop(heap)
        v = entry[3]
        if state[v] == _RUNNING and token[v] == entry[4]:
            taken.append(entry)
            yield v


def _put_back(heap: list[Victim], taken: list[Victim]) -> None:
    """The entries a :func:`_live_victims` walk took, back on their heap."""
    for entry in taken:
        heappush(heap, entry)


def _fewest(
    chosen: list[int], freed: int, job_count: list[int], enough: Callable[[int], bool]
) -> list[int]:
    """A minimal victim set (``minimal_victim_set``), one rule for both kinds of preemption:
    from the last chosen but one backwards, each victim whose instances are not needed for
    ``enough`` of them to be freed is spared."""
    for v in reversed(chosen[:-1]):
        if enough(freed - job_count[v]):
            chosen.remove(v)
            freed -= job_count[v]
    return chosen


def _compact(heap: list[Victim], state: list[int], token: list[int]) -> list[Victim]:
    live = [e for e in heap if state[e[3]] == _RUNNING and token[e[3]] == e[4]]
    heapify(live)
    return live


class SteppingEngine(_Engine):
    """The engine driven step by step (the local emulator): jobs join while it runs, moments
    are run up to a clock's time (:meth:`advance`), and a job can change priority, end early
    or leave its queue at the current moment. The phases are the replay's own; it tells
    ``listener`` what happened to each job (:class:`JobReports`), a replay tells nobody.

    Per-queue and per-share columns can be replaced while jobs run (:meth:`reconfigure`): a
    share's limits, strategy or in-share preemption changed through the API.

    Not for subclassing: a compiled engine's classes cannot have Python subclasses (and would
    run slower if they allowed them); what a caller needs to hear of comes to ``listener``.
    """

    reports = True
    listener: JobReports | None

    def __init__(self, problem: Problem, options: SimulationOptions,
                 listener: JobReports | None = None) -> None:
        if problem.job_ids:
            raise ValueError("a stepping engine starts with no jobs; add them with add_job")
        super().__init__(problem, options)
        self.listener = listener

    def on_started(self, j: int, borrowed: bool) -> None:
        if self.listener is not None:
            self.listener.job_started(j, self.now, borrowed)

    def on_preempted(self, j: int, by: int, kind: int, failed: bool) -> None:
        if self.listener is not None:
            self.listener.job_preempted(j, self.now, by, kind == CROSS_SHARE, failed)

    def on_ended(self, j: int) -> None:
        if self.listener is not None:
            self.listener.job_ended(j, self.now)

    # ------------------------------------------------------------------------ driving it

    def add_job(
        self, *, share: int, unit: int, count: int, duration: float, submitted: float,
        priority: int, checkpoint: float = 0.0, retries: int = -1,
    ) -> int:
        """A job arriving at ``submitted`` (no earlier than any job added before); it joins
        its queue at the next :meth:`advance` reaching that time. Returns its index."""
        # The engine's job columns are the problem's lists (priority aside, a copy that
        # changes apply to): appending to the problem appends to them.
        j = self.problem.append_job(str(self.n_jobs), share, unit, count, duration, submitted,
                                    priority, checkpoint, retries)
        self.priority.append(priority)
        self.job_queue.append(share * self.n_units + unit)
        self.order_time.append(submitted)
        self.state.append(_NEW)
        self.saved.append(0.0)
        self.started.append(0.0)
        self.borrowed_now.append(0)
        self.queue_token.append(0)
        self.victim_token.append(0)
        self.run_token.append(0)
        self.preempted.append(0)
        self.failed.append(0)
        self.finished.append(0.0)
        self.lost.append(0.0)
        self.attempts.append(None)
        self.arrival_order.append(j)
        self.n_jobs = j + 1
        return j

    def update_priority(self, j: int, priority: int, at: float) -> None:
        """UpdateServiceJob at ``at`` (the current moment), applied and scheduled now."""
        self.change_at.append(at)
        self.change_job.append(j)
        self.change_priority.append(priority)
        self.n_changes += 1
        self.advance(at)

    def end_early(self, j: int, at: float) -> bool:
        """A running j ends at ``at`` (the current moment), its capacity offered to others
        now. False when j is not running."""
        if self.state[j] != _RUNNING:
            return False
        self.tokens = tokens = self.tokens + 1
        self.run_token[j] = tokens  # its planned end goes stale
        heappush(self.finishing, (at, tokens, j))
        self.advance(at)
        return True

    def withdraw(self, j: int, at: float) -> bool:
        """A waiting j leaves its queue (terminated) at ``at``; the jobs behind it are offered
        capacity now. False when j is not waiting."""
        if self.state[j] != _WAITING:
            return False
        self.now = at
        self.state[j] = _ENDED
        self.queue_token[j] = 0  # its queue entry goes stale
        q = self.job_queue[j]
        k = self.job_unit[j]
        self.n_waiting[q] = self.n_waiting[q] - 1
        if self.head_job[q] == j:
            self.find_head(q)
        self.failed[j] = 1
        self.finished[j] = at
        if self.per_share_head:
            self.wake_share(q)
        self.touch(k)
        self.full_sets[k].add(q)
        self.schedule_touched()
        return True

    def is_running(self, j: int) -> bool:
        return self.state[j] == _RUNNING

    def is_waiting(self, j: int) -> bool:
        return self.state[j] == _WAITING

    def reconfigure(self, problem: Problem, share_rows: list[int | None], at: float) -> None:
        """Replace the shares' rules by ``problem``'s (compiled from the shares as they are
        now, no jobs), effective at ``at``. ``share_rows[i]`` is engine share i's row in
        ``problem``, None for a deleted share (it keeps no capacity). Shares added since are
        appended. Running jobs above their share's new limit become reclaimable (as AWS
        documents for a lowered limit); every waiting head is offered capacity again."""
        self.now = at
        self.env = list(problem.capacity)
        self.replace_share_rules(problem, share_rows)
        self.recount_capacity()
        self.refile_running()
        self.offer_again()

    def replace_share_rules(self, problem: Problem, share_rows: list[int | None]) -> None:
        """The per-share and per-queue rule columns from ``problem``'s rows; queues of shares
        added since get empty books."""
        n_units = self.n_units
        n_shares = len(share_rows)
        grow = n_shares * n_units - self.n_queues
        self.n_shares = n_shares
        self.n_queues = n_shares * n_units
        limit: list[int] = []
        ceiling: list[float] = []
        reserve: list[bool] = []
        borrows: list[bool] = []
        in_share: list[bool] = []
        for row in share_rows:
            if row is None:
                limit += [0] * n_units
                ceiling += [0.0] * n_units
                reserve.append(False)
                borrows.append(False)
                in_share.append(False)
                continue
            limit += problem.limit[row * n_units:(row + 1) * n_units]
            ceiling += problem.ceiling[row * n_units:(row + 1) * n_units]
            reserve.append(problem.reserve[row])
            borrows.append(problem.borrows[row])
            in_share.append(problem.in_share[row])
        self.limit, self.ceiling = limit, ceiling
        self.reserve, self.borrows, self.in_share = reserve, borrows, in_share
        for column in (self.use, self.running, self.n_waiting, self.blocked_token):
            column.extend([0] * grow)
        self.head_job.extend([-1] * grow)
        self.head_entry.extend([_NO_ENTRY] * grow)
        self.levels.extend([] for _ in range(grow))
        self.level_entries.extend({} for _ in range(grow))
        self.spill.extend([] for _ in range(grow))
        self.index_queues()

    def recount_capacity(self) -> None:
        """Idle RESERVE capacity and capacity in use above a share's limit, per unit, from
        the queues' use under the rules now in force."""
        n_units, n_queues = self.n_units, self.n_queues
        use, limit, reserve = self.use, self.limit, self.reserve
        for k in range(n_units):
            queues = range(k, n_queues, n_units)
            self.reserved_idle[k] = sum(limit[q] - use[q] for q in queues
                                        if reserve[q // n_units])
            self.borrowed_total[k] = sum(max(0, use[q] - limit[q]) for q in queues)

    def offer_again(self) -> None:
        """Forget what scheduling learnt under the old rules (filed heads, held-back shares)
        and offer capacity, with every power, to every queue's head now."""
        n_units, n_queues = self.n_units, self.n_queues
        for k in range(n_units):
            self.blocked[k].clear()
            self.blocked_sizes[k].clear()
            self.in_share_blocked[k].clear()
            self.in_share_later[k].clear()
            for q in range(k, n_queues, n_units):
                if self.n_waiting[q]:
                    self.full_sets[k].add(q)
                    self.touch(k)
        self.held_back = [0] * self.n_shares
        self.held_queue = [0] * n_queues
        self.in_share_need.clear()
        self.schedule_touched()

    def refile_running(self) -> None:
        """File every running job again as the victim it now is: in-share where its share
        preempts in-share; borrowed (reclaimable) for the most recently started jobs of a
        queue over its limit, as many as its excess."""
        # Every running job has a live entry in the finishing heap: no look at ended jobs.
        state, run_token = self.state, self.run_token
        running = [j for _, token, j in self.finishing
                   if state[j] == _RUNNING and run_token[j] == token]
        running.sort(key=lambda j: (-self.started[j], -run_token[j]))
        excess = [max(0, u - lim) for u, lim in zip(self.use, self.limit, strict=True)]
        self.borrowed_running = [0] * self.n_units
        self.borrowed_victims = [[] for _ in range(self.n_units)]
        self.in_share_victims = [[] for _ in range(self.n_queues)]
        for j in running:
            q = self.job_queue[j]
            k = self.job_unit[j]
            borrowed = excess[q] > 0
            if borrowed:
                excess[q] = excess[q] - self.job_count[j]
                self.borrowed_running[k] = self.borrowed_running[k] + 1
            self.borrowed_now[j] = borrowed
            if borrowed or self.in_share[self.queue_share[q]]:
                self.push_victim(j, q, k)

    def front(self, q: int) -> Iterator[tuple[int, float, int, int]]:
        """Queue q's waiting jobs in scheduling order, as their queue entries
        (``(-priority, order time, job, token)``), lazily: the head, then its filed entries in
        one best-first walk over the heap of its levels, each level's FIFO and the heap of
        out-of-order entries, so the first k cost O(k log k) (and the stale entries met on the
        way), never a sort of the levels or the jobs.

        An entry's successors join the walk's frontier when it is taken: the next of its FIFO
        and, for the first of a level, the first of the two levels below it in the levels'
        heap (a level's entries all come before a lower level's); an out-of-order entry's, its
        two children in that heap. A level whose FIFO is empty (its head left) is walked
        through as a placeholder that sorts before its level's entries and is not yielded."""
        if self.head_job[q] < 0:
            return
        yield self.head_entry[q]
        state = self.state
        queue_token = self.queue_token
        levels = self.levels[q]
        level_entries = self.level_entries[q]
        spill = self.spill[q]
        n_levels = len(levels)
        n_spill = len(spill)
        # (entry, node, position): node -1 is the out-of-order heap's entry at index
        # ``position``; else the levels' heap node whose FIFO holds it at ``position``.
        frontier: list[tuple[QueueEntry, int, int]] = []
        if n_levels:
            fifo = level_entries[levels[0]]
            frontier.append((fifo[0] if fifo else (levels[0], -_INF, -1, -1), 0, 0))
        if n_spill:
            frontier.append((spill[0], -1, 0))
            heapify(frontier)
        while frontier:
            entry, node, position = heappop(frontier)
            if node < 0:
                child = 2 * position + 1
                if child < n_spill:
                    heappush(frontier, (spill[child], -1, child))
                    if child + 1 < n_spill:
                        heappush(frontier, (spill[child + 1], -1, child + 1))
            else:
                if position == 0:
                    for child in (2 * node + 1, 2 * node + 2):
                        if child < n_levels:
                            level = levels[child]
                            fifo = level_entries[level]
                            heappush(frontier, (fifo[0] if fifo else (level, -_INF, -1, -1),
                                                child, 0))
                    if entry[2] < 0:
                        continue  # an empty level's placeholder
                fifo = level_entries[levels[node]]
                if position + 1 < len(fifo):
                    heappush(frontier, (fifo[position + 1], node, position + 1))
            j = entry[2]
            if state[j] == _WAITING and queue_token[j] == entry[3]:
                yield entry
