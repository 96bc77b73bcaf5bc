// The session list: titles (first prompts), search, delete.

import { $, el } from "./dom.js";
import { ApiError, api, apiJSON, session } from "./api.js";

export class SessionList {
  // handlers: {select(id), deleted(id), problem(message)}
  constructor(handlers) {
    this.handlers = handlers;
    this.items = [];
    this.current = null;
    this.query = "";
    let timer = null;
    $("session-search").addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { this.query = $("session-search").value.trim(); this.load(); }, 150);
    });
  }

  async load() {
    const query = this.query ? `?q=${encodeURIComponent(this.query)}` : "";
    this.items = await apiJSON(`/v1/inspect/sessions${query}`);
    this.render();
    return this.items;
  }

  render() {
    const list = $("session-list");
    list.replaceChildren();
    for (const item of this.items) {
      const title = item.title || "New session";
      const pick = el("button", { type: "button", class: "pick", "data-session": item.id, title: item.id },
        el("span", { class: "title" }, title),
        el("span", { class: "when" }, item.updated_at ? new Date(item.updated_at).toLocaleString() : ""));
      pick.addEventListener("click", () => this.handlers.select(item.id));
      const remove = el("button", { type: "button", class: "delete", "aria-label": `Delete session: ${title}` }, "✕");
      remove.addEventListener("click", () => this.remove(item, title));
      list.append(el("li", {}, pick, remove));
    }
    if (!this.items.length) list.append(el("li", { class: "empty" }, this.query ? "No session matches." : "No sessions yet."));
    this.mark(this.current);
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
