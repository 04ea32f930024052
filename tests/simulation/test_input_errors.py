"""Bad input is a QuotaConfigError naming the job (or change) and the field, up front."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, fields, replace

import pytest

from quota_constructs import CapacityLimit, QuotaConfigError, QuotaShareSpec
from quota_constructs.model import QuotaAllocation
from quota_constructs.simulation import PriorityChange, SimJob, simulate
from quota_constructs.simulation.problem import JobColumns, compile_problem

from .support import G5, LEND, LEND_AND_BORROW, P4, RESERVE, job, share

SHARES = [share("A", LEND_AND_BORROW, 1, borrow=100), share("R", RESERVE, 1), share("L", LEND, 1)]
GOOD = job("good", "A")


def check(jobs: list[SimJob], changes: list[PriorityChange] | None = None,
          shares: list[QuotaShareSpec] | None = None,
          environment: list[CapacityLimit] | None = None) -> QuotaConfigError:
    with pytest.raises(QuotaConfigError) as caught:
        simulate(
            capacity_limits=environment or [CapacityLimit(G5, 4)],
            shares=shares or SHARES,
            jobs=jobs,
            priority_changes=changes or [],
        )
    return caught.value


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"share": "nope"}, "share"),
        ({"instance_type": "ml.p5.48xlarge"}, "instance_type"),
        ({"submitted_at": -1.0}, "submitted_at"),
        ({"submitted_at": float("nan")}, "submitted_at"),
        ({"submitted_at": "0"}, "submitted_at"),
        ({"duration": -5.0}, "duration"),
        ({"duration": float("inf")}, "duration"),
        ({"instance_count": 0}, "instance_count"),
        ({"instance_count": 1.5}, "instance_count"),
        ({"instance_count": True}, "instance_count"),
        ({"instance_count": 3}, "instance_count"),  # A reaches 1 own + 1 borrowed
        ({"priority": -1}, "priority"),
        ({"priority": 10000}, "priority"),
        ({"checkpoint_interval": 0.0}, "checkpoint_interval"),
        ({"preemption_retries": -1}, "preemption_retries"),
        ({"job_id": ""}, "job_id"),
    ],
)
def test_each_bad_field_is_named_with_the_job(change: dict[str, object], field: str) -> None:
    bad = replace(job("bad", "A"), **change)  # type: ignore[arg-type]
    error = check([GOOD, bad])
    assert error.field == field
    assert repr(bad.job_id) in error.subject


def test_duplicate_ids() -> None:
    error = check([GOOD, job("good", "L")])
    assert (error.subject, error.field) == ("simulated job 'good'", "job_id")


def test_a_job_larger_than_the_environment() -> None:
    shares = [share("U", LEND_AND_BORROW, 1)]  # unlimited borrowing
    error = check([job("huge", "U", count=5)], shares=shares)
    assert error.field == "instance_count"
    assert "at most 4" in error.allowed


def test_a_job_that_would_need_a_reserve_shares_allocation() -> None:
    shares = [share("U", LEND_AND_BORROW, 1), share("R", RESERVE, 2)]
    error = check([job("big", "U", count=3)], shares=shares)
    assert error.field == "instance_count"
    assert "at most 2" in error.allowed


def test_a_unit_the_share_does_not_list() -> None:
    environment = [CapacityLimit(G5, 2), CapacityLimit(P4, 2)]
    error = check([job("p", "A", unit=P4)], environment=environment)
    assert error.field == "instance_type"
    assert "'A'" in error.allowed


def test_a_disabled_share_accepts_no_jobs() -> None:
    disabled = QuotaShareSpec(name="D", capacity_limits=[CapacityLimit(G5, 1)],
                              strategy=LEND, enabled=False)
    error = check([job("d", "D")], shares=[disabled])
    assert error.field == "share"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (PriorityChange(at=5.0, job_id="ghost", priority=1), "job_id"),
        (PriorityChange(at=-1.0, job_id="good", priority=1), "at"),
        (PriorityChange(at=5.0, job_id="good", priority=10000), "priority"),
        (PriorityChange(at=5.0, job_id="late", priority=1), "at"),  # before its submission
    ],
)
def test_bad_priority_changes(change: PriorityChange, field: str) -> None:
    error = check([GOOD, job("late", "A", 10.0)], [change])
    assert error.field == field
    assert repr(change.job_id) in error.subject


def test_queue_level_mistakes_are_the_models_errors() -> None:
    over_reserved = [share("R1", RESERVE, 3), share("R2", RESERVE, 3)]
    error = check([job("r", "R1")], shares=over_reserved)
    assert error.subject == "quota share 'R2'"


def test_numbers_from_other_libraries_are_accepted() -> None:
    from fractions import Fraction

    result = simulate(
        capacity_limits=[CapacityLimit(G5, 1)],
        shares=[share("S", RESERVE)],
        jobs=[replace(job("j", "S"), submitted_at=Fraction(1, 2), duration=Fraction(3))],  # type: ignore[arg-type]
    )
    assert result.jobs["j"].finished_at == 3.5


@dataclass(frozen=True, slots=True, kw_only=True)
class _OwnJob(SimJob):
    """A SimJob of the caller's own class: compiled job by job, as any job the column-at-a-time
    path does not take."""


def test_plainly_valid_jobs_compile_as_they_would_one_by_one() -> None:
    # A large history's plainly valid jobs are compiled a column at a time; the columns must be
    # those job-by-job checking gives (ints made floats, absent checkpoints and budgets).
    shares = [share("A", LEND_AND_BORROW, 2, borrow=100), share("R", RESERVE, 1, unit=P4),
              share("L", LEND, 1)]
    environment = [CapacityLimit(G5, 4), CapacityLimit(P4, 2)]
    jobs = [
        SimJob(job_id="a", share="A", submitted_at=0, duration=10, instance_type=G5,
               instance_count=3, priority=9999, checkpoint_interval=5, preemption_retries=0),
        SimJob(job_id="r", share="R", submitted_at=2.5, duration=0.0, instance_type=P4),
        SimJob(job_id="l", share="L", submitted_at=1.0, duration=7.5, instance_type=G5,
               checkpoint_interval=2.5, preemption_retries=3),
    ]
    changes = [PriorityChange(at=3, job_id="l", priority=4)]
    allocation = QuotaAllocation.check(environment_limits=environment, shares=shares)
    plain = compile_problem(allocation, jobs, changes)
    one_by_one = compile_problem(
        allocation, [_OwnJob(**{f.name: getattr(j, f.name) for f in fields(j)}) for j in jobs],
        changes)
    for column in fields(JobColumns):
        assert repr(getattr(plain, column.name)) == repr(getattr(one_by_one, column.name)), column
    assert plain.checkpoint == [5.0, 0.0, 2.5] and plain.retries == [0, -1, 3]
    assert (plain.change_at, plain.change_job, plain.change_priority) == ([3.0], [2], [4])


def test_the_simulator_imports_neither_aws_cdk_nor_boto3() -> None:
    code = (
        "import sys\n"
        "from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy\n"
        "from quota_constructs.simulation import SimJob, simulate, compare_policies\n"
        "shares = [QuotaShareSpec(name='S', capacity_limits=[CapacityLimit('ml.g5.xlarge', 1)],"
        " strategy=SharingStrategy.LEND_AND_BORROW)]\n"
        "jobs = [SimJob(job_id='j', share='S', submitted_at=0.0, duration=1.0,"
        " instance_type='ml.g5.xlarge')]\n"
        "compare_policies(capacity_limits=[CapacityLimit('ml.g5.xlarge', 2)], shares=shares,"
        " jobs=jobs).declared.jobs['j']\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in {'aws_cdk', 'boto3',"
        " 'botocore', 'jsii', 'constructs'})\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
