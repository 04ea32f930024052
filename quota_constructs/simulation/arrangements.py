"""The arrangements a declared workload is compared with: a hard partition and a shared pool.

Both are derived from the compiled declared problem, so the same jobs, priorities and
checkpoints are replayed; figures stay grouped by each job's declared share.
"""

from __future__ import annotations

from dataclasses import replace

from .problem import Problem

SHARED_POOL_NAME = "shared-pool"


def hard_partition(problem: Problem) -> tuple[Problem, list[int]]:
    """Every share keeps its own limits; nobody lends or borrows.

    Returns the problem and the indexes (in ``problem``) of jobs larger than their share's own
    limit, which a partition can never run. Shares are not made RESERVE literally: when the
    declared limits add up to more than the environment, RESERVE would be rejected, whereas
    "nobody borrows" still gives each share its own limit as far as the environment allows.
    """
    n_units = problem.n_units
    keep: list[int] = []
    dropped: list[int] = []
    for j, (share, unit, count) in enumerate(
        zip(problem.job_share, problem.job_unit, problem.job_count, strict=True)
    ):
        (keep if count <= problem.limit[share * n_units + unit] else dropped).append(j)
    n_shares = len(problem.share_names)
    partition = replace(
        subset(problem, keep),
        ceiling=[float(v) for v in problem.limit],
        reserve=[False] * n_shares,
        borrows=[False] * n_shares,
    )
    return partition, dropped


def shared_pool(problem: Problem) -> Problem:
    """No shares: one first-come first-served queue per instance type over the environment.

    Priorities and priority changes play no part in a FIFO pool, so nothing is preempted.
    Every share's idle allocation counts as lent: in a pool anyone may use it.
    """
    n_jobs = len(problem.job_ids)
    return replace(
        problem,
        share_names=[SHARED_POOL_NAME],
        # Without shares the whole environment is the pool: capacity the declared shares do
        # not own is usable by every job, whatever the rules say of borrowing it.
        capacity=list(problem.environment),
        unowned=[
            max(0, size - sum(limits[k] for limits in problem.group_limits))
            for k, size in enumerate(problem.environment)
        ],
        limit=list(problem.environment),
        ceiling=[float(v) for v in problem.environment],
        reserve=[False],
        borrows=[False],
        in_share=[False],
        group_lends=[True] * len(problem.group_names),
        job_share=[0] * n_jobs,
        priority=[0] * n_jobs,
        change_at=[],
        change_job=[],
        change_priority=[],
    )


def subset(problem: Problem, keep: list[int]) -> Problem:
    """Only the jobs at the indexes ``keep`` (in that order) of ``problem``, their priority
    changes renumbered; ``problem`` itself when every job is kept. The arrangements and the
    recommend search both replay parts of one compiled history this way."""
    if len(keep) == len(problem.job_ids):
        return problem
    new_index = {old: new for new, old in enumerate(keep)}
    changes = [
        (at, new_index[j], priority)
        for at, j, priority in zip(
            problem.change_at, problem.change_job, problem.change_priority, strict=True
        )
        if j in new_index
    ]
    return replace(
        problem,
        **problem.kept(keep),
        change_at=[c[0] for c in changes],
        change_job=[c[1] for c in changes],
        change_priority=[c[2] for c in changes],
    )
