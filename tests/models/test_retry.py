"""The one retry policy: backoff, Retry-After, caps on attempts and time, per-attempt timeouts."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import anyio
import pytest

from hookline.errors import ConfigError, ModelError
from hookline.retry import RetryPolicy, retried_stream, retry_after_seconds, with_retries

pytestmark = pytest.mark.anyio

QUICK = RetryPolicy(max_attempts=4, initial_delay=0.001, max_delay=0.01, timeout=2.0)


class Flaky:
    """Fails with the given errors, in order, then answers "ok"; counts its calls."""

    def __init__(self, *errors: ModelError) -> None:
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


async def test_retryable_errors_are_retried_until_success() -> None:
    call = Flaky(ModelError("rate", status_code=429), ModelError("down", status_code=503), ModelError("net"))

    assert await with_retries(call, QUICK) == "ok"
    assert call.calls == 4


async def test_other_errors_are_raised_at_once() -> None:
    call = Flaky(ModelError("bad request", status_code=400))

    with pytest.raises(ModelError, match="bad request"):
        await with_retries(call, QUICK)
    assert call.calls == 1


async def test_attempts_are_capped_and_the_last_error_raised() -> None:
    call = Flaky(*(ModelError(f"down {n}", status_code=500) for n in range(1, 6)))

    with pytest.raises(ModelError, match="down 4"):
        await with_retries(call, QUICK)
    assert call.calls == QUICK.max_attempts


async def test_retry_after_is_honoured() -> None:
    call = Flaky(ModelError("slow down", status_code=429, retry_after=0.15))

    started = time.monotonic()
    assert await with_retries(call, QUICK) == "ok"
    assert time.monotonic() - started >= 0.15


async def test_no_retry_starts_past_the_total_time() -> None:
    call = Flaky(ModelError("slow down", status_code=429, retry_after=30))
    policy = RetryPolicy(max_attempts=5, max_total_time=1.0)

    started = time.monotonic()
    with pytest.raises(ModelError, match="slow down"):
        await with_retries(call, policy)
    assert time.monotonic() - started < 0.5
    assert call.calls == 1


async def test_each_attempt_is_timed_out_and_retried() -> None:
    attempts = 0

    async def slow_then_fast() -> str:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            await anyio.sleep(5)
        return "fast"

    policy = RetryPolicy(max_attempts=2, initial_delay=0.001, timeout=0.05)
    assert await with_retries(slow_then_fast, policy, provider="acme") == "fast"
    assert attempts == 2


async def test_a_timeout_on_the_last_attempt_is_a_model_error() -> None:
    async def hang() -> str:
        await anyio.sleep(5)
        return "never"

    with pytest.raises(ModelError, match="acme model call timed out") as caught:
        await with_retries(hang, RetryPolicy(max_attempts=1, timeout=0.05), provider="acme")
    assert caught.value.status_code is None
    assert caught.value.provider == "acme"
    assert isinstance(caught.value.__cause__, TimeoutError)


class FlakyStream:
    """Each attempt yields "a", "b", then fails with the next error, or yields "c" once none is left."""

    def __init__(self, *errors: ModelError, stall: float = 0.0) -> None:
        self.errors = list(errors)
        self.stall = stall
        self.attempts = 0
        self.closed = 0

    async def __call__(self) -> AsyncIterator[str]:
        self.attempts += 1
        try:
            yield "a"
            yield "b"
            if self.errors:
                raise self.errors.pop(0)
            await anyio.sleep(self.stall)
            yield "c"
        finally:
            self.closed += 1


async def collect(stream: AsyncIterator[str]) -> list[str]:
    return [item async for item in stream]


async def test_a_stream_that_breaks_mid_way_is_started_again() -> None:
    stream = FlakyStream(ModelError("cut"), ModelError("down", status_code=503))

    items = await collect(retried_stream(stream, QUICK, provider="acme"))

    assert items == ["a", "b"] * 3 + ["c"]
    assert stream.attempts == stream.closed == 3


async def test_a_stream_error_that_is_not_retryable_is_raised_at_once() -> None:
    stream = FlakyStream(ModelError("bad request", status_code=400))

    with pytest.raises(ModelError, match="bad request"):
        await collect(retried_stream(stream, QUICK))
    assert stream.attempts == stream.closed == 1


async def test_a_stream_breaking_on_every_attempt_raises_the_last_error() -> None:
    stream = FlakyStream(*(ModelError(f"cut {n}") for n in range(1, 6)))

    with pytest.raises(ModelError, match="cut 4"):
        await collect(retried_stream(stream, QUICK))
    assert stream.attempts == QUICK.max_attempts


async def test_a_stalled_stream_times_out_per_item_and_is_retried() -> None:
    stream = FlakyStream(stall=5)
    policy = RetryPolicy(max_attempts=2, initial_delay=0.001, timeout=0.05)

    with pytest.raises(ModelError, match="acme model call timed out") as caught:
        await collect(retried_stream(stream, policy, provider="acme"))

    assert caught.value.retryable
    assert stream.attempts == stream.closed == 2


async def test_a_slow_stream_that_keeps_coming_is_not_cut() -> None:
    async def slow() -> AsyncIterator[int]:
        for n in range(5):
            await anyio.sleep(0.3)
            yield n

    policy = RetryPolicy(max_attempts=1, timeout=5.0, max_total_time=1.0)
    assert await collect(retried_stream(slow, policy)) == list(range(5))  # 1.5 s in all


async def test_leaving_a_retried_stream_early_closes_the_attempt() -> None:
    stream = FlakyStream()
    items = retried_stream(stream, QUICK)

    assert await anext(items) == "a"
    await items.aclose()  # type: ignore[attr-defined]
    assert stream.closed == 1


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=5.0, jitter=0.2)

    for attempt, base in [(1, 1.0), (2, 2.0), (3, 4.0)]:
        assert base * 0.8 <= policy.delay(attempt) <= base * 1.2
    assert policy.delay(10) <= 5.0
    assert RetryPolicy(initial_delay=1.0, jitter=0).delay(2) == 2.0
    assert policy.delay(1, retry_after=7.5) == 7.5


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_attempts", 0), ("initial_delay", -1), ("jitter", 1.5), ("timeout", 0)],
)
def test_invalid_policies_are_config_errors(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match="invalid RetryPolicy"):
        RetryPolicy(**{field: value})  # type: ignore[arg-type]


def test_retry_after_headers() -> None:
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)

    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after": "0.5", "retry-after-ms": "250"}) == 0.25
    assert 25 < (retry_after_seconds({"retry-after": soon}) or 0) <= 30
    assert retry_after_seconds({"retry-after": "soon-ish"}) is None
    assert retry_after_seconds({"retry-after": "nan"}) is None
    assert retry_after_seconds({}) is None
