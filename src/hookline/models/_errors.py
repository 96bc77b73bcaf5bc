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
    "malformed",
    "malformed_error",
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
    return ModelError(f"{provider} connection failed: {exc}", provider=provider)


def malformed(provider: str, detail: str) -> ModelError:
    """Build the error for a 200 answer whose body cannot be read (not retried: it would read the same)."""
    return ModelError(f"{provider} sent a malformed response: {detail}", status_code=200, provider=provider)


def malformed_error(exc: Exception, provider: str) -> ModelError:
    """Build the error for a body the SDK could not decode."""
    return malformed(provider, str(exc))
