// The conversation: one <article class="turn"> per prompt, holding the user's message, an
// activity block of status lines (collapsed), tool calls as cards, the answer (Markdown,
// rendered as it streams, its reasoning folded above it), the audit of approvals and the
// errors. Events arrive in log order: the stored ones, then the live ones (no seq yet: an
// answer's deltas, a tool's progress), which `dropLive` forgets when the stream starts over.

import { $, clock, describeCall, el, textOf } from "./dom.js";
import { MarkdownStream, renderMarkdown } from "./markdown.js";
import { forgetMedia, mediaOf } from "./media.js";
import { ToolCard } from "./toolcard.js";

const NEAR_END = 48; // px: a reader this close to the end is following it

export class Chat {
  // handlers: {fork({at_seq, text|content, call_id}), regenerate(seq), openSession(id),
  //            trace(callId) (show a call in the timeline), sessionId()}
  constructor(handlers) {
    this.handlers = handlers;
    this.pinned = true;
    this.frame = 0;
    const box = $("conversation");
    box.addEventListener("scroll", () => {
      this.pinned = box.scrollHeight - box.scrollTop - box.clientHeight < NEAR_END;
      if (this.pinned) $("jump").hidden = true;
    });
    $("jump").addEventListener("click", () => {
      this.pinned = true;
      this.scroll();
      $("conversation").focus({ preventScroll: true });
    });
    this.reset();
  }

  reset() {
    $("turns").replaceChildren();
    $("pending").replaceChildren();
    $("jump").hidden = true;
    forgetMedia();
    this.pinned = true;
    this.turn = null;
    this.tools = new Map();  // call_id -> ToolCard
    this.drafts = new Map(); // answer id -> {bubble, text, reasoning, markdown}
  }

  showEmpty(text) {
    $("turns").replaceChildren(el("p", { class: "empty" }, text));
  }

  apply(event) {
    if (event.partial) return this.showPending(event);
    if (event.kind === "delta") return this.appendDelta(event);
    if (event.kind === "status" || event.kind === "marker") return this.addStatus(event);
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
    this.changed();
  }

  addAnswer(event) {
    const draft = this.drafts.get(event.id);
    this.drafts.delete(event.id);
    const text = textOf(event);
    const reasoning = event.parts.filter((p) => p.type === "reasoning" && p.text).map((p) => p.text).join("\n\n");
    const images = event.parts.map((part) => this.mediaNode(part)).filter(Boolean);
    const bubble = draft ? draft.bubble : el("div", { class: "msg assistant" }, el("div", { class: "answer" }));
    this.finishDraft(bubble);
    if (text || images.length || reasoning) {
      const answer = bubble.querySelector(".answer");
      if (draft && draft.text === text) draft.markdown.finish(text); // as streamed: nothing moves
      else answer.replaceChildren(renderMarkdown(text));
      answer.append(...images);
      this.showReasoning(bubble, reasoning || draft?.reasoning || "", false);
      bubble.dataset.seq = event.seq ?? "";
      if (event.metadata?.cut_off) bubble.append(el("p", { class: "cut-off" }, "Stopped here: the run was cancelled."));
      if (!bubble.isConnected) this.place(bubble);
      if (event.seq) bubble.after(el("div", { class: "answer-tools" }, this.regenerateButton(event)));
    } else {
      bubble.remove();
    }
    for (const call of event.parts.filter((p) => p.type === "tool_call")) this.addToolCard(call);
    this.changed();
  }

  showReasoning(bubble, text, open) {
    let box = bubble.querySelector(".reasoning");
    if (!text) { box?.remove(); return; }
    if (!box) {
      box = el("details", { class: "reasoning" }, el("summary", {}, "Reasoning"), el("div", { class: "reasoning-text" }));
      bubble.prepend(box);
    }
    box.open = open;
    box.querySelector("summary").textContent = open ? "Thinking…" : "Reasoning";
    box.querySelector(".reasoning-text").textContent = text;
  }

  // -- images and files -----------------------------------------------------------------------

  mediaNode(part) {
    return mediaOf(part, this.handlers.sessionId(), () => this.changed());
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
    if (tool) tool.root.after(box);
    else this.place(box);
  }

  // -- tool calls -----------------------------------------------------------------------------

  addToolCard(call) {
    const card = new ToolCard(call);
    const trace = el("button", { type: "button", class: "link" }, "Show in the timeline");
    trace.addEventListener("click", () => this.handlers.trace(call.id));
    card.body.append(el("p", { class: "row" }, trace));
    this.tools.set(call.id, card);
    this.place(card.root);
  }

  // Open a tool call's card, bring it into view and put the focus on it.
  reveal(callId) {
    const card = this.tools.get(callId);
    if (!card) return;
    if (matchMedia("(max-width: 700px)").matches) document.body.classList.remove("inspecting");
    card.root.open = true;
    card.root.scrollIntoView({ block: "center" });
    card.root.querySelector("summary").focus();
  }

  settleCall(part, event) {
    const tool = this.tools.get(part.call_id);
    this.showAttachments(part, tool);
    if (!tool) return;
    tool.settle(part, event);
    if (event.seq) tool.body.append(this.editResultButton(tool, part, event));
    this.changed();
  }

  // -- status lines, approvals, errors ----------------------------------------------------------

  addStatus(event) {
    const meta = event.metadata || {};
    const tool = meta.call_id ? this.tools.get(meta.call_id) : null;
    if (tool && meta.started) tool.start(event);
    else if (tool && event.kind === "status" && event.source === "tool" && !tool.root.dataset.state?.match(/returned|failed|denied|not run/)) {
      tool.progress(event);
    }
    if (event.kind === "marker" || meta.partial_result) return; // a partial result shows in its card
    const turn = this.turn || this.startTurn();
    const text = textOf(event);
    const line = el("li", {}, el("span", { class: "source" }, `[${event.source || "agent"}]`), ` ${text}`);
    if (event.seq === null && event.id) line.dataset.live = event.id; // not stored yet
    turn.lines.append(line);
    const count = turn.lines.children.length;
    turn.summary.textContent = `${count} step${count === 1 ? "" : "s"}: ${text}`;
    if (meta.interrupted) this.tools.get(meta.interrupted.call_id)?.waiting();
    if (meta.approval) this.showAudit(meta.approval, event);
    if (meta.edited_call) this.tools.get(meta.edited_call)?.showEdit(meta);
    if (meta.forked_from) this.showFork(meta.forked_from);
    if (meta.run_end) this.endRun(meta);
  }

  endRun(meta) {
    for (const draft of this.drafts.values()) this.finishDraft(draft.bubble);
    if (meta.run_end !== "interrupted") for (const tool of this.tools.values()) tool.abandon();
    if (meta.run_end === "failed") this.showError(meta.error?.message || "the run failed");
  }

  showAudit(approval, event) {
    const tool = this.tools.get(approval.call_id);
    if (tool) tool.decided(approval);
    const approved = approval.decision === "approved" || approval.decision === "answered";
    const line = el("p", { class: `audit ${approved ? "approved" : "denied"}` },
      el("span", { "aria-hidden": "true" }, approved ? "✔ " : "✘ "),
      `${approval.user} ${approval.decision} ${approval.name}`, approval.arguments ? " with edited arguments" : "",
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
    const root = this.turn ? this.turn.root : $("turns");
    for (const node of root.querySelectorAll(".error")) if (node.dataset.message === message) return;
    root.append(el("div", { class: "error", role: "alert", "data-message": message }, el("strong", {}, "Failed: "), message));
    this.changed();
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

  // -- turns and the streamed answer ----------------------------------------------------------

  startTurn() {
    document.querySelectorAll("#turns > .empty").forEach((node) => node.remove());
    const summary = el("summary", {}, "activity");
    const lines = el("ol");
    const activity = el("details", { class: "activity" }, summary, lines);
    const root = el("article", { class: "turn" }, activity);
    $("turns").append(root);
    this.turn = { root, activity, lines, summary };
    return this.turn;
  }

  // An answer's text (or reasoning) fragment; its `id` is the one its stored message keeps.
  appendDelta(event) {
    let draft = this.drafts.get(event.id);
    if (!draft) {
      const answer = el("div", { class: "answer" });
      const bubble = el("div", { class: "msg assistant streaming", "aria-busy": "true", "data-draft": event.id }, answer);
      draft = { bubble, text: "", reasoning: "", markdown: new MarkdownStream(answer) };
      this.drafts.set(event.id, draft);
      this.place(bubble);
    }
    if (event.metadata?.reasoning) {
      draft.reasoning += event.parts.map((p) => p.text || "").join("");
      this.showReasoning(draft.bubble, draft.reasoning, true);
    } else {
      draft.text += textOf(event);
      draft.markdown.set(draft.text);
    }
    this.changed();
  }

  finishDraft(bubble) {
    bubble.classList.remove("streaming");
    bubble.removeAttribute("aria-busy");
  }

  // A live line is on record now.
  settle(id) {
    for (const line of document.querySelectorAll("#turns li[data-live]")) {
      if (line.dataset.live === id) delete line.dataset.live;
    }
  }

  // The stream starts over: what was not stored yet comes again (an answer's deltas from the first).
  dropLive() {
    document.querySelectorAll("#turns li[data-live]").forEach((line) => line.remove());
    for (const draft of this.drafts.values()) draft.bubble.remove();
    this.drafts.clear();
  }

  place(node) {
    (this.turn || this.startTurn()).root.append(node);
    this.changed();
  }

  // -- following the end ----------------------------------------------------------------------

  // The conversation grew: a reader at its end stays there; one who scrolled up is offered a jump.
  changed() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (this.pinned) this.scroll();
      else $("jump").hidden = false;
    });
  }

  scroll() {
    const box = $("conversation");
    box.scrollTop = box.scrollHeight;
    $("jump").hidden = true;
  }

  // -- editing earlier messages (forks) -------------------------------------------------------

  editButton(bubble, event) {
    const button = el("button", { type: "button", class: "edit", "aria-label": "Edit and fork from here" }, "Edit");
    button.addEventListener("click", () => {
      this.editor(bubble, textOf(event), "New text", (text) => this.handlers.fork({ at_seq: event.seq, text }));
    });
    return button;
  }

  regenerateButton(event) {
    const button = el("button", { type: "button", class: "edit regenerate", "aria-label": "Regenerate this answer" },
      "Regenerate");
    button.addEventListener("click", () => this.handlers.regenerate(event.seq));
    return button;
  }

  editResultButton(tool, part, event) {
    const button = el("button", { type: "button", class: "edit" }, "Edit result and fork");
    button.addEventListener("click", () => {
      this.editor(tool.root, part.content, "New result",
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
    form.querySelector(".cancel").addEventListener("click", () => {
      close();
      anchor.querySelector("button.edit")?.focus();
    });
    form.addEventListener("keydown", (e) => {
      if (e.key !== "Escape") return;
      e.stopPropagation();
      close();
      anchor.querySelector("button.edit")?.focus();
    });
    anchor.hidden = true;
    anchor.after(form);
    box.focus();
  }
}
