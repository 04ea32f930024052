"""``quota-constructs emulate``'s mistakes: one line naming the option, exit status 2."""

from __future__ import annotations

import pytest

from quota_constructs.cli import COMMANDS
from quota_constructs.cli import main as console


def test_emulate_is_a_command_of_the_console_script() -> None:
    assert COMMANDS["emulate"].module == "quota_constructs.emulator.cli"


@pytest.mark.parametrize(("argv", "named"), [
    (["--declaration", "no_such_module:X"], "--declaration"),
    (["--declaration", "tests.emulator.walkthrough_declaration:WALKTHROUGH", "--port", "70000"],
     "--port"),
    (["--declaration", "tests.emulator.walkthrough_declaration:WALKTHROUGH", "--speed", "0"],
     "--speed"),
    (["--declaration", "tests.emulator.walkthrough_declaration:WALKTHROUGH", "--start",
      "next tuesday"], "--start"),
])
def test_a_mistake_is_one_line_and_exit_status_2(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert console(["emulate", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert named in line
    # The command is named once, as every command names itself.
    assert line.startswith(f"quota-constructs emulate: error: {named}")
