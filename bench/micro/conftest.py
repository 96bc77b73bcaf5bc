"""Fixtures of the hot-path microbenchmarks (`pytest bench/micro --benchmark-only`).

Not collected by the main test run (the root config has `testpaths = ["tests"]`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """One event loop for a whole benchmark (closed afterwards)."""
    event_loop = asyncio.new_event_loop()
    yield event_loop
    event_loop.run_until_complete(event_loop.shutdown_asyncgens())
    event_loop.close()
