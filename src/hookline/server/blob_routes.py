"""The route of a session's stored images and files: `GET /v1/sessions/{id}/blobs/{digest}`.

It answers the bytes (`SessionStore.load_blobs`) with their media type and the headers of
`media.blob_headers`, to their session's owner only: 404 for anyone else, as for a
missing session or digest; 422 for a digest that is not 64 lowercase hex digits.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Response

from hookline.server.errors import error_response
from hookline.server.media import DIGEST_PATTERN, blob_headers
from hookline.server.routes import Ctx, SessionId, User
from hookline.server.schemas import ErrorBody

__all__ = ["blob_api"]

_BYTES = {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
          "image/*": {"schema": {"type": "string", "format": "binary"}}}

Digest = Annotated[str, Path(pattern=DIGEST_PATTERN, description="the SHA-256 of the bytes (a part's `blob`)")]

blob_api = APIRouter(prefix="/v1", tags=["sessions"])


def _answers() -> dict[int | str, dict[str, Any]]:
    errors: dict[int | str, dict[str, Any]] = {code: {"model": ErrorBody} for code in (401, 404, 422)}
    return {200: {"description": "The bytes, with their media type as `Content-Type`", "content": _BYTES},
            304: {"description": "Not modified (`If-None-Match` named this digest)"}, **errors}


@blob_api.get("/sessions/{session_id}/blobs/{digest}", response_class=Response, responses=_answers())
async def get_blob(
    context: Ctx,
    user: User,
    session_id: SessionId,
    digest: Digest,
    if_none_match: Annotated[str | None, Header()] = None,
) -> Response:
    """The bytes of an image or file of this session's log (the `blob` of its part), with their media type."""
    await context.store.get(session_id, user=user, with_events=False)
    blob = (await context.store.load_blobs(session_id, [digest])).get(digest)
    if blob is None:
        message = f"session {session_id!r} holds no image or file with digest {digest}"
        return error_response(ErrorBody(error="not_found", message=message), 404)
    headers = blob_headers(digest, blob.media_type)
    if if_none_match is not None and f'"{digest}"' in if_none_match:
        del headers["Content-Type"]
        return Response(status_code=304, headers=headers)
    return Response(blob.data, headers=headers)
