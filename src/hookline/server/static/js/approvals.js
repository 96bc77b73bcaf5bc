// The calls waiting for a human, as a panel above the message box: for each, Approve, Deny
// (with a reason), and its arguments to edit as JSON, checked against the tool's schema as
// they are typed, with the edit shown as a diff; Approve all when several wait. A decision is
// a plain POST (`resume`); the panel's item goes once the log says the call was decided
// (here, in another tab or by the API), and the focus moves on to the next one.

import { $, describeCall, diffLines, el, pretty } from "./dom.js";
import { problemsOf } from "./schema.js";

export class Approvals {
  // handlers: {decide({call_id: answer}) -> Promise<Error | null>, schemaOf(name) -> Promise<schema | null>,
  //            changed(count), typing() (whether the user is typing a message of their own)}
  constructor(handlers) {
    this.handlers = handlers;
    this.items = new Map(); // call_id -> {item, root, approve, ...}
    this.allSent = false;   // Approve all was pressed (its button had the focus)
    $("approve-all").addEventListener("click", () => this.decideAll());
  }

  get count() {
    return this.items.size;
  }

  reset() {
    this.items.clear();
    $("approval-list").replaceChildren();
    this.render();
  }

  // A paused call (a status line's `metadata.interrupted`); `live`: it just happened.
  add(item, { live = false } = {}) {
    if (this.items.has(item.call_id)) return;
    const entry = this.build(item);
    this.items.set(item.call_id, entry);
    $("approval-list").append(entry.root);
    this.render();
    if (live && this.mayTakeFocus()) entry.approve.focus();
  }

  // The call was decided or answered: its item goes, and the focus moves on if it was there.
  remove(callId) {
    const entry = this.items.get(callId);
    if (!entry) return;
    const active = document.activeElement;
    const hadFocus = entry.root.contains(active) || (entry.focusWasIn && (!active || active === document.body));
    const next = [...this.items.values()].find((e) => e !== entry);
    entry.root.remove();
    this.items.delete(callId);
    this.render();
    if (hadFocus) (next ? next.approve : $("prompt")).focus();
  }

  render() {
    const count = this.items.size;
    const active = document.activeElement;
    if (!count && ($("approvals").contains(active) || (this.allSent && (!active || active === document.body)))) {
      $("prompt").focus(); // the panel goes: the focus must not go with it
    }
    if (!count) this.allSent = false;
    $("approvals").hidden = !count;
    $("approvals-title").textContent = `Waiting for approval (${count})`;
    $("approve-all").hidden = count < 2;
    $("approve-all").textContent = `Approve all ${count}`;
    this.handlers.changed(count);
  }

  // Whether a call that just paused may take the focus: not while the user types or reads elsewhere.
  mayTakeFocus() {
    const active = document.activeElement;
    if (!active || active === document.body) return true;
    if (active.id === "prompt") return !this.handlers.typing();
    return ["send", "stop", "conversation"].includes(active.id);
  }

  build(item) {
    const key = item.call_id.replace(/[^\w-]/g, "_");
    const original = typeof item.arguments === "string" ? item.arguments : pretty(item.arguments ?? {});
    const title = el("p", { class: "call", id: `approval-${key}` }, el("strong", {}, describeCall(item)));
    const args = el("textarea", { id: `args-${key}`, class: "args", rows: Math.min(12, original.split("\n").length + 1),
      spellcheck: "false", "aria-describedby": `check-${key}` });
    args.value = original;
    const check = el("p", { class: "check", id: `check-${key}`, "aria-live": "polite" });
    const diff = el("div", { class: "diff", role: "group", "aria-label": "Your edit", hidden: true });
    const reset = el("button", { type: "button", class: "link" }, "Undo the edit");
    const edit = el("details", { class: "edit-args" }, el("summary", {}, "Edit arguments"),
      el("label", { for: args.id }, "Arguments (JSON)"), args, check, diff, reset);
    const approve = el("button", { type: "button", class: "approve" }, "Approve");
    const deny = el("button", { type: "button", class: "deny" }, "Deny");
    const reason = el("input", { id: `reason-${key}`, type: "text", class: "reason", placeholder: "optional" });
    const problem = el("p", { class: "problem", role: "alert", hidden: true });
    const root = el("li", { class: "approval", "data-call": item.call_id },
      el("div", { role: "group", "aria-labelledby": title.id },
        title, item.reason ? el("p", { class: "why" }, item.reason) : null, edit,
        el("div", { class: "row" }, approve, deny,
          el("label", { for: reason.id, class: "reason-label" }, "Reason for a denial"), reason),
        problem));
    const entry = { item, root, approve, deny, reason, args, check, diff, problem, original, schema: null };
    args.addEventListener("input", () => this.check(entry));
    reset.addEventListener("click", () => { args.value = original; this.check(entry); args.focus(); });
    edit.addEventListener("toggle", () => { if (edit.open) this.loadSchema(entry); });
    approve.addEventListener("click", () => this.decide(entry, true));
    deny.addEventListener("click", () => this.decide(entry, false));
    reason.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); this.decide(entry, false); } });
    return entry;
  }

  async loadSchema(entry) {
    if (entry.schema === null) entry.schema = (await this.handlers.schemaOf(entry.item.name)) || {};
    this.check(entry);
  }

  // The edited arguments: {value} when they parse (and differ from the model's: {value, edited}), or {error}.
  edited(entry) {
    const text = entry.args.value;
    if (text.trim() === entry.original.trim()) return { value: null, edited: false };
    try {
      return { value: JSON.parse(text), edited: true };
    } catch (error) {
      return { error: `not JSON: ${error.message}` };
    }
  }

  check(entry) {
    const found = this.edited(entry);
    entry.diff.hidden = !found.edited;
    if (found.edited) entry.diff.replaceChildren(...diffLines(entry.original, pretty(found.value)));
    if (found.error) {
      entry.check.className = "check bad";
      entry.check.textContent = `The arguments are ${found.error}`;
      return;
    }
    const problems = found.edited && entry.schema ? problemsOf(found.value, entry.schema) : [];
    entry.check.className = `check ${problems.length ? "bad" : "good"}`;
    entry.check.textContent = !found.edited ? "" : problems.length
      ? `Does not fit the tool's schema: ${problems.join("; ")}` : "Fits the tool's schema.";
  }

  // The answer the panel sends for an item: true, {args}, or a denial's reason (false without one).
  answerOf(entry, approve) {
    if (!approve) return entry.reason.value.trim() || false;
    const found = this.edited(entry);
    if (found.error) throw new Error(`The arguments are ${found.error}`);
    return found.edited ? { args: found.value } : true;
  }

  async decide(entry, approve) {
    let answer;
    try {
      answer = this.answerOf(entry, approve);
    } catch (error) {
      this.fail([entry], error.message);
      return;
    }
    await this.send([entry], { [entry.item.call_id]: answer });
  }

  async decideAll() {
    const entries = [...this.items.values()];
    this.allSent = $("approve-all") === document.activeElement;
    const answers = {};
    try {
      for (const entry of entries) answers[entry.item.call_id] = this.answerOf(entry, true);
    } catch (error) {
      this.fail(entries, error.message);
      return;
    }
    await this.send(entries, answers);
  }

  async send(entries, answers) {
    for (const entry of entries) this.busy(entry, true);
    $("approve-all").disabled = true;
    const error = await this.handlers.decide(answers);
    $("approve-all").disabled = false;
    if (!error) return; // the item goes when the log says the call was decided
    this.fail(entries, error.status === 422 ? `The server refused: ${error.message}` : `Not sent: ${error.message}`);
  }

  fail(entries, message) {
    for (const entry of entries) {
      if (!this.items.has(entry.item.call_id)) continue;
      this.busy(entry, false);
      entry.problem.hidden = false;
      entry.problem.textContent = message;
    }
    const first = entries.find((e) => this.items.has(e.item.call_id));
    if (first) first.approve.focus();
  }

  busy(entry, on) {
    if (on) entry.focusWasIn = entry.root.contains(document.activeElement); // disabling a control drops its focus
    for (const control of entry.root.querySelectorAll("button, input, textarea")) control.disabled = on;
    if (on) entry.problem.hidden = true;
    entry.root.setAttribute("aria-busy", String(on));
  }
}
