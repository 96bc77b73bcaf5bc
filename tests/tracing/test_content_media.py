"""Images and files in recorded content: media type, size and URL, never the bytes."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider

from hookline import Agent
from hookline.messages import FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart
from hookline.models import ModelRequest
from hookline.testing._model_media_cases import PDF, PNG
from hookline.tracing import instrument
from hookline.tracing._content import request_content

from .scripts import answer, script
from .spans import Spans

IMAGE = ImagePart(media_type="image/png", data=PNG)
PNG_BLOB = {"type": "blob", "modality": "image", "mime_type": "image/png", "size": len(PNG)}


def test_media_parts_are_blobs_and_uris_without_their_bytes() -> None:
    stored = FilePart(media_type="application/pdf", blob="e" * 64, name="old.pdf")
    question = Message("user", [TextPart(text="Compare."), IMAGE, ImagePart(url="https://example.com/cat.jpg"),
                                FilePart(media_type="application/pdf", data=PDF, name="report.pdf"), stored])
    result = ToolResultPart(call_id="c1", name="screenshot", content="taken", attachments=(IMAGE,))
    history = [question, Message("assistant", [ToolCallPart(id="c1", name="screenshot")]), Message("tool", [result])]

    recorded = request_content(ModelRequest(messages=history))["gen_ai.input.messages"]

    messages = json.loads(recorded)
    assert messages[0]["parts"][1:] == [
        PNG_BLOB,
        {"type": "uri", "modality": "image", "mime_type": None, "uri": "https://example.com/cat.jpg"},
        {"type": "blob", "modality": "document", "mime_type": "application/pdf", "name": "report.pdf",
         "size": len(PDF)},
        {"type": "blob", "modality": "document", "mime_type": "application/pdf", "name": "old.pdf",
         "sha256": "e" * 64},
    ]
    assert messages[2]["parts"] == [
        {"type": "tool_call_response", "id": "c1", "response": "taken", "attachments": [PNG_BLOB]}]
    assert IMAGE.base64() not in recorded


@pytest.mark.anyio
async def test_a_run_on_an_image_records_it_without_its_bytes(provider: TracerProvider, spans: Spans) -> None:
    agent = Agent(name="looker", model=script(answer("A dot.")))

    with instrument(provider, include_content=True):
        await agent.prompt(["What is this?", IMAGE])

    run = spans.one("invoke_agent looker").attributes or {}
    assert json.loads(str(run["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": "What is this?"}, PNG_BLOB]}]
    assert IMAGE.base64() not in json.dumps(dict(run))
