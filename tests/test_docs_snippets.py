"""Every ```python block of README.md and docs/**/*.md runs offline, as written.

The blocks of a page run in order as one module, as a reader would run them one after
another, each at its own line number (so a traceback points into the Markdown). A page
whose blocks define `test_*` functions (a testing guide) is run by pytest, so its
examples' tests run too. A block that cannot run offline (it needs a provider key, or it
is a fragment of a larger program) is marked in the Markdown, on the line before its
fence, with `<!-- not-run: why -->`; only marked blocks are skipped.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^([ \t]*)```([\w+-]*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.S | re.M)
_MARK = re.compile(r"<!--\s*not-run\b:?\s*(.*?)\s*-->")
_TEST = re.compile(r"^(async\s+)?def test_", re.M)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: Path
    line: int
    """The line number of its first line of code."""
    language: str
    code: str
    not_run: str | None
    """Why it is not run (its `not-run` mark), or None."""


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of `page`, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start(3)) + 1
        before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]
        mark = _MARK.search(before)
        found.append(Block(page, line, match.group(2), textwrap.dedent(match.group(3)),
                           mark.group(1) if mark else None))
    return found


def runnable(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.language == "python" and b.not_run is None]


def module_of(page: Path) -> str:
    """The page's runnable blocks as one module, each block at its line number in the page."""
    lines = [""] * page.read_text(encoding="utf-8").count("\n")
    for block in runnable(page):
        for offset, code in enumerate(block.code.splitlines()):
            lines[block.line - 1 + offset] = code
    return "\n".join(lines) + "\n"


def offline_env() -> dict[str, str]:
    """The environment without provider keys, base URLs or hookline settings."""
    hidden = ("HOOKLINE_", "OPENAI_", "ANTHROPIC_")
    return {k: v for k, v in os.environ.items() if not k.startswith(hidden) and not k.endswith("_API_KEY")}


PAGES_TO_RUN = [page for page in PAGES if runnable(page)]


@pytest.mark.parametrize("page", PAGES_TO_RUN, ids=[str(p.relative_to(ROOT)) for p in PAGES_TO_RUN])
def test_the_page_runs(page: Path, tmp_path: Path) -> None:
    source = module_of(page)
    script = tmp_path / f"test_doc_{page.stem.replace('-', '_')}.py"
    script.write_text(source, encoding="utf-8")
    command = [sys.executable, str(script)]
    if _TEST.search(source):
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error", str(script)]
    done = subprocess.run(command, cwd=tmp_path, env=offline_env(), capture_output=True, text=True, timeout=300,
                          check=False)
    where = page.relative_to(ROOT)
    assert done.returncode == 0, f"{where} (line numbers are the page's):\n{done.stdout}\n{done.stderr}"


def test_some_blocks_run() -> None:
    assert sum(len(runnable(page)) for page in PAGES) >= 3


def test_the_pages_in_subfolders_are_run_too() -> None:
    # A page per hook point and per ready hook: each shows its point at work, and runs.
    hook_pages = [p for p in PAGES_TO_RUN if p.parent == ROOT / "docs" / "hooks"]
    assert len(hook_pages) >= 13, [str(p.relative_to(ROOT)) for p in hook_pages]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_mark_says_why_and_sits_on_a_python_block(page: Path) -> None:
    text, where = page.read_text(encoding="utf-8"), page.relative_to(ROOT)
    marked = [b for b in blocks(page) if b.not_run is not None]
    assert len(marked) == len(_MARK.findall(text)), f"{where}: a not-run mark that is not right before a block"
    for block in marked:
        assert block.language == "python", f"{where}:{block.line}: only python blocks are run or marked"
        assert block.not_run, f"{where}:{block.line}: say why: <!-- not-run: needs a provider key -->"


def test_blocks_are_found_where_they_are() -> None:
    page = ROOT / "docs" / "testing.md"
    first = next(b for b in blocks(page) if b.language == "python")
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines[first.line - 2].startswith("```python")
    assert first.code.splitlines()[0] == lines[first.line - 1]
