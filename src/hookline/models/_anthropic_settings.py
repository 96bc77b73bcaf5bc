"""How `ModelSettings` become Messages API parameters: the mapping `AnthropicModel` lays over its body.

Most fields have a direct counterpart (`stop` is `stop_sequences`, `tool_choice` a typed
object, `parallel_tool_calls` its `disable_parallel_tool_use`). `reasoning_effort` turns
extended thinking on with a token budget, which counts against `max_tokens`; with thinking
on, the API refuses a temperature and forced tool use, so those are left out (said at debug
level, as every setting left out is).
"""

from __future__ import annotations

from typing import Any

from hookline.models._settings import left_out, usable
from hookline.models.base import ModelSettings
from hookline.types import JSONObject

__all__ = ["DEFAULT_MAX_TOKENS", "REASONING_PROVIDER", "THINKING_BUDGETS", "map_settings"]

DEFAULT_MAX_TOKENS = 4096
"""`max_tokens` sent when the settings give none (the Messages API requires it)."""

THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
"""The thinking budget (`budget_tokens`) of each `ModelSettings.reasoning_effort`.

Thinking counts against `max_tokens`: without a `max_tokens` setting the call asks for the
budget plus `DEFAULT_MAX_TOKENS`; with one, the budget shrinks to fit under it (at least
1024 tokens, the API's floor, or thinking is left out).
"""

REASONING_PROVIDER = "anthropic"
"""The `provider` of the reasoning parts `AnthropicModel` makes, and the only ones it sends back."""

_MIN_BUDGET = 1024
_TOOL_CHOICES = {"auto": {"type": "auto"}, "none": {"type": "none"}, "required": {"type": "any"}}


def map_settings(body: JSONObject, settings: ModelSettings, tools: bool) -> tuple[dict[str, str], JSONObject]:
    """Lay `settings` over `body` in the Messages API's terms; return the extra headers and body."""
    wanted = usable(settings, REASONING_PROVIDER, tools=tools)
    headers: dict[str, str] = wanted.pop("extra_headers", {})
    extra: JSONObject = wanted.pop("extra_body", {})
    if "max_tokens" in wanted:
        body["max_tokens"] = wanted["max_tokens"]
    if "temperature" in wanted:
        body["temperature"] = min(wanted["temperature"], 1.0)  # the API takes 0 to 1
    if "stop" in wanted:
        body["stop_sequences"] = wanted["stop"]
    if "tool_choice" in wanted or "parallel_tool_calls" in wanted:
        body["tool_choice"] = _tool_choice(body.get("tool_choice"), wanted)
    if "reasoning_effort" in wanted:
        _think(body, wanted["reasoning_effort"], "max_tokens" in body)
    return headers, extra


def _tool_choice(current: Any, wanted: dict[str, Any]) -> JSONObject:
    choice = wanted.get("tool_choice")
    if choice is not None:
        current = _TOOL_CHOICES.get(choice) or {"type": "tool", "name": choice}
    chosen: JSONObject = dict(current) if isinstance(current, dict) else {"type": "auto"}
    if wanted.get("parallel_tool_calls") is not None and chosen["type"] != "none":
        chosen["disable_parallel_tool_use"] = not wanted["parallel_tool_calls"]
    return chosen


def _think(body: JSONObject, effort: str, capped: bool) -> None:
    """Turn thinking on with the budget of `effort`, leaving out what the API refuses beside it."""
    budget = THINKING_BUDGETS[effort]
    if not capped:
        body["max_tokens"] = budget + DEFAULT_MAX_TOKENS
    budget = min(budget, int(body["max_tokens"]) - 1)
    if budget < _MIN_BUDGET:
        why = f"max_tokens leaves no room for {_MIN_BUDGET} thinking tokens"
        left_out(REASONING_PROVIDER, ["reasoning_effort"], why)
        return
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    # With thinking on, the API takes no temperature and no forced tool use.
    refused = ["temperature"] if body.pop("temperature", None) is not None else []
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        body["tool_choice"] = {**choice, "type": "auto"}
        body["tool_choice"].pop("name", None)
        refused.append("tool_choice")
    left_out(REASONING_PROVIDER, refused, "thinking is on")
