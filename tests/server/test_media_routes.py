"""Images, files and documents over HTTP: a run's attachments and documents, the blob route, the body limit.

A real server on a real SQLite store (or the in-memory one, see conftest): attachments are
stored once per session and served back byte for byte by their digest; documents reach
the model of their run and nothing else, never the log.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from hookline import Agent
from hookline.messages import DocumentPart, FilePart, ImagePart, Message, TextPart
from hookline.models import ModelRequest, ModelResponse, OpenAIModel
from hookline.server import create_app
from hookline.sessions import SessionStore
from hookline.testing import FakeOpenAIServer

from .agent import make_agent
from .api import SSE, new_session, sse_frames
from .live import TOKENS, LiveServer
from .pictures import b64, digest, image, png

pytestmark = pytest.mark.anyio

PICTURE = png(4, 3)


class Recorder:
    """A model script that answers "seen" and keeps every request the model got."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text="seen")

    def last_user(self) -> Message:
        return next(m for m in reversed(self.requests[-1].messages) if m.role == "user")


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
async def http(
    make_server: Callable[..., LiveServer], store: SessionStore, recorder: Recorder
) -> AsyncIterator[httpx.AsyncClient]:
    server = make_server(make_agent(store, model_script=recorder))
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        yield client


async def _prompt_parts(http: httpx.AsyncClient, session_id: str) -> list[dict[str, Any]]:
    events = (await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})).json()
    user = [e for e in events if e["kind"] == "message" and e["role"] == "user"]
    parts: list[dict[str, Any]] = user[-1]["parts"]
    return parts


# -- attachments and the blob route ---------------------------------------------------------


async def test_an_image_is_stored_by_digest_and_served_back_exactly(
    http: httpx.AsyncClient, recorder: Recorder
) -> None:
    session_id = await new_session(http)
    body = {"prompt": "what is in it?", "attachments": [image(PICTURE)]}
    answer = await http.post(f"/v1/sessions/{session_id}/runs", json=body)
    assert answer.status_code == 200, answer.text
    sent = answer.json()["messages"][0]["parts"][1]
    assert sent["blob"] == digest(PICTURE)
    assert sent["data"] is None, "the answer names the bytes, not carries them"

    seen = recorder.last_user().parts
    assert isinstance(seen[1], ImagePart)
    assert seen[1].data == PICTURE, "the model got the bytes themselves"
    parts = await _prompt_parts(http, session_id)
    assert parts[0] == {"type": "text", "text": "what is in it?"}
    assert parts[1] == {"type": "image", "media_type": "image/png", "data": None, "url": None, "blob": digest(PICTURE)}

    blob = await http.get(f"/v1/sessions/{session_id}/blobs/{digest(PICTURE)}")
    assert blob.status_code == 200
    assert blob.content == PICTURE
    assert blob.headers["content-type"] == "image/png"
    assert "immutable" in blob.headers["cache-control"]
    assert "max-age=31536000" in blob.headers["cache-control"]
    assert blob.headers["etag"] == f'"{digest(PICTURE)}"'
    assert blob.headers["x-content-type-options"] == "nosniff"
    again = await http.get(blob.url, headers={"If-None-Match": blob.headers["etag"]})
    assert again.status_code == 304
    assert again.content == b""


async def test_a_file_and_a_url_image_join_the_prompt(http: httpx.AsyncClient, recorder: Recorder) -> None:
    session_id = await new_session(http)
    report = b"%PDF-1.4 not much of a report"
    attachments = [{"type": "file", "media_type": "application/pdf", "data": b64(report), "name": "report.pdf"},
                   {"type": "image", "url": "https://example.org/cat.png"}]
    answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "read", "attachments": attachments})
    assert answer.status_code == 200, answer.text
    seen = recorder.last_user().parts
    assert seen[1] == FilePart(media_type="application/pdf", data=report, name="report.pdf", blob=digest(report))
    assert seen[2] == ImagePart(url="https://example.org/cat.png")
    parts = await _prompt_parts(http, session_id)
    assert parts[1]["name"] == "report.pdf"
    assert parts[1]["blob"] == digest(report)
    assert parts[1]["data"] is None
    assert parts[2]["url"] == "https://example.org/cat.png"
    assert parts[2]["blob"] is None
    served = await http.get(f"/v1/sessions/{session_id}/blobs/{digest(report)}")
    assert served.content == report
    assert served.headers["content-type"] == "application/pdf"
    assert served.headers["content-disposition"] == "attachment", "only raster images are shown inline"


async def test_markup_sent_as_a_file_is_never_served_as_a_page(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    page = b"<script>document.title='owned'</script>"
    svg = b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"
    attachments = [{"type": "file", "media_type": "text/html", "data": b64(page)},
                   {"type": "image", "media_type": "image/svg+xml", "data": b64(svg)}]
    answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "x", "attachments": attachments})
    assert answer.status_code == 200, answer.text
    for data, kind in ((page, "text/html"), (svg, "image/svg+xml")):
        served = await http.get(f"/v1/sessions/{session_id}/blobs/{digest(data)}")
        assert served.content == data
        assert served.headers["content-type"] == kind, "no charset added, no other type"
        assert served.headers["content-disposition"] == "attachment"
        assert "sandbox" in served.headers["content-security-policy"]
        assert served.headers["x-content-type-options"] == "nosniff"


async def test_an_attachment_alone_is_a_prompt(http: httpx.AsyncClient, recorder: Recorder) -> None:
    session_id = await new_session(http)
    answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "", "attachments": [image(PICTURE)]})
    assert answer.status_code == 200, answer.text
    assert [type(p) for p in recorder.last_user().parts] == [ImagePart]


async def test_the_stream_of_a_run_names_its_image_by_digest(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    body = {"prompt": "look", "attachments": [image(PICTURE)]}
    async with http.stream("POST", f"/v1/sessions/{session_id}/runs", json=body, headers=SSE) as response:
        frames = [frame.json async for frame in sse_frames(response)]
    user = next(f for f in frames if f["kind"] == "message" and f["role"] == "user")
    assert user["parts"][1]["blob"] == digest(PICTURE)
    assert user["parts"][1]["data"] is None


async def test_blobs_are_their_owners_only(auth_server: LiveServer) -> None:
    alice, bob = (httpx.AsyncClient(base_url=auth_server.url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
                  for token in TOKENS)
    async with alice, bob:
        session_id = await new_session(alice)
        body = {"prompt": "x", "attachments": [image(PICTURE)]}
        answer = await alice.post(f"/v1/sessions/{session_id}/runs", json=body)
        assert answer.status_code == 200, answer.text
        route = f"/v1/sessions/{session_id}/blobs/{digest(PICTURE)}"
        assert (await alice.get(route)).content == PICTURE
        theirs = await bob.get(route)
        assert theirs.status_code == 404
        assert theirs.json()["error"] == "not_found"
        bobs_session = await new_session(bob)
        elsewhere = await bob.get(f"/v1/sessions/{bobs_session}/blobs/{digest(PICTURE)}")
        assert elsewhere.status_code == 404, "a digest is per session: bob's session does not hold alice's bytes"
        assert "holds no image or file" in elsewhere.json()["message"]
    async with httpx.AsyncClient(base_url=auth_server.url) as stranger:
        assert (await stranger.get(route)).status_code == 401


async def test_unknown_and_malformed_digests(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    unknown = await http.get(f"/v1/sessions/{session_id}/blobs/{'0' * 64}")
    assert unknown.status_code == 404
    assert unknown.json() == {"error": "not_found",
                              "message": f"session {session_id!r} holds no image or file with digest {'0' * 64}"}
    for bad in ("abc", "G" * 64, "A" * 64, "0" * 65):
        malformed = await http.get(f"/v1/sessions/{session_id}/blobs/{bad}")
        assert malformed.status_code == 422, bad
        assert malformed.json()["error"] == "invalid_request"
        assert malformed.json()["detail"][0]["loc"] == ["path", "digest"]
    missing = await http.get(f"/v1/sessions/no-such-session/blobs/{'0' * 64}")
    assert missing.status_code == 404


# -- bad bodies --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attachment", "says"),
    [
        ({"type": "image", "data": b64(PICTURE)}, "needs its `media_type`"),
        ({"type": "image", "media_type": "image/png", "data": "not base64!"}, "valid base64"),
        ({"type": "image", "media_type": "image/png", "data": ""}, "at least 1 byte"),
        ({"type": "image", "media_type": "image/png", "data": b64(PICTURE), "blob": digest(PICTURE)},
         "`blob` is not taken in a request"),
        ({"type": "image", "media_type": "image/png", "data": b64(PICTURE), "url": "https://x.org/a.png"},
         "exactly one of `data`"),
        ({"type": "file", "name": "a.pdf"}, "exactly one of `data`"),
        ({"type": "image", "media_type": "application/pdf", "data": b64(b"%PDF")}, "send other files as type 'file'"),
        ({"type": "file", "media_type": "not a type", "data": b64(b"x")}, "should match pattern"),
        ({"type": "image", "url": "javascript:alert(1)"}, "http(s) or data: URL"),
        ({"type": "video", "url": "https://x.org/a.mp4"}, "'image', 'file'"),
        ({"media_type": "image/png", "data": b64(PICTURE)}, "discriminator 'type'"),
        ({"type": "file", "media_type": "text/plain", "data": b64(b"x"), "colour": "red"}, "Extra inputs"),
    ],
)
async def test_bad_attachments_answer_422_saying_what_is_wrong(
    http: httpx.AsyncClient, recorder: Recorder, attachment: dict[str, Any], says: str
) -> None:
    session_id = await new_session(http)
    answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "x", "attachments": [attachment]})
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["error"] == "invalid_request"
    assert says in body["message"], body["message"]
    assert body["detail"][0]["loc"][:3] == ["body", "attachments", 0]
    assert recorder.requests == [], "nothing ran"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"prompt": "  ", "attachments": []}, "the prompt is blank"),
        ({"prompt": "x", "documents": [{"title": " ", "text": "t"}]}, "title is blank"),
        ({"prompt": "x", "documents": [{"text": "t"}]}, "body.documents.0.title: Field required"),
        ({"prompt": "x", "documents": [{"title": "t", "text": "t", "blob": "x"}]}, "Extra inputs"),
        ({"prompt": "x", "documents": "a doc"}, "valid list"),
    ],
)
async def test_bad_bodies_answer_422(http: httpx.AsyncClient, body: dict[str, Any], says: str) -> None:
    session_id = await new_session(http)
    answer = await http.post(f"/v1/sessions/{session_id}/runs", json=body)
    assert answer.status_code == 422, answer.text
    assert says in answer.json()["message"], answer.json()["message"]


# -- documents ---------------------------------------------------------------------------------


async def test_documents_reach_the_model_of_their_run_only_and_never_the_log(
    http: httpx.AsyncClient, recorder: Recorder
) -> None:
    session_id = await new_session(http)
    documents = [{"title": "Handbook", "text": "Refunds take 14 days.", "source": "kb/refunds.md"},
                 {"title": "Prices", "text": "Tea costs 3 EUR."}]
    answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "refunds?", "documents": documents})
    assert answer.status_code == 200, answer.text
    seen = recorder.last_user().parts
    assert seen[:2] == [DocumentPart(title="Handbook", text="Refunds take 14 days.", source="kb/refunds.md"),
                        DocumentPart(title="Prices", text="Tea costs 3 EUR.")]
    assert [type(p) for p in seen] == [DocumentPart, DocumentPart, TextPart]
    assert seen[2] == TextPart(text="refunds?")

    log = (await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})).text
    assert "Refunds take 14 days" not in log
    assert "Handbook" not in log
    assert "Refunds take 14 days" not in answer.text, "nor the run's answer"

    await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "and now?"})
    later = [p for m in recorder.requests[-1].messages for p in m.parts]
    assert not any(isinstance(p, DocumentPart) for p in later), "not sent again on a later run"


async def test_documents_and_an_image_reach_the_openai_wire(
    make_server: Callable[..., LiveServer], store: SessionStore
) -> None:
    with FakeOpenAIServer() as provider:
        provider.enqueue_text("a cat")
        provider.enqueue_text("still a cat")
        model = OpenAIModel("gpt-4o-mini", base_url=provider.base_url, api_key="test")
        server = make_server(Agent("assistant", model=model, session_store=store))
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            session_id = await new_session(http)
            body = {"prompt": "what is it?", "attachments": [image(PICTURE)],
                    "documents": [{"title": "Zoo guide", "text": "Cats purr."}]}
            answer = await http.post(f"/v1/sessions/{session_id}/runs", json=body)
            assert answer.status_code == 200, answer.text
            again = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "sure?"})
            assert again.status_code == 200, again.text
        provider.assert_complete()
    first, second = (json.dumps(r) for r in provider.requests)
    assert b64(PICTURE) in first
    assert "Cats purr." in first
    assert "Zoo guide" in first
    assert b64(PICTURE) in second, "the stored image goes to the model again on the next run"
    assert "Cats purr." not in second, "the documents were for the first run only"


# -- forks keep their images --------------------------------------------------------------------


async def test_a_fork_holds_the_images_of_the_log_it_copies(http: httpx.AsyncClient, recorder: Recorder) -> None:
    session_id = await new_session(http)
    await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "first", "attachments": [image(PICTURE)]})
    await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "second"})
    events = (await http.get(f"/v1/sessions/{session_id}/events", params={"view": "all"})).json()
    second = next(e["seq"] for e in events if e["kind"] == "message" and e["role"] == "user"
                  and e["parts"][0].get("text") == "second")
    fork = await http.post(f"/v1/sessions/{session_id}/fork", json={"at_seq": second, "text": "edited"})
    assert fork.status_code == 201, fork.text
    fork_id = fork.json()["id"]
    served = await http.get(f"/v1/sessions/{fork_id}/blobs/{digest(PICTURE)}")
    assert served.status_code == 200
    assert served.content == PICTURE
    resumed = await http.post(f"/v1/sessions/{fork_id}/resume", json={"approvals": {}})
    assert resumed.status_code == 200, resumed.text
    first_prompt = next(m for m in recorder.requests[-1].messages if m.role == "user")
    assert isinstance(first_prompt.parts[1], ImagePart)
    assert first_prompt.parts[1].data == PICTURE


# -- the body limit and the schema ------------------------------------------------------------


async def test_bodies_over_their_limit_answer_413_naming_it(make_server: Callable[..., LiveServer]) -> None:
    server = make_server(max_body_bytes=2_000, max_media_body_bytes=20_000)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        session_id = await new_session(http)
        runs = f"/v1/sessions/{session_id}/runs"
        within = await http.post(runs, json={"prompt": "x", "attachments": [image(png(40, 40))]})
        assert within.status_code == 200, "a run's body may pass max_body_bytes up to max_media_body_bytes"
        over = await http.post(runs, json={"prompt": "x", "attachments": [image(bytes(range(256)) * 80)]})
        assert over.status_code == 413
        assert over.json() == {"error": "too_large", "message": "the request body is larger than 20000 bytes, "
                                                                "this server's limit (max_media_body_bytes): send less"}
        elsewhere = await http.post("/v1/sessions", json={"state": {"notes": "x" * 3_000}})
        assert elsewhere.status_code == 413
        assert "2000 bytes" in elsewhere.json()["message"]
        assert "(max_body_bytes)" in elsewhere.json()["message"]


def test_the_media_limit_is_twenty_megabytes_unless_set() -> None:
    app = create_app(make_agent(), tokens={})
    limits = [m.kwargs for m in app.user_middleware if m.kwargs.get("max_bytes")]
    assert limits == [{"max_bytes": 1_000_000, "media_max_bytes": 20_000_000}]


def test_openapi_shows_attachments_documents_and_the_blob_route() -> None:
    schema = create_app(make_agent(), tokens={}).openapi()
    run = schema["components"]["schemas"]["RunBody"]["properties"]
    assert {"prompt", "attachments", "documents"} <= set(run)
    image_fields = schema["components"]["schemas"]["ImageAttachment"]["properties"]
    assert set(image_fields) == {"type", "media_type", "data", "url"}, "no blob in a request"
    assert set(schema["components"]["schemas"]["DocumentBody"]["properties"]) == {"title", "text", "source"}
    blob = schema["paths"]["/v1/sessions/{session_id}/blobs/{digest}"]["get"]
    assert {"200", "404", "422"} <= set(blob["responses"])


# -- prepared events ---------------------------------------------------------------------------


async def test_a_prepared_image_is_stored_and_a_blob_must_be_the_sessions_own(http: httpx.AsyncClient) -> None:
    session_id = await new_session(http)
    prepare = f"/v1/sessions/{session_id}/prepare"
    sent = {"author": "user", "kind": "message", "role": "user", "parts": [{"type": "image", **image(PICTURE)}]}
    prepared = await http.post(prepare, json=sent)
    assert prepared.status_code == 200, prepared.text
    assert prepared.json()["parts"][0]["blob"] == digest(PICTURE)
    assert prepared.json()["parts"][0]["data"] is None
    assert (await http.get(f"/v1/sessions/{session_id}/blobs/{digest(PICTURE)}")).content == PICTURE

    held = {"author": "user", "kind": "message", "role": "user",
            "parts": [{"type": "image", "media_type": "image/png", "blob": digest(PICTURE)}]}
    assert (await http.post(prepare, json=held)).status_code == 200, "a digest the session holds may be named"
    other = png(2, 2)
    unheld = {**held, "parts": [{"type": "image", "media_type": "image/png", "blob": digest(other)}]}
    refused = await http.post(prepare, json=unheld)
    assert refused.status_code == 422
    assert refused.json()["error"] == "invalid_event"
    assert f"session {session_id!r} does not hold (first: {digest(other)})" in refused.json()["message"]
    answer = await http.post(f"/v1/sessions/{session_id}/runs", json={"prompt": "and?"})
    assert answer.status_code == 200, "the refused part left the session's log loadable"
