"""Real image bytes for the media tests: a PNG of one colour, made with zlib (no imaging library)."""

from __future__ import annotations

import base64
import hashlib
import struct
import zlib


def png(width: int = 3, height: int = 2, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A valid PNG of `width` x `height` pixels, all of colour `rgb`."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    row = b"\x00" + bytes(rgb) * width  # filter byte 0, then the pixels
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, truecolour
    pixels = zlib.compress(row * height)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def b64(data: bytes) -> str:
    """`data` as standard base64 text, as a browser's FileReader gives it."""
    return base64.b64encode(data).decode()


def digest(data: bytes) -> str:
    """The key a store keeps `data` under: its SHA-256 in hex."""
    return hashlib.sha256(data).hexdigest()


def image(data: bytes, media_type: str = "image/png") -> dict[str, str]:
    """An image attachment of a run's body."""
    return {"type": "image", "media_type": media_type, "data": b64(data)}
