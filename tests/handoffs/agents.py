"""A triage agent and a billing agent, scripted by their conversation, whose models note what they were sent."""

from __future__ import annotations

from hookline import Agent, Message, ToolCallPart
from hookline.handoffs import Handoff, Team
from hookline.models import FunctionModel, ModelRequest, ModelResponse
from hookline.sessions import SessionStore


def triage_model(seen: list[list[str]]) -> FunctionModel:
    def answer(request: ModelRequest) -> ModelResponse:
        seen.append([m.text or m.role for m in request.messages])
        last = request.messages[-1]
        if last.role == "user" and "invoice" in last.text:
            call = ToolCallPart(id=f"h{len(request.messages)}", name="transfer_to_billing",
                                arguments={"reason": "an invoice question"})
            return ModelResponse(tool_calls=[call])
        if last.role == "tool":
            return ModelResponse(text="triage: welcome back")
        return ModelResponse(text=f"triage: {last.text}")

    return FunctionModel(answer, name="triage-model")


def billing_model(seen: list[list[str]]) -> FunctionModel:
    def answer(request: ModelRequest) -> ModelResponse:
        seen.append([m.text or m.role for m in request.messages])
        last = request.messages[-1]
        if last.role == "user" and "thanks" in last.text:
            return ModelResponse(tool_calls=[ToolCallPart(id=f"b{len(request.messages)}", name="transfer_to_triage",
                                                          arguments={})])
        asked = next(m.text for m in reversed(request.messages) if m.role == "user")
        return ModelResponse(text=f"billing: about {asked!r}")

    return FunctionModel(answer, name="billing-model")


def only_user_messages(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role == "user"]


def team(store: SessionStore, seen: dict[str, list[list[str]]], *, history: bool = False) -> Team:
    triage = Agent("triage", model=triage_model(seen.setdefault("triage", [])))
    billing = Agent("billing", model=billing_model(seen.setdefault("billing", [])))
    to_billing = Handoff("billing", history=only_user_messages) if history else "billing"
    return Team([triage, billing], handoffs={"triage": [to_billing], "billing": ["triage"]}, session_store=store)
