"""Compaction across processes (issue 27, part 3), on a SQLite file and on PostgreSQL: a process that
goes on with a session another one compacted starts from the summary and never summarises again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .agents import Notes

WORKER = Path(__file__).with_name("worker.py")


def _prompts(shared: tuple[str, str], folder: Path, *prompts: str) -> None:
    folder.mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, str(WORKER), *shared, str(folder), *prompts], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_another_process_starts_from_the_summary(shared: tuple[str, str], tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _prompts(shared, first, "q1", "q2", "q3", "q4")
    assert Notes(first).summaries == [5]

    _prompts(shared, second, "q5")
    assert Notes(second).summaries == [], "the summary came from the log"
    assert Notes(second).requests == [["Summary of earlier conversation: 5 earlier messages", "answer to q3", "q4",
                                       "answer to q4", "q5"]]
