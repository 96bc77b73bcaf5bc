// The inspector: every event of the session; one event's images and files (as the chat shows
// them: stored bytes from the blob route) and its raw JSON; for a model call, the request the
// model was sent (messages, tools, settings) and its answer, tokens and time.

import { $, clock, duration, el, pretty, textOf } from "./dom.js";
import { ApiError, apiJSON, session } from "./api.js";
import { mediaOf } from "./media.js";

const MODEL_EVENT = (e) => (e.kind === "status" && e.source === "agent" && /^turn \d+: calling model$/.test(textOf(e)))
  || (e.kind === "status" && e.source === "llm") || (e.kind === "message" && e.role === "assistant");

export class Inspector {
  constructor() {
    this.sessionId = null;
    this.events = new Map(); // seq -> event
    this.selected = null;
  }

  reset(sessionId) {
    this.sessionId = sessionId;
    this.events.clear();
    this.selected = null;
    $("event-list").replaceChildren();
    $("event-detail").replaceChildren(el("p", { class: "hint" }, "Pick an event to see its JSON."));
  }

  add(event) {
    if (event.seq === null || event.seq === undefined || event.partial || this.events.has(event.seq)) return;
    this.events.set(event.seq, event);
    const button = el("button", { type: "button", "data-seq": event.seq, "aria-pressed": "false" },
      el("span", { class: "seq" }, `#${event.seq}`), el("span", { class: `kind ${event.kind}` }, label(event)),
      el("span", { class: "line" }, summary(event)));
    button.addEventListener("click", () => this.select(event.seq));
    $("event-list").append(el("li", {}, button));
  }

  async reload() {
    if (!this.sessionId) return;
    const id = this.sessionId;
    const events = await apiJSON(`${session(id)}/events?view=all`);
    if (id !== this.sessionId) return;
    const selected = this.selected;
    this.reset(id);
    events.forEach((e) => this.add(e));
    if (selected !== null && this.events.has(selected)) await this.select(selected, { focus: false });
  }

  async select(seq, { focus = true } = {}) {
    const event = this.events.get(seq);
    if (!event) return;
    this.selected = seq;
    for (const button of document.querySelectorAll("#event-list button")) {
      const on = Number(button.dataset.seq) === seq;
      button.setAttribute("aria-pressed", String(on));
      if (on && focus) button.scrollIntoView({ block: "nearest" });
    }
    const detail = $("event-detail");
    detail.replaceChildren(...[
      el("h3", {}, `Event #${seq}: ${label(event)}`, el("span", { class: "hint" }, ` ${clock(event.created_at)}`)),
      mediaView(event, this.sessionId),
      el("pre", { class: "json raw", tabindex: "0", "aria-label": "The event's JSON" }, pretty(event)),
    ].filter(Boolean));
    if (MODEL_EVENT(event)) await this.showModelCall(seq, detail);
  }

  async showModelCall(seq, detail) {
    let call;
    try {
      call = await apiJSON(`${session(this.sessionId)}/model-calls/${seq}`);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 422)) {
        detail.append(el("p", { class: "problem", role: "alert" }, `Could not load the model call: ${error.message}`));
      }
      return;
    }
    if (this.selected !== seq) return;
    detail.append(modelCallView(call));
  }
}

function label(event) {
  if (event.kind === "message") return `message · ${event.role}`;
  if (event.kind === "status") return `status · ${event.source || "agent"}`;
  return event.kind;
}

function summary(event) {
  const text = textOf(event);
  if (text) return text.length > 90 ? `${text.slice(0, 89)}…` : text;
  const part = (event.parts || [])[0];
  if (part && part.type === "tool_call") return `${part.name}(…)`;
  if (part && part.type === "tool_result") return `${part.name || "result"}: ${String(part.content).slice(0, 80)}`;
  const keys = Object.keys(event.metadata || {});
  return keys.length ? keys.join(", ") : event.author;
}

// The event's images and files: its own parts (a user's message), and what each tool result
// carries beside its text (`attachments`). Null when it has none.
function mediaView(event, sessionId) {
  const items = [];
  for (const part of event.parts || []) {
    const own = mediaOf(part, sessionId);
    if (own) items.push(own);
    const attached = (part.attachments || []).map((media) => mediaOf(media, sessionId)).filter(Boolean);
    if (attached.length) {
      items.push(el("figure", {}, ...attached, el("figcaption", {}, `returned by ${part.name || "the tool"}`)));
    }
  }
  if (!items.length) return null;
  return el("section", { class: "event-media", "aria-label": "The event's images and files" },
    el("h4", {}, "Images and files"), ...items);
}

function modelCallView(call) {
  const request = call.request;
  const facts = [
    call.turn ? `turn ${call.turn}` : null, `${request.model} (${request.provider})`,
    call.tokens !== null ? `${call.tokens} tokens` : null, call.duration_ms !== null ? duration(call.duration_ms) : null,
  ].filter(Boolean).join(" · ");
  const messages = el("ol", { class: "request-messages" }, ...request.messages.map((m) =>
    el("li", {}, el("span", { class: "role" }, m.role), el("pre", { class: "json" }, messageText(m)))));
  const tools = el("ul", { class: "request-tools" }, ...request.tools.map((t) =>
    el("li", {}, el("details", {}, el("summary", {}, t.name, t.description ? `: ${t.description}` : ""),
      el("pre", { class: "json" }, pretty(t.parameters))))));
  return el("section", { class: "model-call", "aria-label": "Model call" },
    el("h3", {}, "Model call"), el("p", { class: "facts" }, facts),
    el("h4", {}, `Request: ${request.messages.length} messages`), messages,
    el("h4", {}, `Tools (${request.tools.length})`), request.tools.length ? tools : el("p", { class: "hint" }, "none"),
    el("h4", {}, "Settings"), el("pre", { class: "json" }, pretty(request.settings)),
    request.output_schema ? el("pre", { class: "json" }, pretty(request.output_schema)) : null,
    el("h4", {}, "Response"),
    call.response ? el("pre", { class: "json" }, messageText(call.response))
      : el("p", { class: "problem" }, call.error ? `No answer: ${call.error}` : "No answer on record."),
    el("h4", {}, "How exact this is"), el("ul", { class: "notes" }, ...call.notes.map((n) => el("li", {}, n))));
}

function messageText(message) {
  return message.parts.map((p) => (p.type === "text" ? p.text : pretty(p))).join("\n");
}
