"""Images and files as the Messages API takes them: `image` and `document` content blocks.

An image goes as base64 with its media type (JPEG, PNG, GIF or WebP only) or as a URL
Anthropic fetches; a file as a `document`: a PDF as base64 or by URL, a `text/*` file as
its text (a `text/plain` source). Anything else is refused before the call, naming the
media type and what Anthropic takes, rather than sent to fail there.
"""

from __future__ import annotations

import base64

from hookline.messages import FilePart, ImagePart
from hookline.models._render import MediaRefused, describe_media, file_text, loaded
from hookline.types import JSONObject

__all__ = ["IMAGE_TYPES", "media_block"]

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""The media types of the images Anthropic reads."""

_PDF = "application/pdf"


def media_block(part: ImagePart | FilePart) -> JSONObject:
    """The content block of an image or a file.

    Raises:
        MediaRefused: Anthropic takes no such image or file, or its bytes are not loaded.
    """
    part = loaded(part)
    if isinstance(part, ImagePart):
        return {"type": "image", "source": _image_source(part)}
    block: JSONObject = {"type": "document", "source": _document_source(part)}
    if part.name:
        block["title"] = part.name
    return block


def _image_source(part: ImagePart) -> JSONObject:
    inline = _inline(part)
    if inline is None:
        return {"type": "url", "url": part.url}
    media_type, data = inline
    if media_type not in IMAGE_TYPES:
        raise MediaRefused(
            f"Anthropic reads images as {', '.join(IMAGE_TYPES)}, not {media_type} ({describe_media(part)}): "
            "convert the image to one of them first"
        )
    return {"type": "base64", "media_type": media_type, "data": data}


def _document_source(part: FilePart) -> JSONObject:
    text = file_text(part)
    if text is not None:
        return {"type": "text", "media_type": "text/plain", "data": text}
    inline = _inline(part)
    if inline is None and part.media_type in (None, _PDF):
        return {"type": "url", "url": part.url}
    if inline is not None and inline[0] == _PDF:
        return {"type": "base64", "media_type": _PDF, "data": inline[1]}
    if inline is not None and inline[0].startswith("text/"):  # a text file given as a data: URL
        return {"type": "text", "media_type": "text/plain", "data": _decoded(inline[1])}
    how = "by URL only PDFs" if inline is None else "files as application/pdf or text (text/*)"
    raise MediaRefused(
        f"Anthropic takes {how}, not {part.media_type or 'this file'} ({describe_media(part)}): convert it to a "
        "PDF, or give its text in a TextPart or DocumentPart"
    )


def _decoded(data: str) -> str:
    return base64.b64decode(data).decode("utf-8", errors="replace")


def _inline(part: ImagePart | FilePart) -> tuple[str, str] | None:
    """The media type and base64 of a part given inline (bytes, or a base64 `data:` URL); None for a URL to fetch."""
    if part.data is not None:
        return str(part.media_type), part.base64()
    url = part.url or ""
    header, comma, data = url.partition(",")
    if url.startswith("data:") and comma and header.endswith(";base64"):
        return header.removeprefix("data:").removesuffix(";base64") or str(part.media_type), data
    if url.startswith("data:"):
        raise MediaRefused(f"Anthropic takes data: URLs in base64 only ({describe_media(part)})")
    return None
