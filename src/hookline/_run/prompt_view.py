"""What the model is sent on each call beyond the live conversation.

The conversation (`State.messages`) is what the log holds. A model call also needs the
agent's instructions in front of it, the run's documents (`PromptRequest.documents`, given
for this run only and never stored), and the bytes of images and files read back from the
log, which a store keeps apart from it (`SessionStore.load_blobs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hookline._hot_path import COUNTS_REFERENCES, references
from hookline.agent_spec import AgentSpec
from hookline.errors import StoreError
from hookline.events import Event
from hookline.messages import DocumentPart, FilePart, ImagePart, Message, Part, TextPart, ToolResultPart
from hookline.sessions.base import Blob, SessionStore
from hookline.state import State, TrackedMessages

__all__ = ["PromptView", "load_media"]

_MEDIA = (ImagePart, FilePart)


class PromptView:
    """Builds the messages of each model call: instructions, conversation, this run's documents.

    Each call gets a list of its own, since a model may keep its request. Copying the whole
    conversation for every call would make each turn cost more as the history grows, so
    the list given to the last call is extended with what the conversation gained, when
    nothing can tell: nothing else holds that list any more (its reference count: a trick
    of `hookline._hot_path`, off on other Pythons and under `HOOKLINE_PLAIN_HOT_PATH=1`),
    the model did not change it, and no hook edited or replaced the conversation since.
    Otherwise the call gets a fresh copy.
    """

    __slots__ = ("_edits", "_given", "_mirrored", "_source", "_system", "agent", "documents")

    def __init__(self, agent: AgentSpec, documents: Sequence[DocumentPart] = ()) -> None:
        self.agent = agent
        self.documents = tuple(documents)
        self._system: Message | None = None
        self._given: TrackedMessages | None = None  # the list the last call got, while it may be extended
        self._source: TrackedMessages | None = None  # the conversation it mirrors
        self._mirrored = 0  # how many of that conversation's messages it holds
        self._edits = 0  # how many times that conversation had been edited then

    def messages(self, state: State) -> list[Message]:
        """The messages of the next model call."""
        conversation = state.messages
        given = self._extended(conversation)
        return given if given is not None else self._copied(state, conversation)

    def _extended(self, conversation: TrackedMessages) -> TrackedMessages | None:
        """The last call's list, grown by what `conversation` gained, when nothing can tell; else None."""
        if (
            self._given is None
            or references(self._given) != 2  # this attribute and the argument: something else holds it
            or self._given.changed  # the model changed it
            or conversation is not self._source
            or conversation.edits != self._edits
        ):
            return None
        _extend(self._given, conversation[self._mirrored :])  # `list.extend`: not an edit to note
        self._mirrored = len(conversation)
        return self._given

    def _copied(self, state: State, conversation: TrackedMessages) -> list[Message]:
        """The messages of the next model call, in a fresh list."""
        instructions = self.agent.instructions
        # `+` and `[:]` copy the conversation (a list subclass) at a list's speed; unpacking it
        # (`[system, *messages]`) walks it item by item (docs/perf/README.md)
        if instructions is None:
            messages = conversation[:]
        elif isinstance(instructions, str):
            if self._system is None:  # `Message.system` without validating the message again
                self._system = Message.from_valid_parts("system", [TextPart.from_valid(instructions)])
            messages = [self._system] + conversation  # noqa: RUF005 - see above
        else:
            messages = [Message.system(instructions(state))] + conversation  # noqa: RUF005
        if self.documents:
            _attach(messages, self.documents)
        elif isinstance(instructions, str | None) and COUNTS_REFERENCES:  # the next call's may extend it
            self._given = TrackedMessages(messages)
            self._source, self._mirrored, self._edits = conversation, len(conversation), conversation.edits
            return self._given
        return messages


_extend = list.extend


def _attach(messages: list[Message], documents: tuple[DocumentPart, ...]) -> None:
    """Put `documents` in front of the latest user message (a copy: the conversation keeps none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user":
            messages[index] = Message.from_valid_parts("user", [*documents, *message.parts])
            return
    messages.append(Message.from_valid_parts("user", documents))


async def load_media(
    store: SessionStore, session_id: str, events: list[Event], known: Sequence[Part] = ()
) -> list[Event]:
    """`events`, read from `store`, with the bytes of their media parts loaded again.

    Bytes held by the parts of `known` (what the run just wrote: its prompt) are taken from
    them; only the others are read from the store. Events without such parts are given
    back as they are; the others are copies, so an event already handed to a stream keeps
    its parts as stored (`blob`, no bytes).

    Raises:
        StoreError: The log names bytes the store does not hold.
    """
    wanted = {part.blob for event in events for part in _media_of(event.parts) if part.data is None and part.blob}
    if not wanted:
        return events
    blobs = {digest: blob for digest, blob in _held(known) if digest in wanted}
    if len(blobs) < len(wanted):
        blobs.update(await store.load_blobs(session_id, wanted - blobs.keys()))
    missing = wanted - blobs.keys()
    if missing:
        raise StoreError(f"the log of session {session_id!r} names {len(missing)} stored image(s) or file(s) "
                         f"its store does not hold (first: {min(missing)}): their blob rows were deleted")
    return [event.model_copy(update={"parts": [_loaded(part, blobs) for part in event.parts]})
            if _media_of(event.parts) else event for event in events]


def _media_of(parts: Sequence[Part]) -> list[ImagePart | FilePart]:
    found: list[ImagePart | FilePart] = []
    for part in parts:
        if isinstance(part, _MEDIA):
            found.append(part)
        elif isinstance(part, ToolResultPart) and part.attachments:
            found.extend(part.attachments)
    return found


def _held(parts: Sequence[Part]) -> list[tuple[str, Blob]]:
    """The bytes `parts` hold, by digest."""
    return [(media.digest(), Blob(media.media_type or "", media.data))
            for media in _media_of(parts) if media.data is not None]


def _loaded(part: Part, blobs: Mapping[str, Blob]) -> Part:
    if isinstance(part, _MEDIA):
        return _loaded_media(part, blobs)
    if isinstance(part, ToolResultPart) and part.attachments:
        return part.model_copy(update={"attachments": tuple(_loaded_media(a, blobs) for a in part.attachments)})
    return part


def _loaded_media(part: ImagePart | FilePart, blobs: Mapping[str, Blob]) -> ImagePart | FilePart:
    if part.data is not None or part.blob is None:
        return part
    return part.model_copy(update={"data": blobs[part.blob].data})
