"""The request and response bodies of the HTTP API that are not library types.

Sessions, events and run results go on the wire as the library's own models (`Session`,
`Event`, `RunResult`); this module holds only what the HTTP surface adds: request bodies,
the error body and the health answer. Every request body forbids unknown keys, so a typo
answers 422 instead of being silently ignored.

A run's attachments carry their bytes (base64 `data`) or a `url`, never a `blob`: a digest
names bytes a session already holds, and a request naming one would let a client point at
bytes it never sent, so it answers 422 (send the bytes again; the store keeps them once).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from hookline._ids import SESSION_ID_PATTERN, session_id_problem
from hookline.messages import DocumentPart, FilePart, ImagePart, Message, TextPart

__all__ = [
    "MAX_SEQ",
    "SESSION_ID_PATTERN",
    "Attachment",
    "CancelAccepted",
    "CreateSession",
    "ApprovalAnswer",
    "DocumentBody",
    "ErrorBody",
    "FileAttachment",
    "Health",
    "IfBusy",
    "ImageAttachment",
    "ResumeBody",
    "RunBody",
    "ValidationIssue",
]

MAX_SEQ = 2**62
"""The largest `after_seq` / `Last-Event-ID` accepted (every backend stores seq as a 64-bit int)."""

_FORBID = ConfigDict(extra="forbid")


def _unicode(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("the text is not valid Unicode (it holds a lone surrogate): send UTF-8 text") from exc
    return value


_Text = Annotated[str, AfterValidator(_unicode)]
"""Text that is valid Unicode: JSON's `\\ud800` escapes decode to lone surrogates no store or provider takes."""


class CreateSession(BaseModel):
    """The body of `POST /v1/sessions`: both keys optional (`{}` makes a fresh id)."""

    model_config = _FORBID
    id: Annotated[str, Field(json_schema_extra={"pattern": SESSION_ID_PATTERN})] | None = None
    """The new session's id (the rule of `hookline._ids`); a random one when absent. Taken ids answer 409."""
    state: dict[str, Any] = Field(default_factory=dict)
    """The session's initial `State.data`."""

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        problem = session_id_problem(value) if value is not None else None
        if problem is not None:
            raise ValueError(problem)
        return value


IfBusy = Literal["reject", "enqueue", "interrupt", "rollback"]
"""What a run does when another run goes on in its session (`RunBody.if_busy`)."""
_WEBHOOK_URL = re.compile(r"^https?://[^\s/?#@]+(/[^\s]*)?$", re.IGNORECASE)
_MIME = r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
_URL = re.compile(r"^(https?://[^\s]+|data:[^\s]+)$", re.IGNORECASE)
_NO_BLOB = ("`blob` is not taken in a request: send the bytes again as base64 `data` "
            "(a session's stored blobs are read at GET /v1/sessions/{id}/blobs/{digest})")


class _Attachment(BaseModel):
    """What image and file attachments share: base64 `data` with its `media_type`, or a `url`."""

    model_config = ConfigDict(extra="forbid", val_json_bytes="base64", ser_json_bytes="base64")
    media_type: Annotated[str, Field(pattern=_MIME)] | None = None
    """The MIME type, such as "image/png" or "application/pdf"; required with `data`."""
    data: Annotated[bytes, Field(min_length=1)] | None = None
    """The content, base64-encoded (standard or URL-safe alphabet)."""
    url: Annotated[str, Field(max_length=8192)] | None = None
    """Where the model's provider fetches the content instead: an http(s) or `data:` URL."""

    @model_validator(mode="before")
    @classmethod
    def _no_blob(cls, value: Any) -> Any:
        if isinstance(value, dict) and "blob" in value:
            raise ValueError(_NO_BLOB)
        return value

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        kind = getattr(self, "type", "media")
        if (self.data is None) == (self.url is None):
            raise ValueError(f"the {kind} attachment needs exactly one of `data` (base64, with `media_type`) or `url`")
        if self.data is not None and self.media_type is None:
            raise ValueError(f"the {kind} attachment's `data` needs its `media_type`, e.g. 'image/png'")
        if self.url is not None and not _URL.match(self.url):
            raise ValueError(f"the {kind} attachment's `url` must be an http(s) or data: URL")
        return self


class ImageAttachment(_Attachment):
    """An image sent with the prompt."""

    type: Literal["image"] = "image"
    """Always "image"."""

    @field_validator("media_type")
    @classmethod
    def _an_image(cls, value: str | None) -> str | None:
        if value is not None and not value.lower().startswith("image/"):
            raise ValueError(f"an image's media_type is image/..., not {value!r}: send other files as type 'file'")
        return value

    def part(self) -> ImagePart:
        """The attachment as the library's part."""
        return ImagePart(media_type=self.media_type, data=self.data, url=self.url)


class FileAttachment(_Attachment):
    """A file (a PDF, say) sent with the prompt."""

    type: Literal["file"] = "file"
    """Always "file"."""
    name: Annotated[str, Field(min_length=1, max_length=255)] | None = None
    """The file's name, shown to the model where its provider takes one."""

    def part(self) -> FilePart:
        """The attachment as the library's part."""
        return FilePart(media_type=self.media_type, data=self.data, url=self.url, name=self.name)


Attachment = Annotated[ImageAttachment | FileAttachment, Field(discriminator="type")]
"""An image or a file sent with a prompt, tagged by its `type`."""


class DocumentBody(BaseModel):
    """A document the model gets for one run only (never stored in the log)."""

    model_config = _FORBID
    title: Annotated[str, Field(min_length=1, max_length=1000)]
    """A short title shown to the model with the document."""
    text: _Text
    """The document's text."""
    source: _Text | None = None
    """Where it came from (a path or URL), if known."""

    @field_validator("title")
    @classmethod
    def _titled(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the document's title is blank: give it a short title")
        return value

    def part(self) -> DocumentPart:
        """The document as the library's part."""
        return DocumentPart(title=self.title, text=self.text, source=self.source)


class RunBody(BaseModel):
    """The body of `POST /v1/sessions/{id}/runs`."""

    model_config = _FORBID
    prompt: _Text
    """The user's message; it must hold some non-blank text unless `attachments` are given."""
    attachments: list[Attachment] = Field(default_factory=list)
    """Images and files sent with the prompt: stored in the log with it (bytes once per session)."""
    documents: list[DocumentBody] = Field(default_factory=list)
    """Documents the model gets for this run only: merged into one block before the prompt, never stored."""
    background: StrictBool = False
    """Answer 202 with the run's id at once and run on (its state: `GET /v1/runs/{run_id}`)."""
    webhook: Annotated[str, Field(max_length=2048)] | None = None
    """An http(s) URL the server POSTs the run's outcome to when it ends, signed (see the server guide)."""
    if_busy: IfBusy = "reject"
    """When a run goes on in the session: `reject` (409), `enqueue` (run after it), `interrupt` (cancel it,
    then run), or `rollback` (cancel it, leave its events out of what the model sees, then run)."""

    @field_validator("webhook")
    @classmethod
    def _webhook_url(cls, value: str | None) -> str | None:
        if value is not None and not _WEBHOOK_URL.match(value):
            raise ValueError("the webhook must be an http:// or https:// URL with a host, e.g. https://example.com/hook")
        return value

    def service(self) -> bool:
        """Whether the run asks for more than an answer: a background run, a webhook, or a busy strategy."""
        return self.background or self.webhook is not None or self.if_busy != "reject"

    @model_validator(mode="after")
    def _not_blank(self) -> Self:
        if not self.prompt.strip() and not self.attachments:
            raise ValueError("the prompt is blank: send the text the agent should answer (or attachments)")
        return self

    def message(self) -> Message:
        """The prompt as the user's message: its text (if any), then its attachments."""
        text = [TextPart(text=self.prompt)] if self.prompt.strip() else []
        return Message(role="user", parts=[*text, *(a.part() for a in self.attachments)])

    def document_parts(self) -> list[DocumentPart]:
        """The run's documents as the library's parts."""
        return [document.part() for document in self.documents]


class ApprovalAnswer(BaseModel):
    """One paused call's answer as an object: `{"args": {...}}` runs it with these arguments."""

    model_config = _FORBID
    approve: StrictBool | None = None
    """`true` runs the call, `false` refuses it (the default, with `args`: `true`)."""
    args: dict[str, Any] | None = None
    """The arguments to run the call with instead of the model's (checked against the tool's schema)."""
    reason: str | None = None
    """Why it is refused (with `approve: false`)."""


class ResumeBody(BaseModel):
    """The body of `POST /v1/sessions/{id}/resume`."""

    model_config = _FORBID
    approvals: dict[str, StrictBool | str | ApprovalAnswer]
    """`{call_id: true}` runs a paused call; `false` or a reason string refuses it;
    `{call_id: {"args": {...}}}` runs it with these arguments; `{"approve": false, "reason": "..."}` refuses it."""

    def answers(self) -> dict[str, Any]:
        """The approvals as `Agent.resume` takes them (`hookline._run.resume.parse_approvals` checks them)."""
        return {
            call_id: answer.model_dump(exclude_none=True) if isinstance(answer, ApprovalAnswer) else answer
            for call_id, answer in self.approvals.items()
        }


class ValidationIssue(BaseModel):
    """One problem found in a request."""

    loc: list[str | int]
    """Where: e.g. `["body", "prompt"]`."""
    msg: str
    """What is wrong."""
    type: str
    """A stable code for the problem, e.g. `missing`."""


class ErrorBody(BaseModel):
    """Every error answer: a stable code, a readable message and, where known, details."""

    error: str
    """A stable code: `not_found`, `busy`, `invalid_request`, `hook_failed`, ..."""
    message: str
    """What went wrong, for a person."""
    hook: str | None = None
    """For `hook_failed`: the hook's name."""
    point: str | None = None
    """For `hook_failed`: the hook point it ran at."""
    status_code: int | None = None
    """For `model_failed`: the status the model provider answered, if any."""
    detail: list[ValidationIssue] | None = None
    """For `invalid_request`: every problem found."""


class Health(BaseModel):
    """The answer of `GET /healthz`."""

    status: Literal["ok"] = "ok"
    """Always "ok" when the process serves requests."""
    version: str
    """The hookline version."""


class CancelAccepted(BaseModel):
    """The answer of `POST /v1/sessions/{id}/cancel` (202): the run is being cancelled."""

    session_id: str
    """The session whose run is being cancelled."""
    status: Literal["cancelling"] = "cancelling"
    """Always "cancelling": the run stops within moments, with `stop_reason == "cancelled"`."""
