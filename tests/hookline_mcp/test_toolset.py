"""`MCPToolset` against real MCP servers, run as subprocesses over stdio and streamable HTTP.

Each behaviour runs in both protocol eras (2026-07-28 and the `initialize` handshake before
it) and, where the transport matters, over both transports.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hookline import Agent, Event, HookPoint, State, ToolCallPart, hook, tool
from hookline.errors import ConfigError, ToolError
from hookline.mcp import MCPConnectionError, MCPToolset
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from support.waiting import await_until

from .harness import HttpServer, alive, lines, server_args, server_pid, stdio_toolset

pytestmark = pytest.mark.anyio


def script(*steps: ModelResponse | Callable[[ModelRequest], ModelResponse]) -> FunctionModel:
    """A model that answers with `steps` in order (a step may look at the request)."""
    queue = list(steps)
    requests: list[ModelRequest] = []

    def answer(request: ModelRequest) -> ModelResponse:
        requests.append(request)
        step = queue.pop(0)
        return step(request) if callable(step) else step

    model = FunctionModel(answer)
    model.requests = requests  # type: ignore[attr-defined]
    return model


def call(name: str, call_id: str = "c1", **arguments: Any) -> ModelResponse:
    return ModelResponse(tool_calls=[ToolCallPart(id=call_id, name=name, arguments=arguments)])


def names(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def results(run_messages: list[Any]) -> list[Any]:
    return [r for m in run_messages for r in m.tool_results]


async def test_tools_are_listed_once_and_called_beside_plain_tools(toolset_of: Callable[..., MCPToolset],
                                                                   state: Path) -> None:
    @tool
    def double(x: int) -> int:
        """Double x."""
        return 2 * x

    toolset = toolset_of()
    model = script(call("add", "c1", a=2, b=3), call("double", "c2", x=4), ModelResponse(text="done"),
                   call("add", "c3", a=1, b=1), ModelResponse(text="again"))
    agent = Agent(model=model, tools=[double, toolset])
    try:
        first = await agent.prompt("add things")
        second = await agent.prompt("once more")
    finally:
        await agent.close()
    assert [r.content for r in results(first.messages)] == ["5", "8"]
    assert [r.content for r in results(second.messages)] == ["2"]
    offered = [spec.name for spec in model.requests[0].tools]  # type: ignore[attr-defined]
    assert offered == ["double", "add", "slow", "fail", "progress", "crash", "env", "cwd", "picture", "snapshot"]
    add = next(s for s in model.requests[0].tools if s.name == "add")  # type: ignore[attr-defined]
    assert add.parameters["required"] == ["a", "b"]
    assert add.description == "Add two integers."
    assert lines(state, "lists") == ["list"], "5 model calls in 2 runs, one listing"
    assert lines(state, "calls") == ["add", "add"]


async def test_images_and_binary_resources_become_the_results_attachments(
        toolset_of: Callable[..., MCPToolset]) -> None:
    model = script(call("picture"), ModelResponse(text="done"))
    agent = Agent(model=model, tools=[toolset_of()])
    try:
        run = await agent.prompt("show me")
    finally:
        await agent.close()
    (result,) = results(run.messages)
    image, report = result.attachments
    assert result.content == "a red dot"
    assert (image.type, image.media_type, image.data[:4]) == ("image", "image/png", b"\x89PNG")
    assert (report.type, report.media_type, report.name, report.data) == (
        "file", "application/pdf", "r.pdf", b"%PDF-1.4\n%%EOF\n")


async def test_the_2026_revision_is_spoken_where_the_server_offers_it(toolset_of: Callable[..., MCPToolset],
                                                                       state: Path, legacy: bool) -> None:
    async with toolset_of() as toolset:
        add = next(t for t in toolset.tools() if t.name == "add")
        assert await add.call({"a": 1, "b": 2}) == "3"
    assert lines(state, "eras") == ["2025-11-25" if legacy else "2026-07-28"]


async def test_structured_content_does_not_repeat_an_image_as_text(toolset_of: Callable[..., MCPToolset]) -> None:
    model = script(call("snapshot"), ModelResponse(text="done"))
    agent = Agent(model=model, tools=[toolset_of()])
    try:
        run = await agent.prompt("show me")
    finally:
        await agent.close()
    (result,) = results(run.messages)
    (image,) = result.attachments
    assert image.data[:4] == b"\x89PNG"
    assert json.loads(result.content) == {"width": 1, "height": 1, "data": "[image (image/png, 70 bytes)]",
                                          "preview": "[image (image/png, 70 bytes)]"}


async def test_a_changed_tool_list_is_listed_again_once(toolset_of: Callable[..., MCPToolset], state: Path) -> None:
    toolset = toolset_of("changing_server")
    model = script(call("grow", "c1"), ModelResponse(text="grown"),
                   lambda request: call("extra", "c2") if "extra" in names(request) else ModelResponse(text="no"),
                   ModelResponse(text="done"), ModelResponse(text="quiet"))
    async with Agent(model=model, tools=[toolset]) as agent:
        await agent.prompt("grow")
        await await_until(lambda: "extra" in [t.name for t in toolset.tools()], "the new list is in")
        result = await agent.prompt("use it")
        assert [r.content for r in results(result.messages)] == ["extra here"]
        await agent.prompt("nothing changed")
    assert len(lines(state, "lists")) == 2, "listed at the start and once after the change"


async def test_a_list_announced_before_the_result_is_offered_on_the_next_turn(state: Path) -> None:
    # Over stdio, before 2026-07-28, the notification comes before the call's result.
    toolset = stdio_toolset("changing_server", state, legacy=True)
    model = script(call("grow", "c1"), lambda request: call("extra", "c2") if "extra" in names(request) else
                   ModelResponse(text="extra is missing"), ModelResponse(text="done"))
    async with Agent(model=model, tools=[toolset]) as agent:
        result = await agent.prompt("grow")
    assert [r.content for r in results(result.messages)] == ["grow done", "extra here"]
    assert len(lines(state, "lists")) == 2


async def test_a_tool_that_runs_only_as_a_task_is_left_out_with_a_warning(state: Path,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    # taskSupport is a 2025-11-25 field: a 2026-07-28 server leaves it off the wire
    model = script(lambda request: ModelResponse(text=" ".join(names(request))))
    async with Agent(model=model, tools=[stdio_toolset("task_server", state, legacy=True)]) as agent:
        with caplog.at_level(logging.WARNING, logger="hookline.mcp"):
            run = await agent.prompt("which tools?")
    assert run.output == "quick"
    (warning,) = [r for r in caplog.records if r.name == "hookline.mcp"]
    assert warning.getMessage() == ("MCP server 'tasks' runs report, confirm, crash only as MCP tasks of the "
                                    "2025-11-25 draft, which hookline does not call (it calls tasks on 2026-07-28 "
                                    "connections): left out of the tools the model sees")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_on_2026_07_28_a_tool_that_runs_only_as_a_task_is_called_as_one(state: Path, transport: str) -> None:
    server = HttpServer("task_server", state) if transport == "http" else None
    toolset = MCPToolset.http(server.url) if server else stdio_toolset("task_server", state)
    model = script(lambda request: call("report") if "report" in names(request) else ModelResponse(text="no report"),
                   ModelResponse(text="reported"))
    try:
        async with toolset, Agent(model=model, tools=[toolset]) as agent:
            run = await agent.prompt("report")
    finally:
        if server:
            server.kill()
    assert [r.content for r in results(run.messages)] == ["report done"]
    assert lines(state, "calls") == ["report", "report done"]


async def test_a_tasks_question_goes_where_the_servers_questions_go(state: Path) -> None:
    async with stdio_toolset("task_server", state) as toolset:
        confirm = next(t for t in toolset.tools() if t.name == "confirm")
        assert await confirm.call({}) == "confirm cancel", "outside a run, a question is cancelled"
    assert lines(state, "calls") == ["confirm", "confirm"]


async def test_a_task_past_the_call_timeout_is_cancelled_on_the_server(state: Path) -> None:
    toolset = stdio_toolset("task_server", state, timeout=1)
    model = script(call("report", seconds=60), ModelResponse(text="gave up"))
    async with toolset, Agent(model=model, tools=[toolset]) as agent:
        run = await agent.prompt("report")
        await await_until(lambda: "report cancelled" in lines(state, "calls"), "the server cancelled the task")
    (failed,) = results(run.messages)
    assert failed.is_error
    assert "did not answer within 1 s" in failed.content


async def test_a_tool_error_and_a_json_rpc_error_are_error_results(toolset_of: Callable[..., MCPToolset]) -> None:
    toolset = toolset_of()
    model = script(call("fail"), ModelResponse(text="it failed, so I stop"))
    async with toolset, Agent(model=model, tools=[toolset]) as agent:
        result = await agent.prompt("try")
        with pytest.raises(ToolError, match=r"refused the call to nope: .*\(JSON-RPC error"):
            await toolset.call("nope", {})
    failed = results(result.messages)[0]
    assert failed.is_error
    assert failed.content == "the disk is full"
    assert result.stop_reason == "completed"
    assert result.output == "it failed, so I stop"


async def test_a_call_past_its_timeout_is_an_error_and_the_connection_stays(
        toolset_of: Callable[..., MCPToolset], state: Path) -> None:
    toolset = toolset_of(timeout=0.5)
    async with toolset:
        slow = next(t for t in toolset.tools() if t.name == "slow")
        answer = await slow.answer(ToolCallPart(id="s", name="slow", arguments={"seconds": 60}))
        assert answer.is_error
        assert "did not answer within 0.5 s" in answer.content
        assert "timeout=" in answer.content
        add = next(t for t in toolset.tools() if t.name == "add")
        assert (await add.answer(ToolCallPart(id="a", name="add", arguments={"a": 1, "b": 2}))).content == "3"
    assert lines(state, "calls") == ["slow", "add"]


def test_the_default_timeout_is_generous() -> None:
    assert MCPToolset.stdio("server").settings.timeout == 300.0
    assert MCPToolset.http("http://127.0.0.1:1/mcp", timeout=None).settings.timeout is None


async def test_progress_and_logs_are_status_events_of_the_call(toolset_of: Callable[..., MCPToolset]) -> None:
    toolset = toolset_of(prefix="srv")
    model = script(call("srv_progress", "p1", steps=3), ModelResponse(text="done"))
    async with Agent(model=model, tools=[toolset]) as agent:
        events = [e async for e in agent.prompt("work").stream()]
    lines_of_call = [e.text for e in events if e.kind == "status" and e.metadata.get("call_id") == "p1"]
    assert lines_of_call == [
        "running srv_progress(steps=3)",
        "info: progress 1/3: step 1",
        "info: progress 2/3: step 2",
        "info: progress 3/3: step 3",
        "warning: almost out of steps",
        "srv_progress returned did 3 steps",
    ]  # the debug line is below the toolset's log_level
    warning = next(e for e in events if e.text == "warning: almost out of steps")
    assert warning.author == "srv_progress"
    assert warning.metadata["logger"] == "hookline.mcp.tools.worker"


async def test_concurrent_http_calls_each_get_their_own_log_lines(http_server: HttpServer) -> None:
    toolset = MCPToolset.http(http_server.url)
    model = script(ModelResponse(tool_calls=[ToolCallPart(id="p1", name="progress", arguments={"steps": 1}),
                                             ToolCallPart(id="p2", name="progress", arguments={"steps": 2})]),
                   ModelResponse(text="done"))
    async with Agent(model=model, tools=[toolset], tool_concurrency=2) as agent:
        events = [e async for e in agent.prompt("work").stream()]
    for call_id, steps in (("p1", 1), ("p2", 2)):
        seen = [e.text for e in events if e.kind == "status" and e.metadata.get("call_id") == call_id]
        assert seen.count("warning: almost out of steps") == 1
        assert [t for t in seen if t.startswith("info: progress")] == [
            f"info: progress {n}/{steps}: step {n}" for n in range(1, steps + 1)]


async def test_hooks_deny_and_interrupt_mcp_calls(state: Path) -> None:
    @hook
    def guard(state: State) -> None:
        for item in state.tool_calls:
            if item.name == "add":
                state.deny_tool(item.id, "no adding today")
            elif item.name == "env":
                state.interrupt(item.id, "reading the environment needs approval")

    toolset = stdio_toolset("tools_server", state)
    model = script(ModelResponse(tool_calls=[ToolCallPart(id="a", name="add", arguments={"a": 1, "b": 2}),
                                             ToolCallPart(id="e", name="env", arguments={"name": "HOME"})]))
    async with Agent(model=model, tools=[toolset], hooks={HookPoint.BEFORE_TOOL: [guard]}) as agent:
        result = await agent.prompt("go")
    assert result.stop_reason == "interrupted"
    assert [i.name for i in result.interruptions] == ["env"]
    assert "no adding today" in results(result.messages)[0].content
    assert lines(state, "calls") == [], "neither call reached the server"


async def test_prefixes_keep_two_servers_apart(tmp_path: Path) -> None:
    one, two = stdio_toolset("tools_server", tmp_path / "one"), stdio_toolset("tools_server", tmp_path / "two")
    clash = Agent(model=script(ModelResponse(text="never")), tools=[one, two])
    with pytest.raises(ConfigError, match=r"two tools are named 'add'.*prefix='files'"):
        await clash.prompt("go")
    await clash.close()
    left, right = stdio_toolset("tools_server", tmp_path / "l", prefix="l"), stdio_toolset(
        "tools_server", tmp_path / "r", prefix="r")
    model = script(ModelResponse(tool_calls=[ToolCallPart(id="1", name="l_add", arguments={"a": 1, "b": 1}),
                                             ToolCallPart(id="2", name="r_add", arguments={"a": 2, "b": 2})]),
                   ModelResponse(text="ok"))
    async with Agent(model=model, tools=[left, right]) as agent:
        result = await agent.prompt("both")
    assert [r.content for r in results(result.messages)] == ["2", "4"]
    assert lines(tmp_path / "l", "calls") == ["add"]
    assert lines(tmp_path / "r", "calls") == ["add"]


async def test_stdio_server_killed_between_calls_is_restarted_and_the_call_sent_once(state: Path,
                                                                                    legacy: bool) -> None:
    async with stdio_toolset("tools_server", state, legacy=legacy) as toolset:
        assert isinstance(toolset, MCPToolset)
        add = next(t for t in toolset.tools() if t.name == "add")
        first_pid = server_pid(state)
        assert await add.call({"a": 1, "b": 1}) == "2"
        import os
        import signal

        os.kill(first_pid, signal.SIGKILL)
        await await_until(lambda: not toolset.connected, "the toolset saw the server go")
        assert await add.call({"a": 2, "b": 2}) == "4"
        assert server_pid(state) != first_pid
        assert toolset.connected
    assert lines(state, "calls") == ["add", "add"]
    assert not alive(server_pid(state))


async def test_a_call_the_server_dies_under_is_not_retried(state: Path, legacy: bool) -> None:
    async with stdio_toolset("tools_server", state, legacy=legacy) as toolset:
        tools = {t.name: t for t in toolset.tools()}
        answer = await tools["crash"].answer(ToolCallPart(id="x", name="crash", arguments={}))
        assert answer.is_error
        assert "may or may not have taken effect" in answer.content
        assert lines(state, "calls") == ["crash"], "a call that may have run is not sent again"
        assert await tools["add"].call({"a": 3, "b": 4}) == "7"
    assert lines(state, "calls") == ["crash", "add"]


async def test_http_server_restarted_between_calls_gets_the_call_once(http_server: HttpServer, state: Path) -> None:
    async with MCPToolset.http(http_server.url) as toolset:
        add = next(t for t in toolset.tools() if t.name == "add")
        assert await add.call({"a": 1, "b": 1}) == "2"
        http_server.restart()
        assert await add.call({"a": 2, "b": 2}) == "4"
    assert lines(state, "calls") == ["add", "add"]


async def test_a_restarted_server_that_answers_400_for_the_old_session_gets_the_call_once(state: Path) -> None:
    server = HttpServer("tools_server", state, legacy=True, extra=("--session-gone", "400"))
    try:
        async with MCPToolset.http(server.url) as toolset:
            add = next(t for t in toolset.tools() if t.name == "add")
            assert await add.call({"a": 1, "b": 1}) == "2"
            server.restart()
            assert await add.call({"a": 2, "b": 2}) == "4"
            assert await add.call({"a": 3, "b": 3}) == "6"
    finally:
        server.kill()
    assert lines(state, "calls") == ["add", "add", "add"]


async def test_a_server_that_wants_authorization_says_so(state: Path, legacy: bool) -> None:
    server = HttpServer("tools_server", state, legacy=legacy, extra=("--bearer", "s3cret-token"))
    try:
        with pytest.raises(MCPConnectionError) as refused:
            async with MCPToolset.http(server.url, headers={"Authorization": "Bearer wrong-token"}):
                pass
        async with MCPToolset.http(server.url, headers={"Authorization": "Bearer s3cret-token"}) as toolset:
            add = next(t for t in toolset.tools() if t.name == "add")
            assert await add.call({"a": 1, "b": 1}) == "2"
    finally:
        server.kill()
    message = str(refused.value)
    assert "HTTP 401" in message
    assert "wants authorization" in message
    assert 'resource_metadata="http://127.0.0.1:' in message, "what the server asked for"
    assert "token" not in message.replace("invalid_token", ""), "no credential, the given one or another"


async def test_http_server_down_gives_an_error_result_then_recovers(http_server: HttpServer, state: Path) -> None:
    async with MCPToolset.http(http_server.url, headers={"Authorization": "Bearer s3cret-token"}) as toolset:
        add = next(t for t in toolset.tools() if t.name == "add")
        http_server.kill()
        answer = await add.answer(ToolCallPart(id="d", name="add", arguments={"a": 1, "b": 1}))
        assert answer.is_error
        assert "was not sent" in answer.content
        assert http_server.url in answer.content
        assert "s3cret" not in answer.content
        http_server.start()
        assert await add.call({"a": 5, "b": 5}) == "10"
    assert lines(state, "calls") == ["add"]


async def test_http_call_the_server_dies_under_is_not_retried(http_server: HttpServer, state: Path) -> None:
    async with MCPToolset.http(http_server.url) as toolset:
        slow = next(t for t in toolset.tools() if t.name == "slow")
        task = asyncio.ensure_future(slow.answer(ToolCallPart(id="s", name="slow", arguments={"seconds": 60})))
        await await_until(lambda: lines(state, "calls") == ["slow"], "the server runs the call")
        http_server.restart()
        answer = await task
        assert answer.is_error
        assert "may or may not have taken effect" in answer.content
        add = next(t for t in toolset.tools() if t.name == "add")
        assert await add.call({"a": 1, "b": 2}) == "3"
    assert lines(state, "calls") == ["slow", "add"]


async def test_agent_close_stops_the_stdio_server(state: Path) -> None:
    toolset = stdio_toolset("tools_server", state)
    agent = Agent(model=script(call("add", a=1, b=2), ModelResponse(text="3")), tools=[toolset])
    await agent.prompt("add")
    pid = server_pid(state)
    assert alive(pid)
    await agent.close()
    assert not alive(pid)
    assert not toolset.connected


async def test_a_server_that_does_not_start_fails_the_run_with_what_to_check(tmp_path: Path) -> None:
    missing = MCPToolset.stdio(str(tmp_path / "no-such-server"), ["--token=abc"])
    agent = Agent(model=script(ModelResponse(text="never")), tools=[missing])
    with pytest.raises(MCPConnectionError, match=r"cannot start MCP server .*no-such-server.*check the command"):
        await agent.prompt("go")


async def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    import sys

    mute = MCPToolset.stdio(sys.executable, ["-c", "import sys, time; sys.stdin.read()"], connect_timeout=0.5)
    with pytest.raises(MCPConnectionError, match=r"did not finish the handshake within 0.5 s"):
        await mute.connect()


async def test_env_and_cwd_reach_the_server(state: Path, tmp_path: Path) -> None:
    custom = MCPToolset.stdio(sys.executable, server_args("tools_server", state), env={"GREETING": "hello"},
                              cwd=tmp_path)
    async with custom:
        tools = {t.name: t for t in custom.tools()}
        assert await tools["env"].call({"name": "GREETING"}) == "hello"
        assert await tools["env"].call({"name": "OPENAI_API_KEY"}) == "<unset>", "only a safe set is inherited"
        assert await tools["cwd"].call({}) == str(tmp_path)


def test_bad_options_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="prefix"):
        MCPToolset.stdio("x", prefix="a b")
    with pytest.raises(ConfigError, match="timeout"):
        MCPToolset.stdio("x", timeout=0)
    with pytest.raises(ConfigError, match="url"):
        MCPToolset.http("ftp://x")
    with pytest.raises(ConfigError, match="args must be a list"):
        MCPToolset.stdio("x", args="--flag")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not connected yet"):
        MCPToolset.stdio("x").tools()


def test_labels_and_reprs_show_no_credentials() -> None:
    stdio = MCPToolset.stdio("srv", ["--api-token", "abc123", "--password=hunter2", "-y", "pkg"],
                             env={"K": "envsecret"})
    http = MCPToolset.http("https://user:pw@example.com:8443/mcp?key=qsecret",
                           headers={"Authorization": "Bearer hsecret"})
    shown = " ".join([stdio.label, repr(stdio), repr(stdio.target), http.label, repr(http), repr(http.target)])
    for secret in ("abc123", "hunter2", "envsecret", "pw@", "qsecret", "hsecret"):
        assert secret not in shown
    assert "srv --api-token" in stdio.label
    assert http.label == "MCP server at https://example.com:8443/mcp"


def test_run_sync_records_progress_in_the_session_log(state: Path) -> None:
    toolset = stdio_toolset("tools_server", state)
    model = script(call("progress", "p", steps=1), ModelResponse(text="done"))
    agent = Agent(model=model, tools=[toolset])
    try:
        result = agent.prompt("work").session("s-1").run_sync()
    finally:
        agent.close_sync()
    logged: list[Event] = asyncio.run(agent.session_store.events("s-1", view="ui"))
    assert result.output == "done"
    assert results(result.messages)[0].content == "did 1 steps"
    assert "info: progress 1/1: step 1" in [e.text for e in logged if e.kind == "status"]
    assert not alive(server_pid(state))
