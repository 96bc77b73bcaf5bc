"""Webhooks: a run's outcome POSTed to the URL its request named, signed, retried, each attempt on record.

The signature follows Standard Webhooks (standardwebhooks.com), so its libraries verify it:

- `webhook-id`: the run's id, the same on every attempt (a receiver drops repeats by it);
- `webhook-timestamp`: the attempt's time, in Unix seconds (a receiver refuses old ones);
- `webhook-signature`: `v1,` then the base64 HMAC-SHA256 of `"{id}.{timestamp}.{body}"`
  keyed with the server's secret (a `whsec_...` secret is base64, as Standard Webhooks
  writes them; any other is used as its UTF-8 bytes).

An attempt answered 2xx delivers it. A connection failure, a timeout, 408, 425, 429 or a
5xx is tried again after each of `Webhooks.retry_delays`; any other answer (a redirect is
not followed) ends the delivery. Each attempt is a marker in the run's session log
(`metadata["webhook"]`: attempt, status or error, whether delivered), so the inspector
shows what was sent and when.

A URL whose host is, or resolves to, an address that is not global (loopback, private,
link-local, shared or reserved ranges) is refused unless `Webhooks.allow_private`: a
client must not make the server call into its own network. The server connects to the
address it checked, not to a second lookup's answer (the host name still goes in `Host`
and in TLS), so a name that changes its answer in between cannot redirect it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import ipaddress
import logging
import socket
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from hookline._redact import redact
from hookline.errors import ConfigError
from hookline.events import Event
from hookline.server.run_schemas import WebhookOutcome

__all__ = ["WEBHOOK_SECRET_ENV", "Webhooks", "WebhookSender", "check_webhook_url", "sign"]

logger = logging.getLogger("hookline.server")

WEBHOOK_SECRET_ENV = "HOOKLINE_WEBHOOK_SECRET"
"""The environment variable `hookline serve` (and `create_app` when given no `Webhooks`) reads the secret from."""

_RETRIED = {408, 425, 429}
_ANSWER_LIMIT = 200  # characters of an error kept in the log


@dataclass(frozen=True)
class Webhooks:
    """How the server calls runs' webhooks (`create_app(webhooks=...)`).

    Args:
        secret: The key of the signatures; None: runs asking for a webhook answer 400.
        allow_private: Call URLs whose host is not a global address (loopback, private ranges).
        retry_delays: Seconds to wait before each attempt after the first.
        timeout: Seconds an attempt may take.

    """

    secret: str | None = None
    allow_private: bool = False
    retry_delays: tuple[float, ...] = (1.0, 5.0, 30.0, 120.0)
    timeout: float = 10.0


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` of `body`: `v1,` and the base64 HMAC-SHA256 of `"{id}.{timestamp}.{body}"`."""
    key = base64.b64decode(secret.removeprefix("whsec_")) if secret.startswith("whsec_") else secret.encode()
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def check_webhook_url(url: str, settings: Webhooks) -> None:
    """Refuse, before a run starts, a webhook the server will not call.

    Raises:
        ConfigError: The server has no secret, or the URL names a non-global address literally.

    """
    if settings.secret is None:
        raise ConfigError(f"this server signs no webhooks: start it with {WEBHOOK_SECRET_ENV} set "
                          "(create_app(webhooks=Webhooks(secret=...)))")
    host = urlsplit(url).hostname or ""
    literal = _literal_address(host)
    if not settings.allow_private and (host == "localhost" or (literal is not None and not _global(literal))):
        raise ConfigError(f"the webhook's host {host!r} is not a public address; the server calls public ones only")


class _Refused(Exception):
    """The URL's host resolves to an address the server does not call."""


class WebhookSender:
    """Delivers webhooks in tasks of their own; `aclose` waits for them up to a deadline.

    Args:
        settings: The secret, the retry delays, the timeout, private addresses.
        record: Appends one attempt's marker to a session's log: `record(session_id, event)`.

    """

    def __init__(self, settings: Webhooks, record: Callable[[str, Event], Awaitable[Any]]) -> None:
        self.settings = settings
        self._record = record
        self._tasks: set[asyncio.Task[None]] = set()
        self._client: httpx.AsyncClient | None = None
        self.results: Counter[str] = Counter()
        """Attempts so far by result: `delivered`, `failed`, `refused`."""

    def send(self, url: str, session_id: str, run_id: str, body: bytes, outcome: WebhookOutcome) -> None:
        """Deliver `body` to `url` in the background, keeping `outcome` up to date."""
        task = asyncio.create_task(self._deliver(url, session_id, run_id, body, outcome), name=f"webhook-{run_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self, grace: float) -> None:
        """Let deliveries in flight end for up to `grace` s, cancel the rest (their retries are lost), close."""
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=grace)
        if self._client is not None:
            await self._client.aclose()

    async def _deliver(self, url: str, session_id: str, run_id: str, body: bytes, outcome: WebhookOutcome) -> None:
        delays = (0.0, *self.settings.retry_delays)
        for attempt, delay in enumerate(delays, 1):
            await asyncio.sleep(delay)
            retry = await self._attempt(url, run_id, body, outcome)
            outcome.attempts = attempt
            await self._note(session_id, run_id, url, outcome)
            if outcome.delivered or not retry:
                return

    async def _attempt(self, url: str, run_id: str, body: bytes, outcome: WebhookOutcome) -> bool:
        """One attempt; whether another may follow."""
        outcome.last_status, outcome.last_error = None, None
        try:
            status = await self._post(url, run_id, body)
        except _Refused as exc:
            outcome.last_error = str(exc)
            self.results["refused"] += 1
            return False
        except (httpx.HTTPError, OSError) as exc:
            outcome.last_error = redact(f"{type(exc).__name__}: {exc}")[:_ANSWER_LIMIT]
            self.results["failed"] += 1
            return True
        outcome.last_status, outcome.delivered = status, 200 <= status < 300
        self.results["delivered" if outcome.delivered else "failed"] += 1
        return status in _RETRIED or status >= 500

    async def _post(self, url: str, run_id: str, body: bytes) -> int:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
        address = await self._address(host, port)
        shown = f"[{address}]" if ":" in address else address
        target = urlunsplit(parts._replace(netloc=f"{shown}:{port}"))
        timestamp = int(time.time())
        assert self.settings.secret is not None  # checked when the run was accepted
        headers = {
            "content-type": "application/json", "user-agent": "hookline-webhooks",
            "host": parts.netloc.rsplit("@", 1)[-1], "webhook-id": run_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(self.settings.secret, run_id, timestamp, body),
        }
        extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
        client = self._client or self._new_client()
        answer = await client.post(target, content=body, headers=headers, extensions=extensions)
        return answer.status_code

    def _new_client(self) -> httpx.AsyncClient:
        self._client = httpx.AsyncClient(timeout=self.settings.timeout, follow_redirects=False, trust_env=False)
        return self._client

    async def _address(self, host: str, port: int) -> str:
        """The address to connect to: the host's first, once every one it resolves to is allowed."""
        literal = _literal_address(host)
        if literal is not None:
            found = [literal]
        else:
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
            found = [ipaddress.ip_address(info[4][0]) for info in infos]
        if not self.settings.allow_private:
            for address in found:
                if not _global(address):
                    raise _Refused(f"refused: {host} resolves to {address}, not a public address")
        return str(found[0])

    async def _note(self, session_id: str, run_id: str, url: str, outcome: WebhookOutcome) -> None:
        parts = urlsplit(url)
        note = {"run_id": run_id, "url": f"{parts.scheme}://{parts.netloc}{parts.path}", **outcome.model_dump()}
        try:
            await self._record(session_id, Event.marker("webhook", webhook=note))
        except Exception as exc:  # the session may be gone; the delivery goes on
            logger.warning("could not record webhook attempt %d of run %s: %s", outcome.attempts, run_id, exc)


def _literal_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _global(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_global) and not address.is_multicast
