"""Replay: run an agent again against the model answers a session's log recorded, and say where it diverges.

The recording is a session's log (the `all` view). `Recording.of(events)` reads from it the
user's prompts, the model's answers in order, each tool call's result, and which calls ran.
`replay(agent, recording)` builds a copy of the agent whose model is a `ReplayModel` (the
n-th model call gets the n-th recorded answer), sends it the same prompts in a fresh
session, resumes it where it pauses (approving the calls the recording shows ran, refusing
the others), and compares the conversation it makes with the recorded one, message by
message: the tool calls and their arguments, the tool results, the answers.

Tools are **replayed** by default: each of the agent's tools is swapped for a `RecordedTool`
of the same name and schema that answers a call with its recorded result (by call id), so
nothing runs but the agent's hooks (a guardrail that now refuses a call still does);
`tools="real"` runs the agent's tools, to see whether they still give what they gave.

A divergence is reported, not raised: a changed tool result, a hook that now refuses a
call, instructions that change what a hook injects, an agent that stops earlier or wants
more answers than were recorded. `hookline replay SESSION` is the
command line over it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hookline.agent import Agent
from hookline.compaction import compaction_of
from hookline.errors import ConfigError, HooklineError, ModelError, SessionNotFound
from hookline.events import Event
from hookline.messages import Message, ToolCallPart, ToolResultPart
from hookline.models import Model, ModelRequest, ModelResponse, ToolSpec
from hookline.result import RunResult
from hookline.sessions import InMemorySessionStore
from hookline.state import State
from hookline.tools import Tool, error_result

__all__ = [
    "Divergence", "RecordedTool", "Recording", "ReplayModel", "ReplayReport", "ToolMode", "compare", "replay",
    "replay_agent",
]

ToolMode = Literal["replay", "real"]
"""How a replay answers tool calls: with the recorded results, or by running the tools."""

_MAX_RESUMES = 100


@dataclass(frozen=True)
class Recording:
    """What a session's log recorded, for a replay."""

    prompts: list[Message]
    """The user's prompts, in order."""
    answers: list[Message]
    """The model's answers (assistant messages), in order."""
    results: dict[str, ToolResultPart]
    """Each tool call's recorded result, by call id."""
    ran: frozenset[str]
    """The calls whose start is on record (they ran, or began to)."""
    conversation: list[Message]
    """The conversation as recorded (its messages, summaries of compactions left out)."""

    @classmethod
    def of(cls, events: Sequence[Event]) -> Recording:
        """The recording of a session's log (the `all` view; a `prompt` view does, but knows no call started).

        Raises:
            ConfigError: The log holds no prompt.
        """
        messages = [e for e in events if e.kind == "message" and not e.partial and compaction_of(e) is None]
        prompts = [e.to_message() for e in messages if e.role == "user" and e.author == "user"]
        ran = frozenset(e.metadata["call_id"] for e in events
                        if e.kind != "message" and e.metadata.get("started") and "call_id" in e.metadata)
        return cls.of_conversation([e.to_message() for e in messages], prompts, ran)

    @classmethod
    def of_conversation(cls, conversation: Sequence[Message], prompts: Sequence[Message], ran: frozenset[str]
                        ) -> Recording:
        """The recording of a conversation, its prompts among its messages, and the calls that ran.

        Raises:
            ConfigError: It holds no prompt.
        """
        if not prompts:
            raise ConfigError("the session holds no prompt to replay")
        return cls(
            prompts=list(prompts),
            answers=[m for m in conversation if m.role == "assistant"],
            results={r.call_id: r for m in conversation for r in m.tool_results},
            ran=ran,
            conversation=list(conversation),
        )


class ReplayModel(Model):
    """A model that answers the n-th call with the n-th recorded answer; it keeps every request it gets.

    Raises `ModelError` on a call past the recorded answers (the agent wanted more).
    """

    provider = "replay"

    def __init__(self, answers: Sequence[Message], *, name: str = "replay") -> None:
        self.answers = list(answers)
        self.name = name
        self.requests: list[ModelRequest] = []
        """The requests it got, in order."""

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The next recorded answer."""
        self.requests.append(request)
        if len(self.requests) > len(self.answers):
            raise ModelError(f"the recording holds {len(self.answers)} model answers; the replay asked for one more",
                             provider=self.provider)
        answer = self.answers[len(self.requests) - 1]
        return ModelResponse(text=answer.text, tool_calls=list(answer.tool_calls), model_name=self.name)


@dataclass(frozen=True)
class Divergence:
    """Where the replayed conversation differs from the recorded one."""

    index: int
    """The position in the conversation (0: the first message)."""
    kind: Literal["tool_call", "tool_result", "answer", "message", "missing", "extra", "stop"]
    """What differs: a call (name or arguments), a result, an answer's text, another message, a message
    the replay did not make, one it made beyond the recording, or how the replay ended."""
    expected: str
    """What the recording holds there."""
    got: str
    """What the replay made."""

    def __str__(self) -> str:
        return f"#{self.index} {self.kind}: expected {self.expected}, got {self.got}"


@dataclass
class ReplayReport:
    """What a replay found."""

    tools: ToolMode
    """Whether the tools were replayed or run for real."""
    recorded: list[Message]
    """The recorded conversation."""
    replayed: list[Message] = field(default_factory=list)
    """The conversation the replay made."""
    results: list[RunResult] = field(default_factory=list)
    """The replay's runs (a prompt and its resumptions)."""
    model_calls: int = 0
    """The model calls the replay made."""
    divergences: list[Divergence] = field(default_factory=list)
    """Every difference, in conversation order."""

    @property
    def ok(self) -> bool:
        """Whether the replay made the recorded conversation."""
        return not self.divergences

    def summary(self) -> str:
        """One line: what was replayed, and whether it diverged."""
        what = (f"{len(self.recorded)} messages, {self.model_calls} model calls, "
                f"tools {'replayed' if self.tools == 'replay' else 'run for real'}")
        if self.ok:
            return f"{what}: the same conversation"
        return f"{what}: {len(self.divergences)} divergence(s), the first at message #{self.divergences[0].index}"


async def replay(agent: Agent, recording: Recording, *, tools: ToolMode = "replay", deps: Any = None) -> ReplayReport:
    """Run `agent` again against `recording`'s model answers; report where its conversation diverges.

    Args:
        agent: The agent to replay (its model is replaced by a `ReplayModel`; the agent itself is left as it is).
        recording: What a session recorded (`Recording.of(events)`).
        tools: "replay" answers each tool call with its recorded result; "real" runs the tools.
        deps: The deps of the agent's runs, if it takes any.
    """
    copy, model = await replay_agent(agent, recording, tools)
    report = ReplayReport(tools=tools, recorded=recording.conversation)
    store = InMemorySessionStore()
    ended: str = ""
    try:
        for prompt in recording.prompts:
            ended = await _run(copy, prompt, store, recording, report, deps)
    except HooklineError as exc:
        ended = f"failed: {exc}"
    report.model_calls = len(model.requests)
    report.replayed = await _conversation(store)
    report.divergences = compare(report.recorded, report.replayed)
    if ended.startswith("failed"):
        report.divergences.append(Divergence(len(report.replayed), "stop", "the run to end", ended))
    return report


async def _conversation(store: InMemorySessionStore) -> list[Message]:
    try:
        events = await store.events("replay", view="prompt")
    except SessionNotFound:  # it failed before its session was made
        return []
    return [e.to_message() for e in events if compaction_of(e) is None]


async def _run(agent: Agent, prompt: Message, store: InMemorySessionStore, recording: Recording,
               report: ReplayReport, deps: Any) -> str:
    """One recorded prompt, resumed as the recording shows until it stops pausing; how it ended."""
    request = agent.prompt(prompt).session("replay", store=store)
    result = await (request.deps(deps) if deps is not None else request)
    report.results.append(result)
    for _ in range(_MAX_RESUMES):
        if result.stop_reason != "interrupted":
            break
        approvals = {i.call_id: i.call_id in recording.ran for i in result.interruptions}
        resume = agent.resume("replay", approvals, store=store)
        result = await (resume.deps(deps) if deps is not None else resume)
        report.results.append(result)
    return result.stop_reason


async def replay_agent(agent: Agent, recording: Recording, tools: ToolMode = "replay") -> tuple[Agent, ReplayModel]:
    """A copy of `agent` whose model answers with `recording`'s answers, and that model.

    With `tools="replay"`, its tools are `RecordedTool`s answering from the recording (tools the
    recording calls that the agent lacks too); with `"real"`, the agent's own tools run (its
    toolsets are connected first).
    """
    if tools not in ("replay", "real"):
        raise ConfigError(f"tools must be 'replay' or 'real', not {tools!r}")
    model = ReplayModel(recording.answers)
    if tools == "real":
        await agent.warm_up()  # its toolsets connected, their tools listed
    return _copy(agent, model, recording if tools == "replay" else None), model


def _copy(agent: Agent, model: Model, recording: Recording | None) -> Agent:
    """`agent` with `model`; with a recording, its tools answer from it."""
    if recording is None:
        return agent.clone(model=model)
    try:
        tools: dict[str, Tool] = dict(agent.tools_for(State(agent, [])))
    except ConfigError:  # toolsets not connected: the calls are answered from the recording all the same
        tools = {}
    named = {r.name or "" for r in recording.results.values()} | set(tools)
    recorded = [RecordedTool(name, recording, tools.get(name)) for name in sorted(named - {""})]
    return agent.clone(model=model, tools=recorded)


class RecordedTool(Tool):
    """A tool that answers each call with the result a recording holds for it (by call id); nothing runs.

    Args:
        name: The tool's name.
        recording: Where its results come from.
        original: The tool it stands for (its description and schema), if the agent has it.
    """

    def __init__(self, name: str, recording: Recording, original: Tool | None = None) -> None:
        # Not Tool.__init__: that builds a schema from a Python signature; this one has the original's.
        self.name, self.recording, self.original = name, recording, original
        self.description = original.description if original is not None else "a tool of the recording"
        self.parameters = original.parameters if original is not None else {"type": "object"}
        self.function = self._unused
        self._is_async, self._thread, self.inline = True, False, False
        self._spec = ToolSpec(name=name, description=self.description, parameters=self.parameters)

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments checked as the original tool checks them (an edit on resume)."""
        return self.original.validate(arguments) if self.original is not None else dict(arguments)

    async def answer(self, call: ToolCallPart, values: dict[str, Any] | None = None) -> ToolResultPart:
        """The recorded result of `call`; an error result when the recording holds none."""
        recorded = self.recording.results.get(call.id)
        if recorded is None:
            return error_result(call, f"the recording holds no result of call {call.id!r}")
        return recorded

    @staticmethod
    async def _unused(**arguments: Any) -> None:
        """Never called: `answer` answers."""


def compare(recorded: Sequence[Message], replayed: Sequence[Message]) -> list[Divergence]:
    """Every difference between two conversations, position by position."""
    found = [d for index, (want, got) in enumerate(zip(recorded, replayed, strict=False))
             if (d := _difference(index, want, got)) is not None]
    for index in range(len(replayed), len(recorded)):
        found.append(Divergence(index, "missing", _shown(recorded[index]), "nothing"))
    for index in range(len(recorded), len(replayed)):
        found.append(Divergence(index, "extra", "nothing", _shown(replayed[index])))
    return found


def _difference(index: int, want: Message, got: Message) -> Divergence | None:
    if want.role != got.role:
        return Divergence(index, "message", _shown(want), _shown(got))
    if want.role == "tool":
        expected = [(r.call_id, r.content, r.is_error) for r in want.tool_results]
        made = [(r.call_id, r.content, r.is_error) for r in got.tool_results]
        return None if expected == made else Divergence(index, "tool_result", _shown(want), _shown(got))
    if want.role == "assistant" and _calls(want) != _calls(got):
        return Divergence(index, "tool_call", _shown(want), _shown(got))
    if want.text != got.text:
        return Divergence(index, "answer" if want.role == "assistant" else "message", _shown(want), _shown(got))
    return None


def _calls(message: Message) -> list[tuple[str, Any]]:
    return [(c.name, c.arguments) for c in message.tool_calls]


def _shown(message: Message, limit: int = 120) -> str:
    if message.tool_calls:
        text = ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
    elif message.tool_results:
        text = ", ".join(f"{r.name or r.call_id} -> {'error: ' if r.is_error else ''}{r.content}"
                         for r in message.tool_results)
    else:
        text = message.text
    text = f"{message.role}: {text}"
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
