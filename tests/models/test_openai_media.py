"""Images and files on the Chat Completions wire (`OpenAIModel`), exactly as sent to the fake.

A user message with media becomes an array of content parts; tool messages carry text
only, so a tool result's attachments follow the tool messages in one user message; a
text-only message keeps its plain string content.
"""

from __future__ import annotations

import pytest

from hookline.errors import ModelError
from hookline.messages import FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import ModelRequest, ToolSpec
from hookline.models.openai import OpenAIModel
from hookline.testing import FakeOpenAIServer
from hookline.testing._model_media_cases import PDF, PNG

pytestmark = pytest.mark.anyio

IMAGE = ImagePart(media_type="image/png", data=PNG)
PNG_URL = ("data:image/png;base64,"
           "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
PDF_URL = "data:application/pdf;base64," + FilePart(media_type="application/pdf", data=PDF).base64()
SCREENSHOT = ToolSpec(name="screenshot", description="Take a screenshot.", parameters={"type": "object"})


def calls(*ids: str) -> Message:
    return Message("assistant", [ToolCallPart(id=call_id, name="screenshot") for call_id in ids])


async def test_a_prompt_with_images_and_a_pdf_is_an_array_of_content_parts(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    parts = [TextPart(text="Compare these."), IMAGE, ImagePart(url="https://example.com/cat.jpg"),
             FilePart(media_type="application/pdf", data=PDF, name="report.pdf"),
             FilePart(media_type="application/pdf", data=PDF)]
    openai_server.enqueue_text("They differ.")

    await openai_model.request(ModelRequest(messages=[Message.system("Be terse."), Message("user", parts)]))

    assert openai_server.requests[0]["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": [
            {"type": "text", "text": "Compare these."},
            {"type": "image_url", "image_url": {"url": PNG_URL}},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
            {"type": "file", "file": {"filename": "report.pdf", "file_data": PDF_URL}},
            {"type": "file", "file": {"filename": "file.pdf", "file_data": PDF_URL}},
        ]},
    ]


async def test_text_only_messages_keep_their_string_content(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    history = [
        Message.system("Be terse."), Message.user("Take a screenshot."), calls("call_1"),
        Message("tool", [ToolResultPart(call_id="call_1", name="screenshot", content="taken")]),
        Message("user", [TextPart(text="Now "), TextPart(text="describe it.")]),
    ]
    openai_server.enqueue_text("ok")

    await openai_model.request(ModelRequest(messages=history, tools=[SCREENSHOT]))

    assert openai_server.requests[0]["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Take a screenshot."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "screenshot", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "taken"},
        {"role": "user", "content": "Now describe it."},
    ]


async def test_attachments_follow_the_tool_messages_in_one_user_message(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    pdf = FilePart(media_type="application/pdf", data=PDF, name="page.pdf")
    history = [
        Message.user("Take two screenshots."), calls("call_1", "call_2"),
        Message("tool", [ToolResultPart(call_id="call_1", name="screenshot", content="first", attachments=(IMAGE,))]),
        Message("tool", [ToolResultPart(call_id="call_2", name="screenshot", content="", attachments=(pdf,))]),
        Message.user("Which is brighter?"),
    ]
    openai_server.enqueue_text("The first.")

    await openai_model.request(ModelRequest(messages=history, tools=[SCREENSHOT]))

    assert openai_server.requests[0]["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "first"},
        {"role": "tool", "tool_call_id": "call_2", "content": ""},
        {"role": "user", "content": [
            {"type": "text", "text": "Attachments of the result of call call_1 (screenshot):"},
            {"type": "image_url", "image_url": {"url": PNG_URL}},
            {"type": "text", "text": "Attachments of the result of call call_2 (screenshot):"},
            {"type": "file", "file": {"filename": "page.pdf", "file_data": PDF_URL}},
        ]},
        {"role": "user", "content": "Which is brighter?"},
    ]


async def test_a_text_file_goes_as_its_text_and_a_data_url_as_it_is(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    notes = FilePart(media_type="text/markdown", data="# Notes\nbuy milk ✓".encode(), name="notes.md")
    openai_server.enqueue_text("ok")

    await openai_model.request(ModelRequest(messages=[Message("user", [notes, ImagePart(url=PNG_URL)])]))

    assert openai_server.requests[0]["messages"][0]["content"] == [
        {"type": "text", "text": '<file name="notes.md">\n# Notes\nbuy milk ✓\n</file>'},
        {"type": "image_url", "image_url": {"url": PNG_URL}},
    ]


async def test_media_in_an_assistant_message_is_a_placeholder(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    drawn = Message("assistant", [TextPart(text="Here:"), IMAGE])
    history = [Message.user("Draw a dot."), drawn, Message.user("Thanks")]
    openai_server.enqueue_text("ok")

    await openai_model.request(ModelRequest(messages=history))

    assert openai_server.requests[0]["messages"][1] == {
        "role": "assistant",
        "content": "Here:\n\n[image image/png, 70 bytes: left out: only user messages and tool results carry images "
                   "and files]",
    }


async def test_a_file_by_url_is_refused_before_the_call_naming_the_fix(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    report = FilePart(url="https://example.com/report.pdf", media_type="application/pdf")

    with pytest.raises(ModelError) as caught:
        await openai_model.request(ModelRequest(messages=[Message("user", [TextPart(text="Sum up."), report])]))

    assert caught.value.status_code == 400
    assert not caught.value.retryable
    assert caught.value.provider == "openai"
    assert "https://example.com/report.pdf" in str(caught.value)
    assert "OpenAIResponsesModel" in str(caught.value)
    assert openai_server.requests == []


async def test_a_file_openai_does_not_read_gets_its_400(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    sheet = FilePart(media_type="application/vnd.ms-excel", data=b"\xd0\xcf\x11\xe0", name="sheet.xls")

    with pytest.raises(ModelError) as caught:
        await openai_model.request(ModelRequest(messages=[Message("user", [sheet])]))

    assert caught.value.status_code == 400
    assert "only PDF files are supported" in str(caught.value)
    assert len(openai_server.requests) == 1


async def test_a_stored_part_not_loaded_is_refused_naming_its_blob(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    stored = ImagePart(media_type="image/png", blob="f" * 64)
    result = ToolResultPart(call_id="call_1", name="screenshot", content="taken", attachments=(stored,))
    history = [Message.user("Look."), calls("call_1"), Message("tool", [result])]

    with pytest.raises(ModelError, match=r"stored blob ffffffffffff holds no bytes.*SessionStore.load_blobs"):
        await openai_model.request(ModelRequest(messages=history, tools=[SCREENSHOT]))

    assert openai_server.requests == []
