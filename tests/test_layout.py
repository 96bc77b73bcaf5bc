"""The package's layout (docs/architecture.md): no import cycle, rooms that import only downward,
and an `import hookline` that loads nothing optional.

The import graph is read from the source with `ast`, so it holds every import: type-only ones
(under `if TYPE_CHECKING:`) and lazy ones inside functions as well. Only an
`if __name__ == "__main__":` block is left out: it runs when a module is a program, never when
it is imported.
"""

from __future__ import annotations

import ast
import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

import hookline

SRC = Path(hookline.__file__).parent

Graph = dict[str, dict[str, int]]
"""Module -> {module it imports: the line of its first such import}."""

FOUNDATION = {
    "hookline._hot_path", "hookline._ids", "hookline._redact", "hookline._version", "hookline.decision",
    "hookline.errors", "hookline.events", "hookline.hook_points", "hookline.messages", "hookline.result",
    "hookline.retry", "hookline.types", "hookline.usage",
}
"""Values and small helpers that everything may import; they import only each other."""
SEAMS = {"hookline.models.base", "hookline.sessions.base"}
"""The base classes that adapters and backends implement; they import only the foundation."""
IMPLEMENTED = ("hookline.models", "hookline.sessions")
"""The packages whose modules (besides the seam and the package itself) implement a seam."""
BACKENDS = {
    "hookline.models.anthropic", "hookline.models.local", "hookline.models.openai",
    "hookline.sessions.memory", "hookline.sessions.postgres", "hookline.sessions.sqlite",
}
"""Provider adapters and store backends: loaded on first use, through their package only."""
SURFACES = ("hookline.__main__", "hookline._cli", "hookline.a2a", "hookline.cli", "hookline.durable",
            "hookline.hooklib", "hookline.mcp", "hookline.server", "hookline.testing")
"""What users run or add on top of the library; nothing in the library imports them."""
OPTIONAL = ("a2a", "aiosqlite", "anthropic", "asyncpg", "dbos", "fastapi", "llama_cpp", "mcp", "mcp_types", "openai",
            "opentelemetry", "sqlite3", "starlette", "uvicorn")
"""Provider SDKs, store drivers and the server stack: none loads until a program uses it."""


def _outside(module: str, prefixes: tuple[str, ...]) -> bool:
    return not any(module == p or module.startswith(p + ".") for p in prefixes)


def modules_of(package_dir: Path) -> dict[str, Path]:
    """Every module of the package in `package_dir`, by dotted name."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _is_main_block(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in ("__name__ == '__main__'", "'__main__' == __name__")


def _imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [node for node in tree.body if not _is_main_block(node)]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The modules of `known` that one import statement imports (the nearest enclosing module of each name)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
            base = ".".join([*anchor, *([base] if base else [])])
        names = [f"{base}.{alias.name}" for alias in node.names]
    targets = []
    for name in names:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            targets.append(name)
    return targets


def import_graph(package_dir: Path) -> Graph:
    """The import graph of the package in `package_dir`: every import, type-only and lazy ones too."""
    modules = modules_of(package_dir)
    known = set(modules)
    graph: Graph = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for target in _targets(node, module, path.name == "__init__.py", known):
                if target != module and node.lineno < edges.get(target, sys.maxsize):
                    edges[target] = node.lineno
    return graph


def find_cycle(graph: Graph) -> list[str] | None:
    """One import cycle of `graph`, as [a, b, ..., a], or None when it has none (a depth-first walk)."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path, branches = [start], [iter(sorted(graph[start]))]
        while path:
            target = next(branches[-1], None)
            if target is None:
                done.add(path.pop())
                branches.pop()
            elif target in path:
                return [*path[path.index(target) :], target]
            elif target not in done:
                path.append(target)
                branches.append(iter(sorted(graph[target])))
    return None


def describe(cycle: list[str], graph: Graph) -> str:
    """The cycle as a chain of imports, each with the line that makes it."""
    return "\n".join(f"  {a} (line {graph[a][b]}) imports {b}" for a, b in itertools.pairwise(cycle))


GRAPH = import_graph(SRC)


def test_the_package_has_no_import_cycle() -> None:
    cycle = find_cycle(GRAPH)

    assert cycle is None, "an import cycle, type-only and lazy imports included:\n" + describe(cycle or [], GRAPH)


def test_a_type_only_cycle_is_found_and_named_but_a_main_block_is_no_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from pkg.b import B\n")
    (package / "b.py").write_text("def load():\n    from . import a\n")
    (package / "c.py").write_text("import pkg.d\n")
    (package / "d.py").write_text('if __name__ == "__main__":\n    from pkg.c import main\n')
    graph = import_graph(package)

    assert find_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]
    assert describe(["pkg.a", "pkg.b", "pkg.a"], graph) == (
        "  pkg.a (line 4) imports pkg.b\n  pkg.b (line 2) imports pkg.a"
    )
    (package / "b.py").write_text("")
    assert find_cycle(import_graph(package)) is None


def test_the_foundation_and_the_seams_import_only_the_foundation() -> None:
    assert set(GRAPH) >= FOUNDATION | SEAMS, "a module of the foundation or a seam was renamed: update this test"
    upward = {m: sorted(set(GRAPH[m]) - FOUNDATION) for m in sorted(FOUNDATION | SEAMS) if set(GRAPH[m]) - FOUNDATION}

    assert not upward, f"these import above the foundation: {upward}"


def test_adapters_and_backends_import_only_the_foundation_and_their_own_package() -> None:
    implementations = [m for m in GRAPH if not _outside(m, IMPLEMENTED) and m not in (*IMPLEMENTED, *SEAMS)]
    assert set(implementations) >= BACKENDS
    wrong = {}
    for module in implementations:
        package = next(p for p in IMPLEMENTED if module.startswith(p + "."))
        allowed = {m for m in GRAPH if m.startswith(package + ".")} | FOUNDATION
        if set(GRAPH[module]) - allowed:
            wrong[module] = sorted(set(GRAPH[module]) - allowed)

    assert not wrong, f"an adapter or backend sees more than its seam (its package's facade included): {wrong}"


def test_the_library_imports_no_surface_and_no_backend_but_through_its_package() -> None:
    library = [m for m in GRAPH if _outside(m, SURFACES) and _outside(m, IMPLEMENTED)]
    wrong = {m: sorted(t for t in GRAPH[m] if not _outside(t, SURFACES) or t in BACKENDS) for m in library}

    assert not {m: targets for m, targets in wrong.items() if targets}, "the library imports a surface or a backend"


def test_the_runs_internals_see_the_agent_only_through_its_spec() -> None:
    internals = [m for m in GRAPH if not _outside(m, ("hookline._run",))]
    assert "hookline._run.loop" in internals, "the run's internals moved: update this test and docs/architecture.md"
    wrong = {m: sorted({"hookline", "hookline.agent"} & set(GRAPH[m])) for m in internals}

    assert not {m: t for m, t in wrong.items() if t}, "a module of hookline._run imports the agent or the package"


@pytest.mark.parametrize(
    "statement",
    [
        "import hookline",
        "import hookline.agent",
        "from hookline.models import Model, ModelRequest, ModelResponse, ToolSpec\n"
        "from hookline.sessions import Session, SessionStore",
    ],
)
def test_importing_hookline_loads_no_sdk_no_driver_and_no_backend(statement: str) -> None:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)

    assert [m for m in loaded if m.split(".")[0] in OPTIONAL] == []
    assert sorted(BACKENDS & set(loaded)) == []
    assert "hookline.agent" in loaded  # the check sees the library itself
