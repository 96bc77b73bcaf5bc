// The session list: newest first, each with its title (its first prompt; the whole of it on
// hover), when it last changed, and a badge while a run goes on, while calls wait for approval
// or after its last run failed. A search shows where each session matches. The list is read
// again every 15 s while the page is seen, so that runs started elsewhere show. The server
// answers the newest sessions only; when it left older ones out, the list ends saying so.

import { $, el, when } from "./dom.js";
import { ApiError, api, session } from "./api.js";

const REFRESH_MS = 15_000;

export class SessionList {
  // handlers: {select(id), deleted(id), problem(message)}
  constructor(handlers) {
    this.handlers = handlers;
    this.items = [];
    this.current = null;
    this.query = "";
    this.cut = 0; // how many sessions the server answered, when it left older ones out (0: none left out)
    this.shown = new Map(); // id -> what the open session's own stream says ({running, waiting, ended})
    let timer = null;
    $("session-search").addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { this.query = $("session-search").value.trim(); this.load().catch(() => {}); }, 150);
    });
    setInterval(() => { if (!document.hidden && this.items.length) this.load().catch(() => {}); }, REFRESH_MS);
  }

  async load() {
    const query = this.query ? `?q=${encodeURIComponent(this.query)}` : "";
    const response = await api(`/v1/inspect/sessions${query}`);
    this.items = await response.json();
    this.cut = Number(response.headers.get("Hookline-Cut")) || 0;
    this.render();
    return this.items;
  }

  render() {
    const list = $("session-list");
    const focused = document.activeElement?.closest?.("#session-list li")?.dataset.item;
    list.replaceChildren(...this.items.map((item) => this.line(item)));
    if (!this.items.length) list.append(el("li", { class: "empty" }, this.query ? "No session matches." : "No sessions yet."));
    if (this.cut) list.append(el("li", { class: "hint cut" }, this.cutNote()));
    this.mark(this.current);
    if (focused) list.querySelector(`li[data-item="${CSS.escape(focused)}"] .pick`)?.focus();
  }

  line(item) {
    const title = item.title || "New session";
    const pick = el("button", { type: "button", class: "pick", "data-session": item.id, title: `${title}\n${item.id}` },
      el("span", { class: "title" }, title),
      el("span", { class: "facts" }, badge(this.status(item)),
        el("time", { class: "when", datetime: item.updated_at || "" }, when(item.updated_at))),
      item.forked_from ? el("span", { class: "origin" }, `fork of ${this.titleOf(item.forked_from)}`) : null,
      item.snippet ? el("span", { class: "snippet" }, ...highlight(item.snippet, this.query)) : null);
    pick.addEventListener("click", () => this.handlers.select(item.id));
    const remove = el("button", { type: "button", class: "delete", "aria-label": `Delete session: ${title}` }, "✕");
    remove.addEventListener("click", () => this.remove(item, title));
    return el("li", { "data-item": item.id }, pick, remove);
  }

  // What the list's end says when the server left older sessions out.
  cutNote() {
    return this.query ? `The newest ${this.cut} that match; more words narrow the search.`
      : `The newest ${this.cut} sessions; search finds older ones.`;
  }

  titleOf(id) {
    const found = this.items.find((item) => item.id === id);
    return found ? found.title || "New session" : id.slice(0, 12);
  }

  // What the badge says: the open session's own stream knows better than the last list read.
  status(item) {
    const live = this.shown.get(item.id);
    if (live) return { running: live.running, waiting: live.waiting, failed: live.ended === "failed" };
    return { running: item.running, waiting: item.waiting, failed: item.last_run === "failed" };
  }

  // The open session's state, from its stream.
  live(id, status) {
    this.shown.clear();
    this.shown.set(id, status);
    const button = document.querySelector(`#session-list .pick[data-session="${CSS.escape(id)}"]`);
    const item = this.items.find((i) => i.id === id);
    if (!button || !item) return;
    const old = button.querySelector(".badge");
    const fresh = badge(this.status(item));
    if (old && fresh) old.replaceWith(fresh);
    else if (old) old.remove();
    else if (fresh) button.querySelector(".facts").prepend(fresh);
  }

  mark(id) {
    this.current = id;
    for (const button of document.querySelectorAll("#session-list .pick")) {
      button.setAttribute("aria-current", String(button.dataset.session === id));
    }
  }

  async remove(item, title) {
    if (!window.confirm(`Delete the session "${title}" and its whole log?`)) return;
    try {
      await api(session(item.id), { method: "DELETE" });
    } catch (error) {
      this.handlers.problem(error instanceof ApiError ? `Could not delete it: ${error.message}` : error.message);
      return;
    }
    await this.load();
    this.handlers.deleted(item.id);
  }
}

function badge({ running, waiting, failed }) {
  if (waiting) return el("span", { class: "badge waiting" }, `waiting (${waiting})`);
  if (running) return el("span", { class: "badge running" }, "running");
  if (failed) return el("span", { class: "badge failed" }, "failed");
  return null;
}

// The snippet, with the words searched for marked.
function highlight(snippet, query) {
  const at = query ? snippet.toLowerCase().indexOf(query.toLowerCase()) : -1;
  if (at < 0) return [snippet];
  return [snippet.slice(0, at), el("mark", {}, snippet.slice(at, at + query.length)), snippet.slice(at + query.length)];
}
