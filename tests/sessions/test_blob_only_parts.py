"""A message read from one session, prompted into another: its image names bytes the other does not hold.

A part read back from a store carries its bytes' digest (`blob`) and no `data`. Given to
another session as it is, it would name bytes that session lacks, and every later run on
it would fail to load them. The store refuses such a write (`InvalidEvent`, saying how to
give the part its bytes) and keeps nothing of it, so the session runs on as before.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hookline import Agent
from hookline.errors import InvalidEvent
from hookline.messages import ImagePart, Message
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SQLiteSessionStore

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
DIGEST = hashlib.sha256(PNG).hexdigest()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def images_seen(request: ModelRequest) -> list[bytes | None]:
    """The bytes of every image the model is sent."""
    return [p.data for m in request.messages for p in m.parts if isinstance(p, ImagePart)]


async def test_a_message_read_from_one_session_is_refused_by_another_which_runs_on(tmp_path: Path) -> None:
    seen: list[list[bytes | None]] = []

    def model(request: ModelRequest) -> ModelResponse:
        seen.append(images_seen(request))
        return ModelResponse(text=f"{len(seen[-1])} image(s)")

    async with SQLiteSessionStore(tmp_path / "sessions.db") as store:
        agent = Agent(model=FunctionModel(model), session_store=store)
        await agent.prompt(["what is this?", ImagePart(media_type="image/png", data=PNG)]).session("a")
        read = next(e for e in await store.events("a", view="prompt") if e.role == "user").to_message()
        (image,) = [p for p in read.parts if isinstance(p, ImagePart)]
        assert (image.data, image.blob) == (None, DIGEST)

        with pytest.raises(InvalidEvent) as refused:
            await agent.prompt(read).session("b")
        fix = r"session 'b' does not hold .* load them .* with `store\.load_blobs\(.*rebuild it with `data=`"
        assert refused.match(f"parts: names the stored image or file {DIGEST} by `blob` alone, .*{fix}")
        assert await store.load_blobs("b", [DIGEST]) == {}
        assert [e for e in await store.events("b", view="all") if e.kind == "message"] == []

        later = await agent.prompt("hello").session("b")
        assert later.output == "0 image(s)"
        blobs = await store.load_blobs("a", [DIGEST])  # the fix the message gives
        mended = Message(role="user", parts=[p.model_copy(update={"data": blobs[DIGEST].data}) if p is image else p
                                             for p in read.parts])
        answered = await agent.prompt(mended).session("b")
        assert answered.output == "1 image(s)"
        assert seen[-1] == [PNG]
        assert await agent.prompt("and now?").session("b") is not None
        assert seen[-1] == [PNG]  # the session's next run loads the bytes it holds
