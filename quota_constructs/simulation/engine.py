"""The discrete-event scheduler: one pass over time, O(log n) work per event.

State is kept in flat lists indexed by job and by (share, unit) so the hot path does no
attribute lookups. Waiting jobs sit in one heap per (share, unit) ordered by
(-priority, submitted, input order); running jobs that could be preempted sit in one heap per
(share, unit) (in-share victims) and one per unit (borrowed attempts), ordered by the victim
order. A priority change pushes a fresh entry and leaves the old one behind; entries carry a
token and stale ones are dropped when they reach the top (lazy deletion), and the victim heaps
are compacted when stale entries outnumber live ones.

Scheduling re-examines only what an event can affect. A queue whose head changed, whose
running job's priority changed or whose own job ended is tried with every power (start,
reclaim, in-share preemption). A head that failed only for want of free capacity is filed by
unit and job size; freed capacity wakes the first of those that could fit, in scheduling
order, without looking at every queue. A head that could preempt in-share but lacked free
capacity is woken when enough is freed on its unit.
"""

from __future__ import annotations

from array import array
from bisect import insort
from collections.abc import Callable
from heapq import heapify, heappop, heappush

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

_NEW, _WAITING, _RUNNING, _ENDED = 0, 1, 2, 3
_INF = float("inf")


def run(problem: Problem, options: SimulationOptions, progress: Progress | None = None) -> RunData:
    """Simulate ``problem`` to the end; every job ends (the inputs were checked to fit)."""
    p = problem
    n_jobs = len(p.job_ids)
    n_units = p.n_units
    n_shares = len(p.share_names)
    n_queues = n_shares * n_units

    job_share = p.job_share
    job_unit = p.job_unit
    job_count = p.job_count
    duration = p.duration
    submitted = p.submitted
    priority = list(p.priority)
    checkpoint = p.checkpoint
    retries = p.retries
    job_queue = [job_share[j] * n_units + job_unit[j] for j in range(n_jobs)]
    job_group = p.job_group

    env = p.capacity  # what jobs can use: the rules model's usable capacity
    limit = p.limit
    ceiling = p.ceiling
    reserve = p.reserve
    borrows = p.borrows
    in_share = p.in_share
    queue_share = [q // n_units for q in range(n_queues)]
    queues_of_unit = [
        [i * n_units + k for i in range(n_shares) if limit[i * n_units + k] > 0]
        for k in range(n_units)
    ]

    by_priority = options.victim_order is VictimOrder.LOWEST_PRIORITY_THEN_NEWEST
    fifo_borrowers = options.borrower_order is BorrowerOrder.FIFO
    minimal = options.minimal_victim_set
    head_scope = options.head_scope
    backfill = head_scope is HeadOfLine.NONE
    per_share_head = head_scope is HeadOfLine.PER_SHARE
    requeue_at_back = options.requeue_place is RequeuePlace.BACK
    # The time a waiting job is ordered by: its submission, or its last preemption when
    # requeued at the back.
    order_time = list(submitted)
    queues_of_share = [
        [i * n_units + k for k in range(n_units) if limit[i * n_units + k] > 0]
        for i in range(n_shares)
    ]
    partly = options.reclaim_partly_borrowed_jobs
    keep_progress = options.keep_checkpoint_progress

    # Job state.
    state = bytearray(n_jobs)
    saved = [0.0] * n_jobs  # run time secured by checkpoints
    started = [0.0] * n_jobs
    borrowed_now = bytearray(n_jobs)
    queue_token = [0] * n_jobs
    victim_token = [0] * n_jobs
    run_token = [0] * n_jobs
    preempted = [0] * n_jobs
    failed = bytearray(n_jobs)
    finished = array("d", bytes(8 * n_jobs))
    lost = array("d", bytes(8 * n_jobs))
    attempts: list[RawAttempt | list[RawAttempt] | None] = [None] * n_jobs

    # Capacity state.
    use = [0] * n_queues
    running = [0] * n_queues
    in_use = [0] * n_units
    reserved_idle = [
        sum(limit[i * n_units + k] for i in range(n_shares) if reserve[i]) for k in range(n_units)
    ]
    borrowed_total = [0] * n_units
    borrowed_running = [0] * n_units

    waiting: list[list[tuple[int, float, int, int]]] = [[] for _ in range(n_queues)]
    n_waiting = [0] * n_queues
    in_share_victims: list[list[tuple[int, float, int, int, int]]] = [
        [] for _ in range(n_queues)
    ]
    borrowed_victims: list[list[tuple[int, float, int, int, int]]] = [
        [] for _ in range(n_units)
    ]
    finishing: list[tuple[float, int, int]] = []

    log_time: array[float] = array("d")
    log_share: array[int] = array("i")
    log_unit: array[int] = array("i")
    log_delta: array[int] = array("i")
    log_t = log_time.append
    log_s = log_share.append
    log_u = log_unit.append
    log_d = log_delta.append

    tokens = 0
    now = 0.0

    def head(q: int) -> int:
        """The first waiting job of queue q, or -1; drops stale entries on the way."""
        heap = waiting[q]
        while heap:
            entry = heap[0]
            j = entry[2]
            if state[j] == _WAITING and queue_token[j] == entry[3]:
                return j
            heappop(heap)
        return -1

    def enqueue(j: int) -> None:
        nonlocal tokens
        tokens += 1
        queue_token[j] = tokens
        state[j] = _WAITING
        q = job_queue[j]
        heappush(waiting[q], (-priority[j], order_time[j], j, tokens))
        n_waiting[q] += 1

    def push_victim(j: int, q: int, k: int) -> None:
        nonlocal tokens
        tokens += 1
        victim_token[j] = tokens
        entry = (priority[j] if by_priority else 0, -started[j], -run_token[j], j, tokens)
        if in_share[queue_share[q]]:
            heappush(in_share_victims[q], entry)
        if borrowed_now[j]:
            heappush(borrowed_victims[k], entry)

    def start(j: int, q: int, k: int, borrowed: bool) -> None:
        nonlocal tokens
        n = job_count[j]
        n_waiting[q] -= 1
        if per_share_head:
            wake_share(q)
        remaining = duration[j] - saved[j]
        if remaining <= 0.0:
            # A job with no work left ends as it starts: it never holds capacity, so it
            # can neither be a victim nor make its share look busier than it is.
            state[j] = _ENDED
            finished[j] = now
            record: RawAttempt = (now, now, ENDED_SUCCEEDED, -1, NO_PREEMPTION, borrowed)
            previous = attempts[j]
            if previous is None:
                attempts[j] = record
            elif isinstance(previous, tuple):
                attempts[j] = [previous, record]
            else:
                previous.append(record)
            ended_jobs.append(j)
            return
        state[j] = _RUNNING
        started[j] = now
        tokens += 1
        run_token[j] = tokens
        heappush(finishing, (now + remaining, tokens, j))
        lim = limit[q]
        before = use[q]
        after = before + n
        use[q] = after
        in_use[k] += n
        if reserve[queue_share[q]]:
            reserved_idle[k] -= n
        if after > lim:
            borrowed_total[k] += after - lim if before <= lim else n
        running[q] += 1
        borrowed_now[j] = borrowed
        if borrowed:
            borrowed_running[k] += 1
        if in_share[queue_share[q]] or borrowed:
            push_victim(j, q, k)
        else:
            # Not a victim candidate this time: entries left from an earlier (borrowed)
            # attempt must not look valid.
            tokens += 1
            victim_token[j] = tokens
        log_t(now)
        log_s(job_group[j])
        log_u(k)
        log_d(n)

    def release(j: int, q: int, k: int, record: RawAttempt) -> None:
        n = job_count[j]
        lim = limit[q]
        before = use[q]
        after = before - n
        use[q] = after
        in_use[k] -= n
        if reserve[queue_share[q]]:
            reserved_idle[k] += n
        if before > lim:
            borrowed_total[k] -= before - lim if after <= lim else n
        running[q] -= 1
        if borrowed_now[j]:
            borrowed_running[k] -= 1
            heap = borrowed_victims[k]
            if len(heap) > 2 * borrowed_running[k] + 64:
                borrowed_victims[k] = _compact(heap, state, victim_token)
        if in_share[queue_share[q]]:
            heap = in_share_victims[q]
            if len(heap) > 2 * running[q] + 64:
                in_share_victims[q] = _compact(heap, state, victim_token)
        previous = attempts[j]
        if previous is None:
            attempts[j] = record
        elif isinstance(previous, tuple):
            attempts[j] = [previous, record]
        else:
            previous.append(record)
        log_t(now)
        log_s(job_group[j])
        log_u(k)
        log_d(-n)

    def preempt(v: int, by: int, kind: int) -> None:
        q = job_queue[v]
        k = job_unit[v]
        ran = now - started[v]
        interval = checkpoint[v]
        kept = (ran // interval) * interval if keep_progress and interval > 0.0 else 0.0
        saved[v] += kept
        lost[v] += ran - kept
        state[v] = _ENDED  # stale in every heap until requeued
        release(v, q, k, (started[v], now, ENDED_PREEMPTED, by, kind, bool(borrowed_now[v])))
        preempted[v] += 1
        budget = retries[v]
        if 0 <= budget < preempted[v]:
            failed[v] = 1
            finished[v] = now
            ended_jobs.append(v)
        else:
            if requeue_at_back:
                order_time[v] = now
            enqueue(v)

    def available(q: int, k: int) -> int:
        """Instances the share of q could start on now without preempting anyone."""
        free = env[k] - in_use[k] - reserved_idle[k]
        if reserve[queue_share[q]]:
            free += limit[q] - use[q]
        return free

    def cross_share_victims(k: int, need: int) -> list[int] | None:
        # Jobs wholly on borrowed capacity first: reclaiming them leaves every share at or
        # above its own limit. Only when they free too little are jobs that straddle their
        # share's limit taken too: AWS promises a lender gets back what it lent ("preemption
        # will allow any quota share to reclaim resources that it has lent to others") and
        # weighs "the number ... of instances a job is borrowing", so a job borrowing part of
        # its instances is reclaimable; without this a lender waits behind a multi-instance
        # borrower until that job ends.
        chosen = reclaim_set(k, need, False)
        if chosen is None and partly:
            chosen = reclaim_set(k, need, True)
        return chosen

    def reclaim_set(k: int, need: int, straddling: bool) -> list[int] | None:
        heap = borrowed_victims[k]
        taken: list[tuple[int, float, int, int, int]] = []
        chosen: list[int] = []
        after: dict[int, int] = {}
        freed = 0
        while heap and freed < need:
            entry = heappop(heap)
            v = entry[3]
            if state[v] != _RUNNING or victim_token[v] != entry[4]:
                continue
            taken.append(entry)
            qv = job_queue[v]
            now_use = after.get(qv, use[qv])
            nv = job_count[v]
            lim = limit[qv]
            if now_use <= lim or (not straddling and now_use - nv < lim):
                continue  # its share is not borrowing, or would drop below its own limit
            after[qv] = now_use - nv
            chosen.append(v)
            freed += nv
        for entry in taken:
            heappush(heap, entry)
        if freed < need:
            return None
        if minimal:
            for v in reversed(chosen[:-1]):
                if freed - job_count[v] >= need:
                    chosen.remove(v)
                    freed -= job_count[v]
        return chosen

    def in_share_victim_set(q: int, j: int, free: int) -> list[int] | None:
        heap = in_share_victims[q]
        wanted = priority[j]
        n = job_count[j]
        lim = limit[q]
        top = ceiling[q] if borrows[queue_share[q]] else lim
        current = use[q]

        def fits(freed: int) -> bool:
            return current - freed + n <= top and free + freed >= n

        taken: list[tuple[int, float, int, int, int]] = []
        chosen: list[int] = []
        freed = 0
        while heap:
            entry = heappop(heap)
            v = entry[3]
            if state[v] != _RUNNING or victim_token[v] != entry[4]:
                continue
            taken.append(entry)
            if priority[v] >= wanted:
                if by_priority:
                    break  # the heap is in priority order: no lower priority remains
                continue
            chosen.append(v)
            freed += job_count[v]
            if fits(freed):
                break
        for entry in taken:
            heappush(heap, entry)
        if not chosen or not fits(freed):
            # Remember how much would have to be free for these victims to make room; None
            # when no amount would (the share's own limit or borrow limit stands in the way).
            in_share_need[q] = n - freed if chosen and current - freed + n <= top else None
            return None
        if minimal:
            for v in reversed(chosen[:-1]):
                if fits(freed - job_count[v]):
                    chosen.remove(v)
                    freed -= job_count[v]
        return chosen

    def behind_share_head(j: int, q: int) -> bool:
        """Whether another type's first waiting job of j's share ranks ahead of j (and so, with
        one head per share, holds j back)."""
        mine = (-priority[j], order_time[j], j)
        for other in queues_of_share[queue_share[q]]:
            if other != q and n_waiting[other]:
                h = head(other)
                if h >= 0 and (-priority[h], order_time[h], h) < mine:
                    return True
        return False

    # Shares with a head held back behind another type's head: only they need waking when
    # that head starts or its priority changes.
    held_back = bytearray(n_shares)
    held_queue = bytearray(n_queues)  # queues whose head is held back that way

    def wake_share(q: int) -> None:
        """The share of q may have a new head: its queues of other types, if any was held
        back, are examined again."""
        share = queue_share[q]
        if not held_back[share]:
            return
        held_back[share] = 0
        for other in queues_of_share[share]:
            if other != q and n_waiting[other]:
                k = other % n_units
                full_sets[k].add(other)
                if not dirty_mark[k]:
                    dirty_mark[k] = 1
                    dirty.append(k)

    def try_start(j: int, q: int, k: int, full: bool, touched: list[int]) -> bool:
        """Start j (the head of q) if the rules allow, preempting where they allow it."""
        if per_share_head:
            if behind_share_head(j, q):
                # Held back by its share's head, not by capacity: only that head starting
                # (or changing priority) can release it, and wake_share then does.
                held_back[queue_share[q]] = 1
                held_queue[q] = 1
                return False
            held_queue[q] = 0
        n = job_count[j]
        current = use[q]
        lim = limit[q]
        free = available(q, k)
        within = current + n <= lim
        if within:
            if n <= free:
                start(j, q, k, False)
                return True
            if borrowed_total[k] and free + borrowed_total[k] >= n:
                victims = cross_share_victims(k, n - free)
                if victims is not None:
                    for v in victims:
                        preempt(v, j, CROSS_SHARE)
                        touched.append(job_queue[v])
                    start(j, q, k, False)
                    return True
        elif borrows[queue_share[q]] and current + n <= ceiling[q] and n <= free:
            start(j, q, k, True)
            return True
        # (free + current < n: even preempting all of the share would not make room.)
        if full:
            in_share_need.pop(q, None)  # whatever was learnt about an earlier head
        if full and running[q] and in_share[queue_share[q]] and free + current >= n:
            victims = in_share_victim_set(q, j, free)
            if victims is not None:
                for v in victims:
                    preempt(v, j, IN_SHARE)
                start(j, q, k, use[q] + n > lim)
                return True
        return False

    def backfill_queue(q: int, k: int) -> bool:
        """Start later jobs of q that fit now, in queue order, without preempting anyone."""
        started_any = False
        lim = limit[q]
        can_borrow = borrows[queue_share[q]]
        for entry in sorted(waiting[q]):
            free = available(q, k)
            if free <= 0:
                break
            j = entry[2]
            if state[j] != _WAITING or queue_token[j] != entry[3]:
                continue
            n = job_count[j]
            if n > free:
                continue
            current = use[q]
            if current + n <= lim:
                start(j, q, k, False)
            elif can_borrow and current + n <= ceiling[q]:
                start(j, q, k, True)
            else:
                continue
            started_any = True
        return started_any

    Entry = tuple[int, float, float, int, int, int]
    # Heads that failed only for want of free capacity, per unit and job size, so that freed
    # capacity wakes the first of them in order without looking at every queue.
    blocked: list[dict[int, list[Entry]]] = [{} for _ in range(n_units)]
    blocked_sizes: list[list[int]] = [[] for _ in range(n_units)]  # the buckets' sizes, sorted
    blocked_token = [0] * n_queues

    def candidate(q: int, j: int) -> Entry:
        nonlocal tokens
        tokens += 1
        blocked_token[q] = tokens  # any older blocked entry of q is now stale
        phase = 0 if use[q] + job_count[j] <= limit[q] else 1
        if fifo_borrowers:
            return (phase, order_time[j], 0.0, j, q, tokens)
        return (phase, -priority[j], order_time[j], j, q, tokens)

    def defer(j: int, q: int, k: int) -> None:
        """Remember a head that waits for free capacity (and nothing else)."""
        n = job_count[j]
        if use[q] + n > limit[q] and not (
            borrows[queue_share[q]] and use[q] + n <= ceiling[q]
        ):
            return  # only its own share's jobs ending can help it: they re-examine it
        entry = candidate(q, j)
        buckets = blocked[k]
        bucket = buckets.get(n)
        if bucket is None:
            buckets[n] = [entry]
            insort(blocked_sizes[k], n)
        else:
            heappush(bucket, entry)
            if len(bucket) > 4 * n_queues + 64:
                # Entries of queues that moved on pile up where nothing is ever free enough.
                live = [e for e in bucket if blocked_token[e[4]] == e[5]]
                heapify(live)
                buckets[n] = live

    def best_blocked(k: int) -> tuple[Entry, list[Entry]] | None:
        free = env[k] - in_use[k] - reserved_idle[k]
        reach = free + borrowed_total[k]
        if reach <= 0:
            return None
        best: Entry | None = None
        best_bucket: list[Entry] = []
        buckets = blocked[k]
        emptied: list[int] = []
        for n in blocked_sizes[k]:
            if n > reach:
                break
            bucket = buckets[n]
            while bucket:
                top = bucket[0]
                q = top[4]
                if blocked_token[q] == top[5] and head(q) == top[3]:
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
            blocked_sizes[k].remove(n)
        if best is None:
            return None
        return best, best_bucket

    # Heads that could not preempt in-share only because too little was free: capacity freed
    # elsewhere on the unit may be what they lack.
    in_share_blocked: list[set[int]] = [set() for _ in range(n_units)]
    in_share_later: list[set[int]] = [set() for _ in range(n_units)]
    in_share_need: dict[int, int | None] = {}  # free capacity such a head's victims lack
    later_units: list[int] = []  # units with such heads, to look at again at the next moment

    def could_preempt_in_share(q: int, j: int) -> bool:
        """Whether q's share preempts in-share and runs a job j outranks (cheap, may say yes
        wrongly under the NEWEST victim order, whose heap is not in priority order)."""
        if not in_share[queue_share[q]] or not running[q]:
            return False
        heap = in_share_victims[q]
        while heap:
            top = heap[0]
            v = top[3]
            if state[v] == _RUNNING and victim_token[v] == top[4]:
                return not by_priority or priority[v] < priority[j]
            heappop(heap)
        return False

    def wake_in_share(k: int, work: list[Entry], full: set[int]) -> None:
        waiting_heads = in_share_blocked[k]
        kept: list[int] = []
        for q in waiting_heads:
            need = in_share_need.get(q)
            if need is not None and available(q, k) < need:
                kept.append(q)  # still too little free for what its victims would give
                continue
            j = head(q)
            if j >= 0:
                heappush(work, candidate(q, j))
                full.add(q)
        waiting_heads.clear()
        waiting_heads.update(kept)

    def schedule_unit(k: int, full_queues: set[int], freed: bool) -> None:
        """Start what can start on unit k, in order: jobs within their share's limit first,
        then borrowers, each group first come first served. Queues in ``full_queues`` (a new
        head, a changed priority, their own job ended) may also preempt."""
        work: list[Entry] = []
        full: set[int] = set()
        for q in full_queues:
            j = head(q)
            if j >= 0:
                work.append(candidate(q, j))
                full.add(q)
        if in_share_later[k]:
            in_share_blocked[k] |= in_share_later[k]
            in_share_later[k].clear()
            freed_or_later = True
        else:
            freed_or_later = freed
        if freed_or_later and in_share_blocked[k]:
            wake_in_share(k, work, full)
        if backfill and freed:
            for q in queues_of_unit[k]:
                if q not in full:
                    j = head(q)
                    if j >= 0:
                        work.append(candidate(q, j))
        heapify(work)
        releases = 0  # how often a preemption left more capacity free than before
        woken_at = 0  # releases when in-share heads were last woken
        while True:
            retry: list[tuple[int, int, int]] = []
            while True:
                # Without freed capacity no blocked head can start: every pass leaves them
                # needing more than is free, and starts and requeues never add to it.
                found = best_blocked(k) if freed and blocked[k] else None
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
                if blocked_token[q] != entry[5] or head(q) != j:
                    continue
                if (0 if use[q] + job_count[j] <= limit[q] else 1) != entry[0]:
                    heappush(work, candidate(q, j))
                    continue
                touched: list[int] = []
                before = in_use[k]
                if try_start(j, q, k, from_work and q in full, touched):
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
                        other_head = head(other)
                        if other_head >= 0:
                            heappush(work, candidate(other, other_head))
                else:
                    if backfill:
                        backfill_queue(q, k)
                    retry.append((j, q, releases))
            again = False
            for j, q, seen in retry:
                if held_queue[q]:
                    continue  # woken by its share's head, not by freed capacity
                if head(q) == j:
                    defer(j, q, k)
                    if could_preempt_in_share(q, j):
                        # A job just reclaimed from gets this power only at a later moment.
                        if q in full:
                            if in_share_need.get(q, 0) is not None:
                                in_share_blocked[k].add(q)
                        else:
                            in_share_need.pop(q, None)
                            in_share_later[k].add(q)
                            later_units.append(k)
                    again = again or seen < releases
            if in_share_blocked[k] and releases > woken_at:
                again = True
            if not again:
                break
            woken_at = releases
            wake_in_share(k, work, full)
            # Capacity was freed after some of these failed: offer it to them too.

    ended_jobs: list[int] = []
    # Units the events at one moment touched, to schedule once they are all applied.
    dirty: list[int] = []
    dirty_mark = bytearray(n_units)
    freed_flag = bytearray(n_units)
    full_sets: list[set[int]] = [set() for _ in range(n_units)]
    arrival_order = sorted(range(n_jobs), key=submitted.__getitem__)
    change_at = p.change_at
    change_job = p.change_job
    change_priority = p.change_priority
    n_changes = len(change_at)
    next_arrival = 0
    next_change = 0
    completed = 0
    report_every = max(1, n_jobs // 100)
    next_report = report_every

    while True:
        t = _INF
        if next_arrival < n_jobs:
            t = submitted[arrival_order[next_arrival]]
        if next_change < n_changes and change_at[next_change] < t:
            t = change_at[next_change]
        while finishing:
            _, token, j = finishing[0]
            if state[j] == _RUNNING and run_token[j] == token:
                break
            heappop(finishing)
        if finishing and finishing[0][0] < t:
            t = finishing[0][0]
        if t == _INF:
            break
        now = t
        if later_units:
            for k in later_units:
                if not dirty_mark[k]:
                    dirty_mark[k] = 1
                    dirty.append(k)
            later_units.clear()

        while finishing and finishing[0][0] <= now:
            _, token, j = heappop(finishing)
            if state[j] != _RUNNING or run_token[j] != token:
                continue
            state[j] = _ENDED
            q = job_queue[j]
            k = job_unit[j]
            release(j, q, k, (started[j], now, ENDED_SUCCEEDED, -1, NO_PREEMPTION,
                              bool(borrowed_now[j])))
            finished[j] = now
            completed += 1
            # The share's own head may now fit within its limit or preempt in-share.
            if not dirty_mark[k]:
                dirty_mark[k] = 1
                dirty.append(k)
            freed_flag[k] = 1
            full_sets[k].add(q)

        while next_arrival < n_jobs and submitted[arrival_order[next_arrival]] <= now:
            j = arrival_order[next_arrival]
            next_arrival += 1
            enqueue(j)
            q = job_queue[j]
            if backfill or head(q) == j:
                k = job_unit[j]
                if not dirty_mark[k]:
                    dirty_mark[k] = 1
                    dirty.append(k)
                full_sets[k].add(q)

        while next_change < n_changes and change_at[next_change] <= now:
            j = change_job[next_change]
            new = change_priority[next_change]
            next_change += 1
            if state[j] == _ENDED or priority[j] == new:
                continue
            priority[j] = new
            q = job_queue[j]
            k = job_unit[j]
            if state[j] == _WAITING:
                enqueue(j)
                n_waiting[q] -= 1  # requeued, not added: the old entry is now stale
                if per_share_head:
                    wake_share(q)
            else:
                push_victim(j, q, k)
            if not dirty_mark[k]:
                dirty_mark[k] = 1
                dirty.append(k)
            full_sets[k].add(q)

        if len(dirty) > 1:
            dirty.sort()
        for k in dirty:
            schedule_unit(k, full_sets[k], bool(freed_flag[k]))
            full_sets[k].clear()
            freed_flag[k] = 0
            dirty_mark[k] = 0
        dirty.clear()

        if ended_jobs:
            completed += len(ended_jobs)
            ended_jobs.clear()
        if progress is not None and completed >= next_report:
            progress(completed, n_jobs)
            next_report = completed + report_every

    if progress is not None:
        progress(completed, n_jobs)
    return RunData(
        job_ids=p.job_ids,
        share_names=p.group_names,
        unit_names=p.unit_names,
        job_share=array("i", job_group),
        job_unit=array("i", job_unit),
        job_count=array("i", job_count),
        submitted=array("d", submitted),
        priority=array("i", priority),
        status_failed=failed,
        finished=finished,
        lost=lost,
        attempts=attempts,
        own_limits=p.group_limits,
        log_time=log_time,
        log_share=log_share,
        log_unit=log_unit,
        log_delta=log_delta,
    )


def _compact(
    heap: list[tuple[int, float, int, int, int]], state: bytearray, token: list[int]
) -> list[tuple[int, float, int, int, int]]:
    live = [e for e in heap if state[e[3]] == _RUNNING and token[e[3]] == e[4]]
    heapify(live)
    return live
