// hookline web page: plain JavaScript, no build step.
// Every server answer is rendered with textContent (never innerHTML), so text from a model,
// a tool or a user can never become markup.
"use strict";

const TOKEN_KEY = "hookline.token";
const $ = (id) => document.getElementById(id);

const page = {
  token: localStorage.getItem(TOKEN_KEY) || "",
  sessionId: null,
  busy: false,
  lastSeq: 0,
  turn: null,          // the current turn's elements: {root, activity, lines, summary, draft}
  approvals: new Map(), // call_id -> approval card element
};

// ---- talking to the server --------------------------------------------------------------

class ApiError extends Error {}

async function api(path, options = {}) {
  const headers = new Headers(options.headers || {});
  if (page.token) headers.set("Authorization", `Bearer ${page.token}`);
  const response = await fetch(path, { ...options, headers });
  if (response.status === 401) {
    showTokenPanel();
    throw new ApiError("this server needs an access token");
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try { message = (await response.json()).message || message; } catch { /* not JSON */ }
    throw new ApiError(message);
  }
  return response;
}

async function apiJSON(path, options) {
  return (await api(path, options)).json();
}

// Read a text/event-stream body frame by frame; call onEvent with each Event.
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart());
      if (data.length) onEvent(JSON.parse(data.join("\n")));
    }
  }
}

// POST a run (or resume) and render its events as they stream; reconnect if the line drops.
async function streamRun(path, body) {
  setBusy(true);
  try {
    const response = await api(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
    });
    await readEvents(response, applyEvent);
  } catch (error) {
    if (error instanceof ApiError) showError(error.message);
    else await reconnect();
  } finally {
    setBusy(false);
    finishDraft();
  }
}

// The stream broke mid-run: ask for everything after the last event seen, then live ones.
async function reconnect(attempt = 1) {
  try {
    const response = await api(`/v1/sessions/${encodeURIComponent(page.sessionId)}/events/stream`, {
      headers: { Accept: "text/event-stream", "Last-Event-ID": String(page.lastSeq) },
    });
    await readEvents(response, applyEvent);
  } catch (error) {
    if (attempt < 3 && !(error instanceof ApiError)) {
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
      return reconnect(attempt + 1);
    }
    showError(`lost the connection to the server: ${error.message}`);
  }
}

// ---- sessions ---------------------------------------------------------------------------

async function loadSessions() {
  let sessions;
  try {
    sessions = await apiJSON("/v1/sessions");
  } catch (error) {
    if (!(error instanceof ApiError) || page.token) showError(error.message);
    return;
  }
  $("token-panel").hidden = true;
  $("forget-token").hidden = !page.token;
  renderSessionList(sessions);
  const wanted = decodeURIComponent(location.hash.slice(1));
  const chosen = sessions.find((s) => s.id === wanted) || sessions[0];
  if (chosen) await selectSession(chosen.id);
}

function renderSessionList(sessions) {
  const list = $("session-list");
  list.replaceChildren();
  for (const session of sessions) {
    const button = el("button", { type: "button", "data-session": session.id }, session.id.slice(0, 12));
    const when = session.updated_at ? new Date(session.updated_at).toLocaleString() : "";
    button.append(el("span", { class: "when" }, when));
    button.addEventListener("click", () => selectSession(session.id));
    list.append(el("li", {}, button));
  }
  markCurrentSession();
}

function markCurrentSession() {
  for (const button of document.querySelectorAll("#session-list button")) {
    button.setAttribute("aria-current", String(button.dataset.session === page.sessionId));
  }
}

async function createSession() {
  try {
    const session = await apiJSON("/v1/sessions", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: "{}",
    });
    renderSessionList(await apiJSON("/v1/sessions"));
    await selectSession(session.id);
    $("prompt").focus();
  } catch (error) {
    showError(error.message);
  }
}

async function selectSession(id) {
  page.sessionId = id;
  history.replaceState(null, "", `#${encodeURIComponent(id)}`);
  markCurrentSession();
  $("sessions").classList.remove("open");
  $("toggle-sessions").setAttribute("aria-expanded", "false");
  resetConversation();
  try {
    const events = await apiJSON(`/v1/sessions/${encodeURIComponent(id)}/events?view=ui`);
    events.forEach(applyEvent);
    if (!events.length) $("conversation").append(el("p", { class: "empty" }, "No messages yet: say something."));
  } catch (error) {
    showError(error.message);
  }
}

// ---- rendering events -------------------------------------------------------------------

function resetConversation() {
  $("conversation").replaceChildren();
  $("pending").replaceChildren();
  page.turn = null;
  page.lastSeq = 0;
  page.approvals.clear();
}

function applyEvent(event) {
  if (event.seq) page.lastSeq = Math.max(page.lastSeq, event.seq);
  if (event.partial) return showPending(event);
  if (event.kind === "delta") return appendDelta(textOf(event));
  if (event.kind === "status") return addStatus(event);
  if (event.kind === "message") return addMessage(event);
}

function addMessage(event) {
  if (event.role === "user" && !event.parts.some((p) => p.type === "tool_result")) {
    startTurn();
    clearPending(event.author);
    page.turn.root.insertBefore(userBubble(event), page.turn.activity);
  } else if (event.role === "assistant") {
    const text = textOf(event);
    const bubble = takeDraft();
    if (text) {
      bubble.textContent = text;
      insertAnswer(bubble);
    } else {
      bubble.remove();
    }
  } else if (event.role === "tool") {
    for (const part of event.parts) if (part.type === "tool_result") settleApproval(part.call_id);
  }
}

function userBubble(event) {
  const bubble = el("div", { class: "msg user" });
  for (const part of event.parts) {
    if (part.type === "text") bubble.append(part.text);
    else if (part.type === "tool_call") bubble.append(el("span", { class: "chip" }, describeCall(part)));
    else if (part.type === "document") bubble.append(el("span", { class: "chip" }, `document: ${part.title}`));
  }
  return bubble;
}

function addStatus(event) {
  const turn = page.turn || startTurn();
  const text = textOf(event);
  const source = event.source || "agent";
  turn.lines.append(el("li", {}, el("span", { class: "source" }, `[${source}]`), ` ${text}`));
  const count = turn.lines.children.length;
  turn.summary.textContent = `${count} step${count === 1 ? "" : "s"}: ${text}`;
  const meta = event.metadata || {};
  if (meta.interrupted) showApproval(meta.interrupted);
  if (meta.error) showError(meta.error.message || text);
}

function startTurn() {
  finishDraft();
  document.querySelectorAll("#conversation > .empty").forEach((node) => node.remove());
  const summary = el("summary", {}, "activity");
  const lines = el("ol");
  const activity = el("details", { class: "activity" }, summary, lines);
  const root = el("article", { class: "turn" }, activity);
  $("conversation").append(root);
  page.turn = { root, activity, lines, summary, draft: null };
  return page.turn;
}

function appendDelta(text) {
  const turn = page.turn || startTurn();
  if (!turn.draft) {
    turn.draft = el("div", { class: "msg assistant streaming", "aria-busy": "true" });
    insertAnswer(turn.draft);
  }
  turn.draft.textContent += text;
  scrollToEnd();
}

function takeDraft() {
  const turn = page.turn || startTurn();
  const bubble = turn.draft || el("div", { class: "msg assistant" });
  bubble.classList.remove("streaming");
  bubble.removeAttribute("aria-busy");
  turn.draft = null;
  return bubble;
}

function finishDraft() {
  if (page.turn && page.turn.draft) {
    page.turn.draft.classList.remove("streaming");
    page.turn.draft.removeAttribute("aria-busy");
    page.turn.draft = null;
  }
}

function insertAnswer(bubble) {
  page.turn.root.append(bubble);
  scrollToEnd();
}

// ---- approvals, pending drafts, errors ---------------------------------------------------

function showApproval(item) {
  const old = page.approvals.get(item.call_id);
  if (old) old.remove();
  const approve = el("button", { type: "button", class: "approve" }, "Approve");
  const deny = el("button", { type: "button", class: "deny" }, "Deny");
  const card = el("div", { class: "approval", role: "group", "aria-label": `Approve ${item.name}?` },
    el("p", {}, el("strong", {}, "Approval needed: "), describeCall({ name: item.name, arguments: item.arguments }),
      item.reason ? ` (${item.reason})` : ""),
    el("div", { class: "row" }, approve, deny));
  approve.addEventListener("click", () => decide(card, item.call_id, true));
  deny.addEventListener("click", () => decide(card, item.call_id, false));
  page.approvals.set(item.call_id, card);
  (page.turn || startTurn()).root.append(card);
  scrollToEnd();
  approve.focus();
}

async function decide(card, callId, approved) {
  card.querySelectorAll("button").forEach((b) => { b.disabled = true; });
  card.classList.add("decided");
  card.append(el("p", { class: "hint" }, approved ? "Approved: resuming..." : "Denied: resuming..."));
  await streamRun(`/v1/sessions/${encodeURIComponent(page.sessionId)}/resume`, { approvals: { [callId]: approved } });
  if (!page.approvals.size) $("prompt").focus();
}

function settleApproval(callId) {
  const card = page.approvals.get(callId);
  if (card) {
    card.remove();
    page.approvals.delete(callId);
  }
}

function showPending(event) {
  clearPending(event.author);
  const parts = event.parts.map((p) => (p.type === "tool_call" ? describeCall(p) : p.text || p.title || p.type));
  $("pending").append(el("div", { class: "pending", "data-author": event.author },
    el("strong", {}, `Pending draft (${event.author}): `), parts.join(", ")));
}

function clearPending(author) {
  document.querySelectorAll("#pending .pending").forEach((node) => {
    if (node.dataset.author === author) node.remove();
  });
}

function showError(message) {
  const box = el("div", { class: "error", role: "alert" }, message);
  (page.turn ? page.turn.root : $("conversation")).append(box);
  scrollToEnd();
}

// ---- small helpers ----------------------------------------------------------------------

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

function textOf(event) {
  return event.parts.filter((p) => p.type === "text").map((p) => p.text).join("");
}

function describeCall(call) {
  const args = call.arguments;
  const shown = typeof args === "string" ? args
    : Object.entries(args || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
  return `${call.name}(${shown})`;
}

function scrollToEnd() {
  const box = $("conversation");
  box.scrollTop = box.scrollHeight;
}

function setBusy(busy) {
  page.busy = busy;
  $("send").disabled = busy;
  $("stop").hidden = !busy;
  $("stop").disabled = false;
  const label = $("run-state");
  label.textContent = busy ? "Running..." : "Ready";
  label.classList.toggle("busy", busy);
}

function showTokenPanel() {
  $("token-panel").hidden = false;
  $("token-input").focus();
}

// Ask the server to cancel the session's run (wherever it runs); its stream then ends with
// "run cancelled". A 404 means it had already ended: nothing to say.
async function stop() {
  if (!page.busy || !page.sessionId) return;
  $("stop").disabled = true;
  $("run-state").textContent = "Stopping...";
  const headers = page.token ? { Authorization: `Bearer ${page.token}` } : {};
  try {
    const response = await fetch(`/v1/sessions/${encodeURIComponent(page.sessionId)}/cancel`, { method: "POST", headers });
    if (!response.ok && response.status !== 404) {
      let message = `${response.status} ${response.statusText}`;
      try { message = (await response.json()).message || message; } catch { /* not JSON */ }
      showError(`could not stop the run: ${message}`);
      $("stop").disabled = false;
    }
  } catch (error) {
    showError(`could not stop the run: ${error.message}`);
    $("stop").disabled = false;
  }
}

// ---- wiring -----------------------------------------------------------------------------

async function send() {
  const box = $("prompt");
  const prompt = box.value.trim();
  if (!prompt || page.busy) return;
  if (!page.sessionId) await createSession();
  if (!page.sessionId) return;
  box.value = "";
  await streamRun(`/v1/sessions/${encodeURIComponent(page.sessionId)}/runs`, { prompt });
  if (!page.approvals.size) box.focus(); // else the focus stays on the approval's first button
}

document.addEventListener("DOMContentLoaded", () => {
  $("composer").addEventListener("submit", (event) => { event.preventDefault(); send(); });
  $("prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  });
  $("stop").addEventListener("click", stop);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && page.busy) stop();
  });
  $("new-session").addEventListener("click", createSession);
  $("toggle-sessions").addEventListener("click", () => {
    const open = $("sessions").classList.toggle("open");
    $("toggle-sessions").setAttribute("aria-expanded", String(open));
  });
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    page.token = $("token-input").value.trim();
    localStorage.setItem(TOKEN_KEY, page.token);
    $("token-input").value = "";
    loadSessions();
  });
  $("forget-token").addEventListener("click", () => {
    localStorage.removeItem(TOKEN_KEY);
    page.token = "";
    resetConversation();
    $("session-list").replaceChildren();
    showTokenPanel();
  });
  loadSessions();
});
