"""Tools: Python functions a model may call.

`@tool` turns a plain or async function into a `Tool`: its name, its description (the
docstring's first paragraph), and a JSON schema built from its type hints, with each
argument described by the docstring's `Args:` section. Arguments are validated against
that schema before the call; every failure becomes an error result for the model, never
an exception out of the run.

A synchronous tool runs in the event loop, as a plain function call, unless it is marked
`@tool(thread=True)`: most tools are quick, and a worker thread costs more than they do.
Mark tools that block (file or network I/O) or write them as `async def`.

A parameter annotated `RunContext` (or `RunContext[Deps]`) is no argument of the model's:
it is left out of the schema and of validation, and the call gets the run's context there.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_json

from hookline._context_var import current_contexts, is_context_type
from hookline._redact import redact
from hookline._run.eager import Waiting, drive, first_step
from hookline.errors import ConfigError, ToolError
from hookline.messages import FilePart, ImagePart, TextPart, ToolCallPart, ToolResultPart
from hookline.models import ToolSpec

__all__ = ["Tool", "ToolFunction", "as_tool", "current_context", "error_result", "result_of", "tool"]

ToolFunction = Callable[..., Any]
"""A plain or async function usable as a tool."""

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_SECTION_HEADER = re.compile(r"^\s*[A-Z][A-Za-z ]*:\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\(.*?\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (first paragraph) and per-argument descriptions of a Google docstring."""
    lines = inspect.cleandoc(doc).splitlines() if doc else []
    description: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION_HEADER.match(line):
            break
        description.append(line.strip())
    return " ".join(description), _parse_args_section(lines)


def _parse_args_section(lines: list[str]) -> dict[str, str]:
    args: dict[str, str] = {}
    header_indent: int | None = None
    entry_indent: int | None = None
    current = ""
    for line in lines:
        depth = len(line) - len(line.lstrip())
        if header_indent is None:
            header_indent = depth if _ARGS_HEADER.match(line) else None
            continue
        if not line.strip():
            continue
        if depth <= header_indent:
            break  # the next section
        match = _ARG_LINE.match(line)
        if match and depth == (entry_indent if entry_indent is not None else depth):
            entry_indent, current = depth, match.group(1).lstrip("*")
            args[current] = match.group(2).strip()
        elif current:
            args[current] = f"{args[current]} {line.strip()}"
    return args


class Tool:
    """A function the model can call, with its schema and argument validation.

    Build one with `@tool` (or pass a plain function to `Agent(tools=...)`).

    Attributes:
        name: The name the model calls it by.
        description: What it does, for the model.
        function: The wrapped function.
        parameters: The JSON schema of its arguments.
        inline: Whether a call runs at once, in the caller's step (`answer_now`): a plain
            synchronous function, with no `RunContext`, not in a thread. A subclass that does
            not call `Tool.__init__` sets it (False unless its `answer_now` applies).
    """

    __slots__ = (
        "_arguments_model", "_context", "_is_async", "_spec", "_steps_function", "_thread", "_validator",
        "description", "function", "inline", "name", "parameters",
    )

    def __init__(
        self,
        function: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        thread: bool = False,
    ) -> None:
        if not callable(function):
            raise ConfigError(f"a tool must be a function, not {type(function).__name__}")
        self.function = function
        self.name: str = name or str(getattr(function, "__name__", ""))
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ConfigError(
                f"invalid tool name {self.name!r}: use 1-64 letters, digits, '_' or '-' (pass name=... to @tool)"
            )
        doc_description, arg_docs = _parse_docstring(inspect.getdoc(function) or "")
        self.description = description if description is not None else doc_description
        self._arguments_model, self._context = _arguments_model(function, self.name, arg_docs)
        self._validator = self._arguments_model.__pydantic_validator__
        self.parameters = _schema(self._arguments_model)
        self._is_async = inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(
            getattr(function, "__call__", None)  # noqa: B004 - a callable object with an async __call__
        )
        self._thread = thread
        self._spec = ToolSpec(name=self.name, description=self.description, parameters=self.parameters)
        self.inline = self._calls_directly and not (self._is_async or thread or self._context is not None)
        self._steps_function = self._is_async and self._context is None  # `begin` asks `_calls_directly` first

    _calls_directly = True
    """Whether the loop may call the function itself: false for a subclass with its own `call` or `answer`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._calls_directly = cls.call is Tool.call and cls.answer is Tool.answer

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"

    @property
    def concurrent(self) -> bool:
        """Whether calls to this tool can overlap (async, or run in a thread)."""
        return self._is_async or self._thread

    @property
    def spec(self) -> ToolSpec:
        """The tool as a model sees it."""
        return self._spec

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments checked against the schema and converted to the hinted types.

        Raises:
            pydantic.ValidationError: an argument is missing, unexpected or of the wrong type.
        """
        return dict(self._validator.validate_python(arguments).__dict__)

    async def call(self, arguments: dict[str, Any]) -> Any:
        """Validate `arguments` and call the function with them; return what it returns.

        A function that takes a `RunContext` gets the one of its call in a run (`ConfigError`
        outside a run: call `tool.function` with a `RunContext(deps)` of your own there).
        """
        return await self._call(arguments, None)

    async def _call(self, arguments: dict[str, Any], context: Any) -> Any:
        kwargs = self._validator.validate_python(arguments).__dict__
        if self._context is not None:
            if context is None:
                raise ConfigError(f"tool {self.name!r} takes a RunContext, so it runs only in an agent's run")
            kwargs = {**kwargs, self._context: context}
        if self._is_async:
            return await self.function(**kwargs)
        if self._thread:
            return await asyncio.to_thread(self.function, **kwargs)
        return self.function(**kwargs)

    async def answer(self, call: ToolCallPart, values: dict[str, Any] | None = None) -> ToolResultPart:
        """Run `call` and turn whatever happens into a result; never raises `Exception`.

        `values`, if given, gets what the function returned, by call id (when it returned).
        """
        if self.inline:
            return self.answer_now(call, values)
        arguments = call.arguments
        try:
            if isinstance(arguments, str):
                arguments = _decode_arguments(arguments)
            if not self._calls_directly:
                value = await self.call(arguments)
            elif self._thread or self._context is not None:
                value = await self._call(arguments, None if self._context is None else current_context(call))
            else:  # async: what `call` does, without a coroutine of its own
                value = await self.function(**self._validator.validate_python(arguments).__dict__)
        except Exception as exc:  # a tool's failure goes back to the model; the run goes on
            return self._failure(call, exc)
        if values is not None:
            values[call.id] = value
        return result_of(call, value, self.name)

    def begin(self, call: ToolCallPart) -> ToolResultPart | Waiting[ToolResultPart]:
        """`answer`, up to the call's first wait: the result, when it needed none; else `Waiting` with the rest.

        The rest must be awaited in the task that began it (`hookline._run.eager`). An `async def`
        function called directly has its own coroutine stepped here, in a copy of the
        context as a task would give it: a call that never waits costs no coroutine of
        `answer`'s.
        """
        if self.inline:
            return self.answer_now(call)
        if not (self._calls_directly and self._steps_function):  # a subclass skipping __init__ has no _steps_function
            return first_step(self.answer(call))
        arguments = call.arguments
        context = contextvars.copy_context()
        try:
            if isinstance(arguments, str):
                arguments = _decode_arguments(arguments)
            running = self.function(**self._validator.validate_python(arguments).__dict__)
            awaited = context.run(running.send, None)
        except StopIteration as done:
            return result_of(call, done.value, self.name)
        except Exception as exc:  # a tool's failure goes back to the model; the run goes on
            return self._failure(call, exc)
        return Waiting(self._rest(call, drive(running, awaited, context)))

    async def _rest(self, call: ToolCallPart, running: Awaitable[Any]) -> ToolResultPart:
        """The end of a call `begin` started, as `answer` ends it."""
        try:
            value = await running
        except Exception as exc:  # a tool's failure goes back to the model; the run goes on
            return self._failure(call, exc)
        return result_of(call, value, self.name)

    def answer_now(self, call: ToolCallPart, values: dict[str, Any] | None = None) -> ToolResultPart:
        """`answer` for an `inline` tool, at once: no coroutine to make and step (the loop's sync tools)."""
        arguments = call.arguments
        try:
            if isinstance(arguments, str):
                arguments = _decode_arguments(arguments)
            value = self.function(**self._validator.validate_python(arguments).__dict__)
        except Exception as exc:  # a tool's failure goes back to the model; the run goes on
            return self._failure(call, exc)
        if values is not None:
            values[call.id] = value
        return result_of(call, value, self.name)

    def _failure(self, call: ToolCallPart, error: Exception) -> ToolResultPart:
        """The error result telling the model why `call` failed."""
        if isinstance(error, _BadArguments):
            return error_result(call, f"the arguments for {self.name} are not a valid JSON object: {error}")
        if isinstance(error, ValidationError):
            return error_result(call, f"invalid arguments for {self.name}: {_describe(error)}")
        # An exception's text may quote a credential (a DSN, a token): the model, the log and every
        # front end get it redacted
        if isinstance(error, ToolError):
            return error_result(call, redact(str(error)))
        return error_result(call, f"{self.name} failed: {type(error).__name__}: {redact(str(error))}")


def current_context(call: ToolCallPart) -> Any:
    """The `RunContext` of `call`, from its run (None outside a run): for a `Tool` with an `answer` of its own."""
    maker = current_contexts.get()
    return None if maker is None else maker(call)


class _BadArguments(ValueError):
    """The raw arguments a model sent are no JSON object."""


def _decode_arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise _BadArguments(str(exc)) from exc
    if not isinstance(value, dict):
        raise _BadArguments(f"expected an object, got {type(value).__name__}")
    return value


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(loc) for loc in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']} (got {item.get('input')!r})")
    return "; ".join(problems)


_MAY_HOLD_MEDIA = (ImagePart, FilePart, list, tuple)


def result_of(call: ToolCallPart, value: Any, name: str) -> ToolResultPart:
    """The result of `call` returning `value`: its images and files become the result's attachments.

    A tool may return an `ImagePart` or `FilePart`, or a list mixing them with text (str or
    `TextPart`); the text, joined by blank lines, is the result's content. A list holding
    no media is a plain value, given as JSON.
    """
    if not isinstance(value, _MAY_HOLD_MEDIA):
        return ToolResultPart.from_valid(call.id, to_content(value), name=name)
    items = value if isinstance(value, list | tuple) else [value]
    media = tuple(item for item in items if isinstance(item, ImagePart | FilePart))
    if not media:
        return ToolResultPart.from_valid(call.id, to_content(value), name=name)
    texts = [item.text if isinstance(item, TextPart) else to_content(item)
             for item in items if not isinstance(item, ImagePart | FilePart)]
    return ToolResultPart.from_valid(call.id, "\n\n".join(texts), name=name, attachments=media)


def error_result(call: ToolCallPart, message: str) -> ToolResultPart:
    """An `is_error` result answering `call` with `message`."""
    return ToolResultPart.from_valid(call.id, to_content(message), name=call.name, is_error=True)


def to_content(value: Any) -> str:
    """A tool's return value as result text: strings as they are, anything else as JSON.

    Never fails: a value JSON cannot hold (a cycle, say) is given as its `repr()`, and
    text that UTF-8 cannot encode (a lone surrogate) gets those characters escaped, since
    neither the log nor a provider could carry it.
    """
    if isinstance(value, str):
        return value if value.isascii() else _utf8_safe(value)
    if type(value) is int:  # the commonest result after text; its JSON is its str()
        return str(value)
    try:
        text = value.model_dump_json() if isinstance(value, BaseModel) else to_json(value, fallback=str).decode()
    except (ValueError, TypeError, PydanticSerializationError):
        text = _safe_repr(value)
    return _utf8_safe(text)


def _utf8_safe(text: str) -> str:
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode()
    return text


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as exc:
        return f"<a {type(value).__name__} that cannot be shown as text: {type(exc).__name__}: {exc}>"


def _arguments_model(
    function: ToolFunction, name: str, arg_docs: dict[str, str]
) -> tuple[type[BaseModel], str | None]:
    """The model that validates the arguments, and the name of the `RunContext` parameter (if any)."""
    try:
        signature = inspect.signature(function)
        hints = _type_hints(function)
    except (TypeError, ValueError, NameError) as exc:
        raise ConfigError(f"cannot read the signature of tool {name!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    context: str | None = None
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigError(f"tool {name!r} cannot take *{param.name}: give every argument a name and a type")
        annotation = hints.get(param.name, Any)
        if is_context_type(annotation):
            context = param.name
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, Field(default, description=arg_docs.get(param.name)))
    config = ConfigDict(extra="forbid", arbitrary_types_allowed=False)
    try:
        return create_model(f"{name}_arguments", __config__=config, **fields), context
    except Exception as exc:
        raise ConfigError(f"tool {name!r} has an argument type hookline cannot describe as JSON: {exc}") from exc


class _ParameterAnnotations:
    """The annotations of a function without its return type.

    A tool never needs the return type, and it may name a type that `get_type_hints`
    cannot see (one defined inside a function).
    """

    def __init__(self, function: Any) -> None:
        self.__annotations__ = {k: v for k, v in getattr(function, "__annotations__", {}).items() if k != "return"}
        self.__globals__ = getattr(function, "__globals__", {})


def _type_hints(function: ToolFunction) -> dict[str, Any]:
    target = function if inspect.isfunction(function) or inspect.ismethod(function) else type(function).__call__
    return typing.get_type_hints(_ParameterAnnotations(inspect.unwrap(target)))


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


@overload
def tool(function: ToolFunction, /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, thread: bool = False
) -> Callable[[ToolFunction], Tool]: ...


def tool(
    function: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    thread: bool = False,
) -> Tool | Callable[[ToolFunction], Tool]:
    """Make a function a tool: `@tool`, or `@tool(name=..., description=..., thread=True)`.

    Args:
        function: The function (when used as a bare decorator).
        name: The name the model calls it by (default: the function's name).
        description: What it does (default: the docstring's first paragraph).
        thread: Run a synchronous function in a worker thread (for tools that block).
    """
    if function is not None:
        return Tool(function, name=name, description=description, thread=thread)
    return lambda f: Tool(f, name=name, description=description, thread=thread)


def as_tool(item: Tool | ToolFunction) -> Tool:
    """`item` as a `Tool`: tools pass through, functions are wrapped."""
    if isinstance(item, Tool):
        return item
    if callable(item):
        return Tool(item)
    raise ConfigError(f"tools must be functions or Tool objects (from @tool), not {type(item).__name__}")


