"""The add-loop agent for `adk api_server` (the served benchmark): ADK finds `agent.root_agent` here."""

from . import agent  # noqa: F401 - ADK's loader reads `calc.agent`
