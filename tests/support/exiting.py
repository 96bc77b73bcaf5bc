"""Timing how a child process ends once its work is done (house rule: every process ends)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Ending:
    """How a child ended: its last line, the seconds from that line to its exit, and the rest."""

    last_line: str
    exit_seconds: float
    returncode: int
    stderr: str


def run_until_exit(command: Sequence[str], *, ceiling: float, what: str) -> Ending:
    """Run `command`, which prints one line when its work is done; time its exit after that line.

    A child still running `ceiling` seconds after its last line fails the test (it hung).
    """
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            last_line = process.stdout.readline()  # returns when the child prints its last line
            finished = time.monotonic()
            try:
                process.wait(timeout=ceiling)
            except subprocess.TimeoutExpired:
                pytest.fail(f"{what} printed {last_line!r} and then did not exit in {ceiling:g} s")
            exit_seconds = time.monotonic() - finished
            stderr = process.stderr.read() if process.stderr else ""
        finally:
            process.kill()
    return Ending(last_line, exit_seconds, process.returncode, stderr)
