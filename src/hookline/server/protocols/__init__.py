"""The protocols front ends and agents already speak, served beside hookline's own API.

- `ag_ui`: AG-UI 1.0 at `POST /v1/ag-ui` (CopilotKit, `@ag-ui/client`);
- `ai_sdk`: the Vercel AI SDK's UI message stream at `POST /v1/ai-sdk/chat` (`useChat`);
- `a2a`: A2A 1.0 at `/.well-known/agent-card.json` and `POST /a2a` (the `a2a` extra).

Each is a small module off one seam, `base`: a request in the protocol's form becomes a run
of the agent (or the resumption of a paused one) in the server's `RunManager`, like any run;
its events, read once and in the log's order from the session's hub, go through the
protocol's `Translator`; its frames go out as the protocol wants them. So every protocol
works with every store, in every process, with the same auth and per-user isolation.
"""
