"""`LineReader`: the chat's prompts, read from a real pipe."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from hookline._cli.line_input import LineReader


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_end, write_end = os.pipe()
    yield read_end, write_end
    for fd in (read_end, write_end):
        with contextlib.suppress(OSError):  # the test closed it
            os.close(fd)


def test_lines_written_at_once_are_read_one_by_one_then_the_last_unended_one(pipe: tuple[int, int]) -> None:
    read_end, write_end = pipe
    os.write(write_end, b"hi\r\nsecond\n\xff\xfeoops\nlast")
    os.close(write_end)
    reader = LineReader(read_end, "utf-8")
    lines = [reader.read_line("you> ") for _ in range(5)]
    assert lines == ["hi", "second", "\ufffd\ufffdoops", "last", None]


def test_the_prompt_goes_to_stderr(pipe: tuple[int, int], capsys: pytest.CaptureFixture[str]) -> None:
    read_end, write_end = pipe
    os.write(write_end, b"y\n")
    assert LineReader(read_end).read_line("approve? ") == "y"
    assert capsys.readouterr().err == "approve? "
