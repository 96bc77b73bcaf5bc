"""Images and files on the Messages API's wire (`AnthropicModel`), exactly as sent to the fake.

An image is an `image` block (base64 or URL), a file a `document` block (a PDF as base64
or URL, a text file as a `text/plain` source); a tool result's attachments go inside its
`tool_result` block. What Anthropic does not read is refused before the call, naming it.
"""

from __future__ import annotations

import pytest

from hookline.errors import ModelError
from hookline.messages import FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import ModelRequest, ToolSpec
from hookline.models.anthropic import AnthropicModel
from hookline.testing import FakeAnthropicServer
from hookline.testing._model_media_cases import PDF, PNG

pytestmark = pytest.mark.anyio

IMAGE = ImagePart(media_type="image/png", data=PNG)
PNG_SOURCE = {"type": "base64", "media_type": "image/png", "data": IMAGE.base64()}
PDF_SOURCE = {"type": "base64", "media_type": "application/pdf",
              "data": FilePart(media_type="application/pdf", data=PDF).base64()}
SCREENSHOT = ToolSpec(name="screenshot", description="Take a screenshot.", parameters={"type": "object"})


def ask(*parts: TextPart | ImagePart | FilePart) -> ModelRequest:
    return ModelRequest(messages=[Message("user", list(parts))])


async def test_images_and_files_become_image_and_document_blocks(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    parts: list[TextPart | ImagePart | FilePart] = [
        TextPart(text="Compare these."), IMAGE, ImagePart(url="https://example.com/cat.jpg"),
        FilePart(media_type="application/pdf", data=PDF, name="report.pdf"),
        FilePart(url="https://example.com/letter.pdf"),
        FilePart(media_type="text/plain", data=b"buy milk", name="notes.txt"),
        FilePart(media_type="text/csv", data=b"a,b\n1,2"),
        ImagePart(url=f"data:image/png;base64,{IMAGE.base64()}"),
    ]
    anthropic_server.enqueue_text("They differ.")

    await anthropic_model.request(ask(*parts))

    assert anthropic_server.requests[0]["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Compare these."},
        {"type": "image", "source": PNG_SOURCE},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
        {"type": "document", "source": PDF_SOURCE, "title": "report.pdf"},
        {"type": "document", "source": {"type": "url", "url": "https://example.com/letter.pdf"}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "buy milk"},
         "title": "notes.txt"},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "a,b\n1,2"}},
        {"type": "image", "source": PNG_SOURCE},
    ]}]


async def test_attachments_go_inside_the_tool_result_block(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    pdf = FilePart(media_type="application/pdf", data=PDF)
    history = [
        Message.user("Take two screenshots."),
        Message("assistant", [ToolCallPart(id=call_id, name="screenshot") for call_id in ("toolu_1", "toolu_2")]),
        Message("tool", [ToolResultPart(call_id="toolu_1", name="screenshot", content="first", attachments=(IMAGE,))]),
        Message("tool", [ToolResultPart(call_id="toolu_2", name="screenshot", content="", attachments=(pdf,))]),
        Message.user("Which is brighter?"),
    ]
    anthropic_server.enqueue_text("The first.")

    await anthropic_model.request(ModelRequest(messages=history, tools=[SCREENSHOT]))

    assert anthropic_server.requests[0]["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False, "content": [
            {"type": "text", "text": "first"}, {"type": "image", "source": PNG_SOURCE}]},
        {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": False, "content": [
            {"type": "document", "source": PDF_SOURCE}]},
        {"type": "text", "text": "Which is brighter?"},
    ]}


async def test_text_only_messages_are_sent_as_before(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    history = [
        Message.system("Be terse."), Message.user("Take a screenshot."),
        Message("assistant", [ToolCallPart(id="toolu_1", name="screenshot")]),
        Message("tool", [ToolResultPart(call_id="toolu_1", name="screenshot", content="taken")]),
    ]
    anthropic_server.enqueue_text("ok")

    await anthropic_model.request(ModelRequest(messages=history, tools=[SCREENSHOT]))

    body = anthropic_server.requests[0]
    assert body["system"] == "Be terse."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Take a screenshot."}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "screenshot", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "taken", "is_error": False}]},
    ]


@pytest.mark.parametrize(
    ("part", "named", "said"),
    [
        (ImagePart(media_type="image/bmp", data=b"BM"), "image/bmp",
         "Anthropic reads images as image/jpeg, image/png, image/gif, image/webp"),
        (FilePart(media_type="application/zip", data=b"PK", name="a.zip"), "application/zip",
         "Anthropic takes files as application/pdf or text (text/*)"),
        (FilePart(media_type="text/plain", url="https://example.com/a.txt"), "text/plain",
         "Anthropic takes by URL only PDFs"),
    ],
    ids=["bmp-image", "zip-file", "text-by-url"],
)
async def test_what_anthropic_does_not_read_is_refused_before_the_call(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel, part: ImagePart | FilePart,
    named: str, said: str,
) -> None:
    with pytest.raises(ModelError) as caught:
        await anthropic_model.request(ask(TextPart(text="What is this?"), part))

    assert caught.value.status_code == 400
    assert caught.value.provider == "anthropic"
    assert named in str(caught.value)
    assert said in str(caught.value)
    assert anthropic_server.requests == []


async def test_a_stored_part_not_loaded_is_refused_inside_a_tool_result(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    stored = ImagePart(media_type="image/png", blob="a" * 64)
    history = [
        Message.user("Look."), Message("assistant", [ToolCallPart(id="toolu_1", name="screenshot")]),
        Message("tool", [ToolResultPart(call_id="toolu_1", name="screenshot", content="", attachments=(stored,))]),
    ]

    with pytest.raises(ModelError, match="stored blob aaaaaaaaaaaa holds no bytes"):
        await anthropic_model.request(ModelRequest(messages=history, tools=[SCREENSHOT]))

    assert anthropic_server.requests == []
