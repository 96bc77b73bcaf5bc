"""OAuth for remote MCP servers: `MCPToolset.http(url, auth=OAuth(...))`.

```python
async def authorize(url: str) -> str:
    webbrowser.open(url)            # the user signs in and consents
    return await wait_for_redirect()  # the URL the browser was sent back to: ...?code=...&state=...

login = OAuth(authorize, tokens=FileTokens("~/.hookline/mcp-tokens/alice.json"))
search = MCPToolset.http("https://mcp.example.com/mcp", auth=login)
```

The flow is the `mcp` SDK's (`OAuthClientProvider`): on a 401 it discovers the server's
authorization server, registers hookline as a client (or uses the pre-registered
`client_id`, or a client ID metadata document URL), runs the authorization-code flow with
PKCE, and sends the token on every request. An expired token is refreshed with its refresh
token; a 403 asking for more scope (`insufficient_scope`) starts a new authorization for the
wider scope. `OAuth` holds what hookline adds: how the user is sent to the authorization
page (`authorize`), and where the tokens are kept (`tokens`).

Tokens belong to one user. A toolset holds one connection, so it acts for one user: serve
several users with one toolset each, each with its own `FileTokens` file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl, ValidationError

from hookline.errors import ConfigError, HooklineError

__all__ = ["FileTokens", "MemoryTokens", "NotAuthorized", "OAuth"]

Authorize = Callable[[str], Awaitable[str]]
"""Sends the user to an authorization URL; returns the URL the authorization server redirected back to."""

ClientAuthMethod = Literal["none", "client_secret_basic", "client_secret_post"]
_CLIENT_AUTH_METHODS = get_args(ClientAuthMethod)


class NotAuthorized(HooklineError):
    """The authorization did not give a code: the user declined, or the authorization server refused."""


class MemoryTokens:
    """Tokens and the client registration kept in memory: they last as long as the process (the default)."""

    def __init__(self) -> None:
        self._tokens: OAuthToken | None = None
        self._client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        """The tokens last stored, if any."""
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Keep `tokens` (the SDK calls this after an authorization or a refresh)."""
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The client registration last stored, if any."""
        return self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Keep the client registration (the SDK calls this after registering)."""
        self._client = client_info


class FileTokens:
    """Tokens and the client registration kept in one JSON file, readable by its owner only (mode 0600).

    Give each user a file of their own: `FileTokens(f"~/.config/myapp/mcp-tokens/{user}.json")`.
    A missing file means no tokens yet; its directory is made when the tokens are first written.

    Args:
        path: The file (`~` is expanded).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise ConfigError(f"FileTokens needs a file path, e.g. FileTokens('~/.hookline/tokens.json'), not {path!r}")
        self.path = Path(os.fspath(path)).expanduser()

    def __repr__(self) -> str:
        return f"FileTokens({str(self.path)!r})"

    async def get_tokens(self) -> OAuthToken | None:
        """The tokens in the file, if any."""
        saved = self._read().get("tokens")
        return OAuthToken.model_validate(saved) if saved else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Write `tokens` to the file, keeping the client registration."""
        self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The client registration in the file, if any."""
        saved = self._read().get("client")
        return OAuthClientInformationFull.model_validate(saved) if saved else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Write the client registration to the file, keeping the tokens."""
        self._write("client", client_info.model_dump(mode="json", exclude_none=True))

    def _read(self) -> dict[str, Any]:
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            # The message names the file, never its content (it holds tokens).
            raise ConfigError(f"cannot read the OAuth tokens in {self.path} ({type(exc).__name__}); "
                              "delete the file to authorize again") from None
        return saved if isinstance(saved, dict) else {}

    def _write(self, key: str, value: dict[str, Any]) -> None:
        saved = {**self._read(), key: value}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole to a private temporary file, then renamed: a reader never sees half a file.
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(saved, file)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


@dataclass(frozen=True, repr=False)
class OAuth:
    """How `MCPToolset.http(url, auth=...)` gets a token from the server's authorization server.

    Args:
        authorize: `async (authorization_url) -> redirect_url`: sends the user to the
            authorization page (opens a browser, prints the link) and returns the URL the
            authorization server then redirected to (on `redirect_uri`, with `code` and
            `state`). A redirect with `error=access_denied` (the user declined) fails the
            connection with `NotAuthorized` in its message.
        redirect_uri: Where the authorization server sends the user back to; registered with it.
        scope: The scopes to ask for (space-separated); None: those the server asks for or lists.
        client_name: The name the client registers under (the user sees it on the consent page).
        client_id: A client registered beforehand with the authorization server; None: register
            one (dynamic client registration), or use `client_metadata_url` where supported.
        client_secret: The secret of `client_id`, if it has one.
        client_auth: How the token request carries `client_secret`: `"client_secret_basic"`
            (the default with a secret), `"client_secret_post"`, or `"none"` (without one).
        client_metadata_url: An https URL of a client ID metadata document, used as the
            client ID by authorization servers that support them (no registration then).
        tokens: Where tokens and the client registration are kept: `MemoryTokens()` (the
            default) or `FileTokens(path)`, or any object with the `mcp` SDK's `TokenStorage` methods.
    """

    authorize: Authorize
    redirect_uri: str = "http://127.0.0.1:33418/callback"
    scope: str | None = None
    client_name: str = "hookline"
    client_id: str | None = None
    client_secret: str | None = None
    client_auth: ClientAuthMethod | None = None
    client_metadata_url: str | None = None
    tokens: TokenStorage = field(default_factory=MemoryTokens)

    def __post_init__(self) -> None:
        if not callable(self.authorize):
            raise ConfigError("OAuth(authorize=...) must be an async function taking the authorization URL and "
                              f"returning the URL the user was redirected to, not {type(self.authorize).__name__}")
        if not isinstance(self.redirect_uri, str) or not self.redirect_uri.startswith(("http://", "https://")):
            raise ConfigError(f"redirect_uri must be an http:// or https:// URL, not {self.redirect_uri!r}")
        if self.client_auth is not None and self.client_auth not in _CLIENT_AUTH_METHODS:
            raise ConfigError(f"client_auth must be one of {', '.join(_CLIENT_AUTH_METHODS)}, not {self.client_auth!r}")
        if self.client_secret is not None and self.client_id is None:
            raise ConfigError("client_secret is given without client_id: give both for a pre-registered client")
        if self.client_auth in ("client_secret_basic", "client_secret_post") and not self.client_secret:
            raise ConfigError(f"client_auth={self.client_auth!r} needs client_secret=...")
        if self.client_metadata_url is not None and not _is_document_url(self.client_metadata_url):
            raise ConfigError("client_metadata_url must be an https:// URL with a path (the client ID metadata "
                              f"document), not {self.client_metadata_url!r}")
        if not all(callable(getattr(self.tokens, name, None)) for name in _STORAGE_METHODS):
            raise ConfigError("tokens must be MemoryTokens(), FileTokens(path), or an object with the methods "
                              f"{', '.join(_STORAGE_METHODS)}, not {type(self.tokens).__name__}")

    def __repr__(self) -> str:
        return f"OAuth(redirect_uri={self.redirect_uri!r}, client_id={self.client_id!r}, tokens={self.tokens!r})"

    def provider(self, server_url: str) -> OAuthClientProvider:
        """The SDK's `httpx2.Auth` that runs this flow for the server at `server_url`."""
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(self.redirect_uri)], scope=self.scope, client_name=self.client_name,
            token_endpoint_auth_method=self._client_auth(),
        )
        pending = _Redirect(self.authorize)
        return OAuthClientProvider(server_url, metadata, self._storage(), redirect_handler=pending.send,
                                   callback_handler=pending.result, client_metadata_url=self.client_metadata_url)

    def _client_auth(self) -> ClientAuthMethod:
        return self.client_auth or ("client_secret_basic" if self.client_secret else "none")

    def _storage(self) -> TokenStorage:
        if self.client_id is None:
            return self.tokens
        client = OAuthClientInformationFull(
            client_id=self.client_id, client_secret=self.client_secret, redirect_uris=[AnyUrl(self.redirect_uri)],
            token_endpoint_auth_method=self._client_auth(), client_name=self.client_name,
        )
        return _PreRegistered(self.tokens, client)


_STORAGE_METHODS = ("get_tokens", "set_tokens", "get_client_info", "set_client_info")


def _is_document_url(url: object) -> bool:
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    return parts.scheme == "https" and bool(parts.netloc) and parts.path not in ("", "/")


class _PreRegistered:
    """A token storage whose client registration is the pre-registered one, whatever the store holds."""

    def __init__(self, tokens: TokenStorage, client: OAuthClientInformationFull) -> None:
        self._tokens = tokens
        self._client = client

    async def get_tokens(self) -> OAuthToken | None:
        return await self._tokens.get_tokens()

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self._tokens.set_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client = client_info


class _Redirect:
    """The SDK's two handlers (send the user to the page; wait for the code) over one `authorize` call.

    A refusal is remembered for the connection: the client's fallback from `server/discover`
    to `initialize` would otherwise send the user who just declined to the page again.
    """

    def __init__(self, authorize: Authorize) -> None:
        self._authorize = authorize
        self._landed: str | None = None
        self._refused: NotAuthorized | None = None

    async def send(self, authorization_url: str) -> None:
        if self._refused is not None:
            raise self._refused
        landed = await self._authorize(authorization_url)
        if not isinstance(landed, str):
            raise ConfigError("OAuth's authorize function must return the URL the user was redirected to "
                              f"(with ?code=...&state=...), not {type(landed).__name__}")
        self._landed = landed

    async def result(self) -> AuthorizationCodeResult:
        try:
            return self._code()
        except NotAuthorized as refused:
            self._refused = refused
            raise

    def _code(self) -> AuthorizationCodeResult:
        landed, self._landed = self._landed, None
        query = {k: v[0] for k, v in parse_qs(urlsplit(landed or "").query).items()}
        if "error" in query:
            said = query.get("error_description", "")
            raise NotAuthorized(f"authorization was not granted: {query['error'][:100]}"
                                f"{' (' + said[:200] + ')' if said else ''}")
        if "code" not in query:
            raise NotAuthorized("the URL authorize returned carries no authorization code: return the URL the "
                                "authorization server redirected to, with its ?code=...&state=...")
        try:
            return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))
        except ValidationError as exc:  # pragma: no cover - the fields are strings
            raise NotAuthorized(f"malformed authorization response ({exc.error_count()} errors)") from None
