// The inspector's event list: every event of the session (the `all` view, the loop's markers
// too), filtered by kind, source and author or by a search, with each one's time and the gap
// since the one before; it follows the tail while it is at the end. The list is one tab stop
// (a listbox): the arrow keys, Home and End move through it, and the event picked shows below:
// first its model call (what the model was sent and answered), then its images, then its JSON
// as a tree, folded, with JSON held in strings parsed; on demand, `state.data` as recorded at
// the event and the change that made it.

import { $, clock, describeCall, diffLines, duration, el, money, pretty, prettyContent, textOf } from "./dom.js";
import { ApiError, api, apiJSON, session } from "./api.js";
import { mediaOf } from "./media.js";
import { jsonTree, stateAt, stateOf } from "./state.js";

const MODEL_EVENT = (e) => (e.kind === "status" && e.source === "agent" && Number.isInteger(e.metadata?.model_turn))
  || (e.kind === "status" && e.source === "llm") || (e.kind === "message" && e.role === "assistant");
const PAGE = 1000;
const DIFF_CELLS = 250_000; // lines before × lines after: the most a state's line diff compares

export class Inspector {
  // handlers: {fork({at_seq, state?})}
  constructor(handlers) {
    this.handlers = handlers;
    this.sessionId = null;
    this.events = new Map(); // seq -> event
    this.rows = new Map();   // seq -> <li>
    this.selected = null;
    this.older = false;
    this.filters = { q: "", kind: "", source: "", author: "" };
    this.previous = null;    // the last event listed: the gaps are measured from it
    this.loaded = false;     // the list holds the log (else it waits for `reload`, and keeps nothing)
    this.logSeq = 0;         // the last event read from the log (the stream's come between)
    this.held = null;        // events that came while the log loads
    this.fresh = [];         // rows not yet in the list: they go in together, once a frame
    this.frame = 0;
    const list = $("event-list");
    list.setAttribute("role", "listbox");
    list.tabIndex = 0;
    list.addEventListener("keydown", (event) => this.key(event));
    list.addEventListener("click", (event) => {
      const row = event.target.closest("[role=option]");
      if (row) this.select(Number(row.dataset.seq), { reveal: true });
    });
    let timer = null;
    $("event-search").addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { this.filters.q = $("event-search").value.trim().toLowerCase(); this.filter(); }, 120);
    });
    for (const name of ["kind", "source", "author"]) {
      $(`event-${name}`).addEventListener("change", () => { this.filters[name] = $(`event-${name}`).value; this.filter(); });
    }
    this.earlier = el("button", { type: "button", class: "link earlier", hidden: true }, "Show earlier events");
    this.earlier.addEventListener("click", () => this.loadEarlier());
    list.before(this.earlier);
  }

  reset(sessionId) {
    this.sessionId = sessionId;
    this.events.clear();
    this.rows.clear();
    this.selected = null;
    this.previous = null;
    this.older = false;
    this.loaded = false;
    this.held = null;
    this.fresh = [];
    $("event-list").replaceChildren();
    $("event-list").removeAttribute("aria-activedescendant");
    $("event-count").textContent = "";
    $("event-detail").replaceChildren(el("p", { class: "hint" }, "Pick an event to see it."));
  }

  add(event) {
    if (event.seq === null || event.seq === undefined || event.partial) return;
    const known = this.events.get(event.seq);
    if (known) {
      if (!known.created_at && event.created_at) this.restamp(known, event); // a live event, read back from the log
      return;
    }
    if (!this.loaded) {
      if (this.held) this.held.push(event);
      return;
    }
    this.events.set(event.seq, event);
    const row = this.row(event);
    this.rows.set(event.seq, row);
    this.offer(event);
    if (!this.matches(event)) row.hidden = true;
    this.fresh.push(row);
    this.frame ||= requestAnimationFrame(() => this.flush());
  }

  // The rows that came since the last frame go in at once; a list at its end follows them.
  flush() {
    this.frame = 0;
    const list = $("event-list");
    const atEnd = !list.children.length || list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    const fresh = this.fresh.sort((a, b) => a.dataset.seq - b.dataset.seq);
    const first = Number(list.firstElementChild?.dataset.seq ?? Infinity);
    const before = fresh.filter((row) => Number(row.dataset.seq) < first); // an earlier page: in one go
    list.prepend(...before);
    for (const row of fresh.slice(before.length)) {
      const last = list.lastElementChild;
      if (!last || Number(last.dataset.seq) < Number(row.dataset.seq)) list.append(row);
      else list.insertBefore(row, [...list.children].find((r) => Number(r.dataset.seq) > Number(row.dataset.seq)));
    }
    this.fresh = [];
    if (atEnd && $("event-tail").checked) list.scrollTop = list.scrollHeight;
    this.count();
  }

  row(event) {
    const gap = this.previous && event.created_at && this.previous.created_at
      ? Date.parse(event.created_at) - Date.parse(this.previous.created_at) : null;
    this.previous = event;
    return el("li", { role: "option", id: `event-${event.seq}`, "data-seq": event.seq, "aria-selected": "false" },
      el("span", { class: "seq" }, `#${event.seq}`),
      el("time", { class: "when", datetime: event.created_at || "" }, clockOf(event.created_at)),
      el("span", { class: "gap" }, gap !== null ? `+${duration(gap)}` : ""),
      el("span", { class: `kind ${event.kind}` }, label(event)),
      el("span", { class: "line" }, summary(event)));
  }

  // A live event (no time of its own) is read back from the log, with the time it was stored.
  restamp(known, stored) {
    this.events.set(stored.seq, stored);
    const row = this.rows.get(stored.seq);
    const time = row?.querySelector("time");
    if (!time) return;
    time.setAttribute("datetime", stored.created_at);
    time.textContent = clockOf(stored.created_at);
  }

  // New values of the filters' lists (a source or an author not seen before).
  offer(event) {
    const values = { kind: event.kind, source: event.source, author: event.author };
    for (const [name, value] of Object.entries(values)) {
      if (!value) continue;
      const select = $(`event-${name}`);
      if (![...select.options].some((o) => o.value === value)) select.append(el("option", { value }, value));
    }
  }

  matches(event) {
    const { q, kind, source, author } = this.filters;
    if (kind && event.kind !== kind) return false;
    if (source && event.source !== source) return false;
    if (author && event.author !== author) return false;
    return !q || JSON.stringify(event).toLowerCase().includes(q);
  }

  filter() {
    const list = $("event-list");
    const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    for (const [seq, row] of this.rows) row.hidden = !this.matches(this.events.get(seq));
    if (atEnd && $("event-tail").checked) list.scrollTop = list.scrollHeight;
    this.count();
  }

  count() {
    if (this.events.has(1)) this.older = false; // the log's first event is listed (seqs have no gaps)
    const shown = [...this.rows.values()].filter((r) => !r.hidden).length;
    const filtered = shown !== this.rows.size ? ` (${shown} shown)` : "";
    $("event-count").textContent = `${this.rows.size} events${this.older ? " (the latest)" : ""}${filtered}`;
    this.earlier.hidden = !this.older;
  }

  // The page of the log before the first event listed: a long session lists its latest page first.
  async loadEarlier() {
    const id = this.sessionId;
    const first = Math.min(...this.events.keys());
    if (this.earlier.getAttribute("aria-busy") === "true") return;
    this.earlier.setAttribute("aria-busy", "true"); // not disabled: a disabled button drops the focus
    try {
      const response = await api(`${session(id)}/events?view=all&limit=${PAGE}&before_seq=${first}`);
      const events = await response.json();
      if (id !== this.sessionId) return;
      this.older = response.headers.has("Link");
      const latest = this.previous;
      this.previous = null; // the gaps of the earlier page run within it
      events.forEach((e) => this.add(e));
      this.previous = latest;
      if (!this.older && document.activeElement === this.earlier) $("event-list").focus(); // it hides: focus stays
    } catch (error) {
      $("event-detail").replaceChildren(el("p", { class: "problem", role: "alert" },
        `Could not load the earlier events: ${error.message}`));
    } finally {
      this.earlier.removeAttribute("aria-busy");
    }
  }

  // The list's keys: up and down, Home and End, a page at a time.
  key(event) {
    const visible = [...this.rows.values()].filter((r) => !r.hidden);
    if (!visible.length) return;
    const at = visible.findIndex((r) => Number(r.dataset.seq) === this.selected);
    const page = Math.max(1, Math.floor($("event-list").clientHeight / 28));
    const moves = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: visible.length - 1,
      PageDown: at + page, PageUp: at - page };
    if (!(event.key in moves)) return;
    event.preventDefault();
    const next = visible[Math.max(0, Math.min(visible.length - 1, at < 0 && event.key === "ArrowUp" ? 0 : moves[event.key]))];
    this.select(Number(next.dataset.seq), { wait: 150 });
  }

  // Load the log's latest page (once), else what it holds that the stream did not bring (markers).
  async reload() {
    if (!this.sessionId) return;
    if (this.loaded) {
      await this.catchUp();
      return;
    }
    const id = this.sessionId;
    const held = [...this.events.values()];
    this.held = [];
    const response = await api(`${session(id)}/events?view=all&limit=${PAGE}&before_seq=4611686018427387904`);
    const events = await response.json();
    if (id !== this.sessionId) return;
    const selected = this.selected;
    const last = events.at(-1)?.seq ?? 0;
    const since = [...held, ...(this.held || [])].filter((e) => e.seq > last);
    this.reset(id);
    this.loaded = true;
    this.logSeq = last;
    this.older = response.headers.has("Link");
    [...events, ...since].forEach((e) => this.add(e));
    if (selected !== null && this.events.has(selected)) await this.select(selected, { focus: false });
  }

  // Pick event `seq`; `wait` ms before its detail loads (the keys move fast); `reveal`: bring
  // the detail into view where it sits below the list (a phone).
  // The log after the last event read from it: the stream's events again (dropped: known), and
  // the markers between them, which the stream never carries.
  async catchUp() {
    const id = this.sessionId;
    const events = await apiJSON(`${session(id)}/events?view=all&after_seq=${this.logSeq}&limit=${PAGE}`);
    if (id !== this.sessionId) return;
    events.forEach((e) => this.add(e));
    this.logSeq = Math.max(this.logSeq, ...events.filter((e) => e.seq).map((e) => e.seq));
  }

  async select(seq, { wait = 0, reveal = false } = {}) {
    const event = this.events.get(seq);
    if (!event) return;
    this.selected = seq;
    const list = $("event-list");
    for (const [key, row] of this.rows) row.setAttribute("aria-selected", String(key === seq));
    list.setAttribute("aria-activedescendant", `event-${seq}`);
    this.rows.get(seq).scrollIntoView({ block: "nearest" });
    clearTimeout(this.showing);
    if (wait) this.showing = setTimeout(() => this.show(event), wait);
    else await this.show(event);
    if (reveal && matchMedia("(max-width: 700px)").matches) $("event-detail").scrollIntoView({ block: "start" });
  }

  async show(event) {
    const detail = $("event-detail");
    const fork = el("button", { type: "button", class: "edit", "aria-expanded": "false" }, "Fork before this event");
    fork.addEventListener("click", () => this.forkForm(fork, event.seq));
    const raw = el("details", { class: "raw" }, el("summary", {}, "The event's JSON"), jsonTree(event));
    const state = el("details", { class: "state-at" }, el("summary", {}, "state.data at this event"));
    state.addEventListener("toggle", () => {
      if (state.open && !state.dataset.loaded) this.stateAt(state, event.seq);
    });
    detail.replaceChildren(...[
      el("h3", {}, `Event #${event.seq}: ${label(event)}`, el("span", { class: "hint" }, ` ${clock(event.created_at)}`)),
      el("div", { class: "row" }, fork),
      mediaView(event, this.sessionId), state, raw,
    ].filter(Boolean));
    if (!MODEL_EVENT(event)) {
      raw.open = true;
      return;
    }
    const call = await this.modelCall(event.seq, detail);
    if (call && this.selected === event.seq) raw.before(modelCallView(call));
  }

  // `state.data` as recorded at event `seq`, and the change the flush that recorded it found.
  async stateAt(box, seq) {
    box.dataset.loaded = "true";
    const found = await stateAt(this.sessionId, seq);
    if (found.problem !== undefined) {
      box.append(el("p", { class: "hint" }, found.problem));
      return;
    }
    box.append(jsonTree(found.state, { open: 2 }), ...changeView(found));
  }

  // The fork's form: its state.data to edit (as recorded before the event, else the session's
  // now), then Fork and run.
  async forkForm(button, seq) {
    const open = button.nextElementSibling?.classList.contains("fork-form");
    if (open) {
      button.nextElementSibling.remove();
      button.setAttribute("aria-expanded", "false");
      return;
    }
    const recorded = seq > 1 ? await stateAt(this.sessionId, seq - 1) : { problem: "" };
    const state = recorded.problem === undefined ? recorded.state : await stateOf(this.sessionId);
    const text = pretty(state);
    const box = el("textarea", { id: `fork-state-${seq}`, rows: Math.min(10, text.split("\n").length + 1), spellcheck: "false" });
    box.value = text;
    const problem = el("p", { class: "problem", role: "alert", hidden: true });
    const form = el("form", { class: "fork-form editor" },
      el("p", { class: "hint" }, `The fork holds the log before event #${seq}; the agent runs on from there.`),
      el("label", { for: box.id }, "state.data of the fork (JSON)"), box, problem,
      el("div", { class: "row" }, el("button", { type: "submit", class: "primary" }, "Fork and run")));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      let edited;
      try {
        edited = JSON.parse(box.value);
      } catch (error) {
        problem.hidden = false;
        problem.textContent = `Not JSON: ${error.message}`;
        return;
      }
      const changed = JSON.stringify(edited) !== JSON.stringify(state);
      this.handlers.fork(changed ? { at_seq: seq, state: edited } : { at_seq: seq });
    });
    button.after(form);
    button.setAttribute("aria-expanded", "true");
    box.focus();
  }

  async modelCall(seq, detail) {
    try {
      return await apiJSON(`${session(this.sessionId)}/model-calls/${seq}`);
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 422)) {
        detail.append(el("p", { class: "problem", role: "alert" }, `Could not load the model call: ${error.message}`));
      }
      return null;
    }
  }
}

// What changed at the marker that recorded a state: a line diff from the state recorded before.
function changeView({ state, previous, recorded_seq: seq }) {
  if (previous === null) return [el("p", { class: "hint" }, `As the run found it (recorded at event #${seq}).`)];
  const [before, after] = [pretty(previous), pretty(state)];
  const note = el("p", { class: "hint" }, `Changed at event #${seq}, from the state recorded before:`);
  if (before.split("\n").length * after.split("\n").length > DIFF_CELLS) {
    return [note, jsonTree(previous, { open: 1 })];  // a line diff of these would take too long: both, as trees
  }
  return [note, el("div", { class: "diff", role: "group", "aria-label": "The change" }, ...diffLines(before, after))];
}

// A time of day, to the second, in 24 hours (the list's column is narrow).
function clockOf(iso) {
  return iso ? new Date(iso).toTimeString().slice(0, 8) : "";
}

export function label(event) {
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

export function modelCallView(call) {
  const request = call.request;
  const tokens = call.input_tokens !== null && call.input_tokens !== undefined
    ? `${call.input_tokens} in + ${call.output_tokens} out tokens` : call.tokens !== null ? `${call.tokens} tokens` : null;
  const facts = [
    call.turn ? `turn ${call.turn}` : null, `${request.model} (${request.provider})`, tokens,
    money(call.cost, call.currency), call.duration_ms !== null ? duration(call.duration_ms) : null,
    call.ttft_ms !== null && call.ttft_ms !== undefined ? `first token after ${duration(call.ttft_ms)}` : null,
  ].filter(Boolean).join(" · ");
  const messages = el("ol", { class: "request-messages" }, ...request.messages.map((m) =>
    el("li", {}, el("span", { class: "role" }, m.role), el("pre", { class: "json" }, messageText(m)))));
  const tools = el("ul", { class: "request-tools" }, ...request.tools.map((t) =>
    el("li", {}, el("details", {}, el("summary", {}, t.name, t.description ? `: ${t.description}` : ""),
      el("pre", { class: "json" }, pretty(t.parameters))))));
  return el("section", { class: "model-call", "aria-label": "Model call" },
    el("h3", {}, call.exact ? "Model call (the request as sent)" : "Model call"), el("p", { class: "facts" }, facts),
    el("h4", {}, `Request: ${request.messages.length} message${request.messages.length === 1 ? "" : "s"}`), messages,
    el("h4", {}, `Tools (${request.tools.length})`), request.tools.length ? tools : el("p", { class: "hint" }, "none"),
    el("h4", {}, "Settings"), el("pre", { class: "json" }, pretty(request.settings)),
    request.output_schema ? el("pre", { class: "json" }, pretty(request.output_schema)) : null,
    el("h4", {}, "Response"),
    call.response ? el("pre", { class: "json" }, messageText(call.response))
      : el("p", { class: "problem" }, call.error ? `No answer: ${call.error}` : "No answer on record."),
    el("h4", {}, "How exact this is"), el("ul", { class: "notes" }, ...call.notes.map((n) => el("li", {}, n))));
}

// A message as the model got it: its text, its tool calls and results as calls and results.
function messageText(message) {
  return message.parts.map((p) => {
    if (p.type === "text") return p.text;
    if (p.type === "tool_call") return `call ${describeCall(p)}`;
    if (p.type === "tool_result") return `${p.is_error ? "error" : "result"} of ${p.name || p.call_id}: ${prettyContent(p.content)}`;
    return pretty(p);
  }).join("\n");
}
