"""Every name the docs and examples import from hookline imports, from the path they use.

The README, docs/**/*.md (python code blocks) and examples/ are scanned for
`from hookline... import ...` and `import hookline...`; each name is its own case, with the
file and line in its id, so a wrong path in the docs names the line to fix.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_FENCE = re.compile(r"^```(?:python|py)\s*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_FROM = re.compile(r"^[ \t]*from[ \t]+(hookline(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.MULTILINE)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(hookline(?:\.\w+)*)\b", re.MULTILINE)


def _python_sources() -> list[tuple[Path, int, str]]:
    """Each python text of the docs: (file, line of its first line, text)."""
    sources: list[tuple[Path, int, str]] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for block in _FENCE.finditer(text):
            sources.append((path, text.count("\n", 0, block.start(1)) + 1, block.group(1)))
    sources.extend((path, 1, path.read_text(encoding="utf-8")) for path in sorted((ROOT / "examples").rglob("*.py")))
    return sources


def _imports() -> list[tuple[str, str, str | None]]:
    """Each imported name: (where, module, name); name None for `import hookline...`."""
    found: list[tuple[str, str, str | None]] = []
    for path, first_line, text in _python_sources():

        def where(offset: int, path: Path = path, first_line: int = first_line, text: str = text) -> str:
            return f"{path.relative_to(ROOT)}:{first_line + text.count(chr(10), 0, offset)}"

        for match in _FROM.finditer(text):
            names = match.group(2).strip().strip("()").replace("\n", " ")
            for item in (name.strip() for name in names.split(",")):
                if item:
                    found.append((where(match.start()), match.group(1), item.split(" as ")[0].strip()))
        found.extend((where(match.start()), match.group(1), None) for match in _IMPORT.finditer(text))
    return found


IMPORTS = _imports()


def test_the_docs_have_imports_to_check() -> None:
    modules = {module for _, module, _ in IMPORTS}
    assert {"hookline", "hookline.models", "hookline.sessions", "hookline.testing"} <= modules


@pytest.mark.parametrize(
    ("where", "module", "name"),
    IMPORTS,
    ids=[f"{where}:{module}.{name or ''}" for where, module, name in IMPORTS],
)
def test_a_documented_import_works(where: str, module: str, name: str | None) -> None:
    statement = f"from {module} import {name}" if name is not None else f"import {module}"
    try:
        imported = importlib.import_module(module)
        if name is not None:
            getattr(imported, name)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"{where}: `{statement}` fails: {exc}")
