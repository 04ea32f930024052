"""The sweep (usage/figures.py) against the independent computation (truth.py) on random
histories and windows, and the charts' intervals against the figures they draw."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from quota_constructs.model import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.usage import JobTable, Window, measure, usage_document

from .truth import TrueAttempt, TrueJob, TrueShare, assert_matches, expected

G5, P4 = "ml.g5.xlarge", "ml.p4d.24xlarge"
ENVIRONMENT = {G5: 6, P4: 2}
SPECS = [
    QuotaShareSpec(name="a", strategy=SharingStrategy.LEND_AND_BORROW,
                   capacity_limits=[CapacityLimit(G5, 2), CapacityLimit(P4, 1)]),
    QuotaShareSpec(name="b", strategy=SharingStrategy.LEND_AND_BORROW, borrow_limit_percent=100,
                   capacity_limits=[CapacityLimit(G5, 1)]),
    QuotaShareSpec(name="l", strategy=SharingStrategy.LEND, capacity_limits=[CapacityLimit(G5, 1)]),
    QuotaShareSpec(name="r", strategy=SharingStrategy.RESERVE,
                   capacity_limits=[CapacityLimit(G5, 1), CapacityLimit(P4, 1)]),
]
TRUTH = [
    TrueShare("a", "LEND_AND_BORROW", {G5: 2, P4: 1}, {G5: True, P4: True}),
    TrueShare("b", "LEND_AND_BORROW", {G5: 1}, {G5: True}),
    TrueShare("l", "LEND", {G5: 1}),
    TrueShare("r", "RESERVE", {G5: 1, P4: 1}),
]
UNITS = {"a": [G5, P4], "b": [G5], "l": [G5], "r": [G5, P4]}
MINUTE = 60_000

job = st.builds(
    lambda share, pick, count, created, gaps, running, budget, failed: (
        share, UNITS[share][pick % len(UNITS[share])], count, created, gaps, running, budget,
        failed),
    st.sampled_from(list(UNITS)), st.integers(0, 1), st.integers(1, 3),
    st.integers(0, 600), st.lists(st.tuples(st.integers(0, 90), st.integers(1, 240)),
                                  max_size=3),
    st.booleans(), st.one_of(st.none(), st.integers(0, 2)), st.booleans())


def build(raw: list[tuple[object, ...]], exported: int) -> tuple[JobTable, list[TrueJob]]:
    table, truth = JobTable(), []
    for number, (share, unit, count, created, gaps, running, budget, failed) in enumerate(raw):
        at = created * MINUTE
        attempts = []
        for index, (wait, length) in enumerate(gaps):  # type: ignore[attr-defined]
            at += wait * MINUTE
            last = index == len(gaps) - 1  # type: ignore[arg-type]
            if last and running:
                attempts.append(TrueAttempt(at, None, "RUNNING"))
                break
            ending = "PREEMPTED" if not last or failed else "SUCCEEDED"
            attempts.append(TrueAttempt(at, at + length * MINUTE, ending))
            at += length * MINUTE
        status = ("RUNNING" if attempts and attempts[-1].stop is None else "FAILED" if failed
                  else "SUCCEEDED" if attempts else "RUNNABLE")
        true = TrueJob(f"j{number}", str(share), str(unit), int(count),  # type: ignore[call-overload]
                       created * MINUTE, status, tuple(attempts), budget)  # type: ignore[arg-type]
        truth.append(true)
        table.add(true.job_id, true.share, true.unit, true.count, true.created, status,
                  true.retries, true.preemptions,
                  [(a.start, a.stop, a.ended) for a in attempts], exported)
    return table, truth


@settings(max_examples=60)
@given(st.lists(job, min_size=1, max_size=14), st.integers(0, 400), st.integers(60, 900),
       st.sampled_from([1.0, 5.0, 100.0]))
def test_the_sweep_agrees_with_the_independent_computation(
        raw: list[tuple[object, ...]], since: int, length: int, half_life: float) -> None:
    exported = 2000 * MINUTE
    table, truth = build(raw, exported)
    window = Window(since * MINUTE, (since + length) * MINUTE, closed=False)
    result = measure(table, capacity_limits=[CapacityLimit(u, n) for u, n in ENVIRONMENT.items()],
                     shares=SPECS, window=window, half_life_hours=half_life,
                     prices={G5: 2.0, P4: 30.0}, buckets=7)
    want = expected(truth, ENVIRONMENT, TRUTH, start=window.start_ms, end=window.end_ms,
                    exported=exported, half_life_hours=half_life, prices={G5: 2.0, P4: 30.0},
                    closed=False)
    assert_matches(usage_document(result), want)
    # Each chart interval's average, times its width, adds up to the figures drawn.
    width = length / 60 / 7
    for (name, unit), timeline in result.timelines.items():
        figures = result.shares[name].instance_types[unit]
        assert sum(timeline.within) * width == pytest_approx(figures.own_used_hours)
        assert sum(timeline.above) * width == pytest_approx(figures.borrowed_hours)


def pytest_approx(value: float) -> object:
    import pytest
    return pytest.approx(value, rel=1e-9, abs=1e-9)
