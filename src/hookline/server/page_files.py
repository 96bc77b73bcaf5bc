"""The web page's files (`/static/...`): gzip-compressed when the browser takes it, revalidated by ETag.

The page has no build step, so its file names carry no version: every answer says
`Cache-Control: no-cache` with a strong `ETag`, and a browser that holds the file gets 304
with no body, so a new version of the server is never mixed with an old file. Each file is
read and compressed once, and again only when it changes on disk (its size or mtime), so a
developer editing the page sees the edit on the next reload. Paths outside the folder, and
files that are not there, answer 404.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from starlette.types import Receive, Scope, Send

__all__ = ["PageFiles"]

_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
          ".html": "text/html; charset=utf-8", ".svg": "image/svg+xml"}
_COMPRESSIBLE = (".js", ".css", ".html", ".svg", ".json")
_NOT_FOUND = json.dumps({"error": "not_found", "message": "the web page has no such file"}).encode()


@dataclass(frozen=True, slots=True)
class _File:
    stamp: tuple[int, int]
    body: bytes
    gzipped: bytes | None
    etag: str
    media_type: str


class PageFiles:
    """An ASGI app serving the files of `folder`, compressed and cached as the module says."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        self._files: dict[Path, _File] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer GET and HEAD requests for a file of the folder."""
        found = self._file(_within(scope)) if scope["method"] in ("GET", "HEAD") else None
        if found is None:
            await _answer(send, 404, [(b"content-type", b"application/json")], _NOT_FOUND)
            return
        request = dict(scope["headers"])
        headers = [(b"cache-control", b"no-cache"), (b"etag", found.etag.encode()), (b"vary", b"accept-encoding"),
                   (b"content-type", found.media_type.encode()), (b"x-content-type-options", b"nosniff")]
        if found.etag in request.get(b"if-none-match", b"").decode("latin-1"):
            await _answer(send, 304, headers, b"")
            return
        body = found.body
        if found.gzipped is not None and b"gzip" in request.get(b"accept-encoding", b""):
            body = found.gzipped
            headers.append((b"content-encoding", b"gzip"))
        headers.append((b"content-length", str(len(body)).encode()))
        await _answer(send, 200, headers, b"" if scope["method"] == "HEAD" else body)

    def _file(self, path: str) -> _File | None:
        relative = path.lstrip("/")
        target = (self.folder / relative).resolve()
        if not relative or not target.is_relative_to(self.folder) or not target.is_file():
            return None
        info = target.stat()
        stamp = (info.st_mtime_ns, info.st_size)
        known = self._files.get(target)
        if known is None or known.stamp != stamp:
            known = self._files[target] = _read(target, stamp)
        return known


def _within(scope: Scope) -> str:
    """The request's path under the mount (`/static/js/dom.js` -> `js/dom.js`)."""
    path, root = str(scope["path"]), str(scope.get("root_path", ""))
    return path[len(root):] if root and path.startswith(root + "/") else path


def _read(target: Path, stamp: tuple[int, int]) -> _File:
    body = target.read_bytes()
    gzipped = gzip.compress(body, compresslevel=9, mtime=0) if target.suffix in _COMPRESSIBLE else None
    media_type = _TYPES.get(target.suffix) or mimetypes.guess_type(target.name)[0] or "application/octet-stream"
    etag = f'"{hashlib.sha256(body).hexdigest()[:20]}"'
    return _File(stamp, body, gzipped, etag, media_type)


async def _answer(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
