"""The public names of DESIGN §2 and §6 are importable from where DESIGN says, and `hookline.__all__`
lists them, sorted. `hookline.models` and `hookline.sessions` hand out their seam at once and their
adapters and backends on first use."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import hookline

# DESIGN §2, its import lines, as written there.
DESIGN_IMPORTS = {
    "hookline": [
        "Agent", "tool", "hook", "State", "HookPoint", "RunResult",
        "Message", "Event", "TextPart", "ToolCallPart", "ToolResultPart", "DocumentPart",
        "StatusOptions",
        "HooklineError", "ConfigError", "ModelError", "HookError", "MaxTurnsExceeded", "SessionNotFound",
        "SessionBusy", "ToolError",
    ],
    "hookline.models": ["FunctionModel", "ModelRequest", "ModelResponse", "ToolSpec"],
    "hookline.sessions": ["InMemorySessionStore", "SQLiteSessionStore", "PostgresSessionStore"],
}
# DESIGN §6, the names the second round added.
DESIGN_IMPORTS["hookline"] += ["instrument"]
DESIGN_IMPORTS["hookline.models"] += ["OpenAIModel", "AnthropicModel", "LocalModel"]
DESIGN_IMPORTS["hookline.mcp"] = ["MCPToolset"]

CASES = [(module, name) for module, names in DESIGN_IMPORTS.items() for name in names]


@pytest.mark.parametrize(("module", "name"), CASES, ids=[f"{m}.{n}" for m, n in CASES])
def test_design_names_are_importable(module: str, name: str) -> None:
    imported = importlib.import_module(module)
    assert getattr(imported, name) is not None


@pytest.mark.parametrize("name", DESIGN_IMPORTS["hookline"])
def test_top_level_all_lists_the_design_names(name: str) -> None:
    assert name in hookline.__all__


def test_top_level_all_is_sorted_and_importable() -> None:
    assert hookline.__all__ == sorted(hookline.__all__)
    assert len(set(hookline.__all__)) == len(hookline.__all__)
    for name in hookline.__all__:
        assert hasattr(hookline, name), name


def test_sub_package_all_lists_the_design_names() -> None:
    import hookline.models
    import hookline.sessions

    assert set(DESIGN_IMPORTS["hookline.models"]) <= set(hookline.models.__all__)
    assert set(DESIGN_IMPORTS["hookline.sessions"]) <= set(hookline.sessions.__all__)


def test_public_names_are_the_same_objects_everywhere() -> None:
    from hookline.agent import Agent
    from hookline.errors import ConfigError
    from hookline.models.function import FunctionModel

    assert hookline.Agent is Agent
    assert hookline.ConfigError is ConfigError
    assert importlib.import_module("hookline.models").FunctionModel is FunctionModel


def test_each_seam_is_one_object_from_its_base_module_and_its_package() -> None:
    import hookline.models.base
    import hookline.sessions.base
    from hookline.hook_points import HookPoint
    from hookline.hooks import HookPoint as HookPointOfHooks

    models, sessions = importlib.import_module("hookline.models"), importlib.import_module("hookline.sessions")
    for name in hookline.models.base.__all__:
        assert getattr(models, name) is getattr(hookline.models.base, name), name
    for name in hookline.sessions.base.__all__:
        assert getattr(sessions, name) is getattr(hookline.sessions.base, name), name
    assert hookline.HookPoint is HookPoint is HookPointOfHooks


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("InMemorySessionStore", "hookline.sessions.memory"),
        ("SQLiteSessionStore", "hookline.sessions.sqlite"),
        ("PostgresSessionStore", "hookline.sessions.postgres"),
    ],
)
def test_a_backend_loads_from_hookline_sessions_as_its_class(name: str, module: str) -> None:
    sessions = importlib.import_module("hookline.sessions")

    assert name in dir(sessions)
    assert getattr(sessions, name) is getattr(importlib.import_module(module), name)


def test_an_unknown_name_of_hookline_sessions_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'RedisSessionStore'"):
        _ = importlib.import_module("hookline.sessions").RedisSessionStore


def test_a_missing_store_driver_is_an_import_error_that_says_what_to_install() -> None:
    # `None` in sys.modules makes `import asyncpg` fail as if the package were not installed.
    code = (
        "import sys\nsys.modules['asyncpg'] = None\nimport hookline.sessions\n"
        "try:\n    from hookline.sessions import PostgresSessionStore\nexcept ImportError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "PostgresSessionStore needs asyncpg: pip install 'hookline[postgres]'"
