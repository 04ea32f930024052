"""The one backoff loop: every retry of the runtime goes through it, with what it is given."""

from __future__ import annotations

import pytest

from quota_constructs.runtime.retry import Again, RetryPolicy, with_backoff


def policy(sleeps: list[float], attempts: int = 4) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_delay=1.0, max_delay=3.0,
                       sleep=sleeps.append, jitter=lambda: 1.0)


def test_it_backs_off_between_attempts_until_one_answers() -> None:
    sleeps: list[float] = []
    notes: list[tuple[int, float]] = []

    def attempt(number: int) -> str | Again[str]:
        return "done" if number == 3 else Again(lambda: "gave up",
                                                lambda n, d: notes.append((n, d)))

    assert with_backoff(attempt, policy(sleeps)) == "done"
    assert sleeps == [1.0, 2.0]
    assert notes == [(1, 1.0), (2, 2.0)]


def test_it_gives_up_after_the_last_attempt_without_sleeping_after_it() -> None:
    sleeps: list[float] = []
    tried: list[int] = []

    def attempt(number: int) -> str | Again[str]:
        tried.append(number)
        return Again(lambda: f"gave up after {number}")

    assert with_backoff(attempt, policy(sleeps, attempts=4)) == "gave up after 4"
    assert tried == [1, 2, 3, 4]
    assert sleeps == [1.0, 2.0, 3.0]  # capped at max_delay


def test_it_gives_up_when_the_backoff_would_overrun_the_time_left() -> None:
    sleeps: list[float] = []
    left = iter([10.0, 6.5])  # after attempt 1: 1 s + 5 s margin fits; after 2: 2 s does not

    def attempt(number: int) -> str | Again[str]:
        return Again(lambda: f"out of time after {number}")

    answer = with_backoff(attempt, policy(sleeps), seconds_left=lambda: next(left))
    assert answer == "out of time after 2"
    assert sleeps == [1.0]


def test_an_error_an_attempt_raises_ends_the_loop_at_once() -> None:
    sleeps: list[float] = []

    def attempt(number: int) -> str | Again[str]:
        raise ValueError(f"refused on attempt {number}")

    with pytest.raises(ValueError, match="attempt 1"):
        with_backoff(attempt, policy(sleeps))
    assert sleeps == []
