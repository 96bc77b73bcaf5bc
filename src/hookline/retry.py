"""One retry policy for every model provider.

Each adapter builds its SDK client with `max_retries=0` and wraps every call in
`with_retries`, so 429s, 5xx answers, timeouts and dropped connections are retried the
same way whatever the provider: exponential backoff with jitter, the provider's
`Retry-After` honoured, a cap on attempts and on total time, and then the last
`ModelError` raised. Only errors whose `ModelError.retryable` is true are retried; a 400
is raised at once. A stream is retried the same way (`retried_stream`), also when it
breaks after it began: a cut stream is no answer.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from functools import partial
from typing import Any, TypeVar

import anyio

from hookline.errors import ConfigError, ModelError

__all__ = ["RetryPolicy", "retried_stream", "retry_after_seconds", "with_retries"]

T = TypeVar("T")

logger = logging.getLogger("hookline.retry")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How model calls are retried and timed out.

    Example:
        `RetryPolicy(max_attempts=3, initial_delay=0.01)` makes tests fast;
        `RetryPolicy(max_attempts=1)` turns retries off.

    """

    max_attempts: int = 4
    """Attempts in all, the first one included (1 = no retry)."""
    initial_delay: float = 0.5
    """Seconds to wait before the first retry; doubled for each later one."""
    max_delay: float = 30.0
    """The longest computed backoff, in seconds (a provider's Retry-After may ask for more)."""
    max_total_time: float = 300.0
    """Seconds a call may take in all, attempts and waits included; no retry starts past it."""
    jitter: float = 0.2
    """Random spread of each computed backoff, as a fraction of it (0 = none, at most 1)."""
    timeout: float | None = 120.0
    """Seconds one attempt may take (None = no limit); also the SDK's network timeout."""

    def __post_init__(self) -> None:
        problems = {
            "max_attempts must be at least 1": self.max_attempts < 1,
            "initial_delay, max_delay and max_total_time must not be negative": min(
                self.initial_delay, self.max_delay, self.max_total_time
            )
            < 0,
            "jitter must be between 0 and 1": not 0 <= self.jitter <= 1,
            "timeout must be positive or None": self.timeout is not None and self.timeout <= 0,
        }
        for problem, found in problems.items():
            if found:
                raise ConfigError(f"invalid RetryPolicy: {problem}")

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Compute the seconds to wait after failed attempt number `attempt` (1-based).

        Args:
            attempt: The number of the attempt that just failed.
            retry_after: The wait the provider asked for, if it said; it wins over the backoff.

        """
        if retry_after is not None:
            return max(0.0, retry_after)
        backoff = min(self.max_delay, self.initial_delay * 2.0 ** (attempt - 1))
        spread = random.uniform(-self.jitter, self.jitter)
        return min(self.max_delay, max(0.0, backoff * (1 + spread)))


async def with_retries(call: Callable[[], Awaitable[T]], policy: RetryPolicy, *, provider: str = "") -> T:
    """Await `call()` until it succeeds, retrying retryable `ModelError`s under `policy`; return its result.

    Each attempt gets `policy.timeout` seconds (at most what is left of `max_total_time`);
    one that runs out becomes a retryable `ModelError` without a status code.

    Args:
        call: Makes one attempt; it raises `ModelError` on failure.
        policy: How many attempts, how long to wait between them, and for how long in all.
        provider: The provider's name, for the errors this function makes.

    Raises:
        ModelError: The last error, once it is not retryable or the attempts or time run out.

    """
    started = time.monotonic()
    attempt = 1
    while True:
        try:
            return await _attempt(call, _attempt_limit(policy, started), provider)
        except ModelError as error:
            delay = _next_delay(error, attempt, policy, started, provider)
        await anyio.sleep(delay)
        attempt += 1


async def retried_stream(
    stream: Callable[[], AsyncIterator[T]], policy: RetryPolicy, *, provider: str = ""
) -> AsyncIterator[T]:
    """Yield what `stream()` yields; when it raises a retryable `ModelError`, start it again under `policy`.

    An attempt that fails after yielding items is retried too: what it yielded stays
    yielded, so `stream()` must make a new attempt's items make sense after a failed
    one's (the model adapters leave out text that was already shown).
    The first item of an attempt must come within `policy.timeout` seconds (at most what
    is left of `max_total_time`), and each later one within `policy.timeout` of the one
    before: a stalled stream is a retryable timeout, while a long answer that keeps
    coming is never cut.

    Args:
        stream: Makes one attempt, an async iterator that raises `ModelError` on failure.
        policy: How many attempts, how long to wait between them, and for how long in all.
        provider: The provider's name, for the errors this function makes.

    Raises:
        ModelError: The last error, once it is not retryable or the attempts or time run out.

    """
    started = time.monotonic()
    attempt = 1
    while True:
        items = aiter(stream())
        limit = _attempt_limit(policy, started)
        try:
            while True:
                try:
                    item = await _attempt(partial(anext, items), limit, provider)
                except StopAsyncIteration:
                    return
                limit = policy.timeout
                yield item
        except ModelError as error:
            delay = _next_delay(error, attempt, policy, started, provider)
        finally:
            await _aclose(items)
        await anyio.sleep(delay)
        attempt += 1


def _next_delay(error: ModelError, attempt: int, policy: RetryPolicy, started: float, provider: str) -> float:
    """The wait before the next attempt; raises `error` when it is not to be retried."""
    delay = policy.delay(attempt, error.retry_after)
    ends_at = time.monotonic() - started + delay
    if not error.retryable or attempt >= policy.max_attempts or ends_at >= policy.max_total_time:
        raise error
    logger.warning("%s call failed (attempt %d): %s; retrying in %.2f s", provider or "model", attempt, error, delay)
    return delay


async def _aclose(items: AsyncIterator[Any]) -> None:
    close = getattr(items, "aclose", None)
    if close is not None:
        await close()


def _attempt_limit(policy: RetryPolicy, started: float) -> float | None:
    remaining = policy.max_total_time - (time.monotonic() - started)
    timeout = policy.timeout
    limit = min(timeout if timeout is not None else math.inf, max(remaining, 0.001))
    return None if math.isinf(limit) else limit


async def _attempt(call: Callable[[], Awaitable[T]], limit: float | None, provider: str) -> T:
    try:
        with anyio.fail_after(limit):
            return await call()
    except TimeoutError as exc:
        who = f"{provider} " if provider else ""
        raise ModelError(f"{who}model call timed out after {limit:.3g} s", provider=provider) from exc


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Read the wait a provider asked for in its response headers, in seconds.

    Reads `retry-after-ms` (milliseconds, as OpenAI and Anthropic send it), then
    `retry-after` as seconds or as an HTTP date.

    Args:
        headers: The response headers (a case-insensitive mapping, as httpx's).

    """
    millis = _as_float(headers.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _as_float(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _as_float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None
