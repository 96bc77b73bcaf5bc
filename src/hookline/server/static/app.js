// hookline web page: chat, inspector, timeline, stop and fork. Plain ES modules, no build step.
//
// One session is shown at a time. Every stream the page reads (a run it started, or the
// session's live events after a reload or a switch) belongs to one "operation"; choosing
// another session aborts it (the run goes on in the server) and bumps `page.gen`, so no
// late event of the old session can land in the new one's view.
//
// Creating or choosing a session is the page's "opening". A message sent meanwhile waits for
// it, then goes to the session it opened: sent sooner, its run would be aborted by the
// opening's own follow of the session, or go to the session shown before.

import { $, el } from "./js/dom.js";
import { ApiError, NetworkError, api, apiJSON, auth, postJSON, readEvents, session } from "./js/api.js";
import { Attachments } from "./js/attachments.js";
import { Chat } from "./js/chat.js";
import { Inspector } from "./js/inspector.js";
import { SessionList } from "./js/sessions.js";
import { Timeline, loadState } from "./js/timeline.js";

const SSE = "text/event-stream";
const RUN_ENDS = /^run (completed|hook_exit|interrupted|max_turns|cancelled|failed)$/;
const PANEL_KEY = "hookline.inspector";
const BUSY = "A run is going on in this session; your message is kept. Send it once the run ends, or Stop the run.";

const page = {
  sessionId: null, gen: 0, op: null, busy: false, lastSeq: 0, live: new Map(), tab: "events",
  opening: null, creating: null, sending: null,
};

const chat = new Chat({ decide, fork, openSession: (id) => select(id), sessionId: () => page.sessionId });
const attachments = new Attachments({ problem: (message) => problem(message) });
const inspector = new Inspector();
const timeline = new Timeline({ pick: (seq) => { showTab("events"); inspector.select(seq); } });
const sessions = new SessionList({ select: (id) => select(id), deleted, problem: (m) => problem(m) });

// ---- operations: the one stream the page reads at a time ----------------------------------------

function begin() {
  if (page.op) page.op.controller.abort();
  page.op = { controller: new AbortController(), gen: page.gen };
  return page.op;
}

const live = (op) => page.op === op && op.gen === page.gen;

function finish(op) {
  if (page.op !== op) return;
  page.op = null;
  setBusy(false);
  afterRun(op.gen);
}

// One frame of a stream. A live event (no seq yet) is held until its "stored" frame gives its seq.
function apply(event, gen, type) {
  if (gen !== page.gen) return;
  if (type === "stored") return settle(event);
  if (event.seq && !event.partial) page.lastSeq = Math.max(page.lastSeq, event.seq);
  else if (event.id && event.kind !== "delta" && !event.partial) page.live.set(event.id, event);
  chat.apply(event);
  inspector.add(event);
}

function settle({ id, seq }) {
  page.lastSeq = Math.max(page.lastSeq, seq);
  const event = page.live.get(id);
  if (!event) return;
  page.live.delete(id);
  chat.settle(id);
  inspector.add({ ...event, seq });
}

// POST a run or a resume and read its events. Answers once the server accepted it (or not):
// {error} when it did not, so the caller can keep the draft and say why; {cancelled} when the
// page left the session before the server answered (the run may or may not have started).
async function runStream(path, body) {
  const op = begin();
  const gen = op.gen;
  setBusy(true);
  let response;
  try {
    response = await postJSON(path, body, { headers: { Accept: SSE }, signal: op.controller.signal });
  } catch (error) {
    if (page.op === op) { page.op = null; setBusy(false); }
    const cancelled = error.name === "AbortError"; // another session was opened meanwhile
    return { error: cancelled ? null : error, cancelled };
  }
  readRun(op, gen, response);
  return { error: null };
}

async function readRun(op, gen, response) {
  try {
    await readEvents(response, (event, type) => { if (live(op)) apply(event, gen, type); });
  } catch (error) {
    if (error.name === "AbortError" || !live(op)) return;
    page.op = null;
    follow(gen, true); // the line dropped mid-run: pick the run up again where it was
    return;
  }
  finish(op);
}

// Read the session's live events after the last one seen (`Last-Event-ID`), until its run
// ends; with no run going on, the stream ends at once.
async function follow(gen, running, attempt = 1) {
  if (gen !== page.gen) return;
  const op = begin();
  if (running) setBusy(true);
  try {
    const response = await api(`${session(page.sessionId)}/events/stream`, {
      headers: { Accept: SSE, "Last-Event-ID": String(page.lastSeq) }, signal: op.controller.signal,
    });
    // The server sends again what was not stored yet (the answer's deltas from its first word).
    page.live.clear();
    chat.dropLive();
    await readEvents(response, (event, type) => {
      if (!live(op)) return;
      if (!page.busy) setBusy(true);
      apply(event, gen, type);
    });
  } catch (error) {
    if (error.name === "AbortError" || !live(op)) return;
    if (error instanceof NetworkError && attempt < 3) {
      await new Promise((resolve) => { setTimeout(resolve, 400 * attempt); });
      if (live(op)) { page.op = null; follow(gen, true, attempt + 1); }
      return;
    }
    chat.showError(`lost the connection to the server: ${error.message}`);
  }
  finish(op);
}

// After a run: fetch what the stream did not carry (another tab's run, the server's notes).
async function afterRun(gen) {
  try {
    const fresh = await apiJSON(`${session(page.sessionId)}/events?view=all&after_seq=${page.lastSeq}`);
    fresh.forEach((event) => apply(event, gen));
  } catch { /* the next action says what is wrong */ }
  if (gen !== page.gen) return;
  for (const card of document.querySelectorAll(".approval:not(.stale)")) {
    card.querySelectorAll("button, input").forEach((b) => { b.disabled = false; });
  }
  refreshPanels();
  sessions.load().catch(() => {});
}

// ---- sessions -----------------------------------------------------------------------------------

// Run `work` (creating or opening a session) as the page's opening, which a message sent
// meanwhile waits for. Answers what `work` answers: the gen of the view it opened, or null
// when it could not open one (and said why).
function opening(work) {
  const current = { done: null };
  page.opening = current;
  current.done = work().finally(() => { if (page.opening === current) page.opening = null; });
  return current.done;
}

function select(id, options) {
  return opening(() => open(id, options));
}

async function open(id, { attach = true } = {}) {
  if (page.op) page.op.controller.abort();
  page.op = null;
  const gen = ++page.gen;
  Object.assign(page, { sessionId: id, lastSeq: 0 });
  page.live.clear();
  history.replaceState(null, "", `#${encodeURIComponent(id)}`);
  document.body.dataset.session = id;
  sessions.mark(id);
  openDrawer(null);
  chat.reset();
  inspector.reset(id);
  setBusy(false);
  clearProblem();
  let events;
  try {
    events = await apiJSON(`${session(id)}/events?view=all`);
  } catch (error) {
    if (gen !== page.gen) return gen;
    chat.showError(error.message);
    return null;
  }
  if (gen !== page.gen) return gen;
  events.forEach((event) => apply(event, gen));
  if (!events.some((e) => e.kind === "message")) chat.showEmpty("No messages yet: say something.");
  refreshPanels();
  if (attach) follow(gen, looksRunning(events));
  return gen;
}

function looksRunning(events) {
  const last = [...events].reverse().find((e) => !e.partial && e.kind !== "marker");
  if (!last || (last.metadata && last.metadata.error)) return false;
  return !(last.kind === "status" && RUN_ENDS.test(last.parts.map((p) => p.text || "").join("")));
}

// Create a session and open it: one at a time, however often it is asked for.
function createSession() {
  page.creating ||= opening(newSession).finally(() => { page.creating = null; });
  return page.creating;
}

async function newSession() {
  const before = page.gen;
  let created;
  try {
    created = await apiJSON("/v1/sessions", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: "{}",
    });
    await sessions.load();
  } catch (error) {
    problem(`Could not create a session: ${error.message}`);
    return null;
  }
  if (before !== page.gen) return before; // another session was picked meanwhile: it stays shown
  const gen = await open(created.id);
  if (gen === page.gen) $("prompt").focus();
  return gen;
}

async function deleted(id) {
  if (id !== page.sessionId) return;
  const next = sessions.items[0];
  if (next) { await select(next.id); return; }
  page.gen += 1;
  Object.assign(page, { sessionId: null, lastSeq: 0 });
  page.live.clear();
  history.replaceState(null, "", location.pathname);
  chat.reset();
  inspector.reset(null);
  chat.showEmpty("Pick or create a session, then send a message.");
}

function loadSessions() {
  return opening(openFirstSession);
}

// Open the session of the address's #id, else the latest one; with none, the view stays empty.
async function openFirstSession() {
  let items;
  try {
    items = await sessions.load();
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) problem(error.message);
    return null;
  }
  $("token-panel").hidden = true;
  $("forget-token").hidden = !auth.token;
  const wanted = decodeURIComponent(location.hash.slice(1));
  const chosen = items.find((s) => s.id === wanted) || items[0];
  if (chosen) return open(chosen.id);
  chat.showEmpty("Pick or create a session, then send a message.");
  return page.gen;
}

// ---- sending, approving, stopping, forking --------------------------------------------------------

// Send the message box's text (and attachments). It stays in the box until the server has
// taken it: a message that is not sent stays there, with the reason.
async function send() {
  const box = $("prompt");
  const text = box.value;
  if (!text.trim() && !attachments.count) return;
  if (text === page.sending) return; // Enter again while it waits for its session or the server: sent once
  if (page.busy) {
    problem(BUSY);
    return;
  }
  if (page.sending !== null) {
    problem("Your last message is still on its way; this one is kept. Send it once that run ends.");
    return;
  }
  page.sending = text;
  try {
    await deliver(box, text);
  } finally {
    page.sending = null;
  }
}

async function deliver(box, text) {
  if (!(await sessionForMessage())) return;
  if (page.busy) {
    problem(BUSY);
    return;
  }
  clearProblem();
  const sent = [...attachments.items];
  const body = sent.length ? { prompt: text, attachments: attachments.payload() } : { prompt: text };
  const { error, cancelled } = await runStream(`${session(page.sessionId)}/runs`, body);
  if (cancelled) {
    problem("Maybe not sent: another session was opened before the server answered. Your message is kept: "
      + "look in the session you sent it to before you send it again.");
    return;
  }
  if (error) {
    problem(`Not sent: ${reasonOf(error)} Your message is kept.`, send);
    return;
  }
  if (box.value === text) box.value = "";
  attachments.drop(sent);
  if (!document.querySelector(".approval")) box.focus();
}

// The session a message goes to, once it is open: the one being created or opened when the
// message was sent, else the one shown, else a new one. Null when there is none (said why).
async function sessionForMessage() {
  if (!page.opening && !page.sessionId) createSession();
  const pending = page.opening;
  if (pending) {
    const gen = await pending.done;
    if (gen === null) return null;
    if (gen !== page.gen || page.opening) {
      problem("Not sent: another session was opened before your message went. Your message is kept.");
      return null;
    }
  }
  return page.sessionId || sessionForMessage(); // the page had no session to open: create one
}

function reasonOf(error) {
  if (error instanceof NetworkError) return "the server could not be reached.";
  const text = error.message.replace(/[.\s]*$/, ".");
  return error instanceof ApiError && error.code === "busy" ? `this session is busy: ${text}` : text;
}

async function decide(callId, answer, card) {
  card.querySelectorAll("button, input").forEach((b) => { b.disabled = true; });
  card.problem.hidden = true;
  const { error } = await runStream(`${session(page.sessionId)}/resume`, { approvals: { [callId]: answer } });
  if (!error) return;
  card.problem.hidden = false;
  if (error instanceof ApiError && error.status === 422) {
    card.classList.add("stale");
    card.problem.textContent = `The server refused: ${error.message}`;
    return;
  }
  card.problem.textContent = `Not sent: ${reasonOf(error)} Try again.`;
  card.querySelectorAll("button, input").forEach((b) => { b.disabled = false; });
}

async function stop() {
  if (!page.busy || !page.sessionId) return;
  $("stop").disabled = true;
  $("run-state").textContent = "Stopping...";
  try {
    await api(`${session(page.sessionId)}/cancel`, { method: "POST" });
  } catch (error) {
    // 404: the run had already ended; nothing to say.
    if (!(error instanceof ApiError && error.status === 404)) {
      chat.showError(`could not stop the run: ${error.message}`);
      $("stop").disabled = false;
    }
  }
}

async function fork(edit) {
  if (page.busy) {
    problem("A run is going on in this session: wait for it, or Stop it, before forking.");
    return;
  }
  let created;
  try {
    created = await (await postJSON(`${session(page.sessionId)}/fork`, edit)).json();
  } catch (error) {
    problem(`Could not fork: ${error.message}`);
    return;
  }
  await sessions.load().catch(() => {});
  await select(created.id, { attach: false });
  const { error } = await runStream(`${session(created.id)}/resume`, { approvals: {} });
  if (error) chat.showError(error.message);
}

// ---- the page's frame: busy state, problems, panels, drawers -------------------------------------

function setBusy(busy) {
  page.busy = busy;
  $("stop").hidden = !busy;
  $("stop").disabled = false;
  const label = $("run-state");
  label.textContent = busy ? "Running..." : "Ready";
  label.classList.toggle("busy", busy);
}

function problem(message, retry = null) {
  const box = $("send-problem");
  const children = [el("span", {}, message)];
  if (retry) {
    const again = el("button", { type: "button" }, "Retry");
    again.addEventListener("click", retry);
    children.push(again);
  }
  box.replaceChildren(...children);
  box.hidden = false;
}

function clearProblem() {
  $("send-problem").hidden = true;
  $("send-problem").replaceChildren();
}

function refreshPanels() {
  if (!page.sessionId || !document.body.classList.contains("inspecting")) return;
  const id = page.sessionId;
  const loads = { events: () => inspector.reload(), timeline: () => timeline.load(id), state: () => loadState(id) };
  loads[page.tab]().catch((error) => problem(`The inspector could not load: ${error.message}`));
}

function showTab(name) {
  page.tab = name;
  for (const tab of document.querySelectorAll("[role=tab]")) {
    const on = tab.dataset.tab === name;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    $(tab.getAttribute("aria-controls")).hidden = !on;
  }
  refreshPanels();
}

function toggleInspector(open = !document.body.classList.contains("inspecting")) {
  document.body.classList.toggle("inspecting", open);
  $("toggle-inspector").setAttribute("aria-expanded", String(open));
  localStorage.setItem(PANEL_KEY, open ? "open" : "closed");
  if (open) refreshPanels();
}

function openDrawer(id) {
  $("sessions").classList.toggle("open", id === "sessions");
  $("toggle-sessions").setAttribute("aria-expanded", String(id === "sessions"));
}

function showTokenPanel() {
  $("token-panel").hidden = false;
  $("token-input").focus();
}

function wire() {
  $("composer").addEventListener("submit", (event) => { event.preventDefault(); send(); });
  $("prompt").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); send(); }
  });
  $("attach").addEventListener("click", () => $("attach-input").click());
  $("attach-input").addEventListener("change", async (event) => {
    await attachments.add([...event.target.files]);
    event.target.value = ""; // the same file can be picked again
    $("prompt").focus();
  });
  $("prompt").addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files || [])];
    if (!files.length) return;
    if (!event.clipboardData.getData("text/plain")) event.preventDefault();
    attachments.add(files);
  });
  $("composer").addEventListener("dragover", (event) => event.preventDefault());
  $("composer").addEventListener("drop", (event) => {
    const files = [...(event.dataTransfer?.files || [])];
    if (!files.length) return;
    event.preventDefault();
    attachments.add(files);
  });
  $("stop").addEventListener("click", stop);
  $("new-session").addEventListener("click", createSession);
  $("toggle-sessions").addEventListener("click", () => openDrawer($("sessions").classList.contains("open") ? null : "sessions"));
  $("toggle-inspector").addEventListener("click", () => toggleInspector());
  for (const tab of document.querySelectorAll("[role=tab]")) tab.addEventListener("click", () => showTab(tab.dataset.tab));
  $("tabs").addEventListener("keydown", (event) => {
    const tabs = [...document.querySelectorAll("[role=tab]")];
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    const next = tabs[(tabs.findIndex((t) => t.dataset.tab === page.tab) + step + tabs.length) % tabs.length];
    showTab(next.dataset.tab);
    next.focus();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    if ($("sessions").classList.contains("open")) openDrawer(null);
    else if (document.body.classList.contains("inspecting") && matchMedia("(max-width: 700px)").matches) {
      toggleInspector(false);
    } else if (page.busy) stop();
  });
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    auth.save($("token-input").value.trim());
    $("token-input").value = "";
    loadSessions();
  });
  $("forget-token").addEventListener("click", () => {
    auth.forget();
    page.gen += 1;
    chat.reset();
    inspector.reset(null);
    $("session-list").replaceChildren();
    showTokenPanel();
  });
}

auth.onMissing = showTokenPanel;
wire();
toggleInspector(localStorage.getItem(PANEL_KEY) ? localStorage.getItem(PANEL_KEY) === "open" : innerWidth >= 1200);
showTab("events");
loadSessions();
