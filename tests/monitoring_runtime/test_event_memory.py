"""The memory of handled job events: kept across a runtime restart, bounded."""

from __future__ import annotations

from pathlib import Path

from quota_constructs.runtime.event_memory import EventMemory


def test_a_restarted_runtime_still_knows_what_was_done(tmp_path: Path) -> None:
    EventMemory(tmp_path).remember("preemption/job-1/1")
    restarted = EventMemory(tmp_path)
    assert restarted.seen("preemption/job-1/1")
    assert not restarted.seen("preemption/job-1/2")


def test_only_what_was_remembered_is_seen(tmp_path: Path) -> None:
    memory = EventMemory(tmp_path)
    assert not memory.seen("a")
    memory.remember("a")
    assert memory.seen("a") and not memory.seen("b")
    memory.forget_all()
    assert not memory.seen("a")


def test_it_stays_bounded_and_keeps_the_newest(tmp_path: Path) -> None:
    memory = EventMemory(tmp_path, capacity=10)
    for number in range(25):
        memory.remember(f"event-{number}")
    assert len(list(tmp_path.iterdir())) <= 10
    assert EventMemory(tmp_path).seen("event-24")


def test_an_unwritable_directory_falls_back_to_the_process(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    memory = EventMemory(blocked / "memory")
    memory.remember("a")
    assert memory.seen("a")
