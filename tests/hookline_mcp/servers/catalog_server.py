"""A test MCP server with resources and prompts, which also notes the log level a client asks for.

Resources: `file:///docs/notes.txt` (text), `file:///img/logo.png` (a PNG), `file:///docs/report.pdf`
(a PDF). Prompts: `summarize` (argument `topic`, required): a user message and an embedded
resource; `hello`: a user message and an assistant one. `levels.log` gets each
`logging/setLevel` (2025-era connections only: 2026-07-28 has none).
"""

from __future__ import annotations

import warnings
from typing import Any

import mcp_types as types
from _common import Record, new_server, options, serve
from mcp.shared.exceptions import MCPError

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
REPORT = "JVBERi0xLjQKJSVFT0YK"  # "%PDF-1.4\n%%EOF\n"
RESOURCES = [
    types.Resource(uri="file:///docs/notes.txt", name="notes", title="Meeting notes", mime_type="text/plain"),
    types.Resource(uri="file:///img/logo.png", name="logo", mime_type="image/png"),
    types.Resource(uri="file:///docs/report.pdf", name="report", mime_type="application/pdf"),
]
CONTENTS: dict[str, types.TextResourceContents | types.BlobResourceContents] = {
    "file:///docs/notes.txt": types.TextResourceContents(uri="file:///docs/notes.txt", mime_type="text/plain",
                                                         text="Ship on Friday."),
    "file:///img/logo.png": types.BlobResourceContents(uri="file:///img/logo.png", mime_type="image/png", blob=PIXEL),
    "file:///docs/report.pdf": types.BlobResourceContents(uri="file:///docs/report.pdf", mime_type="application/pdf",
                                                          blob=REPORT),
}
PROMPTS = [
    types.Prompt(name="summarize", description="Summarize a topic from the notes.",
                 arguments=[types.PromptArgument(name="topic", required=True)]),
    types.Prompt(name="hello", title="Say hello"),
]


def main() -> None:
    args = options()
    record = Record(args.state)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=RESOURCES)

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        found = CONTENTS.get(str(params.uri))
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"Resource not found: {params.uri}")
        return types.ReadResourceResult(contents=[found])

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=PROMPTS)

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        arguments = params.arguments or {}
        if params.name == "hello":
            return types.GetPromptResult(messages=[
                types.PromptMessage(role="user", content=types.TextContent(text="Hello!")),
                types.PromptMessage(role="assistant", content=types.TextContent(text="Hi, what can I do?"))])
        if params.name != "summarize" or "topic" not in arguments:
            raise MCPError(types.INVALID_PARAMS, f"summarize needs a topic (got {sorted(arguments)})")
        return types.GetPromptResult(messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=f"Summarize {arguments['topic']}.")),
            types.PromptMessage(role="user", content=types.EmbeddedResource(resource=CONTENTS["file:///docs/notes.txt"])),
        ])

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        record.note("levels", params.level)
        return types.EmptyResult()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server, _bus = new_server("catalog", args, on_list_resources=list_resources, on_read_resource=read_resource,
                                  on_list_prompts=list_prompts, on_get_prompt=get_prompt,
                                  on_set_logging_level=set_level)
    serve(server, args)


if __name__ == "__main__":
    main()
