"""The public names of DESIGN §2 are importable from where DESIGN says, and `hookline.__all__`
lists them, sorted."""

from __future__ import annotations

import importlib

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
