"""The images and files of a call the user made reach the model, right after the sentence telling it.

A user may record a tool call they made themselves, with its result, in a user message.
Every adapter tells such a pair as one sentence ("The user called X(...); result: ...");
the result's attachments follow that sentence as media of the same user message, in
each provider's wire format (the local model, which reads text only, gets placeholders),
and a later run on a stored session sends them again, their bytes loaded from the store.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline import Agent
from hookline.messages import FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import ModelRequest
from hookline.models._render import content_blocks, text_blocks
from hookline.models.anthropic import AnthropicModel
from hookline.models.local import render_chat
from hookline.models.openai import OpenAIModel
from hookline.models.openai_responses import OpenAIResponsesModel
from hookline.retry import RetryPolicy
from hookline.sessions import SQLiteSessionStore
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer
from hookline.testing._model_media_cases import PDF, PNG
from support.run_paths import PATHS, run_by

pytestmark = pytest.mark.anyio

IMAGE = ImagePart(media_type="image/png", data=PNG)
REPORT = FilePart(media_type="application/pdf", data=PDF, name="page.pdf")
PNG_URL = f"data:image/png;base64,{IMAGE.base64()}"
PDF_URL = f"data:application/pdf;base64,{REPORT.base64()}"
CALL = ToolCallPart(id="user_1", name="screenshot", arguments={"region": "top"})
SAID = 'The user called screenshot({"region": "top"}); result: Two pages.'


def told(*attachments: ImagePart | FilePart) -> Message:
    """A user message recording the user's own screenshot call, its result carrying `attachments`."""
    result = ToolResultPart(call_id=CALL.id, name="screenshot", content="Two pages.", attachments=attachments)
    return Message("user", [TextPart(text="I took a screenshot."), CALL, result, TextPart(text="What is on it?")])


def request() -> ModelRequest:
    return ModelRequest(messages=[Message.system("Be terse."), told(IMAGE, REPORT)])


async def test_chat_completions_sends_them_as_content_parts_after_the_sentence(
    openai_server: FakeOpenAIServer, openai_model: OpenAIModel
) -> None:
    openai_server.enqueue_text("A dot.")

    await openai_model.request(request())

    assert openai_server.requests[0]["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": [
            {"type": "text", "text": "I took a screenshot."},
            {"type": "text", "text": SAID},
            {"type": "image_url", "image_url": {"url": PNG_URL}},
            {"type": "file", "file": {"filename": "page.pdf", "file_data": PDF_URL}},
            {"type": "text", "text": "What is on it?"},
        ]},
    ]


async def test_responses_sends_them_as_input_parts_after_the_sentence(
    openai_server: FakeOpenAIServer, fast_retry: RetryPolicy
) -> None:
    openai_server.enqueue_text("A dot.")

    async with OpenAIResponsesModel("gpt-5-mini", openai_server.base_url, "test-key", retry=fast_retry) as model:
        await model.request(request())

    body = openai_server.requests[0]
    assert body["instructions"] == "Be terse."
    assert body["input"] == [{"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "I took a screenshot."},
        {"type": "input_text", "text": SAID},
        {"type": "input_image", "image_url": PNG_URL, "detail": "auto"},
        {"type": "input_file", "filename": "page.pdf", "file_data": PDF_URL},
        {"type": "input_text", "text": "What is on it?"},
    ]}]


async def test_anthropic_sends_them_as_image_and_document_blocks_after_the_sentence(
    anthropic_server: FakeAnthropicServer, anthropic_model: AnthropicModel
) -> None:
    anthropic_server.enqueue_text("A dot.")

    await anthropic_model.request(request())

    body = anthropic_server.requests[0]
    assert body["system"] == "Be terse."
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "I took a screenshot."},
        {"type": "text", "text": SAID},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": IMAGE.base64()}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": REPORT.base64()},
         "title": "page.pdf"},
        {"type": "text", "text": "What is on it?"},
    ]}]


def test_the_local_model_gets_their_placeholders_after_the_sentence() -> None:
    [system, user] = render_chat(request().messages, [])

    assert system == {"role": "system", "content": "Be terse."}
    assert user["content"] == "\n\n".join([
        "I took a screenshot.", SAID, "[image image/png, 70 bytes: this model cannot see images]",
        '[file "page.pdf" application/pdf, 77 bytes: this model cannot read files]', "What is on it?"])


def test_a_result_whose_call_is_missing_keeps_its_attachments_too() -> None:
    orphan = ToolResultPart(call_id="gone", name="screenshot", content="done", attachments=(IMAGE,))

    assert content_blocks([orphan]) == ["A call to screenshot (id gone) returned: done", IMAGE]
    assert text_blocks([orphan], lambda part: "<image>") == ["A call to screenshot (id gone) returned: done", "<image>"]


def test_a_result_without_attachments_is_the_sentence_alone() -> None:
    result = ToolResultPart(call_id=CALL.id, name="screenshot", content="Two pages.")

    assert content_blocks([CALL, result]) == [SAID]


@pytest.mark.parametrize("path", PATHS)
async def test_a_later_run_on_a_stored_session_sends_the_image_again(
    path: str, tmp_path: Path, openai_server: FakeOpenAIServer, fast_retry: RetryPolicy
) -> None:
    sent = {"role": "user", "content": [
        {"type": "text", "text": "I took a screenshot."},
        {"type": "text", "text": SAID},
        {"type": "image_url", "image_url": {"url": PNG_URL}},
        {"type": "text", "text": "What is on it?"},
    ]}
    openai_server.enqueue_text("A dot.")
    openai_server.enqueue_text("Still a dot.")

    async with OpenAIModel("gpt-4o-mini", base_url=openai_server.base_url, api_key="k", retry=fast_retry) as model:
        first = SQLiteSessionStore(tmp_path / "s.db")
        await Agent(model=model, session_store=first).prompt(told(IMAGE)).session("s")
        logged = "".join(event.model_dump_json() for event in await first.events("s"))
        await first.aclose()
        assert IMAGE.base64() not in logged, "the log names the image by its digest; the store keeps the bytes"

        store = SQLiteSessionStore(tmp_path / "s.db")  # a fresh store: the bytes come from the file
        later = Agent(model=model, session_store=store).prompt("And now?").session("s")
        result, _ = await run_by(path, later)
        await store.aclose()

    assert result.output == "Still a dot."
    assert openai_server.requests[0]["messages"] == [sent]
    assert openai_server.requests[1]["messages"] == [
        sent, {"role": "assistant", "content": "A dot."}, {"role": "user", "content": "And now?"}]
