"""The run's internals: the loop and the parts it drives, apart from the public modules.

`loop.Run` is the table of contents of one run; `model_call` asks the model, `tool_turn`
holds a turn of tool calls, `paused_turn` reads back the calls a session left open,
`prompt_record` stores the prompt; `recorder` writes the events, `run_scope`
holds what tools and hooks reach through `RunContext`, `tool_runner` runs a turn's calls,
`prompt_view` builds each model request, `resume` reads approvals against a paused log,
`turn_buffer` holds what hooks decide until their point ends, `status` words the status
lines, `model_gate` holds a streamed answer while a guardrail judges it, and `eager` begins
coroutines without a task. Nothing here is part of the contract (docs/contract.md); the
public names that use it (`Agent`, `State`, `RunContext`, ...) live one level up.
"""
