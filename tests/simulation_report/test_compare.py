"""simulate --compare: other declarations in the same report and metrics.json, by name; every
SimulationOptions assumption settable from the command line."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
from importlib import import_module
from pathlib import Path

import pytest

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.simulation import SimJob, SimulationOptions, compare_policies
from quota_constructs.simulation.cli import main
from quota_constructs.simulation.inputs import HeadOfLine, NeverRunnable, RequeuePlace
from quota_constructs.simulation.options_cli import add_option_arguments, options_from
from quota_constructs.simulation.workloads import Workload, write_workload

G5 = "ml.g5.xlarge"


def shares(strategy: SharingStrategy, first: int = 1) -> list[QuotaShareSpec]:
    return [
        QuotaShareSpec(name="a", capacity_limits=[CapacityLimit(G5, first)], strategy=strategy),
        QuotaShareSpec(name="b", capacity_limits=[CapacityLimit(G5, 3 - first)],
                       strategy=SharingStrategy.LEND),
    ]


TODAY = {"capacity_limits": [CapacityLimit(G5, 3)], "shares": shares(SharingStrategy.RESERVE)}
BORROWING = {"capacity_limits": [CapacityLimit(G5, 3)],
             "shares": shares(SharingStrategy.LEND_AND_BORROW)}
BIGGER_A = {"capacity_limits": [CapacityLimit(G5, 3)], "shares": shares(SharingStrategy.LEND, 2)}
JOBS = [SimJob(job_id=f"a{i}", share="a", submitted_at=i * 60.0, duration=3600.0,
               instance_type=G5) for i in range(6)]


def test_alternatives_are_replayed_on_the_same_jobs() -> None:
    comparison = compare_policies(
        capacity_limits=TODAY["capacity_limits"], shares=TODAY["shares"], jobs=JOBS,
        alternatives={"borrowing": (BORROWING["capacity_limits"], BORROWING["shares"])},
    )
    alternative = comparison.alternatives["borrowing"]
    assert alternative.arrangement == "borrowing"
    assert set(alternative.jobs) == {job.job_id for job in JOBS}
    # RESERVE a waits for its one instance; borrowing, a runs three at once.
    declared = comparison.declared.shares["a"].wait_p95
    assert declared is not None and alternative.shares["a"].wait_p95 is not None
    assert alternative.shares["a"].wait_p95 < declared


def test_compare_writes_every_alternative_by_name(tmp_path: Path) -> None:
    workload = tmp_path / "jobs.csv"
    write_workload(workload, Workload(JOBS))
    module = "tests.simulation_report.test_compare"
    out, err = io.StringIO(), io.StringIO()
    code = main(["--declaration", f"{module}:TODAY", "--workload", str(workload),
                 "--compare", f"lend and borrow={module}:BORROWING",
                 "--compare", f"{module}:BIGGER_A", "--out", str(tmp_path / "r"), "--quiet"],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    arrangements = metrics["arrangements"]
    assert list(arrangements) == ["declared", "hard_partition", "shared_pool",
                                  "lend and borrow", f"{module}:BIGGER_A"]
    assert arrangements["lend and borrow"]["title"] == "lend and borrow"
    assert (arrangements["lend and borrow"]["shares"]["a"]["wait_p95"]
            < arrangements["declared"]["shares"]["a"]["wait_p95"])
    html = (tmp_path / "r" / "report.html").read_text()
    assert "lend and borrow" in html and f"{module}:BIGGER_A" in html
    assert "a · lend and borrow" in html  # a row of the wait chart


def test_every_option_is_settable_from_the_command_line() -> None:
    parser = argparse.ArgumentParser()
    add_option_arguments(parser)
    assert options_from(parser.parse_args([])) == SimulationOptions()
    flags: list[str] = []
    expected = {}
    for item in dataclasses.fields(SimulationOptions):
        flag = "--" + item.name.replace("_", "-")
        default = getattr(SimulationOptions(), item.name)
        if isinstance(default, bool):
            flags.append(flag if not default else "--no-" + flag[2:])
            expected[item.name] = not default
        else:
            other = next(m for m in type(default) if m != default)
            flags += [flag, other.value]
            expected[item.name] = other
    assert options_from(parser.parse_args(flags)) == SimulationOptions(**expected)


@pytest.mark.parametrize("command", ["simulate", "recommend"])
def test_both_commands_take_the_short_spellings(command: str) -> None:
    """simulate and recommend spell the assumptions the same way, short forms included."""
    module = import_module(
        "quota_constructs.simulation.cli" if command == "simulate"
        else "quota_constructs.simulation.recommend_cli"
    )
    parser = module.parser()
    args = parser.parse_known_args(
        ["--workload", "jobs.csv", "--blocked-jobs", "--requeue", "BACK", "--no-unowned-borrowing",
         "--head-of-line", "PER_SHARE"]
    )[0]
    assert options_from(args) == SimulationOptions(
        never_runnable=NeverRunnable.BLOCK, requeue_place=RequeuePlace.BACK,
        unowned_capacity_borrowable=False, head_of_line=HeadOfLine.PER_SHARE,
    )


def test_a_compared_declaration_that_names_nothing_is_one_line_before_simulating(
    tmp_path: Path,
) -> None:
    workload = tmp_path / "jobs.csv"
    write_workload(workload, Workload(JOBS))
    module = "tests.simulation_report.test_compare"
    out, err = io.StringIO(), io.StringIO()
    code = main(["--declaration", f"{module}:TODAY", "--workload", str(workload),
                 "--compare", "nope:X", "--out", str(tmp_path / "r")],
                stdout=out, stderr=err)
    assert code == 2
    said = err.getvalue().splitlines()
    errors = [line for line in said if line.startswith("error:")]
    assert len(errors) == 1 and "--compare" in errors[0] and "nope:X" in errors[0]
    # Before the workload is read or anything simulated, and with no workload row beside it.
    assert not any("reading" in line or "simulating" in line for line in said), said
    assert not any("a job of" in line for line in said), said
    assert not (tmp_path / "r").exists()
