"""The model the examples run on: a scripted one offline, a real one when asked.

Set `HOOKLINE_MODEL` (e.g. `openai:gpt-4o-mini`, with `OPENAI_API_KEY`) to run an example
against a real provider; without it, each example follows its own script and needs no
network.
"""

from __future__ import annotations

import os

from hookline.models import FunctionModel, Model
from hookline.models.function import ModelFunction


def pick_model(script: ModelFunction, *env: str) -> str | Model:
    """The first of the environment variables `env` (default `HOOKLINE_MODEL`) that is set,
    as a `"provider:model"` string; else `FunctionModel(script)`."""
    for name in env or ("HOOKLINE_MODEL",):
        if spec := os.environ.get(name):
            return spec
    return FunctionModel(script, name=getattr(script, "__name__", "script"))


def scripted() -> bool:
    """Whether the examples run on their scripts (no `HOOKLINE_MODEL`)."""
    return not os.environ.get("HOOKLINE_MODEL")
