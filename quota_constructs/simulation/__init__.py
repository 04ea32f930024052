"""Offline policy simulator: replay a workload against declared quota shares.

Pure Python: reads the same :class:`~quota_constructs.QuotaShareSpec` the constructs deploy and
never imports ``aws_cdk`` or ``boto3``. ::

    result = simulate(capacity_limits=[CapacityLimit("ml.g5.xlarge", 3)], shares=[...],
                      jobs=[SimJob(...), ...], priority_changes=[PriorityChange(...)])
    result.jobs["job-1"].attempts      # when it ran, how each run ended, on borrowed capacity?
    result.shares["QS1"].wait_p95      # per-share figures
    compare_policies(...)              # the same workload under a hard partition and a pool

Times are seconds; capacity is counted in instances of each instance type.

Rules AWS Batch documents (they always hold)
--------------------------------------------
- A job needs ``instance_count`` instances of one instance type; capacity is counted per type.
- A share runs jobs within its own limit per type. RESERVE never lends its unused allocation and
  never borrows; LEND lends and never borrows; LEND_AND_BORROW also borrows idle capacity (the
  unused allocation of LEND and LEND_AND_BORROW shares) up to ``borrow_limit_percent`` of its
  own limit per type (None unlimited, 0 none). What each share can reach and whom it borrows
  from are read from the one rules model, :class:`quota_constructs.model.BorrowingRules`, which
  states the two assumptions AWS leaves open: whether capacity no share owns is borrowable
  (yes by default; ``SimulationOptions.unowned_capacity_borrowable``) and how a percentage of
  a small limit rounds (down to whole instances).
- Cross-share preemption gives a lender back what it lent: it reclaims borrowed capacity for a
  share whose waiting job fits within its own limit, and is never used to borrow. Its victims
  are jobs that *started on borrowed capacity*; a job that started within its share's limit is
  never reclaimed. (Among those, a job only part of whose instances are borrowed may be taken
  when jobs wholly on borrowed capacity free too little: assumption 6.)
- In-share preemption, only in shares that enable it, lets a waiting job preempt strictly
  lower-priority running jobs of its share. Priorities are 0–9999, higher first, and can change
  while a job waits or runs.
- A preempted job waits again; with ``preemption_retries`` N it FAILS on its (N+1)-th
  preemption (0: on the first).
- Idle capacity goes to borrowers first come, first served (the policy's ``FIFO``).

Assumptions where AWS is silent (the library's, with the reason)
---------------------------------------------------------------
Those a user could reasonably want otherwise are fields of :class:`SimulationOptions`.

1. Victims (``victim_order``): lowest priority first, then the most recently started (it loses
   the least work). AWS weighs borrowed instances, priority and run time by an unpublished
   heuristic; this is the order its documentation and walkthrough exhibit.
2. Minimal victim set (``minimal_victim_set``): after choosing victims in that order, any victim
   the preemptor can start without is spared — preempting more than needed only loses work.
3. Nothing is preempted unless the preemptor can then start: a preemption that frees too little
   would lose work for nobody's benefit.
4. Head-of-line blocking (``head_of_line``): by default one head per share *and instance
   type*: the highest-priority waiting job for a type (earliest submitted among equals) holds
   back the share's jobs behind it for that type, as a priority queue does; jobs for other
   types are not held back, since they wait for capacity the head does not use. AWS exposes one
   head per share (``frontOfQuotaShares``) without saying whether it holds back other types;
   ``HeadOfLine.PER_SHARE`` replays that stricter reading, ``HeadOfLine.NONE`` (or
   ``head_of_line_blocking=False``) lets a later job that fits start first (backfill) — better
   utilization, but large jobs can starve.
5. Scheduling order: shares' jobs that fit within their own limit are considered before jobs
   that would borrow (AWS "prioritizes quota shares that are under their capacity limits");
   within each group, and so among borrowers for idle capacity, the earliest-submitted waiting
   job goes first (``borrower_order``; PRIORITY = highest priority first). A job that does not
   fit does not hold idle capacity back from later borrowers.
6. Borrowed capacity is counted per share: a share is borrowing a type while it runs more than
   its own limit of it; an attempt is ``borrowed`` when it started with the share above its limit
   after the start. Cross-share preemption takes only attempts that started borrowed, from
   shares above their own limit; first only those whose share stays at or above its limit
   without them. When those free too little, a multi-instance job only part of which is
   borrowed is taken too, leaving its share below its limit until its jobs start again: AWS
   promises that a share can "reclaim resources that it has lent to others" and weighs "the
   number ... of instances a job is borrowing", so a lender does not wait for such a job to end
   (Kueue reclaims such jobs too; ``reclaim_partly_borrowed_jobs=False`` makes the lender
   wait instead).
   Cross-share victims come from any borrowing share (capacity is not tagged with its lender).
7. A waiting job that fits within its own limit first uses free capacity, then reclaims borrowed
   capacity, then (where enabled) preempts lower-priority jobs of its share. A job that must
   borrow never causes cross-share preemption, but may use in-share preemption. The two are
   never combined for one job: a job that would fit its own limit only after preempting in its
   share, and would then still lack capacity lent out, waits (Kueue does both at once; AWS
   documents no such combination, and reclaims for a job that arrives within its limit). A job
   just reclaimed from a borrowing share may start again at once only on free capacity; it may
   preempt in-share from the next moment on, so a reclaim is not undone at the same instant.
8. A preempted job waits again in its original place (``requeue_place``): it is ordered by its
   submission, as if it had never left, so a job preempted again and again keeps the seniority
   its wait earned; ``RequeuePlace.BACK`` orders it by the time it was preempted instead.
   Priority changes apply immediately: a waiting job moves in its share's queue; a running job
   becomes a more or less likely victim. A change before the job's submission is an input
   error; a change after it ended does nothing.
9. Checkpoints (``keep_checkpoint_progress``): a job with ``checkpoint_interval`` c saves its
   progress every c seconds of running; preempted, it resumes from the last checkpoint and the
   run time since then is lost. Without checkpoints the whole attempt is lost. Preemption and
   restart are instantaneous (no start-up time is modelled).
10. Events at one time: jobs ending are processed first, then submissions, then priority
    changes; scheduling then sees them all at once, so jobs submitted together are ordered by
    priority, not by list order (list order breaks remaining ties). A zero-duration job starts
    and ends at once and never holds capacity (it cannot be a victim or make its share look
    busier).
11. Figures are measured over a window: a run's own span (first submission to last end) for
    :func:`simulate`; for :func:`compare_policies` one window for all three arrangements (the
    first submission to the last end under any of them), so a share running the same jobs is
    not made to look busier under the arrangement that finishes first (``result.window``).
    Lent capacity-hours attribute other shares' borrowing to the idle allocations of lending
    shares and to borrowable capacity no share owns, in proportion to each one's idle amount at
    that moment. Percentiles interpolate linearly between the closest ranks.
12. A job must name a declared share, and the share must be enabled (a DISABLED share accepts
    no new jobs): anything else is an input error. A job that can never run — an instance type
    the environment or its share does not list, or more instances than its share can ever
    reach (the rules model's reach) — rejects the workload by default
    (``never_runnable=NeverRunnable.REJECT``: in a hand-written workload it is a mistake). With
    ``NeverRunnable.BLOCK`` it does as in AWS: it stays RUNNABLE, is set aside (it holds no
    capacity and holds back no job behind it) and is reported per share as blocked
    (``ShareFigures.blocked_jobs``, ``SimulationResult.blocked``), so a replay of real history
    with such a job still runs.

Cost
----
One pass over time with an event heap; waiting jobs in one priority queue per (share, instance
type), running jobs indexed for victim choice, priority changes by lazy deletion. Each event
costs O(log n) and re-examines only the queues it can affect, so time grows about linearly
with the number of jobs: a million jobs over 20 shares and four instance types take about 20 s
on one core (``python3 dev.py bench-sim``, ``benchmarks/simulator_throughput.py``).
"""

from ._native import prefer_source_where_needed

prefer_source_where_needed(__name__)  # (before any compiled module is imported)

from .inputs import (
    BorrowerOrder,
    HeadOfLine,
    NeverRunnable,
    PriorityChange,
    RequeuePlace,
    SimJob,
    SimulationOptions,
    VictimOrder,
)
from .recommend import Pin, Recommendation, recommend
from .results import (
    JOB_RECORD_FIELDS,
    Attempt,
    CapacityTimeline,
    JobOutcome,
    PolicyComparison,
    ShareFigures,
    SimulationResult,
)
from .simulate import compare_policies, simulate
from .targets import ServiceTarget, TargetOutcome

__all__ = [
    "JOB_RECORD_FIELDS",
    "Attempt",
    "BorrowerOrder",
    "CapacityTimeline",
    "HeadOfLine",
    "JobOutcome",
    "NeverRunnable",
    "Pin",
    "PolicyComparison",
    "PriorityChange",
    "Recommendation",
    "RequeuePlace",
    "ServiceTarget",
    "ShareFigures",
    "SimJob",
    "SimulationOptions",
    "SimulationResult",
    "TargetOutcome",
    "VictimOrder",
    "compare_policies",
    "recommend",
    "simulate",
]
