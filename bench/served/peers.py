"""The peers' own servers in the served benchmark: `adk api_server` and `langgraph dev`, from their venv.

Their venv is built by `bench/peers/setup.sh` from `bench/served/peers-requirements.txt`
and `peers-constraints.txt` (pinned; apart from the in-process peers' venv, since the
LangGraph server brings packages of its own): `~/.cache/hookline-served-peers`, or
`--peers-venv`. Each runs the add-loop agent of its in-process adapter (`bench/peers/`),
the same fake model, at T = 2:

- `adk-sqlite`, `adk-memory`: `adk api_server bench/served/adk_agents` with its session
  service on a SQLite file (`sqlite+aiosqlite://`) or in memory (`memory://`; ADK's default
  would be a SQLite file in the agents' folder), artifacts in memory; a run is `POST /run`
  (JSON: the run's events) or `POST /run_sse`.
- `langgraph-dev`: `langgraph dev` (the in-memory runtime) on `bench/served/langgraph_app/graph.py`,
  `--n-jobs-per-worker` set to the concurrency so that 50 runs can go at once (its
  default, 10, would queue the rest); a run is `POST /threads/{id}/runs/wait` or
  `/runs/stream`. Its in-memory queue polls for work, so a run takes about half a second
  more than its model: that is the server as its users run it, not tuned further.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

from client import Connection
from targets import HERE, USER_PROMPT, Failed, Server, Target, clean_env, expect, spawn, wait_for_url

SETUP = HERE.parent / "peers" / "setup.sh"
DEFAULT_VENV = Path.home() / ".cache" / "hookline-served-peers"


def peers_venv(venv: Path | None) -> Path:
    """The served peers' venv, built (or checked) by `bench/peers/setup.sh` with the served pins."""
    folder = venv or Path(os.environ.get("SERVED_PEERS_VENV", DEFAULT_VENV))
    env = {**os.environ, "PEERS_PINS": str(HERE / "peers-")}
    python = subprocess.run(["bash", str(SETUP), str(folder)], env=env, check=True, capture_output=True, text=True)
    return Path(python.stdout.strip()).parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _version(bin_dir: Path, package: str) -> str:
    found = subprocess.run([str(bin_dir / "python"), "-c", f"from importlib.metadata import version; "
                            f"print(version({package!r}))"], capture_output=True, text=True, check=True)
    return found.stdout.strip()


class Adk(Target):
    """`adk api_server`, its sessions in a SQLite file ("sqlite") or in memory ("memory")."""

    server = "adk api_server"

    def __init__(self, bin_dir: Path, store: str) -> None:
        self.bin_dir, self.store = bin_dir, store
        self.name = f"adk-{store}"  # type: ignore[misc]

    def version(self) -> str:
        return _version(self.bin_dir, "google-adk")

    def start(self, delay: float, workdir: Path) -> Server:
        port, log = _free_port(), workdir / f"{self.name}.log"
        command = [str(self.bin_dir / "adk"), "api_server", str(HERE / "adk_agents"), "--port", str(port),
                   "--host", "127.0.0.1", "--log_level", "warning", "--artifact_service_uri", "memory://"]
        sessions = "memory://"  # not ADK's default (a SQLite file in the agents' folder)
        if self.store == "sqlite":
            db = workdir / f"{self.name}.db"
            db.unlink(missing_ok=True)
            sessions = f"sqlite+aiosqlite:///{db}"
        command += ["--session_service_uri", sessions]
        process = spawn(command, env=clean_env(SERVED_MODEL_DELAY=str(delay)), cwd=workdir, log=log)
        return Server(process, wait_for_url(process, log, "/list-apps", base=f"http://127.0.0.1:{port}"), log)

    async def new_session(self, conn: Connection) -> str:
        answer = await conn.request("POST", "/apps/calc/users/u/sessions", {})
        expect(answer, 200, "POST /apps/calc/users/u/sessions")
        return str(answer.body["id"])

    async def run(self, conn: Connection, session_id: str, *, sse: bool) -> None:
        body = {"app_name": "calc", "user_id": "u", "session_id": session_id,
                "new_message": {"role": "user", "parts": [{"text": USER_PROMPT}]}}
        answer = await conn.request("POST", "/run_sse" if sse else "/run", body, sse=sse)
        expect(answer, 200, "POST /run_sse" if sse else "POST /run")
        events = answer.frames if sse else answer.body
        texts = [p.get("text") for e in events for p in ((e.get("content") or {}).get("parts") or [])]
        if not texts or texts[-1] != "done":
            raise Failed(f"the run did not end with 'done': {str(events[-2:])[:300]}")


class LangGraphDev(Target):
    """`langgraph dev`: the in-memory runtime."""

    server = "langgraph dev"

    def __init__(self, bin_dir: Path, jobs: int) -> None:
        self.bin_dir, self.jobs = bin_dir, jobs
        self.name = "langgraph-dev"  # type: ignore[misc]

    def version(self) -> str:
        return f"{_version(self.bin_dir, 'langgraph')} (api {_version(self.bin_dir, 'langgraph-api')})"

    def start(self, delay: float, workdir: Path) -> Server:
        port, log = _free_port(), workdir / f"{self.name}.log"
        # The configuration names the graph by absolute path: the server keeps its state
        # (`.langgraph_api`) in its working folder, the run's, not the repository's.
        app = HERE / "langgraph_app"
        config = workdir / "langgraph.json"
        config.write_text(json.dumps({"dependencies": [str(app)], "graphs": {"calc": f"{app / 'graph.py'}:graph"}}))
        command = [str(self.bin_dir / "langgraph"), "dev", "--config", str(config),
                   "--port", str(port), "--no-browser", "--no-reload", "--n-jobs-per-worker", str(self.jobs),
                   "--server-log-level", "WARNING"]
        env = clean_env(SERVED_MODEL_DELAY=str(delay), LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false",
                        LANGGRAPH_CLI_NO_ANALYTICS="1", PATH=f"{self.bin_dir}:{os.environ.get('PATH', '')}")
        process = spawn(command, env=env, cwd=workdir, log=log)
        return Server(process, wait_for_url(process, log, "/ok", base=f"http://127.0.0.1:{port}"), log)

    async def new_session(self, conn: Connection) -> str:
        answer = await conn.request("POST", "/threads", {})
        expect(answer, 200, "POST /threads")
        return str(answer.body["thread_id"])

    async def run(self, conn: Connection, session_id: str, *, sse: bool) -> None:
        body: dict[str, Any] = {"assistant_id": "calc",
                                "input": {"messages": [{"role": "user", "content": USER_PROMPT}]}}
        if sse:
            body["stream_mode"] = "values"
        path = f"/threads/{session_id}/runs/{'stream' if sse else 'wait'}"
        answer = await conn.request("POST", path, body, sse=sse)
        expect(answer, 200, f"POST {path}")
        values = [f for f in answer.frames if "messages" in f] if sse else [answer.body]
        messages = values[-1].get("messages", []) if values else []
        if not messages or messages[-1].get("content") != "done":
            raise Failed(f"the run did not end with 'done': {str(messages[-1:])[:300]}")


def peer_targets(venv: Path | None, concurrency: int) -> list[Target]:
    """The peers' servers, from their venv (built on first use)."""
    bin_dir = peers_venv(venv)
    return [Adk(bin_dir, "sqlite"), Adk(bin_dir, "memory"), LangGraphDev(bin_dir, concurrency)]
