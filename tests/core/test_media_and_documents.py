"""Images and files in prompts and tool results, and documents given for one run only."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import pytest

from hookline import Agent, ConfigError, DocumentPart, FilePart, ImagePart, Message, TextPart, tool
from hookline.errors import StoreError
from hookline.messages import ToolCallPart
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import Blob, SQLiteSessionStore

pytestmark = pytest.mark.anyio

PIXEL = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\n%%EOF"


class Recording:
    """A model that answers "done" (after calling `tool_name` once, if given) and keeps every request."""

    def __init__(self, tool_name: str | None = None) -> None:
        self.requests: list[ModelRequest] = []
        self.tool_name = tool_name
        self.model = FunctionModel(self.answer)

    def answer(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if self.tool_name and len(self.requests) == 1:
            return ModelResponse(tool_calls=[ToolCallPart(id="c1", name=self.tool_name, arguments={})])
        return ModelResponse(text="done")


async def test_a_prompt_list_makes_one_user_message_of_text_and_media(tmp_path: Path) -> None:
    picture = tmp_path / "pixel.png"
    picture.write_bytes(PIXEL)
    seen = Recording()
    result = await Agent(model=seen.model).prompt(["What is this?", ImagePart.from_path(picture)])
    (prompt,) = seen.requests[0].messages
    assert prompt.role == "user"
    assert prompt.text == "What is this?"
    image = prompt.parts[1]
    assert isinstance(image, ImagePart)
    assert (image.media_type, image.data) == ("image/png", PIXEL)
    assert result.messages[0] == prompt


@pytest.mark.parametrize(
    ("prompt", "complaint"),
    [
        ([], "must be text, a user Message or a list"),
        ([42], "not int"),
        (["  "], "the prompt is empty"),
        (Message.assistant("hi"), "must be a user Message"),
        (7, "must be text, a user Message or a list"),
    ],
)
def test_a_prompt_that_holds_nothing_to_answer_is_refused(prompt: object, complaint: str) -> None:
    with pytest.raises(ConfigError, match=complaint):
        Agent(model=Recording().model).prompt(prompt)  # type: ignore[arg-type]


async def test_a_tool_returning_an_image_and_text_gives_a_result_with_an_attachment() -> None:
    @tool
    def snapshot() -> list[object]:
        """Take a picture."""
        return ["the camera's view", ImagePart(media_type="image/png", data=PIXEL)]

    seen = Recording("snapshot")
    await Agent(model=seen.model, tools=[snapshot]).prompt("look")
    result = seen.requests[1].messages[-1].tool_results[0]
    assert result.content == "the camera's view"
    assert result.attachments == (ImagePart(media_type="image/png", data=PIXEL),)


async def test_a_tool_returning_a_file_alone_has_empty_text_and_a_list_without_media_is_json() -> None:
    @tool
    def report() -> FilePart:
        """Write the report."""
        return FilePart(media_type="application/pdf", data=PDF, name="r.pdf")

    @tool
    def numbers() -> list[int]:
        """Count."""
        return [1, 2]

    seen = Recording("report")
    await Agent(model=seen.model, tools=[report]).prompt("go")
    result = seen.requests[1].messages[-1].tool_results[0]
    assert (result.content, [a.name for a in result.attachments]) == ("", ["r.pdf"])  # type: ignore[union-attr]
    seen = Recording("numbers")
    await Agent(model=seen.model, tools=[numbers]).prompt("go")
    assert seen.requests[1].messages[-1].tool_results[0].content == "[1,2]"
    assert seen.requests[1].messages[-1].tool_results[0].attachments == ()


async def test_documents_reach_every_model_call_of_their_run_and_are_never_stored(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")

    @tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    seen = Recording("noop")
    agent = Agent(model=seen.model, tools=[noop], instructions="Answer from the documents.", session_store=store)
    manual = DocumentPart(title="Manual", text="Press the red button.")
    result = await agent.prompt("How do I start it?").documents(manual).session("s")
    for request in seen.requests:  # both calls of the run: before and after the tool
        user = next(m for m in request.messages if m.role == "user")
        assert user.parts[0] == manual
        assert user.text == "How do I start it?"
    assert all(not isinstance(p, DocumentPart) for m in result.messages for p in m.parts)
    logged = await store.events("s")
    assert "red button" not in "".join(e.model_dump_json() for e in logged)

    later = Recording()
    await Agent(model=later.model, session_store=store).prompt("And stop it?").session("s")
    assert all(not isinstance(p, DocumentPart) for m in later.requests[0].messages for p in m.parts)
    await store.aclose()


async def test_documents_merge_into_the_latest_user_message_with_its_own_documents() -> None:
    seen = Recording()
    stored_doc = DocumentPart(title="A", text="alpha")
    prompt = Message(role="user", parts=[stored_doc, TextPart(text="compare")])
    await Agent(model=seen.model).prompt(prompt).documents(DocumentPart(title="B", text="beta"))
    (user,) = seen.requests[0].messages
    assert [p.title for p in user.parts if isinstance(p, DocumentPart)] == ["B", "A"]
    assert prompt.parts[0] is stored_doc
    assert len(prompt.parts) == 2


def test_documents_takes_document_parts_only() -> None:
    with pytest.raises(ConfigError, match="DocumentPart"):
        Agent(model=Recording().model).prompt("hi").documents("a text")  # type: ignore[arg-type]


async def test_media_of_an_earlier_run_reach_the_model_again_from_the_log(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    first = Recording()
    agent = Agent(model=first.model, session_store=store)
    await agent.prompt(["What is this?", ImagePart(media_type="image/png", data=PIXEL)]).session("s")
    second = Recording()
    await Agent(model=second.model, session_store=store).prompt("And its colour?").session("s")
    image = second.requests[0].messages[0].parts[1]
    assert isinstance(image, ImagePart)
    assert image.data == PIXEL
    await store.aclose()


async def test_a_log_naming_bytes_its_store_lost_fails_the_run_with_what_happened(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(path)
    agent = Agent(model=Recording().model, session_store=store)
    await agent.prompt(["What is this?", ImagePart(media_type="image/png", data=PIXEL)]).session("s")
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM hookline_blobs")
    with pytest.raises(StoreError, match="names 1 stored image") as failed:
        await agent.prompt("And its colour?").session("s")
    assert hashlib.sha256(PIXEL).hexdigest() in str(failed.value)
    await store.aclose()


async def test_the_streamed_prompt_names_its_stored_image_by_digest_and_the_model_gets_the_bytes(
        tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db")
    seen = Recording()
    request = Agent(model=seen.model, session_store=store).prompt(["What is this?", ImagePart(media_type="image/png",
                                                                                              data=PIXEL)])
    streamed = [event async for event in request.session("s").stream()]
    prompt = next(e for e in streamed if e.kind == "message" and e.role == "user")
    image = prompt.parts[1]
    assert isinstance(image, ImagePart)
    assert (image.data, image.blob) == (None, hashlib.sha256(PIXEL).hexdigest())
    sent = seen.requests[0].messages[0].parts[1]
    assert isinstance(sent, ImagePart)
    assert sent.data == PIXEL
    await store.aclose()


class CountingLoads(SQLiteSessionStore):
    """A SQLite store counting the digests asked of `load_blobs`."""

    asked: list[str]

    async def load_blobs(self, session_id: str, digests: Iterable[str]) -> dict[str, Blob]:
        digests = list(digests)
        self.asked = [*getattr(self, "asked", []), *digests]
        return await super().load_blobs(session_id, digests)


async def test_the_prompts_own_bytes_are_not_read_back_from_the_store(tmp_path: Path) -> None:
    store = CountingLoads(tmp_path / "s.db")
    seen = Recording()
    await Agent(model=seen.model, session_store=store).prompt(["What is this?", ImagePart(media_type="image/png",
                                                                                            data=PIXEL)]).session("s")
    sent = seen.requests[0].messages[0].parts[1]
    assert isinstance(sent, ImagePart)
    assert sent.data == PIXEL
    assert getattr(store, "asked", []) == []
    await Agent(model=Recording().model, session_store=store).prompt("And its colour?").session("s")
    assert store.asked == [hashlib.sha256(PIXEL).hexdigest()]  # a later run reads them, once
    await store.aclose()
