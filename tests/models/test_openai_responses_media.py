"""Images and files on the Responses API's wire (`OpenAIResponsesModel`), exactly as sent to the fake.

A user message with media becomes `input_text` / `input_image` / `input_file` parts; a
tool result's attachments go in its `function_call_output.output`, which the API takes as
a list of the same parts; a text-only message keeps its plain string content.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hookline.errors import ModelError
from hookline.messages import FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import ModelRequest, ToolSpec
from hookline.models.openai_responses import OpenAIResponsesModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeOpenAIServer
from hookline.testing._model_media_cases import PDF, PNG

pytestmark = pytest.mark.anyio

IMAGE = ImagePart(media_type="image/png", data=PNG)
PNG_URL = f"data:image/png;base64,{IMAGE.base64()}"
PDF_URL = "data:application/pdf;base64," + FilePart(media_type="application/pdf", data=PDF).base64()
SCREENSHOT = ToolSpec(name="screenshot", description="Take a screenshot.", parameters={"type": "object"})


@pytest.fixture
async def model(openai_server: FakeOpenAIServer, fast_retry: RetryPolicy) -> AsyncIterator[OpenAIResponsesModel]:
    model = OpenAIResponsesModel("gpt-5-mini", openai_server.base_url, "test-key", retry=fast_retry)
    async with model:
        yield model


async def test_a_prompt_with_media_is_a_list_of_input_parts(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    parts = [TextPart(text="Compare these."), IMAGE, ImagePart(url="https://example.com/cat.jpg"),
             FilePart(media_type="application/pdf", data=PDF, name="report.pdf"),
             FilePart(url="https://example.com/letter.pdf"),
             FilePart(media_type="text/plain", data=b"buy milk")]
    openai_server.enqueue_text("They differ.")

    await model.request(ModelRequest(messages=[Message.system("Be terse."), Message("user", parts)]))

    body = openai_server.requests[0]
    assert body["instructions"] == "Be terse."
    assert body["input"] == [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "Compare these."},
        {"type": "input_image", "image_url": PNG_URL, "detail": "auto"},
        {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "auto"},
        {"type": "input_file", "filename": "report.pdf", "file_data": PDF_URL},
        {"type": "input_file", "file_url": "https://example.com/letter.pdf"},
        {"type": "input_file", "filename": "file.txt", "file_data": "data:text/plain;base64,YnV5IG1pbGs="},
    ]}]


async def test_attachments_go_in_the_function_call_output(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    pdf = FilePart(media_type="application/pdf", data=PDF, name="page.pdf")
    history = [
        Message.user("Take two screenshots."),
        Message("assistant", [ToolCallPart(id=call_id, name="screenshot") for call_id in ("call_1", "call_2")]),
        Message("tool", [ToolResultPart(call_id="call_1", name="screenshot", content="first", attachments=(IMAGE,))]),
        Message("tool", [ToolResultPart(call_id="call_2", name="screenshot", content="", attachments=(pdf,))]),
        Message("tool", [ToolResultPart(call_id="call_3", name="screenshot", content="no screen", is_error=True)]),
        Message.user("Which is brighter?"),
    ]
    openai_server.enqueue_text("The first.")

    await model.request(ModelRequest(messages=history, tools=[SCREENSHOT]))

    assert openai_server.requests[0]["input"][3:] == [
        {"type": "function_call_output", "call_id": "call_1", "output": [
            {"type": "input_text", "text": "first"},
            {"type": "input_image", "image_url": PNG_URL, "detail": "auto"},
        ]},
        {"type": "function_call_output", "call_id": "call_2", "output": [
            {"type": "input_file", "filename": "page.pdf", "file_data": PDF_URL},
        ]},
        {"type": "function_call_output", "call_id": "call_3", "output": "Error: no screen"},
        {"type": "message", "role": "user", "content": "Which is brighter?"},
    ]


async def test_a_stored_part_not_loaded_is_refused_before_the_call(
    openai_server: FakeOpenAIServer, model: OpenAIResponsesModel
) -> None:
    stored = FilePart(media_type="application/pdf", blob="0" * 64, name="report.pdf")

    with pytest.raises(ModelError) as caught:
        await model.request(ModelRequest(messages=[Message("user", [TextPart(text="Sum up."), stored])]))

    assert caught.value.status_code == 400
    assert 'file "report.pdf" application/pdf, stored blob 000000000000 holds no bytes' in str(caught.value)
    assert openai_server.requests == []
