"""Images and files reach the provider, in its shape: the media half of `ModelContract`.

Every case checks what any provider's request must show, whatever its wire format: the
image's base64 sent once with its media type, a URL sent as it is, a PDF's bytes, a tool
result's image sent with the result's text, and a part whose bytes were never loaded
refused before anything is sent. Where the shape itself is known, three hooks of the
subclass say what the provider's JSON looks like (`wire_text_message`, `wire_media`,
`wire_attachments_of`), and the cases look for it in the request as sent. The cases need
the contract's fixtures and factories (`hookline.testing.model_contract`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest

from hookline.errors import ModelError
from hookline.messages import FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import Model, ModelRequest, ToolSpec
from hookline.testing._model_fault_cases import ask, collect
from hookline.testing._serve import ScriptedServer
from hookline.types import JSONObject

__all__ = ["PDF", "PNG", "MediaCases", "contains"]

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
"""A 1x1 PNG image."""
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
"""A (nearly empty) PDF file."""
IMAGE_URL = "https://example.com/cat.png"
SCREENSHOT = ToolSpec(name="screenshot", description="Take a screenshot.", parameters={"type": "object"})


def contains(node: Any, fragment: Any) -> bool:
    """Whether `fragment` is `node`, or any dict or list nested in it."""
    if node == fragment:
        return True
    if isinstance(node, dict):
        return any(contains(value, fragment) for value in node.values())
    if isinstance(node, list):
        return any(contains(value, fragment) for value in node)
    return False


def _picture_question(*media: ImagePart | FilePart) -> ModelRequest:
    question = Message("user", [TextPart(text="What is this?"), *media])
    return ModelRequest(messages=[Message.system("Be terse."), question])


class MediaCases:
    """The cases about images and files in prompts and tool results."""

    media: ClassVar[bool] = True
    """False: your provider takes no images or files, and these cases are skipped."""

    def wire_text_message(self, text: str) -> JSONObject | None:
        """What a user message holding only `text` becomes in your provider's request; None: not checked.

        It must appear, as given, somewhere in the request body (e.g. Chat Completions:
        `{"role": "user", "content": text}`).
        """
        return None

    def wire_media(self, part: ImagePart | FilePart) -> JSONObject | None:
        """The content block an image or a file becomes in your provider's request; None: not checked."""
        return None

    def wire_attachments_of(self, body: JSONObject, call_id: str) -> Any:
        """The node of request `body` that must hold the attachments of call `call_id`'s result; None: not checked."""
        return None

    def wire_user_message(self, content: Sequence[str | ImagePart | FilePart]) -> JSONObject | None:
        """What a user message of several content blocks becomes in your provider's request; None: not checked.

        `content` holds the message's blocks in order: each text block as a string, each
        image and file as its part (Chat Completions: `{"role": "user", "content": [...]}`
        with a `text` part for each string and `wire_media(part)` for each part).
        """
        return None

    def _media_only(self) -> None:
        if not self.media:
            pytest.skip("the provider takes no images or files (media = False)")

    def _shaped(self, body: JSONObject, part: ImagePart | FilePart, where: Any = None) -> None:
        expected = self.wire_media(part)
        if expected is not None:
            assert contains(body if where is None else where, expected), f"{expected} not in {where or body}"

    async def test_an_image_in_the_prompt_reaches_the_provider(self, server: ScriptedServer, model: Model) -> None:
        """An image's bytes are sent once, as base64, with their media type, beside the question."""
        self._media_only()
        image = ImagePart(media_type="image/png", data=PNG)
        server.enqueue_text("A dot.")

        response = await model.request(_picture_question(image))

        assert response.text == "A dot."
        sent = json.dumps(server.requests[0])
        assert sent.count(image.base64()) == 1
        assert "image/png" in sent
        assert "What is this?" in sent
        self._shaped(server.requests[0], image)

    async def test_an_image_url_reaches_the_provider_streamed(self, server: ScriptedServer, model: Model) -> None:
        """An image given by URL is sent as that URL, for the provider to fetch (streaming renders it the same)."""
        self._media_only()
        image = ImagePart(url=IMAGE_URL)
        server.enqueue_text("A cat.")

        _, response = await collect(model, _picture_question(image))

        assert response.text == "A cat."
        assert json.dumps(server.requests[0]).count(IMAGE_URL) == 1
        self._shaped(server.requests[0], image)

    async def test_a_pdf_reaches_the_provider(self, server: ScriptedServer, model: Model) -> None:
        """A PDF's bytes are sent once, as base64, named as a PDF."""
        self._media_only()
        pdf = FilePart(media_type="application/pdf", data=PDF, name="report.pdf")
        server.enqueue_text("A report.")

        await model.request(_picture_question(pdf))

        sent = json.dumps(server.requests[0])
        assert sent.count(pdf.base64()) == 1
        assert "application/pdf" in sent
        self._shaped(server.requests[0], pdf)

    async def test_an_image_a_tool_returned_reaches_the_provider(self, server: ScriptedServer, model: Model) -> None:
        """A tool result's image is sent once, with the result's text, where the provider takes it."""
        self._media_only()
        image = ImagePart(media_type="image/png", data=PNG)
        call = ToolCallPart(id=f"{server.id_prefix}shot1", name="screenshot")
        result = ToolResultPart(call_id=call.id, name="screenshot", content="Screenshot taken.", attachments=(image,))
        history = [*ask("What is on screen?").messages, Message("assistant", [call]), Message("tool", [result])]
        server.enqueue_text("A dot.")

        await model.request(ModelRequest(messages=history, tools=[SCREENSHOT]))

        body = server.requests[0]
        sent = json.dumps(body)
        assert sent.count(image.base64()) == 1
        assert "Screenshot taken." in sent
        where = self.wire_attachments_of(body, call.id)
        if where is not None:
            self._shaped(body, image, where)

    async def test_an_image_a_users_own_call_returned_reaches_the_provider(
        self, server: ScriptedServer, model: Model
    ) -> None:
        """A call the user made, recorded with its result, is one sentence; the result's image comes right after it."""
        self._media_only()
        image = ImagePart(media_type="image/png", data=PNG)
        call = ToolCallPart(id="user_shot1", name="screenshot", arguments={"region": "top"})
        result = ToolResultPart(call_id=call.id, name="screenshot", content="Screenshot taken.", attachments=(image,))
        told = Message("user", [call, result, TextPart(text="What is on it?")])
        server.enqueue_text("A dot.")

        await model.request(ModelRequest(messages=[Message.system("Be terse."), told]))

        body = server.requests[0]
        sentence = 'The user called screenshot({"region": "top"}); result: Screenshot taken.'
        sent = json.dumps(body)
        assert sent.count(image.base64()) == 1, "the image of the user's call is sent, once"
        assert sent.index(json.dumps(sentence)) < sent.index(image.base64()) < sent.index("What is on it?")
        expected = self.wire_user_message([sentence, image, "What is on it?"])
        if expected is None:
            self._shaped(body, image)
        else:
            assert contains(body, expected), f"{expected} not in {body}"

    async def test_text_messages_beside_media_are_sent_as_text(self, server: ScriptedServer, model: Model) -> None:
        """A text-only message renders as it always has, in a conversation with media in it or without."""
        self._media_only()
        image = ImagePart(media_type="image/png", data=PNG)
        mixed = [Message.user("First question."), Message.assistant("First answer."),
                 Message("user", [TextPart(text="What is this?"), image])]
        server.enqueue_text("ok")
        server.enqueue_text("ok")

        await model.request(ask("2+3?"))
        await model.request(ModelRequest(messages=mixed))

        text_only, with_media = server.requests
        assert "base64" not in json.dumps(text_only)
        for body, text in ((text_only, "2+3?"), (with_media, "First question.")):
            expected = self.wire_text_message(text)
            assert expected is None or contains(body, expected), f"{expected} not in {body}"

    async def test_a_part_whose_bytes_were_not_loaded_is_refused(self, server: ScriptedServer, model: Model) -> None:
        """An image read back from a store without its bytes is refused before any request, naming it."""
        self._media_only()
        stored = ImagePart(media_type="image/png", blob="ab" * 32)

        with pytest.raises((ModelError, ValueError)) as caught:
            await model.request(_picture_question(stored))

        assert "abababababab" in str(caught.value)
        assert not isinstance(caught.value, ModelError) or not caught.value.retryable
        assert server.requests == []
