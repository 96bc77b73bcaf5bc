// A tool call as a card: its arguments and result, and while it runs its last progress line
// (a tool's `ctx.status`), a bar when its partial result (`ctx.partial`) is a fraction, and a
// running timer. The card says how the call ended: returned, failed, denied, not run.

import { describeCall, duration, el, pretty, prettyContent } from "./dom.js";

const running = new Set(); // the cards whose timer ticks
let ticker = null;

function tick() {
  for (const card of running) card.showTime();
  if (!running.size) { clearInterval(ticker); ticker = null; }
}

// A partial result's fraction done, when it says one: a number in [0, 1], {"progress": 0.4},
// {"percent": 40}, or a count of a total ({"done": 2, "of": 5}, {"current": 2, "total": 5}).
export function fractionOf(value) {
  if (typeof value === "number") return value >= 0 && value <= 1 ? value : null;
  if (!value || typeof value !== "object") return null;
  if (typeof value.progress === "number") return fractionOf(value.progress > 1 ? value.progress / 100 : value.progress);
  if (typeof value.percent === "number") return fractionOf(value.percent / 100);
  const done = [value.done, value.current, value.completed, value.step].find((n) => typeof n === "number");
  const total = [value.of, value.total, value.steps].find((n) => typeof n === "number");
  return done !== undefined && total ? fractionOf(done / total) : null;
}

export function argumentsText(args) {
  return typeof args === "string" ? args : pretty(args);
}

export class ToolCard {
  constructor(call) {
    this.call = call;
    this.started = null;     // ms since the epoch, on the server's clock
    this.seenAt = null;      // performance.now() when this page saw it start
    this.decision = null;    // the approval audit's decision, when it was paused
    this.name = el("span", { class: "tool-name" }, describeCall(call));
    this.state = el("span", { class: "tool-state" }, "called");
    this.timer = el("span", { class: "tool-timer" });
    this.line = el("span", { class: "tool-line", hidden: true });
    this.bar = el("progress", { class: "tool-bar", max: "1", hidden: true, "aria-label": `${call.name} progress` });
    this.heading = el("p", { class: "label" }, "Arguments");
    this.args = el("pre", { class: "json", tabindex: "0", "aria-label": "Arguments" }, argumentsText(call.arguments));
    this.result = el("pre", { class: "json", tabindex: "0", "aria-label": "Result" }, "no result yet");
    this.body = el("div", { class: "tool-body" }, this.heading, this.args, el("p", { class: "label" }, "Result"),
      this.result);
    this.root = el("details", { class: "tool-card", "data-call": call.id },
      el("summary", {}, this.name, " ", this.state, this.timer, el("span", { class: "tool-progress" }, this.line, this.bar)),
      this.body);
    this.edit = [];
  }

  // The call started to run (its "running ..." line or marker).
  start(event) {
    this.started = Date.parse(event.created_at || "") || Date.now();
    this.seenAt = event.seq === null || event.seq === undefined ? performance.now() : null;
    this.setState("running");
    running.add(this);
    ticker ||= setInterval(tick, 200);
    this.showTime();
  }

  // A progress line of the call, or its partial result.
  progress(event) {
    const text = (event.parts || []).filter((p) => p.type === "text").map((p) => p.text).join("");
    if (event.metadata?.partial_result) {
      let value = null;
      try { value = JSON.parse(text); } catch { /* a partial result that is no JSON shows as a line */ }
      const fraction = fractionOf(value);
      if (fraction !== null) {
        this.bar.hidden = false;
        this.bar.value = fraction;
        this.bar.textContent = `${Math.round(fraction * 100)}%`;
        return;
      }
    }
    this.line.hidden = false;
    this.line.textContent = text;
  }

  waiting() {
    this.setState("waiting for approval");
  }

  decided(approval) {
    this.decision = approval.decision;
    this.setState(approval.decision);
  }

  // Its result: how it ended, and how long it took.
  settle(part, event) {
    running.delete(this);
    const ended = Date.parse(event.created_at || "");
    if (this.started !== null && ended) this.timer.textContent = ` · ${duration(Math.max(0, ended - this.started))}`;
    else this.timer.textContent = "";
    this.line.hidden = true;
    this.bar.hidden = true;
    let state = "returned";
    if (part.is_error) state = this.decision === "denied" ? "denied" : this.started === null ? "not run" : "failed";
    this.setState(state);
    this.result.textContent = prettyContent(part.content);
  }

  // The run ended while the call ran (cancelled, failed): no result will come from it.
  abandon() {
    if (!running.has(this)) return;
    running.delete(this);
    this.setState("stopped");
  }

  setState(state) {
    this.root.dataset.state = state;
    this.state.textContent = state;
  }

  showTime() {
    if (this.started === null) return;
    const ms = this.seenAt !== null ? performance.now() - this.seenAt : Date.now() - this.started;
    this.timer.textContent = ` · ${duration(Math.max(0, ms))}`;
  }

  // A user approved the paused call with other arguments (the log's `edited_call` line, written
  // before it ran): the card shows those as what ran, and keeps the model's folded below.
  showEdit(meta) {
    const who = `edited by ${meta.user || "the user"}`;
    this.edit.forEach((node) => node.remove());
    const badge = el("span", { class: "edited-badge" }, who);
    const original = el("details", { class: "original-args" },
      el("summary", {}, "The model's arguments"),
      el("pre", { class: "json" }, argumentsText(meta.original_arguments ?? this.call.arguments)));
    this.edit = [badge, original];
    this.root.classList.add("edited");
    this.name.textContent = describeCall({ name: this.call.name, arguments: meta.arguments });
    this.name.after(badge);
    this.heading.textContent = `Arguments (${who})`;
    this.args.textContent = argumentsText(meta.arguments);
    this.args.after(original);
  }
}
