"""Errors (DESIGN §5): the tree, pickling, clean messages, and `ConfigError` for bad
definitions that says what is wrong."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

import hookline
from hookline import (
    Agent,
    ConfigError,
    HookError,
    HooklineError,
    MaxTurnsExceeded,
    ModelError,
    RunResult,
    SessionBusy,
    SessionNotFound,
    ToolError,
    tool,
)
from hookline.usage import Usage

from .scripted import Script, add, call, calls

pytestmark = pytest.mark.anyio


# -- the tree --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cls", [ConfigError, ModelError, HookError, MaxTurnsExceeded, SessionNotFound, SessionBusy, ToolError]
)
def test_every_error_is_a_hookline_error(cls: type[Exception]) -> None:
    assert issubclass(cls, HooklineError)
    assert issubclass(HooklineError, Exception)
    assert getattr(hookline, cls.__name__) is cls


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)
    with pytest.raises(ValueError, match="bad"):
        raise ConfigError("bad")


def test_session_not_found_is_a_key_error() -> None:
    assert issubclass(SessionNotFound, KeyError)
    with pytest.raises(KeyError):
        raise SessionNotFound("s-1")


# -- pickling and messages -------------------------------------------------------------------


def _partial_result() -> RunResult:
    return RunResult(output="half", stop_reason="max_turns", usage=Usage(input_tokens=3, model_calls=2))


ERRORS: list[tuple[HooklineError, dict[str, Any], str]] = [
    (HooklineError("root trouble"), {}, "root trouble"),
    (ConfigError("max_turns must be positive"), {}, "max_turns must be positive"),
    (
        ModelError("rate limited: slow down", status_code=429, provider="openai", body={"error": "x"}, retry_after=2.0),
        {"status_code": 429, "provider": "openai", "body": {"error": "x"}, "retry_after": 2.0},
        "rate limited: slow down",
    ),
    (
        HookError("hook 'h' failed", hook="h", point="before_llm"),
        {"hook": "h", "point": "before_llm"},
        "hook 'h' failed",
    ),
    (
        MaxTurnsExceeded("made 2 model calls", result=_partial_result()),
        {"result": _partial_result()},
        "made 2 model calls",
    ),
    (SessionNotFound("s-1"), {"session_id": "s-1"}, "session 's-1' not found"),
    (SessionBusy("s-1"), {"session_id": "s-1"}, "session 's-1' is busy: another run is writing to it"),
    (ToolError("no such city"), {}, "no such city"),
]


@pytest.mark.parametrize(("error", "attributes", "message"), ERRORS, ids=[type(e).__name__ for e, _, _ in ERRORS])
def test_errors_pickle_with_their_attributes(error: HooklineError, attributes: dict[str, Any], message: str) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == message
    for name, value in attributes.items():
        assert getattr(copy, name) == value, name


@pytest.mark.parametrize(("error", "attributes", "message"), ERRORS, ids=[type(e).__name__ for e, _, _ in ERRORS])
def test_str_is_the_clean_message(error: HooklineError, attributes: dict[str, Any], message: str) -> None:
    assert str(error) == message
    assert error.message == message


def test_model_error_says_whether_a_retry_may_help() -> None:
    assert ModelError("x", status_code=429).retryable
    assert ModelError("x", status_code=503).retryable
    assert ModelError("x", status_code=None).retryable
    assert not ModelError("x", status_code=400).retryable
    assert not ModelError("x", status_code=401).retryable


async def test_a_real_max_turns_error_pickles_with_its_partial_result() -> None:
    script = Script(calls(call("c1", "add", a=1, b=2)))
    with pytest.raises(MaxTurnsExceeded) as caught:
        await Agent(model=script.model, tools=[add], max_turns=1).prompt("go")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert copy.result.stop_reason == "max_turns"
    assert copy.result.messages == caught.value.result.messages
    assert copy.result.usage.model_calls == 1
    assert str(copy) == str(caught.value)


# -- bad definitions -------------------------------------------------------------------------


def _plain(a: int) -> int:
    return a


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        pytest.param({"name": ""}, "name", id="empty-name"),
        pytest.param({"name": "   "}, "name", id="blank-name"),
        pytest.param({"max_turns": 0}, "max_turns", id="max-turns-zero"),
        pytest.param({"max_turns": -3}, "max_turns", id="max-turns-negative"),
        pytest.param({"max_turns": 2.5}, "max_turns", id="max-turns-float"),
        pytest.param({"on_max_turns": "explode"}, "on_max_turns", id="bad-on-max-turns"),
        pytest.param({"tool_concurrency": 0}, "tool_concurrency", id="concurrency-zero"),
        pytest.param({"tools": "add"}, "tools", id="tools-a-string"),
        pytest.param({"tools": 42}, "tools", id="tools-a-number"),
        pytest.param({"tools": add}, "list", id="tools-a-single-tool"),
        pytest.param({"tools": [add, 42]}, "int", id="non-callable-tool"),
        pytest.param({"tools": [add, _plain, tool(name="add")(_plain)]}, "add", id="duplicate-names"),
        pytest.param({"hooks": {"before_llm": lambda state: None}}, "list", id="hooks-not-a-list"),
        pytest.param({"hooks": [lambda state: None]}, "dict", id="hooks-not-a-dict"),
        pytest.param({"instructions": 42}, "instructions", id="instructions-a-number"),
        pytest.param({"model": "no-colon"}, "provider:model", id="model-without-provider"),
    ],
)
def test_bad_agent_definitions_are_config_errors_saying_what_is_wrong(kwargs: dict[str, Any], says: str) -> None:
    kwargs.setdefault("model", Script().model)
    with pytest.raises(ConfigError) as caught:
        Agent(**kwargs)
    assert says in str(caught.value)


def test_duplicate_tool_names_are_named() -> None:
    def lookup(q: str) -> str:
        return q

    with pytest.raises(ConfigError, match="'lookup'"):
        Agent(model=Script().model, tools=[lookup, tool(name="lookup")(_plain)])


@pytest.mark.parametrize("prompt", ["", "   ", "\n"])
def test_an_empty_prompt_is_a_config_error(prompt: str) -> None:
    agent = Agent(model=Script().model)
    with pytest.raises(ConfigError, match="empty"):
        agent.prompt(prompt)


@pytest.mark.parametrize(
    ("call", "says"),
    [
        pytest.param(lambda r: r.multi_turn(0), "multi_turn", id="multi-turn-zero"),
        pytest.param(lambda r: r.with_history("not a list"), "with_history", id="history-not-a-list"),
        pytest.param(lambda r: r.with_history([{"role": "user"}]), "Message", id="history-of-dicts"),
        pytest.param(lambda r: r.session(""), "session", id="empty-session-id"),
    ],
)
def test_bad_prompt_options_are_config_errors(call: Any, says: str) -> None:
    request = Agent(model=Script().model).prompt("hi")
    with pytest.raises(ConfigError, match=says):
        call(request)


def test_a_non_user_message_prompt_is_a_config_error() -> None:
    from hookline import Message

    with pytest.raises(ConfigError, match="user"):
        Agent(model=Script().model).prompt(Message.assistant("not a prompt"))

