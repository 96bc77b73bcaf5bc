"""The two wire adapters run the public model contract (`hookline.testing.model_contract`).

Each gives the media cases its wire shapes (`wire_text_message`, `wire_media`,
`wire_attachments_of`, `wire_user_message`). What only one provider's wire format shows (the bodies sent, its
error types and stop reasons) is tested in test_openai.py, test_anthropic.py and the
test_*_media.py files.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hookline.messages import FilePart, ImagePart
from hookline.models import Model
from hookline.models.anthropic import AnthropicModel
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeAnthropicServer, FakeOpenAIServer, ScriptedServer
from hookline.testing.model_contract import ModelContract
from hookline.types import JSONObject


def data_url(part: ImagePart | FilePart) -> str:
    return f"data:{part.media_type};base64,{part.base64()}"


class TestOpenAIModel(ModelContract):
    wrong_shapes = (
        'data: {"id": "x", "object": "chat.completion.chunk", "choices": "not a list"}',
        'data: {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": 7}]}',
        "data: 42",
    )

    def create_server(self) -> ScriptedServer:
        return FakeOpenAIServer()

    def create_model(self, base_url: str, retry: RetryPolicy) -> Model:
        return OpenAIModel("gpt-4o-mini", base_url=base_url, api_key="test-key", retry=retry)

    def wire_text_message(self, text: str) -> JSONObject:
        return {"role": "user", "content": text}

    def wire_media(self, part: ImagePart | FilePart) -> JSONObject:
        if isinstance(part, ImagePart):
            return {"type": "image_url", "image_url": {"url": part.url or data_url(part)}}
        return {"type": "file", "file": {"filename": part.name, "file_data": data_url(part)}}

    def wire_attachments_of(self, body: JSONObject, call_id: str) -> Any:
        # Tool messages carry text only: the attachments come in the user message after them.
        messages = body["messages"]
        answered = max(i for i, message in enumerate(messages) if message.get("tool_call_id") == call_id)
        return messages[answered + 1]

    def wire_user_message(self, content: Sequence[str | ImagePart | FilePart]) -> JSONObject:
        return {"role": "user", "content": [
            {"type": "text", "text": block} if isinstance(block, str) else self.wire_media(block) for block in content]}


class TestAnthropicModel(ModelContract):
    wrong_shapes = (
        'event: content_block_delta\ndata: {"type": "content_block_delta"}',
        'event: message_start\ndata: {"type": "message_start", "message": 3}',
        'event: message_delta\ndata: {"type": "message_delta", "delta": null}',
    )

    def create_server(self) -> ScriptedServer:
        return FakeAnthropicServer()

    def create_model(self, base_url: str, retry: RetryPolicy) -> Model:
        return AnthropicModel("claude-haiku-4-5", base_url=base_url, api_key="test-key", retry=retry)

    def wire_text_message(self, text: str) -> JSONObject:
        return {"role": "user", "content": [{"type": "text", "text": text}]}

    def wire_media(self, part: ImagePart | FilePart) -> JSONObject:
        if part.url is not None:
            return {"type": "image", "source": {"type": "url", "url": part.url}}
        source = {"type": "base64", "media_type": part.media_type, "data": part.base64()}
        if isinstance(part, ImagePart):
            return {"type": "image", "source": source}
        return {"type": "document", "source": source, "title": part.name}

    def wire_attachments_of(self, body: JSONObject, call_id: str) -> Any:
        # Inside the tool_result block, after its text.
        turns = body["messages"]
        return next(block for turn in turns for block in turn["content"]
                    if block.get("type") == "tool_result" and block["tool_use_id"] == call_id)["content"]

    def wire_user_message(self, content: Sequence[str | ImagePart | FilePart]) -> JSONObject:
        return {"role": "user", "content": [
            {"type": "text", "text": block} if isinstance(block, str) else self.wire_media(block) for block in content]}


NO_RETRIES = '''
from hookline.models.openai import OpenAIModel
from hookline.retry import RetryPolicy
from hookline.testing import FakeOpenAIServer
from hookline.testing.model_contract import ModelContract


class TestForgetsItsPolicy(ModelContract):
    def create_server(self):
        return FakeOpenAIServer()

    def create_model(self, base_url, retry):
        return OpenAIModel("gpt-4o-mini", base_url=base_url, api_key="k", retry=RetryPolicy(max_attempts=1))
'''


def test_the_contract_fails_an_adapter_that_breaks_it(tmp_path: Path) -> None:
    module = tmp_path / "test_no_retries.py"
    module.write_text(NO_RETRIES, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module), "-k", "rate_limit or usage"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED test_no_retries.py::TestForgetsItsPolicy::test_rate_limit_waits_for_retry_after" in done.stdout
    assert "1 failed, 1 passed" in done.stdout
