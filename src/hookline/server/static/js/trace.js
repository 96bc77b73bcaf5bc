// One trace per prompt (`GET .../traces`): its runs (the prompt's, then each resume) as a
// waterfall, each with its model and tool calls, its hooks' lines and slow hook calls nested
// under it, and the human waits of its approvals; with its tokens, its time and the time it
// waited for people.
// A model call's row opens its event (the model-call view first); a tool call's row shows its
// card in the chat, whose "Timeline" button comes back here.

import { $, duration, el, money } from "./dom.js";
import { apiJSON, session } from "./api.js";

export class Trace {
  // handlers: {pick(seq) (show an event in the inspector), card(callId) (show a tool call's card)}
  constructor(handlers) {
    this.handlers = handlers;
    this.prompts = [];
    this.complete = true; // false: the session holds prompts before those listed
    this.wanted = null; // a call to show once loaded
    $("trace-picker").addEventListener("change", () => this.draw(Number($("trace-picker").value)));
  }

  async load(sessionId) {
    const found = await apiJSON(`${session(sessionId)}/traces`);
    this.prompts = found.prompts;
    this.complete = found.complete;
    const picker = $("trace-picker");
    picker.replaceChildren(...this.prompts.map((prompt, index) =>
      el("option", { value: index }, `${index + 1}. ${prompt.title || "prompt"}${prompt.outcome ? ` (${prompt.outcome})` : ""}`)));
    let index = this.prompts.length - 1;
    if (this.wanted) {
      const having = this.prompts.findIndex((p) => p.spans.some((s) => s.call_id === this.wanted));
      if (having >= 0) index = having;
    }
    picker.value = String(index);
    this.draw(index);
    if (this.wanted) {
      document.querySelector(`#trace-chart [data-call="${CSS.escape(this.wanted)}"]`)?.focus();
      this.wanted = null;
    }
  }

  // Show the span of tool call `callId` (from its card) on the next load.
  want(callId) {
    this.wanted = callId;
  }

  draw(index) {
    const chart = $("trace-chart");
    const prompt = this.prompts[index];
    if (!prompt) {
      chart.replaceChildren(el("p", { class: "hint" }, "No run yet."));
      return;
    }
    const start = Date.parse(prompt.started_at);
    const ends = prompt.spans.map((s) => Date.parse(s.ended_at || s.started_at));
    const end = Math.max(Date.parse(prompt.ended_at || prompt.started_at), ...ends, start + 1);
    const total = end - start;
    const models = prompt.spans.filter((s) => s.kind === "model").length;
    const tools = prompt.spans.filter((s) => s.kind === "tool").length;
    const split = prompt.input_tokens || prompt.output_tokens ? ` (${prompt.input_tokens} in, ${prompt.output_tokens} out)` : "";
    const facts = [`${models} model call${models === 1 ? "" : "s"}`, `${tools} tool call${tools === 1 ? "" : "s"}`,
      `${prompt.tokens} tokens${split}`, money(prompt.cost, prompt.currency), duration(total), prompt.waited_ms ? `${duration(prompt.waited_ms)} waiting for people` : null,
      prompt.outcome || "going on"].filter(Boolean).join(" · ");
    chart.replaceChildren(...[
      el("p", { class: "facts" }, facts, prompt.error ? `: ${prompt.error}` : ""),
      el("ol", { class: "bars", "aria-label": "What the prompt set off, over time" },
        ...prompt.spans.map((span) => this.bar(span, start, total))),
      el("p", { class: "axis", "aria-hidden": "true" }, el("span", {}, "0"), el("span", {}, duration(total))),
      this.complete ? null : el("p", { class: "hint" }, "A long session: the prompts of its latest 5,000 events only."),
    ].filter(Boolean));
  }

  bar(span, start, total) {
    const begin = Date.parse(span.started_at) - start;
    const length = span.duration_ms ?? (span.kind === "hook" ? 0 : Math.max(0, Date.now() - Date.parse(span.started_at)));
    const left = Math.max(0, Math.min(100, (begin / total) * 100));
    const width = Math.max(0.6, Math.min(100 - left, (length / total) * 100));
    const facts = [duration(span.duration_ms),
      span.ttft_ms !== null && span.ttft_ms !== undefined ? `first token ${duration(span.ttft_ms)}` : null,
      span.input_tokens !== null && span.input_tokens !== undefined
        ? `${span.input_tokens} in / ${span.output_tokens} out tok` : span.tokens !== null ? `${span.tokens} tok` : null,
      money(span.cost, span.currency), span.ran ? null : "not run", span.outcome, span.is_error && span.kind === "tool" ? "error" : null]
      .filter(Boolean).join(", ");
    const names = { model: `model ${span.name}`, tool: `tool ${span.name}`, run: span.name, hook: `hook ${span.name}`,
      approval: `approval of ${span.name}` };
    const button = el("button", { type: "button", class: `bar-row ${span.kind} depth-${span.depth}${span.is_error ? " failed" : ""}`,
      "data-seq": span.seq, "data-call": span.call_id || null },
    el("span", { class: "bar-label" }, names[span.kind], el("span", { class: "bar-facts" }, facts || "going on")),
    el("span", { class: "bar-track", "aria-hidden": "true" },
      el("span", { class: "bar", style: `left:${left}%;width:${width}%` })));
    button.addEventListener("click", () => {
      if (span.kind === "tool" && span.call_id) this.handlers.card(span.call_id);
      else this.handlers.pick(span.seq);
    });
    return el("li", {}, button);
  }
}
