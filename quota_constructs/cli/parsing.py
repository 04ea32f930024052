"""Option parsing every command shares: a usage mistake is one line, as every other error is."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """``argparse`` whose errors are one line naming what is wrong, exit status 2.

    argparse prints the whole usage before its error; with a dozen options that buries the one
    line that says what to fix, so the usage is left to ``--help``."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def error_line(prog: str, error: Exception) -> str:
    """The one line a command prints for ``error``: ``<prog>: error: <what is wrong>``. A
    :class:`~quota_constructs.model.QuotaConfigError` about the command's own options names
    the command as its subject (``emulate: --port got ...``); the line names it once."""
    message = " ".join(str(error).split())
    command = prog.rsplit(" ", 1)[-1]
    if getattr(error, "subject", None) == command:
        message = message.removeprefix(f"{command}: ")
    return f"{prog}: error: {message}"
