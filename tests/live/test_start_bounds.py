"""The bound itself (no I/O): which of its two reasons holds in which state, and that without
one no moment is promised. The emulator tests check the bounds against what then happens."""

from __future__ import annotations

from quota_constructs import CapacityLimit, QuotaShareSpec, SharingStrategy
from quota_constructs.live.start_bounds import (
    HeldCapacity,
    QueuedJob,
    Rival,
    UnitState,
    bound_start,
)

G5 = "ml.g5.xlarge"
HOUR = 3_600_000
NINE = 9 * HOUR


def share(name: str, limit: int, strategy: SharingStrategy, *,
          in_share: bool = False) -> QuotaShareSpec:
    return QuotaShareSpec(name=name, capacity_limits=[CapacityLimit(G5, limit)],
                          strategy=strategy, in_share_preemption=in_share)


LAB = SharingStrategy.LEND_AND_BORROW
SHARES = [share("vision", 1, LAB), share("speech", 1, LAB),
          share("nlp", 2, SharingStrategy.LEND)]


def held(job: str, owner: str, ends: int | None, *, count: int = 1,
         priority: int = 0) -> HeldCapacity:
    return HeldCapacity(job, owner, count, priority, started_ms=NINE - HOUR, ends_ms=ends)


def queued(job: str, owner: str, *, count: int = 1, priority: int = 0,
           created: int = 0) -> QueuedJob:
    return QueuedJob(job, owner, count, priority, 3600.0, (created,))


def state(**changes: object) -> UnitState:
    """The docstring's example at 9:00: vision's wide job waits for both of nlp's instances,
    busy until 10:00; vision and speech each run their own instance all day."""
    base = dict(
        unit=G5, now_ms=NINE, environment=[CapacityLimit(G5, 4)], shares=SHARES,
        running=[held("v-own", "vision", 20 * HOUR), held("s-own", "speech", 20 * HOUR),
                 held("n1", "nlp", 10 * HOUR), held("n2", "nlp", 10 * HOUR)],
        queued=[], target=queued("wide", "vision", count=2), rivals=[],
    )
    base.update(changes)
    return UnitState(**base)  # type: ignore[arg-type]


def test_with_nothing_else_waiting_the_run_at_maxima_is_the_bound() -> None:
    bound = bound_start(state())
    assert bound.latest_ms == 10 * HOUR
    assert bound.blocking_jobs == ("n1", "n2")
    assert "no other share waits" in bound.assumes


def test_another_share_waiting_breaks_the_bound_and_is_named() -> None:
    bound = bound_start(state(rivals=[Rival("narrow", "speech", 1)]))
    assert bound.latest_ms is None
    assert "narrow" in bound.assumes and bound.blocking_jobs == ("narrow",)
    # ... also when its needs are unknown, or it was not read at all.
    assert bound_start(state(rivals=[Rival("narrow", "speech", None)])).latest_ms is None
    assert bound_start(state(rivals_complete=False)).latest_ms is None


def test_a_waiting_job_that_can_never_run_is_no_rival() -> None:
    bound = bound_start(state(rivals=[Rival("huge", "speech", 9)]))
    assert bound.latest_ms == 10 * HOUR


def test_within_its_own_limit_a_share_is_bounded_by_its_own_jobs_whoever_waits() -> None:
    lender = state(target=queued("mine", "nlp", created=5),
                   queued=[queued("first", "nlp", created=1)],
                   rivals=[Rival("narrow", "speech", 1), Rival("other", "vision", 2)])
    bound = bound_start(lender)
    # first takes n1's instance at 10:00 and holds it an hour; mine takes n2's at 10:00.
    assert bound.latest_ms == 10 * HOUR
    assert "gets its own ml.g5.xlarge back" in bound.assumes
    later = bound_start(state(target=queued("mine", "nlp", count=2, created=5),
                              queued=[queued("first", "nlp", created=1)],
                              rivals=[Rival("narrow", "speech", 1)]))
    assert later.latest_ms == 11 * HOUR  # after first's whole hour
    assert later.blocking_jobs == ("first",)


def test_a_share_that_may_borrow_with_jobs_ahead_has_no_own_bound() -> None:
    bound = bound_start(state(
        target=queued("mine", "vision", created=5), queued=[queued("first", "vision")],
        rivals=[Rival("narrow", "speech", 1)]))
    assert bound.latest_ms is None
    assert "may borrow and be reclaimed" in bound.assumes


def test_in_share_preemption_by_a_job_ahead_breaks_both_reasons() -> None:
    shares = [share("vision", 2, SharingStrategy.RESERVE, in_share=True),
              share("nlp", 2, SharingStrategy.LEND)]
    bound = bound_start(state(
        shares=shares, running=[held("low", "vision", 10 * HOUR, priority=1),
                                held("n1", "nlp", 10 * HOUR)],
        queued=[queued("high", "vision", count=2, priority=9)],
        target=queued("mine", "vision", priority=5), rivals=[Rival("x", "nlp", 1)]))
    assert bound.latest_ms is None and "in-share preemption" in bound.assumes


def test_a_job_with_no_maximum_elsewhere_does_not_matter_to_its_own_share() -> None:
    bound = bound_start(state(
        running=[held("v-own", "vision", None), held("s-own", "speech", 20 * HOUR),
                 held("n1", "nlp", 10 * HOUR), held("n2", "nlp", None)],
        target=queued("mine", "nlp"), rivals=[Rival("narrow", "speech", 1)]))
    assert bound.latest_ms == 10 * HOUR


def test_running_jobs_the_rules_model_would_not_run_give_no_bound() -> None:
    bound = bound_start(state(running=[held(f"r{i}", "nlp", 10 * HOUR) for i in range(5)]))
    assert bound.latest_ms is None and "do not fit the rules model" in bound.assumes


def test_limits_above_the_environment_guarantee_no_share_its_own() -> None:
    shares = [share("vision", 1, LAB), share("speech", 1, LAB),
              share("nlp", 3, SharingStrategy.LEND)]
    bound = bound_start(state(shares=shares, target=queued("mine", "nlp", created=5),
                              rivals=[Rival("narrow", "speech", 1)]))
    assert bound.latest_ms is None and "add up to more than the environment" in bound.assumes


def test_what_can_never_start_says_why() -> None:
    disabled = [*SHARES[:2], QuotaShareSpec(
        name="nlp", capacity_limits=[CapacityLimit(G5, 2)],
        strategy=SharingStrategy.LEND, enabled=False)]
    assert "DISABLED" in bound_start(state(shares=disabled,
                                           target=queued("m", "nlp"))).assumes
    assert "can reach at most" in bound_start(state(target=queued("m", "nlp", count=3))).assumes
    assert "no capacity limit" in bound_start(state(
        environment=[CapacityLimit(G5, 4), CapacityLimit("ml.g5.2xlarge", 1)],
        unit="ml.g5.2xlarge", running=[], target=queued("m", "nlp"))).assumes
