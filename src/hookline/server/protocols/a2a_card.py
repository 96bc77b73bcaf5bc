"""The A2A 1.0 Agent Card of a served agent (`GET /.well-known/agent-card.json`)."""

from __future__ import annotations

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from hookline import __version__
from hookline.agent import Agent

__all__ = ["agent_card"]

_BEARER = "bearer"


def agent_card(agent: Agent, url: str, *, secured: bool) -> AgentCard:
    """The 1.0 Agent Card of `agent`, served with JSON-RPC at `url`: one skill per tool (id = the tool's name).

    Every field the spec requires is set; the address is in `supported_interfaces` (a 1.0 card
    has no top-level `url`). `secured`: the server wants bearer tokens, and the card says so.
    An agent without tools gets one skill named after it, since a card needs one.
    """
    specs = agent.tool_catalog().specs
    skills = [AgentSkill(id=spec.name, name=spec.name, description=spec.description or f"the tool {spec.name}",
                         tags=["tool"]) for spec in specs]
    if not skills:
        skills = [AgentSkill(id=agent.name, name=agent.name, description=f"talk with {agent.name}", tags=["chat"])]
    card = AgentCard(
        name=agent.name,
        description=f"The hookline agent {agent.name!r}: send it a task as text; it answers as text, and pauses "
                    "for approval where its tools need one (TASK_STATE_INPUT_REQUIRED).",
        version=__version__,
        supported_interfaces=[AgentInterface(url=url, protocol_binding=TransportProtocol.JSONRPC.value,
                                             protocol_version=PROTOCOL_VERSION_1_0)],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False, extended_agent_card=False),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=skills,
    )
    if secured:
        card.security_schemes[_BEARER].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer")))
        card.security_requirements.append(SecurityRequirement(schemes={_BEARER: StringList()}))
    return card
