// The conversation: one <article class="turn"> per prompt, holding the user's message, an
// activity block of status lines (collapsed), tool calls as cards (with the arguments a user
// edited before the call ran, the model's folded), the answer (Markdown), approvals, the
// audit of decisions and errors. Events arrive in log order.

import { $, clock, describeCall, el, prettyContent, pretty, textOf } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { forgetMedia, mediaOf } from "./media.js";

export class Chat {
  // handlers: {decide(callId, answer, card), fork({at_seq, text|content, call_id}), openSession(id),
  //            sessionId() (the session shown: its images come from its blob route)}
  constructor(handlers) {
    this.handlers = handlers;
    this.reset();
  }

  reset() {
    $("conversation").replaceChildren();
    $("pending").replaceChildren();
    forgetMedia();
    this.turn = null;
    this.approvals = new Map(); // call_id -> approval card
    this.tools = new Map();     // call_id -> tool card
  }

  showEmpty(text) {
    $("conversation").append(el("p", { class: "empty" }, text));
  }

  apply(event) {
    if (event.partial) return this.showPending(event);
    if (event.kind === "delta") return event.metadata?.reasoning ? undefined : this.appendDelta(textOf(event));
    if (event.kind === "status") return this.addStatus(event);
    if (event.kind === "message") return this.addMessage(event);
  }

  // -- messages -------------------------------------------------------------------------------

  addMessage(event) {
    if (event.role === "user") return this.addUser(event);
    if (event.role === "assistant") return this.addAnswer(event);
    if (event.role === "tool") {
      for (const part of event.parts) if (part.type === "tool_result") this.settleCall(part, event);
    }
  }

  addUser(event) {
    const turn = this.startTurn();
    this.clearPending(event.author);
    const body = document.createDocumentFragment();
    for (const part of event.parts) {
      if (part.type === "text") body.append(part.text);
      else if (part.type === "tool_call") body.append(el("span", { class: "chip" }, describeCall(part)));
      else if (part.type === "document") body.append(el("span", { class: "chip" }, `document: ${part.title}`));
      else this.appendMedia(body, part);
    }
    const row = el("div", { class: "user-row" }, el("div", { class: "msg user", "data-seq": event.seq ?? "" }, body));
    if (event.seq && textOf(event).trim()) row.append(this.editButton(row, event));
    turn.root.insertBefore(row, turn.activity);
  }

  addAnswer(event) {
    const bubble = this.takeDraft();
    const text = textOf(event);
    const images = event.parts.map((part) => this.mediaNode(part)).filter(Boolean);
    if (text || images.length) {
      bubble.replaceChildren(renderMarkdown(text), ...images);
      bubble.dataset.seq = event.seq ?? "";
      this.place(bubble);
    } else {
      bubble.remove();
    }
    for (const call of event.parts.filter((p) => p.type === "tool_call")) this.addToolCard(call);
  }

  // -- images and files -----------------------------------------------------------------------

  mediaNode(part) {
    return mediaOf(part, this.handlers.sessionId(), keepAtEnd);
  }

  appendMedia(node, part) {
    const media = this.mediaNode(part);
    if (media) node.append(media);
  }

  // A tool's images and files, shown under its card (outside it: a closed card hides its body).
  showAttachments(part, tool) {
    const nodes = (part.attachments || []).map((media) => this.mediaNode(media)).filter(Boolean);
    if (!nodes.length) return;
    const box = el("div", { class: "tool-media", "data-call": part.call_id, role: "group",
      "aria-label": `What ${part.name || "the tool"} returned` }, ...nodes);
    if (tool) tool.card.after(box);
    else this.place(box);
  }

  // -- tool calls -----------------------------------------------------------------------------

  addToolCard(call) {
    const name = el("span", { class: "tool-name" }, describeCall(call));
    const state = el("span", { class: "tool-state" }, "called");
    const heading = el("h4", {}, "Arguments");
    const args = el("pre", { class: "json" }, argumentsText(call.arguments));
    const result = el("pre", { class: "json" }, "no result yet");
    const card = el("details", { class: "tool-card", "data-call": call.id },
      el("summary", {}, name, " ", state),
      el("div", { class: "tool-body" }, heading, args, el("h4", {}, "Result"), result));
    this.tools.set(call.id, { card, state, result, name, heading, args, call, edit: [] });
    this.place(card);
  }

  // A user approved a paused call with other arguments (the log's `edited_call` line, written
  // before it ran): the card shows those as what ran, and keeps the model's folded below.
  showEdit(meta) {
    const tool = this.tools.get(meta.edited_call);
    if (!tool) return;
    const who = `edited by ${meta.user || "the user"}`;
    tool.edit.forEach((node) => node.remove());
    const badge = el("span", { class: "edited-badge" }, who);
    const original = el("details", { class: "original-args" },
      el("summary", {}, "The model's arguments"),
      el("pre", { class: "json" }, argumentsText(meta.original_arguments ?? tool.call.arguments)));
    tool.edit = [badge, original];
    tool.card.classList.add("edited");
    tool.name.textContent = describeCall({ name: tool.call.name, arguments: meta.arguments });
    tool.name.after(badge);
    tool.heading.textContent = `Arguments (${who})`;
    tool.args.textContent = argumentsText(meta.arguments);
    tool.args.after(original);
  }

  settleCall(part, event) {
    const tool = this.tools.get(part.call_id);
    this.showAttachments(part, tool);
    if (tool) {
      tool.state.textContent = part.is_error ? "failed" : "returned";
      tool.card.classList.toggle("failed", part.is_error);
      tool.result.textContent = prettyContent(part.content);
      if (event.seq) {
        tool.card.querySelector(".tool-body").append(this.editResultButton(tool, part, event));
      }
    }
    const card = this.approvals.get(part.call_id);
    if (card) {
      card.remove();
      this.approvals.delete(part.call_id);
    }
  }

  // -- status lines, approvals, errors ----------------------------------------------------------

  addStatus(event) {
    const turn = this.turn || this.startTurn();
    const text = textOf(event);
    const meta = event.metadata || {};
    const line = el("li", {}, el("span", { class: "source" }, `[${event.source || "agent"}]`), ` ${text}`);
    if (event.seq === null && event.id) line.dataset.live = event.id; // not stored yet
    turn.lines.append(line);
    const count = turn.lines.children.length;
    turn.summary.textContent = `${count} step${count === 1 ? "" : "s"}: ${text}`;
    if (meta.interrupted) this.showApproval(meta.interrupted);
    if (meta.approval) this.showAudit(meta.approval, event);
    if (meta.edited_call) this.showEdit(meta);
    if (meta.forked_from) this.showFork(meta.forked_from);
    if (meta.error) this.showError(meta.error.message || text);
  }

  showApproval(item) {
    const old = this.approvals.get(item.call_id);
    if (old) old.remove();
    const approve = el("button", { type: "button", class: "approve" }, "Approve");
    const deny = el("button", { type: "button", class: "deny" }, "Deny");
    const reasonId = `reason-${item.call_id}`;
    const reason = el("input", { id: reasonId, type: "text", class: "reason", placeholder: "optional" });
    const problem = el("p", { class: "problem", role: "alert", hidden: true });
    const card = el("div", { class: "approval", role: "group", "aria-label": `Approve ${item.name}?` },
      el("p", {}, el("strong", {}, "Approval needed: "), describeCall(item), item.reason ? ` (${item.reason})` : ""),
      el("div", { class: "row" }, approve, deny,
        el("label", { for: reasonId, class: "reason-label" }, "Reason for a denial"), reason),
      problem);
    card.problem = problem;
    approve.addEventListener("click", () => this.handlers.decide(item.call_id, true, card));
    const refuse = () => this.handlers.decide(item.call_id, reason.value.trim() || false, card);
    deny.addEventListener("click", refuse);
    reason.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); refuse(); } });
    this.approvals.set(item.call_id, card);
    this.place(card);
    approve.focus();
  }

  showAudit(approval, event) {
    const verb = approval.decision === "approved" ? "approved" : "denied";
    const line = el("p", { class: `audit ${verb}` },
      el("span", { "aria-hidden": "true" }, verb === "approved" ? "✔ " : "✘ "),
      `${approval.user} ${verb} ${approval.name}`, approval.arguments ? " with edited arguments" : "",
      approval.reason ? `: ${approval.reason}` : "",
      el("time", { datetime: event.created_at || "" }, event.created_at ? ` at ${clock(event.created_at)}` : ""));
    this.place(line);
  }

  showFork(origin) {
    const open = el("button", { type: "button", class: "link" }, `session ${origin.session_id.slice(0, 12)}`);
    open.addEventListener("click", () => this.handlers.openSession(origin.session_id));
    this.place(el("p", { class: "fork-note" }, "Forked by ", origin.user, " from ", open, ` at event ${origin.seq}`));
  }

  showError(message) {
    const root = this.turn ? this.turn.root : $("conversation");
    for (const node of root.querySelectorAll(".error")) if (node.dataset.message === message) return;
    const box = el("div", { class: "error", role: "alert", "data-message": message }, el("strong", {}, "Failed: "), message);
    root.append(box);
    scrollToEnd();
  }

  // -- pending drafts -----------------------------------------------------------------------

  showPending(event) {
    this.clearPending(event.author);
    const parts = event.parts.map((p) => (p.type === "tool_call" ? describeCall(p) : p.text || p.title || p.type));
    $("pending").append(el("div", { class: "pending", "data-author": event.author },
      el("strong", {}, `Pending draft (${event.author}): `), parts.join(", ")));
  }

  clearPending(author) {
    for (const node of document.querySelectorAll("#pending .pending")) {
      if (node.dataset.author === author) node.remove();
    }
  }

  // -- turns and the streamed draft -----------------------------------------------------------

  startTurn() {
    this.finishDraft();
    document.querySelectorAll("#conversation > .empty").forEach((node) => node.remove());
    const summary = el("summary", {}, "activity");
    const lines = el("ol");
    const activity = el("details", { class: "activity" }, summary, lines);
    const root = el("article", { class: "turn" }, activity);
    $("conversation").append(root);
    this.turn = { root, activity, lines, summary, draft: null };
    return this.turn;
  }

  appendDelta(text) {
    const turn = this.turn || this.startTurn();
    if (!turn.draft) {
      turn.draft = el("div", { class: "msg assistant streaming", "aria-busy": "true" });
      this.place(turn.draft);
    }
    turn.draft.textContent += text;
    scrollToEnd();
  }

  takeDraft() {
    const turn = this.turn || this.startTurn();
    const bubble = turn.draft || el("div", { class: "msg assistant" });
    bubble.classList.remove("streaming");
    bubble.removeAttribute("aria-busy");
    turn.draft = null;
    return bubble;
  }

  // A live line is on record now.
  settle(id) {
    for (const line of document.querySelectorAll("#conversation li[data-live]")) {
      if (line.dataset.live === id) delete line.dataset.live;
    }
  }

  // Reconnecting: what was not stored yet comes again (the draft's deltas from the first).
  dropLive() {
    document.querySelectorAll("#conversation li[data-live]").forEach((line) => line.remove());
    if (this.turn && this.turn.draft) {
      this.turn.draft.remove();
      this.turn.draft = null;
    }
  }

  finishDraft() {
    if (this.turn && this.turn.draft) {
      this.turn.draft.classList.remove("streaming");
      this.turn.draft.removeAttribute("aria-busy");
      this.turn.draft = null;
    }
  }

  place(node) {
    (this.turn || this.startTurn()).root.append(node);
    scrollToEnd();
  }

  // -- editing earlier messages (forks) -------------------------------------------------------

  editButton(bubble, event) {
    const button = el("button", { type: "button", class: "edit", "aria-label": "Edit and fork from here" }, "Edit");
    button.addEventListener("click", () => {
      this.editor(bubble, textOf(event), "New text", (text) => this.handlers.fork({ at_seq: event.seq, text }));
    });
    return button;
  }

  editResultButton(tool, part, event) {
    const button = el("button", { type: "button", class: "edit" }, "Edit result and fork");
    button.addEventListener("click", () => {
      this.editor(tool.card, part.content, "New result",
        (content) => this.handlers.fork({ at_seq: event.seq, content, call_id: part.call_id }));
    });
    return button;
  }

  editor(anchor, text, label, submit) {
    const id = `edit-${Math.random().toString(36).slice(2)}`;
    const box = el("textarea", { id, rows: 3 });
    box.value = text;
    const form = el("form", { class: "editor" },
      el("label", { for: id }, label), box,
      el("div", { class: "row" }, el("button", { type: "submit", class: "primary" }, "Fork and run"),
        el("button", { type: "button", class: "cancel" }, "Cancel")));
    const close = () => { form.remove(); anchor.hidden = false; };
    form.addEventListener("submit", (e) => { e.preventDefault(); if (box.value.trim()) { close(); submit(box.value); } });
    form.querySelector(".cancel").addEventListener("click", close);
    form.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.stopPropagation(); close(); } });
    anchor.hidden = true;
    anchor.after(form);
    box.focus();
  }
}

function argumentsText(args) {
  return typeof args === "string" ? args : pretty(args);
}

// An image grew the conversation once loaded: stay at the end if the reader was there.
function keepAtEnd(img) {
  const box = $("conversation");
  if (box.scrollHeight - img.offsetHeight - box.scrollTop - box.clientHeight < 48) scrollToEnd();
}

export function scrollToEnd() {
  const box = $("conversation");
  box.scrollTop = box.scrollHeight;
}
