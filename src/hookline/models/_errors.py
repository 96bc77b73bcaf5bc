"""Provider errors become `ModelError` through a table, the same way in every adapter.

Each adapter lists its SDK's exception classes, most specific first, with a function
that builds the `ModelError` (as httpx's `map_httpcore_exceptions` does); `converted`
applies that table around an SDK call and raises the result `from` the original.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from hookline.errors import ModelError
from hookline.retry import retry_after_seconds

__all__ = [
    "ErrorTable",
    "api_error",
    "connection_error",
    "converted",
    "cut_stream",
    "garbled",
    "garbled_error",
    "malformed",
    "malformed_error",
    "missing_sdk",
    "status_error",
    "timeout_error",
]

ErrorTable = Sequence[tuple[type[Exception], Callable[[Any, str], ModelError]]]
"""Exception classes, most specific first, each with what turns it (and the provider's name) into a `ModelError`."""


@contextmanager
def converted(table: ErrorTable, provider: str) -> Iterator[None]:
    """Raise any exception listed in `table` as the `ModelError` it maps to, `from` the original."""
    try:
        yield
    except ModelError:
        raise
    except Exception as exc:
        for error_type, convert in table:
            if isinstance(exc, error_type):
                raise convert(exc, provider) from exc
        raise


def status_error(
    status: int | None, detail: str, provider: str, body: object, headers: Mapping[str, str]
) -> ModelError:
    """Build the error for an HTTP error answer: its status, the provider's own message, its Retry-After."""
    code = f" {status}" if status is not None else ""
    return ModelError(
        f"{provider} API error{code}: {detail}",
        status_code=status,
        provider=provider,
        body=body,
        retry_after=retry_after_seconds(headers),
    )


def api_error(exc: Exception, provider: str) -> ModelError:
    """Build the error for any other SDK API error (e.g. an error frame inside a stream)."""
    message = getattr(exc, "message", None) or str(exc)
    return ModelError(f"{provider} API error: {message}", provider=provider, body=getattr(exc, "body", None))


def timeout_error(exc: Exception, provider: str) -> ModelError:
    """Build the error for a request that timed out (no status: retryable)."""
    return ModelError(f"{provider} request timed out: {exc}", provider=provider)


def connection_error(exc: Exception, provider: str) -> ModelError:
    """Build the error for a connection that failed or dropped (no status: retryable)."""
    return ModelError(f"{provider} connection failed: {_with_cause(exc)}", provider=provider)


def malformed(provider: str, detail: str) -> ModelError:
    """Build the error for a 200 answer of the wrong shape (not retried: it would read the same)."""
    return ModelError(f"{provider} sent a malformed response: {detail}", status_code=200, provider=provider)


def malformed_error(exc: Exception, provider: str) -> ModelError:
    """Build the error for a body the SDK found of the wrong shape."""
    return malformed(provider, str(exc))


def garbled(provider: str, detail: str) -> ModelError:
    """Build the error for a 200 answer whose bytes are not the wire format: not JSON, or cut short.

    That is what a dropped connection or a failing proxy leaves, so it has no status code,
    which makes it retryable, like a transport error.
    """
    return ModelError(f"{provider} sent a malformed response: {detail}", provider=provider)


def garbled_error(exc: Exception, provider: str) -> ModelError:
    """Build the error for a body or stream event that is not JSON."""
    return garbled(provider, f"not JSON ({exc})")


def cut_stream(provider: str, missing: str) -> ModelError:
    """Build the error for a stream that ended before the answer did (retryable, as a dropped connection)."""
    return ModelError(
        f"{provider} stream ended before the answer did (no {missing} arrived): the connection dropped mid-answer",
        provider=provider,
    )


def _with_cause(exc: Exception) -> str:
    # The SDKs wrap transport errors in a bare "Connection error."; the cause says what failed.
    text, cause = str(exc), exc.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        return f"{text} ({cause})"
    return text


def missing_sdk(adapter: str, install: str, error: ImportError) -> ImportError:
    """Build the error for an adapter whose SDK is not installed: it names the package and how to install it.

    Args:
        adapter: The adapter's class name, e.g. `"AnthropicModel"`.
        install: The command that installs the SDK, e.g. `pip install 'hookline[anthropic]'`.
        error: What importing the SDK raised.

    """
    return ImportError(f"{adapter} needs the {error.name or 'SDK'!r} package, which is not installed: {install}")
