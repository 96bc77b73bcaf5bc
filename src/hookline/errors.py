"""Every error hookline raises.

The tree:

```
HooklineError
├── ConfigError(HooklineError, ValueError)    a bad agent, tool or hook definition
├── ModelError                                a provider failed (after retries)
├── HookError                                 a hook raised or broke the conversation
├── MaxTurnsExceeded                          the run made max_turns model calls
├── SessionNotFound(HooklineError, KeyError)  no session with that id
├── SessionBusy                               another run holds the session
├── ToolError                                 raised by tools: a clean error result for the model
├── StoreError                                a session store's database failed
├── InvalidEvent(HooklineError, ValueError)   an event that cannot be stored
└── SessionExists(HooklineError, ValueError)  `create` was given an id that is taken
```

Each message names what was wrong and, where there is one, the fix. Every error pickles
(`__reduce__`), so it survives crossing a process boundary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookline._redact import redact

if TYPE_CHECKING:
    from hookline.result import RunResult

__all__ = [
    "ConfigError",
    "HookError",
    "HooklineError",
    "InvalidEvent",
    "MaxTurnsExceeded",
    "ModelError",
    "SessionBusy",
    "SessionExists",
    "SessionNotFound",
    "StoreError",
    "ToolError",
]


class HooklineError(Exception):
    """The root of every error hookline raises."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.__dict__))


def _rebuild(cls: type[HooklineError], attrs: dict[str, Any]) -> HooklineError:
    error = cls.__new__(cls)
    Exception.__init__(error, attrs.get("message", ""))
    error.__dict__.update(attrs)
    return error


class ConfigError(HooklineError, ValueError):
    """A bad agent, tool or hook definition; the message says how to fix it."""


class ModelError(HooklineError):
    """A model provider failed, after retries.

    Attributes:
        status_code: The HTTP status the provider answered, or None (connection error, timeout).
        provider: The provider's name, e.g. `"openai"`.
        body: The provider's error body, as it sent it.
        retry_after: Seconds the provider asked us to wait, if it said.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        provider: str = "",
        body: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.provider = provider
        self.body = body
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """Whether another attempt may succeed: rate limits, server errors, timeouts."""
        return self.status_code is None or self.status_code in (408, 409, 429) or self.status_code >= 500


class HookError(HooklineError):
    """A hook raised, or left the conversation invalid.

    Attributes:
        hook: The hook's name.
        point: The hook point it ran at.
    """

    def __init__(self, message: str, *, hook: str, point: str) -> None:
        super().__init__(message)
        self.hook = hook
        self.point = point


class MaxTurnsExceeded(HooklineError):
    """The run made `max_turns` model calls without finishing.

    Attributes:
        result: The partial `RunResult` of the run so far.
    """

    def __init__(self, message: str, *, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


class SessionNotFound(HooklineError, KeyError):
    """No session has this id (or it belongs to another user)."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} not found")
        self.session_id = session_id

    def __str__(self) -> str:
        return self.message


class SessionBusy(HooklineError):
    """Another run holds this session; try again when it has finished."""

    def __init__(self, session_id: str, detail: str = "") -> None:
        message = f"session {session_id!r} is busy: another run is writing to it"
        super().__init__(f"{message} ({detail})" if detail else message)
        self.session_id = session_id


class ToolError(HooklineError):
    """Raised by a tool to send a clean error message back to the model.

    The tool result's content is the message alone (no exception type, no traceback),
    with `is_error=True`; the run goes on.
    """


class StoreError(HooklineError):
    """A session store's database failed: unreachable, locked, corrupt, or of a newer schema.

    Attributes:
        where: The database it concerns: a file path, or a DSN without its password.

    """

    def __init__(self, message: str, *, where: str = "") -> None:
        super().__init__(message)
        self.where = where


class InvalidEvent(HooklineError, ValueError):
    """An event that cannot be stored; the message names the field and what is wrong.

    Attributes:
        field: The offending field, e.g. `"kind"` or `"parts.0.text"`.

    """

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(f"invalid event: {field}: {message}")
        self.field = field


class SessionExists(HooklineError, ValueError):
    """`create` was given the id of a session that already exists.

    Attributes:
        session_id: The id that is taken.

    """

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r} already exists; pick another id or `get` it")
        self.session_id = session_id


def error_summary(exc: BaseException) -> dict[str, Any]:
    """Return what a failed run's last status line says of `exc`: its type and message, secrets taken out.

    A `HookError` adds its hook and point, a `ModelError` the provider's status code.
    """
    summary: dict[str, Any] = {"type": type(exc).__name__, "message": redact(str(exc)) or type(exc).__name__}
    if isinstance(exc, HookError):
        summary |= {"hook": exc.hook, "point": exc.point}
    if isinstance(exc, ModelError) and exc.status_code is not None:
        summary["status_code"] = exc.status_code
    return summary
