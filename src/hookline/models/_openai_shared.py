"""What both OpenAI adapters share: their construction, the SDK client, its error table, keys and JSON-schema rules.

`OpenAIModel` (Chat Completions) and `OpenAIResponsesModel` (the Responses API) reach the
same servers through the same SDK: both are an `OpenAISDKModel` (built, keyed and closed
the same way), convert errors the same way, and send error results and schemas in the same
form.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from typing import Any, cast

import httpx
import httpx2

from hookline.errors import ConfigError, ModelError
from hookline.messages import ToolResultPart
from hookline.models._clients import LoopClients
from hookline.models._errors import (
    ErrorTable,
    api_error,
    connection_error,
    garbled_error,
    malformed_error,
    missing_sdk,
    status_error,
    timeout_error,
)
from hookline.models.base import Model
from hookline.retry import RetryPolicy
from hookline.types import JSONObject

try:
    import openai
except ImportError as exc:  # a dependency of hookline, so only a broken install lacks it
    raise missing_sdk("OpenAIModel", "pip install openai", exc) from exc

__all__ = [
    "ERRORS",
    "NO_KEY",
    "OPENAI_BASE_URL",
    "OpenAISDKModel",
    "find_api_key",
    "clients",
    "is_openai",
    "result_content",
    "schema_name",
    "strict_ok",
]

OPENAI_BASE_URL = "https://api.openai.com/v1"
"""OpenAI's own API."""

NO_KEY = "not-needed"
"""The key sent to local servers, which ignore it (the SDK insists on one)."""


def is_openai(base_url: str | None) -> bool:
    """Whether a model with this `base_url` (None: `OPENAI_BASE_URL`, else OpenAI's) talks to OpenAI's own API."""
    url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
    return url.startswith(OPENAI_BASE_URL)


def find_api_key(key: str | None, base_url: str | None, adapter: str) -> str:
    """The key to send: `key`, else `OPENAI_API_KEY`, else none for a server other than OpenAI's.

    Raises:
        ConfigError: OpenAI's own API and no key anywhere.
    """
    key = key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url and not base_url.startswith(OPENAI_BASE_URL):
        return NO_KEY
    raise ConfigError(f"{adapter} needs an API key: pass api_key=... or set OPENAI_API_KEY")


def clients(
    key: str, base_url: str | None, timeout: float | None, http_client: httpx2.AsyncClient | httpx.AsyncClient | None
) -> LoopClients[openai.AsyncOpenAI]:
    """An SDK client per event loop; retries are hookline's (`max_retries=0`)."""
    return LoopClients(
        lambda: openai.AsyncOpenAI(
            api_key=key, base_url=base_url, max_retries=0, timeout=timeout, http_client=cast(Any, http_client)
        ),
        close_client=http_client is None,
    )


class OpenAISDKModel(Model):
    """A model reached through the `openai` SDK: its name, provider, settings, retry policy and clients.

    The arguments are those of `OpenAIModel` and `OpenAIResponsesModel`, which document them.

    Raises:
        ConfigError: No API key was given or found for OpenAI's own API.

    """

    def __init__(
        self,
        name: str,
        base_url: str | None,
        api_key: str | None,
        settings: JSONObject | None,
        *,
        retry: RetryPolicy | None,
        http_client: httpx2.AsyncClient | httpx.AsyncClient | None,
        timeout: float | None,
        provider: str,
    ) -> None:
        self.name = name
        self.provider = provider
        self.settings: JSONObject = dict(settings or {})
        self.retry = retry or RetryPolicy()
        if timeout is not None:
            self.retry = replace(self.retry, timeout=timeout)
        key = find_api_key(api_key, base_url or os.environ.get("OPENAI_BASE_URL"), type(self).__name__)
        self._clients = clients(key, base_url, self.retry.timeout, http_client)
        self.base_url = str(self._clients.client.base_url)

    async def aclose(self) -> None:
        """Close the SDK client's connections (an `http_client` you passed stays open)."""
        await self._clients.aclose()


def result_content(result: ToolResultPart) -> str:
    """A tool result's content as sent: OpenAI's APIs have no error flag on results, so the content says it."""
    if result.is_error and not result.content.lower().startswith("error"):
        return f"Error: {result.content}"
    return result.content


def schema_name(schema: JSONObject) -> str:
    """The name an output schema is sent under: its title, in the characters OpenAI allows."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", str(schema.get("title") or "output"))[:64]


def strict_ok(node: object) -> bool:
    """Whether OpenAI's strict mode takes this schema: closed objects whose properties are all required."""
    if isinstance(node, list):
        return all(strict_ok(item) for item in node)
    if not isinstance(node, dict):
        return True
    children = list(node.values())
    if node.get("type") == "object" or "properties" in node:
        properties = node.get("properties") or {}
        if node.get("additionalProperties") is not False or set(node.get("required") or []) != set(properties):
            return False
        children = [value for key, value in node.items() if key != "properties"] + list(properties.values())
    return all(strict_ok(child) for child in children)


def _status_error(exc: openai.APIStatusError, provider: str) -> ModelError:
    body = exc.body  # the SDK keeps the `error` object of OpenAI's error body
    detail = body.get("message") if isinstance(body, dict) else body
    return status_error(exc.status_code, str(detail or exc.message), provider, body, exc.response.headers)


ERRORS: ErrorTable = (
    (openai.RateLimitError, _status_error),  # retry_after from its headers
    (openai.APIStatusError, _status_error),
    (openai.APITimeoutError, timeout_error),
    (openai.APIConnectionError, connection_error),
    (openai.APIResponseValidationError, malformed_error),
    (json.JSONDecodeError, garbled_error),
    (httpx2.TimeoutException, timeout_error),
    (httpx2.TransportError, connection_error),
    (openai.APIError, api_error),
)
"""The SDK's errors, most specific first, and the `ModelError`s they become."""
