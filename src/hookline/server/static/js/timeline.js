// The timeline of a run (model and tool calls as bars over time, with tokens and durations)
// and the session's state (`state.data`) as a tree.

import { $, duration, el } from "./dom.js";
import { apiJSON, session } from "./api.js";

export class Timeline {
  // handlers: {pick(seq)}: show the event a bar starts at
  constructor(handlers) {
    this.handlers = handlers;
    this.runs = [];
    $("run-picker").addEventListener("change", () => this.draw(Number($("run-picker").value)));
  }

  async load(sessionId) {
    const timeline = await apiJSON(`${session(sessionId)}/timeline`);
    this.runs = timeline.runs;
    const picker = $("run-picker");
    picker.replaceChildren(...this.runs.map((run, index) =>
      el("option", { value: index }, `${index + 1}. ${run.title || "run"}${run.outcome ? ` (${run.outcome})` : ""}`)));
    picker.value = String(this.runs.length - 1);
    this.draw(this.runs.length - 1);
  }

  draw(index) {
    const chart = $("timeline-chart");
    const run = this.runs[index];
    if (!run) {
      chart.replaceChildren(el("p", { class: "hint" }, "No run yet."));
      return;
    }
    const start = Date.parse(run.started_at);
    const ends = run.spans.map((s) => Date.parse(s.ended_at || s.started_at));
    const end = Math.max(Date.parse(run.ended_at || run.started_at), ...ends, start + 1);
    const total = end - start;
    const rows = run.spans.map((span) => this.bar(span, start, total));
    chart.replaceChildren(
      el("p", { class: "facts" }, `${run.spans.length} call${run.spans.length === 1 ? "" : "s"} · ${run.tokens} tokens · `
        + duration(total),
        run.outcome ? ` · ${run.outcome}` : " · going on", run.error ? `: ${run.error}` : ""),
      el("ol", { class: "bars", "aria-label": "Model and tool calls over time" }, ...rows),
      el("p", { class: "axis" }, el("span", {}, "0"), el("span", {}, duration(total))));
  }

  bar(span, start, total) {
    const begin = Date.parse(span.started_at) - start;
    const length = span.duration_ms ?? 0;
    const left = Math.max(0, Math.min(100, (begin / total) * 100));
    const width = Math.max(0.8, Math.min(100 - left, (length / total) * 100));
    const facts = [duration(span.duration_ms), span.tokens !== null ? `${span.tokens} tok` : null,
      span.ran ? null : "not run", span.is_error ? "error" : null].filter(Boolean).join(", ");
    const name = span.kind === "model" ? `model ${span.name}` : `tool ${span.name}`;
    const button = el("button", { type: "button", class: `bar-row ${span.kind}${span.is_error ? " failed" : ""}`,
      "aria-label": `${name}: ${facts || "running"}` },
    el("span", { class: "bar-label" }, name, el("span", { class: "bar-facts" }, facts)),
    el("span", { class: "bar-track" }, el("span", { class: "bar", style: `left:${left}%;width:${width}%` })));
    button.addEventListener("click", () => this.handlers.pick(span.seq));
    return el("li", {}, button);
  }
}

export async function loadState(sessionId) {
  const found = await apiJSON(session(sessionId));
  const tree = $("state-tree");
  const keys = Object.keys(found.state || {});
  tree.replaceChildren(keys.length ? treeOf(found.state) : el("p", { class: "hint" }, "state.data is empty."));
}

function treeOf(value) {
  const list = el("ul", { class: "tree" });
  for (const [key, item] of Object.entries(value)) {
    if (item !== null && typeof item === "object") {
      const size = Array.isArray(item) ? `[${item.length}]` : `{${Object.keys(item).length}}`;
      list.append(el("li", {}, el("details", { open: true }, el("summary", {}, el("span", { class: "key" }, key), ` ${size}`),
        treeOf(item))));
    } else {
      list.append(el("li", {}, el("span", { class: "key" }, key), ": ",
        el("span", { class: `value ${item === null ? "null" : typeof item}` }, JSON.stringify(item))));
    }
  }
  return list;
}
