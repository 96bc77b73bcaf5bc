"""`PromptRecord`: the session a run writes to, and how its prompt gets there.

The prompt's event goes to the recorder first, after the events that open the run in its
transaction (a sub-agent's link to its caller). It is stored at once when something may read
the conversation before the model does (a `before_run` or `before_llm` hook, a resume's calls),
else with the first model call's flush: one write less per run. Once stored, the prompt is
the store's: with the user's prepared parts merged in, and its images and files named by
digest (`blob`), as every later read of the session gives them.
"""

from __future__ import annotations

from dataclasses import dataclass

from hookline._run.prompt_view import load_media
from hookline._run.recorder import Recorder
from hookline.conversation import user_actions_as_text
from hookline.events import Event
from hookline.messages import Message
from hookline.sessions.base import SessionStore

__all__ = ["PromptRecord", "SessionTarget"]


@dataclass(frozen=True, slots=True)
class SessionTarget:
    """The session a run reads and appends to."""

    store: SessionStore
    session_id: str
    user: str | None = "default"
    create: bool = True
    wait: float = 5.0
    prompt_id: str | None = None
    """The id the prompt's event keeps (a front end's own message id); None: a fresh one."""
    opening: tuple[Event, ...] = ()
    """Events recorded right before the prompt, in its transaction (a sub-agent's link to its caller)."""


class PromptRecord:
    """Records a run's prompt in its session; holds it while it waits for the first model call's flush."""

    __slots__ = ("recorder", "session", "waiting")

    def __init__(self, recorder: Recorder, session: SessionTarget | None) -> None:
        self.recorder, self.session = recorder, session
        self.waiting: Message | None = None
        """The prompt, until the first model call's flush stores it."""

    async def record(self, prompt: Message, *, may_wait: bool) -> Message:
        """Record `prompt`; the prompt the conversation takes: as stored, unless it waits (`may_wait`)."""
        session = self.session
        if self.recorder.active:
            event = Event.from_message(prompt, "user")
            if session is not None:
                for opening in session.opening:
                    self.recorder.add(opening)
                if session.prompt_id is not None:
                    event.id = session.prompt_id
            self.recorder.add(event)
        if session is None:
            return prompt
        if may_wait:
            self.waiting = prompt
            return prompt
        return await self._as_stored(await self.recorder.flush(), prompt)

    async def flush(self, *conversations: list[Message]) -> bool:
        """Flush what the run recorded; whether a prompt that waited for it came back changed.

        The store may change it (prepared parts, media named by digest): the stored prompt then
        takes its place, the last message, in each of `conversations`.
        """
        flushed = await self.recorder.flush()
        prompt, self.waiting = self.waiting, None
        if prompt is None:
            return False
        stored = await self._as_stored(flushed, prompt)
        if stored == prompt:
            return False
        for messages in conversations:  # it is the last one: nothing ran since
            index = next(i for i in range(len(messages) - 1, -1, -1) if messages[i] is prompt)
            list.__setitem__(messages, index, stored)  # the loop's own change needs no check
        return True

    async def _as_stored(self, flushed: list[Event], prompt: Message) -> Message:
        assert self.session is not None
        stored = [e for e in flushed if e.author == "user" and e.kind == "message"]
        stored = await load_media(self.session.store, self.session.session_id, stored, known=prompt.parts)
        return user_actions_as_text(stored[-1].to_message()) if stored else prompt
