// JSON as a tree of folds (the session's `state.data`, an event): objects and arrays fold, a
// string that holds JSON (a tool's result, a model's arguments) is shown parsed, marked so.

import { $, el } from "./dom.js";
import { ApiError, apiJSON, session } from "./api.js";

export class StateView {
  // handlers: {lineage(id) -> {parent, children} (sessions as the list has them), open(id)}
  constructor(handlers) {
    this.handlers = handlers;
  }

  async load(sessionId) {
    const found = await apiJSON(`${session(sessionId)}/state`);
    const keys = Object.keys(found.state || {});
    $("state-view").replaceChildren(keys.length ? jsonTree(found.state, { open: 2 })
      : el("p", { class: "hint" }, "state.data is empty."));
    this.lineage(sessionId);
  }

  // Where the session was forked from, and the forks made of it.
  lineage(sessionId) {
    const { parent, children } = this.handlers.lineage(sessionId);
    const link = (item) => {
      const button = el("button", { type: "button", class: "link" }, item.title || item.id);
      button.addEventListener("click", () => this.handlers.open(item.id));
      return el("li", {}, button);
    };
    const lines = [];
    if (parent) lines.push(el("p", {}, "Forked from ", link(parent).firstChild));
    if (children.length) lines.push(el("p", {}, `Forks of this session (${children.length}):`),
      el("ul", { class: "forks" }, ...children.map(link)));
    $("lineage").replaceChildren(...(lines.length ? lines : [el("p", { class: "hint" }, "No fork of or from this session.")]));
  }
}

// The current `state.data` of a session (a fork starts from a copy of it).
export async function stateOf(sessionId) {
  return (await apiJSON(`${session(sessionId)}/state`)).state || {};
}

// The state recorded at event `seq` by a run with StatusOptions(state=True): {state, previous,
// recorded_seq}, or {problem} (why none is on record).
export async function stateAt(sessionId, seq) {
  try {
    return await apiJSON(`${session(sessionId)}/state?at_seq=${seq}`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 422) return { problem: error.message };
    throw error;
  }
}

// The tree of `value`; its first `open` levels unfolded.
export function jsonTree(value, { open = 1 } = {}) {
  return el("ul", { class: "tree" }, ...entries(value).map(([key, item]) => node(key, item, open - 1)));
}

function entries(value) {
  return Array.isArray(value) ? value.map((item, i) => [i, item]) : Object.entries(value);
}

function node(key, value, open) {
  const parsed = nestedJSON(value);
  const shown = parsed === undefined ? value : parsed;
  const name = el("span", { class: "key" }, String(key));
  if (shown !== null && typeof shown === "object") {
    const size = Array.isArray(shown) ? `[${shown.length}]` : `{${Object.keys(shown).length}}`;
    const note = parsed === undefined ? null : el("span", { class: "hint" }, " (a JSON string)");
    return el("li", {}, el("details", { open: open > 0 }, el("summary", {}, name, ` ${size}`, note),
      el("ul", { class: "tree" }, ...entries(shown).map(([k, v]) => node(k, v, open - 1)))));
  }
  return el("li", {}, name, ": ", el("span", { class: `value ${shown === null ? "null" : typeof shown}` },
    typeof shown === "string" ? JSON.stringify(shown) : String(shown)));
}

// The JSON a string holds (an object or an array), or undefined.
function nestedJSON(value) {
  if (typeof value !== "string" || !/^\s*[[{]/.test(value) || value.length > 200_000) return undefined;
  try {
    const parsed = JSON.parse(value);
    return parsed !== null && typeof parsed === "object" ? parsed : undefined;
  } catch {
    return undefined;
  }
}
