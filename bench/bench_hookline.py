"""hookline on the shared "add-loop" scenario (../shared/bench/SCENARIO.md).

Run from the project root: `python bench/bench_hookline.py --T 10` (prints one JSON line).
The harness (`bench_common.py`) is imported from ../shared/bench/peers, not copied.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from itertools import count
from pathlib import Path

PEERS = Path(os.environ.get("HOOKLINE_PEERS", Path(__file__).resolve().parents[2] / "shared" / "bench" / "peers"))
sys.path.insert(0, str(PEERS))

from bench_common import SYSTEM_PROMPT, USER_PROMPT, add, check_result, fake_decision, main  # noqa: E402

import hookline  # noqa: E402
from hookline import Agent, ToolCallPart  # noqa: E402
from hookline.models import FunctionModel, ModelRequest, ModelResponse  # noqa: E402
from hookline.usage import Usage  # noqa: E402


async def factory(T: int, sleep_s: float, persist: bool):
    async def model(request: ModelRequest) -> ModelResponse:
        if sleep_s:
            await asyncio.sleep(sleep_s)
        n = sum(1 for m in request.messages if m.role == "tool")
        decision = fake_decision(n, T)
        usage = Usage(input_tokens=10, output_tokens=5)
        if decision is None:
            return ModelResponse(text="done", usage=usage)
        calls = [ToolCallPart(id=cid, name="add", arguments=args) for cid, args in decision]
        return ModelResponse(tool_calls=calls, usage=usage)

    store = None
    if persist:
        from hookline.sessions import SQLiteSessionStore

        store = SQLiteSessionStore(os.path.join(tempfile.mkdtemp(prefix="hookline_bench_"), "s.db"))
    agent = Agent(model=FunctionModel(model), instructions=SYSTEM_PROMPT, tools=[add], max_turns=T + 1,
                  session_store=store)
    ids = count()

    async def run_once() -> None:
        request = agent.prompt(USER_PROMPT)
        if store is not None:
            request = request.session(f"s{next(ids)}")
        result = await request
        n_results = sum(len(m.tool_results) for m in result.messages)
        check_result(result.output, n_results, T)

    async def cleanup() -> None:
        if store is not None:
            await store.aclose()

    return run_once, cleanup


def instrument_tracing() -> None:
    """BENCH_TRACING=1: OpenTelemetry on (the SDK, a synchronous processor, an in-memory exporter)."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    hookline.instrument(provider, include_content=os.environ.get("BENCH_TRACING") == "content")


if __name__ == "__main__":
    if os.environ.get("BENCH_TRACING"):
        instrument_tracing()
    main("hookline", factory, hookline.__version__, supports_persist=True)
