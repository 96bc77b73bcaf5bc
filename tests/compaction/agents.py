"""A chatty agent with a `Compaction` hook, whose model and summariser note every call they get (in
lists, or in files for another process), so that a test can tell who summarised and what the model saw."""

from __future__ import annotations

import json
from pathlib import Path

from hookline import Agent, Message
from hookline.hooklib import Compaction
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore
from hookline.usage import Usage


class Notes:
    """What the model saw (each call's message texts) and what the summariser was given (how many messages)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._requests: list[list[str]] = []
        self._summaries: list[int] = []

    def request(self, texts: list[str]) -> None:
        self._note("requests", self._requests, texts)

    def summary(self, count: int) -> None:
        self._note("summaries", self._summaries, count)

    @property
    def requests(self) -> list[list[str]]:
        return self._read("requests", self._requests)

    @property
    def summaries(self) -> list[int]:
        return self._read("summaries", self._summaries)

    def _note(self, name: str, kept: list, value: object) -> None:  # type: ignore[type-arg]
        if self.folder is None:
            kept.append(value)
        else:
            with (self.folder / name).open("a") as file:
                file.write(json.dumps(value) + "\n")

    def _read(self, name: str, kept: list) -> list:  # type: ignore[type-arg]
        if self.folder is None:
            return kept
        path = self.folder / name
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def chatty(store: SessionStore, notes: Notes, *, tokens_per_message: int = 0, **compaction: int) -> Agent:
    """An agent answering "answer N" to the N-th prompt it sees in a conversation, compacting as `compaction` says.

    Its model reports `tokens_per_message` input tokens for each message it is sent.
    """

    def model(request: ModelRequest) -> ModelResponse:
        texts = [m.text for m in request.messages]
        notes.request(texts)
        usage = Usage(input_tokens=tokens_per_message * len(texts), output_tokens=1)
        return ModelResponse(text=f"answer to {texts[-1]}", usage=usage)

    def summarize(messages: list[Message]) -> str:
        notes.summary(len(messages))
        return f"{len(messages)} earlier messages"

    settings = {"trigger_messages": 6, "keep_last": 2, **compaction}
    hook = Compaction(summarize, **settings)
    return Agent("chatty", model=FunctionModel(model), session_store=store,
                 hooks={"before_llm": [hook], "after_llm": [hook]})
