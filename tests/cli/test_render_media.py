"""The CLI shows images and files by media type and size (or stored digest), never their bytes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from hookline import Event
from hookline._cli.render import event_lines
from hookline.cli import app
from hookline.messages import FilePart, ImagePart, TextPart, ToolResultPart
from hookline.sessions.sqlite import SQLiteSessionStore
from hookline.testing._model_media_cases import PDF, PNG

IMAGE = ImagePart(media_type="image/png", data=PNG)


def test_a_prompt_and_a_tool_result_with_media_are_shown_without_bytes() -> None:
    prompt = Event(author="user", role="user", parts=[
        TextPart(text="What is this?"), IMAGE, FilePart(media_type="application/pdf", data=PDF, name="report.pdf"),
        ImagePart(url="https://example.com/cat.jpg")])
    result = ToolResultPart(call_id="c1", name="screenshot", content="taken", attachments=(IMAGE,))
    answer = Event(author="screenshot", role="tool", parts=[result])

    shown = [line.plain for event in (prompt, answer) for line in event_lines(event)]

    assert shown == [
        "   - user: What is this?",
        "       [image image/png, 70 bytes]",
        f'       [file "report.pdf" application/pdf, {len(PDF)} bytes]',
        "       [image at https://example.com/cat.jpg]",
        "   - tool: ← screenshot: taken [image image/png, 70 bytes]",
    ]
    assert IMAGE.base64() not in "".join(shown)


def test_sessions_show_names_a_stored_image_by_its_digest(tmp_path: Path) -> None:
    db = str(tmp_path / "sessions.db")

    async def seed() -> None:
        store = SQLiteSessionStore(db)
        await store.create(session_id="m")
        await store.append_event("m", Event(author="user", role="user", parts=[TextPart(text="Look."), IMAGE]))
        await store.aclose()

    asyncio.run(seed())
    shown = CliRunner().invoke(app, ["sessions", "show", "m", "--db", db])

    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.splitlines()[1:] == [
        "   1 user: Look.", f"       [image image/png, stored blob {IMAGE.digest()[:12]}]"]
