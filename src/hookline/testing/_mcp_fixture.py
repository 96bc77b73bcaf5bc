"""The MCP conformance kit's fixture: its tools, resources, prompts and completions.

The names and answers are those the kit's scenarios check. A tool that needs the client
(elicitation, sampling, roots) asks over the connection on handshake-era sessions, and
with an `input_required` result on 2026-07-28 requests, where the client answers in a
retry of the call; its `requestState` is sealed by the SDK's `RequestStateBoundary`.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp.shared.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged

from hookline.mcp._tasks import Tasks
from hookline.testing._mcp_fixture_tasks import TASK_TOOLS, task_support
from hookline.testing._mcp_wire import (
    AUDIO,
    IMAGE,
    ROOTS_REQUEST,
    Call,
    Context,
    Handler,
    answer,
    elicit_request,
    input_required,
    modern,
    sampling_request,
    state_of,
    string_arguments,
    text,
    tool,
)

__all__ = ["build_server"]

NAME = "hookline-mcp-conformance"
# -- tools ---------------------------------------------------------------------------------


async def simple_text(ctx: Context, call: Call) -> types.CallToolResult:
    return text("This is a simple text response for testing.")


async def image_content(ctx: Context, call: Call) -> types.CallToolResult:
    return types.CallToolResult(content=[types.ImageContent(data=IMAGE, mime_type="image/png")])


async def audio_content(ctx: Context, call: Call) -> types.CallToolResult:
    return types.CallToolResult(content=[types.AudioContent(data=AUDIO, mime_type="audio/wav")])


async def embedded_resource(ctx: Context, call: Call) -> types.CallToolResult:
    resource = types.TextResourceContents(uri="test://embedded-resource", mime_type="text/plain",
                                          text="This is an embedded resource content.")
    return types.CallToolResult(content=[types.EmbeddedResource(resource=resource)])


async def multiple_content_types(ctx: Context, call: Call) -> types.CallToolResult:
    resource = types.TextResourceContents(uri="test://mixed-content-resource", mime_type="application/json",
                                          text=json.dumps({"test": "data", "value": 123}))
    return types.CallToolResult(content=[
        types.TextContent(text="Multiple content types test:"),
        types.ImageContent(data=IMAGE, mime_type="image/png"),
        types.EmbeddedResource(resource=resource),
    ])


async def tool_with_logging(ctx: Context, call: Call) -> types.CallToolResult:
    for line in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.session.send_log_message("info", line, related_request_id=ctx.request_id)
        await anyio.sleep(0.05)
    return text("Tool with logging executed successfully")


async def logging_tool(ctx: Context, call: Call) -> types.CallToolResult:
    # on 2026-07-28 the SDK sends it only to a request whose _meta asked for logs at that level
    await ctx.session.send_log_message("info", "a line of the logging tool", related_request_id=ctx.request_id)
    return text("Logged")


async def tool_with_progress(ctx: Context, call: Call) -> types.CallToolResult:
    for step in (0, 50, 100):
        await ctx.session.report_progress(step, 100, f"Completed step {step} of 100")
        await anyio.sleep(0.05)
    return text("Progress completed")


async def error_handling(ctx: Context, call: Call) -> types.CallToolResult:
    return text("This tool intentionally returns an error for testing", is_error=True)


async def reconnection(ctx: Context, call: Call) -> types.CallToolResult:
    if ctx.close_sse_stream is not None:  # the client must reconnect, with Last-Event-ID, to get the answer
        await anyio.sleep(0.05)
        await ctx.close_sse_stream()
        await anyio.sleep(0.2)
    return text("Reconnection test completed")


async def sampling(ctx: Context, call: Call) -> types.CallToolResult | types.InputRequiredResult:
    if modern(ctx):
        return await input_sampling(ctx, call)
    prompt = str((call.arguments or {}).get("prompt", ""))
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(text=prompt))], max_tokens=100,
        related_request_id=ctx.request_id)
    content = result.content
    said = content.text if isinstance(content, types.TextContent) else "No response"
    return text(f"LLM response: {said}")


def elicitation_tool(key: str, message: str | None, properties: dict[str, Any], required: list[str],
                     done: str) -> Handler:
    """A tool that elicits a form (`message` None: the `message` argument), then reports the answer."""

    async def elicit(ctx: Context, call: Call) -> types.CallToolResult | types.InputRequiredResult:
        asked = message or str((call.arguments or {}).get("message", ""))
        if modern(ctx):
            got = answer(call, key)
            if got is None:
                return input_required({key: elicit_request(asked, properties, required)})
            action, content = got.get("action"), got.get("content") or {}
        else:
            schema = {"type": "object", "properties": properties, "required": required}
            result = await ctx.session.elicit_form(asked, schema, related_request_id=ctx.request_id)
            action, content = result.action, result.content or {}
        return text(f"{done}: action={action}, content={json.dumps(content, separators=(',', ':'))}")

    return elicit


ELICITATION = elicitation_tool("user_response", None,
                               {"response": {"type": "string", "description": "User's response"}}, ["response"],
                               "User response")
ELICITATION_DEFAULTS = elicitation_tool(
    "defaults", "Please review and update the form fields with defaults", {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    }, [], "Elicitation completed")
ELICITATION_ENUMS = elicitation_tool(
    "enum_options", "Please select options from the enum fields", {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [
            {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
                          "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
            {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
            {"const": "value3", "title": "Third Choice"}]}},
    }, ["untitledSingle", "titledSingle", "legacyEnum", "untitledMulti", "titledMulti"], "Elicitation completed")


async def input_elicitation(ctx: Context, call: Call) -> types.CallToolResult | types.InputRequiredResult:
    got = answer(call, "user_name")
    name = (got or {}).get("content", {}).get("name")
    if name:
        return text(f"Hello, {name}!")
    return input_required({"user_name": elicit_request("What is your name?", {"name": {"type": "string"}}, ["name"])})


async def input_sampling(ctx: Context, call: Call) -> types.CallToolResult | types.InputRequiredResult:
    got = answer(call, "sample_request")
    if got is None:
        return input_required({"sample_request": sampling_request("What is the capital of France?")})
    content = got.get("content")
    said = content.get("text", "no response") if isinstance(content, dict) else "no response"
    return text(f"Sampling result: {said}")


async def input_roots(ctx: Context, call: Call) -> types.CallToolResult | types.InputRequiredResult:
    got = answer(call, "roots_request")
    if got is None:
        return input_required({"roots_request": ROOTS_REQUEST})
    return text(f"Found {len(got.get('roots') or [])} root(s)")


async def input_request_state(ctx: Context, call: Call
                              ) -> types.CallToolResult | types.InputRequiredResult:
    got = answer(call, "confirm")
    if got is not None and state_of(call).get("kind") == "request-state":
        return text("state-ok: requestState validated")
    return input_required({"confirm": elicit_request("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])},
                          {"kind": "request-state"})


async def input_multiple(ctx: Context, call: Call) -> types.CallToolResult | types.InputRequiredResult:
    keys = ("user_name", "greeting", "client_roots")
    if state_of(call) and all(answer(call, key) is not None for key in keys):
        return text("Multiple inputs completed")
    return input_required({
        "user_name": elicit_request("What is your name?", {"name": {"type": "string"}}, ["name"]),
        "greeting": sampling_request("Generate a greeting", 50),
        "client_roots": ROOTS_REQUEST,
    }, {"kind": "multiple-inputs"})


async def input_multi_round(ctx: Context, call: Call
                            ) -> types.CallToolResult | types.InputRequiredResult:
    round_ = state_of(call).get("round")
    if round_ == 2 and answer(call, "step2") is not None:
        return text("Multi-round complete")
    if round_ == 1 and answer(call, "step1") is not None:
        return input_required({"step2": elicit_request("Step 2: What is your favorite color?",
                                                       {"color": {"type": "string"}}, ["color"])}, {"round": 2})
    return input_required({"step1": elicit_request("Step 1: What is your name?", {"name": {"type": "string"}},
                                                   ["name"])}, {"round": 1})


async def input_tampered_state(ctx: Context, call: Call
                               ) -> types.CallToolResult | types.InputRequiredResult:
    if state_of(call) and answer(call, "confirm") is not None:
        return text("integrity-ok: state verified")
    return input_required({"confirm": elicit_request("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])},
                          {"kind": "tamper-test"})


async def input_capabilities(ctx: Context, call: Call
                             ) -> types.CallToolResult | types.InputRequiredResult:
    if call.input_responses:
        return text(f"capabilities-ok: received {','.join(call.input_responses)}")
    capabilities = ctx.session.client_capabilities
    requests: dict[str, dict[str, Any]] = {}
    if capabilities is not None and capabilities.elicitation is not None:
        requests["elicit_input"] = elicit_request("Elicitation input", {"value": {"type": "string"}}, ["value"])
    if capabilities is not None and capabilities.sampling is not None:
        requests["sample_input"] = sampling_request("Sample request", 50)
    if not requests:
        return text("No supported capabilities declared")
    return input_required(requests, {"kind": "capabilities-test"})


async def missing_capability(ctx: Context, call: Call) -> types.CallToolResult:
    raise MCPError(-32021, "Missing required client capability", {"requiredCapabilities": {"sampling": {}}})


async def json_schema_tool(ctx: Context, call: Call) -> types.CallToolResult:
    return text(json.dumps(call.arguments or {}, separators=(",", ":")))


async def custom_header_tool(ctx: Context, call: Call) -> types.CallToolResult:
    return text(str((call.arguments or {}).get("header_value", "")))


JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                          "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


TOOLS: dict[str, tuple[types.Tool, Handler]] = {
    spec.name: (spec, handler) for spec, handler in [
        (tool("test_simple_text", "Answers with one text block"), simple_text),
        (tool("test_image_content", "Answers with an image"), image_content),
        (tool("test_audio_content", "Answers with audio"), audio_content),
        (tool("test_embedded_resource", "Answers with an embedded resource"), embedded_resource),
        (tool("test_multiple_content_types", "Answers with text, an image and a resource"), multiple_content_types),
        (tool("test_tool_with_logging", "Logs three lines while it works"), tool_with_logging),
        (tool("test_tool_with_progress", "Reports progress while it works"), tool_with_progress),
        (tool("test_error_handling", "Always answers with an error result"), error_handling),
        (tool("test_reconnection", "Closes its stream once before it answers"), reconnection),
        (tool("test_sampling", "Asks the client's model", string_arguments("prompt")), sampling),
        (tool("test_elicitation", "Asks the user", string_arguments("message")), ELICITATION),
        (tool("test_elicitation_sep1034_defaults", "Asks the user a form with defaults"), ELICITATION_DEFAULTS),
        (tool("test_elicitation_sep1330_enums", "Asks the user a form of choices"), ELICITATION_ENUMS),
        (tool("test_input_required_result_elicitation", "Asks the user's name"), input_elicitation),
        (tool("test_streaming_elicitation", "Asks the user's name, on its response stream"), input_elicitation),
        (tool("test_logging_tool", "Logs a line, for requests that ask logs"), logging_tool),
        (tool("test_input_required_result_sampling", "Asks the client's model"), input_sampling),
        (tool("test_input_required_result_list_roots", "Asks the client's roots"), input_roots),
        (tool("test_input_required_result_request_state", "Asks with request state"), input_request_state),
        (tool("test_input_required_result_multiple_inputs", "Asks three things at once"), input_multiple),
        (tool("test_input_required_result_multi_round", "Asks twice"), input_multi_round),
        (tool("test_input_required_result_tampered_state", "Checks its request state"), input_tampered_state),
        (tool("test_input_required_result_capabilities", "Asks what the client can answer"), input_capabilities),
        (tool("test_missing_capability", "Needs a capability the client lacks"), missing_capability),
        (tool("json_schema_2020_12_tool", "Takes a JSON Schema 2020-12 input", JSON_SCHEMA_2020_12), json_schema_tool),
        (tool("custom_header_tool", "Takes an argument mirrored into a header", {
            "type": "object", "properties": {"header_value": {"type": "string", "x-mcp-header": "Test-Value"}},
            "required": ["header_value"]}), custom_header_tool),
        (tool("test_tool_with_task", "Asks the user's name, then answers as a task"), input_elicitation),
        *TASK_TOOLS,
    ]
}


# -- resources and prompts -----------------------------------------------------------------

RESOURCES = [
    types.Resource(uri="test://static-text", name="static-text", title="Static Text Resource",
                   description="A static text resource for testing", mime_type="text/plain"),
    types.Resource(uri="test://static-binary", name="static-binary", title="Static Binary Resource",
                   description="A static binary resource for testing", mime_type="image/png"),
    types.Resource(uri="test://watched-resource", name="watched-resource", title="Watched Resource",
                   description="A resource that can be subscribed to", mime_type="text/plain"),
]
TEMPLATES = [
    types.ResourceTemplate(uri_template="test://template/{id}/data", name="template", title="Resource Template",
                           description="A resource template with parameter substitution",
                           mime_type="application/json"),
]
TEMPLATE_PREFIX, TEMPLATE_SUFFIX = "test://template/", "/data"


def read(uri: str) -> types.TextResourceContents | types.BlobResourceContents:
    """A resource's contents.

    Raises:
        MCPError: no such resource (`-32602`, with the URI, as the 2026-07-28 revision asks).
    """
    if uri == "test://static-text":
        return types.TextResourceContents(uri=uri, mime_type="text/plain",
                                          text="This is the content of the static text resource.")
    if uri == "test://static-binary":
        return types.BlobResourceContents(uri=uri, mime_type="image/png", blob=IMAGE)
    if uri == "test://watched-resource":
        return types.TextResourceContents(uri=uri, mime_type="text/plain", text="Watched resource content")
    if uri.startswith(TEMPLATE_PREFIX) and uri.endswith(TEMPLATE_SUFFIX):
        id_ = uri[len(TEMPLATE_PREFIX):-len(TEMPLATE_SUFFIX)]
        data = {"id": id_, "templateTest": True, "data": f"Data for ID: {id_}"}
        return types.TextResourceContents(uri=uri, mime_type="application/json", text=json.dumps(data))
    raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})


def argument(name: str, description: str) -> types.PromptArgument:
    return types.PromptArgument(name=name, description=description, required=True)


PROMPTS = [
    types.Prompt(name="test_simple_prompt", title="Simple Test Prompt", description="A prompt without arguments"),
    types.Prompt(name="test_prompt_with_arguments", title="Prompt With Arguments",
                 description="A prompt with required arguments",
                 arguments=[argument("arg1", "First test argument"), argument("arg2", "Second test argument")]),
    types.Prompt(name="test_prompt_with_embedded_resource", title="Prompt With Embedded Resource",
                 description="A prompt that includes an embedded resource",
                 arguments=[argument("resourceUri", "URI of the resource to embed")]),
    types.Prompt(name="test_prompt_with_image", title="Prompt With Image", description="A prompt with an image"),
    types.Prompt(name="test_input_required_result_prompt", title="Input Required Prompt",
                 description="A prompt that asks the user for its context first"),
]


def get_prompt(params: types.GetPromptRequestParams) -> types.GetPromptResult | types.InputRequiredResult:
    """Prompt `params.name`, or the input it asks for first.

    Raises:
        MCPError: no such prompt, or a required argument is missing.
    """
    if params.name != "test_input_required_result_prompt":
        return types.GetPromptResult(messages=prompt_messages(params.name, dict(params.arguments or {})))
    context = ((answer(params, "user_context") or {}).get("content") or {}).get("context")
    if context is None:
        return input_required({"user_context": elicit_request("What context should the prompt use?",
                                                              {"context": {"type": "string"}}, ["context"])})
    return types.GetPromptResult(messages=[
        types.PromptMessage(role="user", content=types.TextContent(text=f"Prompt with context: {context}"))])


def prompt_messages(name: str, arguments: dict[str, str]) -> list[types.PromptMessage]:
    """The messages of prompt `name`.

    Raises:
        MCPError: no such prompt, or a required argument is missing.
    """
    def user(content: Any) -> types.PromptMessage:
        return types.PromptMessage(role="user", content=content)

    if name == "test_simple_prompt":
        return [user(types.TextContent(text="This is a simple prompt for testing."))]
    if name == "test_prompt_with_arguments":
        arg1, arg2 = _required(arguments, "arg1"), _required(arguments, "arg2")
        return [user(types.TextContent(text=f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))]
    if name == "test_prompt_with_embedded_resource":
        resource = types.TextResourceContents(uri=_required(arguments, "resourceUri"), mime_type="text/plain",
                                              text="Embedded resource content for testing.")
        return [user(types.EmbeddedResource(resource=resource)),
                user(types.TextContent(text="Please process the embedded resource above."))]
    if name == "test_prompt_with_image":
        return [user(types.ImageContent(data=IMAGE, mime_type="image/png")),
                user(types.TextContent(text="Please analyze the image above."))]
    raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {name}")


def _required(arguments: dict[str, str], name: str) -> str:
    if name not in arguments:
        raise MCPError(types.INVALID_PARAMS, f"Missing required argument: {name}")
    return arguments[name]


# -- the server ----------------------------------------------------------------------------


ADDED_TOOL = tool("test_added_tool", "Listed once test_trigger_tool_change ran")
ADDED_PROMPT = types.Prompt(name="test_added_prompt", description="Listed once test_trigger_prompt_change ran")
WATCHED = "test://watched-resource"


class Fixture:
    """The server's handlers and the little state they share: list changes, and resource subscribers."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.subscribed: dict[str, set[Any]] = {}
        self.tools = [spec for spec, _handler in TOOLS.values()]
        self.prompts = list(PROMPTS)
        self.triggers: dict[str, Callable[[Context], Awaitable[types.CallToolResult]]] = {
            "test_trigger_resource_update": self.update_resource,
            "test_trigger_tool_change": self.add_tool,
            "test_trigger_prompt_change": self.add_prompt,
        }
        self.tools += [tool(name, "Changes what the server lists or holds") for name in self.triggers]

    async def list_tools(self, ctx: Context, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self.tools)

    async def call_tool(self, ctx: Context, params: Call) -> types.CallToolResult | types.InputRequiredResult:
        trigger = self.triggers.get(params.name)
        if trigger is not None:
            return await trigger(ctx)
        found = TOOLS.get(params.name)
        if found is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        return await found[1](ctx, params)

    async def update_resource(self, ctx: Context) -> types.CallToolResult:
        for session in self.subscribed.get(WATCHED, set()):
            await session.send_resource_updated(WATCHED)
        await self.bus.publish(ResourceUpdated(WATCHED))
        return text("Resource update triggered")

    async def add_tool(self, ctx: Context) -> types.CallToolResult:
        if ADDED_TOOL not in self.tools:
            self.tools.append(ADDED_TOOL)
        await self.bus.publish(ToolsListChanged())
        return text("Tool list changed")

    async def add_prompt(self, ctx: Context) -> types.CallToolResult:
        if ADDED_PROMPT not in self.prompts:
            self.prompts.append(ADDED_PROMPT)
        await self.bus.publish(PromptsListChanged())
        return text("Prompt list changed")

    async def subscribe(self, ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self.subscribed.setdefault(str(params.uri), set()).add(ctx.session)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Context, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        self.subscribed.get(str(params.uri), set()).discard(ctx.session)
        return types.EmptyResult()

    async def list_prompts(self, ctx: Context, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=self.prompts)

    def handlers(self) -> dict[str, Any]:
        """The `Server` constructor's handler arguments."""
        return {
            "on_list_tools": self.list_tools, "on_call_tool": self.call_tool,
            "on_list_resources": _list_resources, "on_list_resource_templates": _list_templates,
            "on_read_resource": _read_resource, "on_subscribe_resource": self.subscribe,
            "on_unsubscribe_resource": self.unsubscribe, "on_list_prompts": self.list_prompts,
            "on_get_prompt": _get_prompt, "on_completion": _complete, "on_set_logging_level": _set_level,
            "on_subscriptions_listen": ListenHandler(self.bus),
        }


async def _list_resources(ctx: Context, params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=RESOURCES)


async def _list_templates(ctx: Context, params: Any) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=TEMPLATES)


async def _read_resource(ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[read(str(params.uri))])


async def _get_prompt(ctx: Context, params: types.GetPromptRequestParams
                      ) -> types.GetPromptResult | types.InputRequiredResult:
    return get_prompt(params)


async def _complete(ctx: Context, params: types.CompleteRequestParams) -> types.CompleteResult:
    return types.CompleteResult(completion=types.Completion(values=[], total=0, has_more=False))


async def _set_level(ctx: Context, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


def build_server() -> Server[Any]:
    """The fixture: a low-level MCP `Server` with the kit's tools, resources, prompts and completions."""
    fixture = Fixture()
    with warnings.catch_warnings():  # logging/setLevel is deprecated in 2026-07-28; the 2025-11-25 scenarios ask it
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server: Server[Any] = Server(NAME, version="1.0.0", **fixture.handlers(),
                                     get_tool_input_schema=lambda name: _input_schema(fixture, name))
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=NAME))
    Tasks(task_support).install(server)
    return server


def _input_schema(fixture: Fixture, name: str) -> dict[str, Any] | None:
    return next((spec.input_schema for spec in fixture.tools if spec.name == name), None)
