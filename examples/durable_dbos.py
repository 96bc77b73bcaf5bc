"""A durable run on DBOS: a worker is killed while a tool runs, and another process finishes the run.

    python examples/durable_dbos.py

The example runs itself three times. Worker 1 starts the run "ship order 42" and is killed
with SIGKILL while the tool `ship` runs. Worker 2 launches DBOS with the same executor id
and application version, which recovers the run. `ship` had started, so the recovered run
does not run it again: it stops with the call as an interruption. Worker 2 sees the order
in the shipments file, refuses a second shipment, and the model answers.

It runs offline on SQLite files (DBOS's and the sessions'); in production both live in
one PostgreSQL database (`dbos_config(dsn, ...)` and `PostgresSessionStore(dsn)`), see
docs/durable.md.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from dbos import DBOS

from hookline import ToolCallPart, tool
from hookline.durable import DurableAgent, dbos_config, launched, register_queue
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore

RUN = "ship-42"
ROLE, FOLDER = (sys.argv[1], Path(sys.argv[2])) if len(sys.argv) > 2 else ("main", Path())


def record(name: str, line: str) -> None:
    """Append `line` to the file `name` of the run's folder, and fsync it (it survives a SIGKILL)."""
    with open(FOLDER / name, "a") as out:
        out.write(line + "\n")
        out.flush()
        os.fsync(out.fileno())


def lines(name: str) -> list[str]:
    path = FOLDER / name
    return path.read_text().splitlines() if path.exists() else []


@tool
async def check_stock(order: int) -> str:
    """Check that the items of an order are in stock."""
    record("tool-runs", "check_stock")
    return f"order {order}: all items in stock"


@tool
async def ship(order: int) -> str:
    """Ship an order."""
    record("tool-runs", "ship")
    record("shipments", f"order {order}")
    if ROLE == "worker-1":
        print("shipping", flush=True)
        await asyncio.Event().wait()  # the carrier is slow today: worker 1 is killed here
    return f"order {order} shipped"


def script(request: ModelRequest) -> ModelResponse:
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        return ModelResponse(tool_calls=[ToolCallPart(id="stock", name="check_stock", arguments={"order": 42})])
    if len(results) == 1:
        return ModelResponse(tool_calls=[ToolCallPart(id="ship", name="ship", arguments={"order": 42})])
    if results[-1].is_error:
        return ModelResponse(text="Order 42 was shipped once; I did not ship it again.")
    return ModelResponse(text="Order 42 is on its way.")


agent = DurableAgent(
    "shipping",
    model=FunctionModel(script),
    tools=[check_stock, ship],
    session_store=SQLiteSessionStore(str(FOLDER / "sessions.db")),
)


async def worker() -> None:
    """Worker 1 starts the run (and is killed); worker 2 recovers it at launch and finishes it."""
    config = dbos_config(f"sqlite:///{FOLDER / 'dbos.db'}", app="shipping", version="1.0", executor_id="worker")
    with launched(config):
        await register_queue(polling_interval_sec=0.05)
        if ROLE == "worker-1":
            handle = await agent.start("Ship order 42", session_id="order-42", workflow_id=RUN)
            await handle.get_result()
            return
        result = await (await DBOS.retrieve_workflow_async(RUN)).get_result(polling_interval_sec=0.05)
        for paused in result.interruptions:
            print(f"worker 2: recovered run {RUN}: {result.stop_reason}: {paused.name} ({paused.reason})")
        if "order 42" in lines("shipments"):
            print("worker 2: order 42 is in the shipments file: refusing to ship it again")
            refusal = {p.call_id: "order 42 was shipped already" for p in result.interruptions}
            result = await (await agent.start_resume("order-42", refusal)).get_result(polling_interval_sec=0.05)
        print(f"worker 2: final answer: {result.output}")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        first = subprocess.Popen([sys.executable, __file__, "worker-1", folder], stdout=subprocess.PIPE, text=True)
        assert first.stdout is not None
        if first.stdout.readline().strip() == "shipping":
            first.kill()  # SIGKILL: no cleanup, no goodbye
            print(f"worker 1: started run {RUN}; killed while `ship` ran")
        first.wait()
        first.stdout.close()
        subprocess.run([sys.executable, __file__, "worker-2", folder], check=True)
        runs = (Path(folder) / "tool-runs").read_text().splitlines()
        print(f"tool runs: check_stock {runs.count('check_stock')}, ship {runs.count('ship')}")


if __name__ == "__main__":
    if ROLE == "main":
        main()
    else:
        asyncio.run(worker())
