// hookline web page: chat, approvals, inspector, trace, stop and fork. Plain ES modules, no build step.
//
// One session is shown at a time, and the page reads one stream: that session's events,
// followed across runs (js/follow.js). Sending a message, deciding an approval and Stop are
// plain POSTs; what they do comes back on that stream, as do the runs someone else starts.
// Choosing another session bumps `page.gen`, so that no late answer of the old one lands in
// the new one's view.
//
// Creating or choosing a session is the page's "opening". A message sent meanwhile waits for
// it, then goes to the session it opened.

import { $, el } from "./js/dom.js";
import { ApiError, NetworkError, api, apiJSON, auth, postJSON, session, startRun } from "./js/api.js";
import { Activity, failureNote } from "./js/activity.js";
import { Approvals } from "./js/approvals.js";
import { Attachments } from "./js/attachments.js";
import { Chat } from "./js/chat.js";
import { Follower } from "./js/follow.js";
import { Inspector } from "./js/inspector.js";
import { setupPanes } from "./js/panes.js";
import { SessionList } from "./js/sessions.js";
import { StateView } from "./js/state.js";
import { forgetSavedCase, saveCase } from "./js/testcase.js";
import { Trace } from "./js/trace.js";

const PANEL_KEY = "hookline.inspector";
const PAGE = 1000; // the events a view loads at a time
const BUSY = "A run is going on in this session; your message is kept. Send it once the run ends, or Stop the run.";

const page = {
  sessionId: null, gen: 0, lastSeq: 0, seen: 0, firstSeq: null, older: false, events: [], live: new Map(), tab: "events",
  stream: "idle", opening: null, creating: null, sending: null, requests: new AbortController(), tools: null,
};

const activity = new Activity();
const chat = new Chat({
  fork, regenerate, openSession: (id) => select(id), sessionId: () => page.sessionId,
  trace: (callId) => { trace.want(callId); toggleInspector(true, false); showTab("timeline"); },
});
const approvals = new Approvals({
  decide, schemaOf, changed: () => showState(),
  typing: () => Boolean($("prompt").value.trim()) && $("prompt").value !== page.sending,
});
const attachments = new Attachments({ problem: (message) => problem(message) });
const inspector = new Inspector({ fork });
const trace = new Trace({
  pick: (seq) => { showTab("events"); inspector.select(seq); },
  card: (callId) => chat.reveal(callId),
});
const stateView = new StateView({
  open: (id) => select(id),
  lineage: (id) => ({
    parent: sessions.items.find((s) => s.id === sessions.items.find((i) => i.id === id)?.forked_from) || null,
    children: sessions.items.filter((s) => s.forked_from === id),
  }),
});
const sessions = new SessionList({ select: (id) => select(id), deleted, problem: (m) => problem(m) });
const follower = new Follower({
  lastSeq: () => page.lastSeq,
  onOpen: startedOver,
  onEvent: (event, type) => apply(event, type, true),
  onState: (state) => { page.stream = state; showState(); },
  onGone: () => gone(),
});

// ---- the events of the session shown ----------------------------------------------------------

// One event (or frame) of the session: from its log when it opens, or from the stream (`live`).
// A live event (no seq yet) is held until its "stored" frame gives its seq.
function apply(event, type, live = false) {
  page.seen += 1;
  if (type === "stored") return settle(event);
  if (failureNote(event)) return runFailed();
  if (event.seq && !event.partial) {
    if (event.seq <= page.lastSeq) return; // already shown
    page.lastSeq = event.seq;
    page.events.push(event);
  } else if (event.id && event.kind !== "delta" && !event.partial) {
    page.live.set(event.id, event);
  }
  chat.apply(event);
  inspector.add(event);
  const wasRunning = activity.running;
  activity.apply(event);
  const meta = event.metadata || {};
  if (meta.interrupted && activity.waiting.has(meta.interrupted.call_id)) approvals.add(meta.interrupted, { live });
  if (meta.approval) approvals.remove(meta.approval.call_id);
  for (const part of event.parts || []) if (part.type === "tool_result") approvals.remove(part.call_id);
  if (live) {
    showState();
    if (wasRunning && !activity.running) runEnded();
  }
}

function settle({ id, seq }) {
  const event = page.live.get(id);
  if (seq > page.lastSeq) page.lastSeq = seq;
  if (!event) return;
  page.live.delete(id);
  const stored = { ...event, seq };
  page.events.push(stored);
  chat.settle(id);
  inspector.add(stored);
}

// A run failed: the stream may bring its note before (or instead of) the log's line with the
// reason, so the page reads the log's end.
async function runFailed() {
  activity.over();
  showState();
  runEnded();
  const gen = page.gen;
  try {
    const events = await apiJSON(`${session(page.sessionId)}/events?view=ui&after_seq=${page.lastSeq}`);
    if (gen === page.gen) events.filter((e) => !e.partial).forEach((event) => apply(event, "message", true));
  } catch { /* the stream brings it when it can */ }
}

// The stream (re)started after the last stored event: what it held without a seq comes again.
function startedOver() {
  page.live.clear();
  chat.dropLive();
}

// A run ended (here or anywhere): the panels and the session list catch up.
function runEnded() {
  if ($("stop") === document.activeElement) $("prompt").focus();
  clearProblem(BUSY);
  refreshPanels();
  sessions.load().catch(() => {});
}

function gone() {
  chat.showError("This session was deleted.");
  activity.reset();
  approvals.reset();
  showState();
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

function select(id) {
  return opening(() => open(id));
}

function leave() {
  follower.stop();
  page.requests.abort();
  page.requests = new AbortController();
  page.gen += 1;
  Object.assign(page, { lastSeq: 0, firstSeq: null, older: false, events: [], stream: "idle" });
  page.live.clear();
  activity.reset();
  approvals.reset();
  chat.reset();
}

async function open(id) {
  leave();
  const gen = page.gen;
  page.sessionId = id;
  history.replaceState(null, "", `#${encodeURIComponent(id)}`);
  document.body.dataset.session = id;
  sessions.mark(id);
  openDrawer(null);
  inspector.reset(id);
  forgetSavedCase();
  clearProblem();
  showState();
  let loaded;
  try {
    // The session with its latest page of events (and the pending ones), and whether a run holds it.
    loaded = await Promise.all([api(session(id)), apiJSON(`/v1/inspect/sessions/${encodeURIComponent(id)}`)]);
  } catch (error) {
    if (gen !== page.gen) return gen;
    chat.showError(error.message);
    return null;
  }
  if (gen !== page.gen) return gen;
  const [response, summary] = loaded;
  const { events } = await response.json();
  if (gen !== page.gen) return gen;
  page.older = response.headers.has("Link");
  show(events);
  activity.running = summary.running;
  showState();
  follower.start(id);
  return gen;
}

// Show the stored events of the session (in log order), from scratch.
function show(events) {
  const stored = events.filter((e) => e.seq && !e.partial);
  page.firstSeq = stored.length ? stored[0].seq : null;
  if (page.older) showEarlierButton();
  events.forEach((event) => apply(event, "message"));
  if (!events.some((e) => e.kind === "message")) chat.showEmpty("No messages yet: say something.");
  refreshPanels();
}

function showEarlierButton() {
  const more = el("button", { type: "button", class: "link earlier" }, "Show earlier messages");
  more.addEventListener("click", showEarlier);
  $("turns").prepend(el("p", { class: "earlier-row" }, more));
}

// Load the page of events before the first one shown, and show the conversation again from there.
async function showEarlier() {
  const gen = page.gen;
  let response;
  try {
    response = await api(`${session(page.sessionId)}/events?view=ui&limit=${PAGE}&before_seq=${page.firstSeq}`);
  } catch (error) {
    problem(`Could not load the earlier messages: ${error.message}`);
    return;
  }
  const earlier = await response.json();
  if (gen !== page.gen) return;
  const held = [...earlier, ...page.events];
  const { lastSeq } = page;
  const waiting = [...activity.waiting.values()];
  const running = activity.running;
  chat.reset();
  approvals.reset();
  Object.assign(page, { lastSeq: 0, events: [], older: response.headers.has("Link") });
  show(held);
  Object.assign(page, { lastSeq: Math.max(page.lastSeq, lastSeq) });
  activity.running = running;
  for (const item of waiting) approvals.add(item);
  showState();
  $("turns").querySelector(".turn")?.scrollIntoView();
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
  leave();
  page.sessionId = null;
  history.replaceState(null, "", location.pathname);
  inspector.reset(null);
  showState();
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
  if (activity.running) {
    problem(BUSY, send);
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
  if (activity.running) {
    problem(BUSY, send);
    return;
  }
  clearProblem();
  const sent = [...attachments.items];
  const body = sent.length ? { prompt: text, attachments: attachments.payload() } : { prompt: text };
  const gen = page.gen;
  const seen = expectRun();
  try {
    if (!(await startRun(`${session(page.sessionId)}/runs`, body, page.requests.signal))) noRun(seen);
  } catch (error) {
    if (gen === page.gen) noRun(seen);
    if (error.name === "AbortError" || gen !== page.gen) {
      problem("Maybe not sent: another session was opened before the server answered. Your message is kept: "
        + "look in the session you sent it to before you send it again.");
      return;
    }
    problem(`Not sent: ${reasonOf(error)} Your message is kept.`, send);
    return;
  }
  if (box.value === text) box.value = "";
  attachments.drop(sent);
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

// Send the approvals panel's decisions (`{call_id: answer}`); answers the error, or null once taken.
async function decide(answers) {
  const seen = expectRun();
  try {
    const path = `${session(page.sessionId)}/resume`;
    if (!(await startRun(path, { approvals: answers }, page.requests.signal))) noRun(seen);
  } catch (error) {
    noRun(seen);
    return error instanceof NetworkError ? new Error("the server could not be reached; try again") : error;
  }
  return null;
}

// A run is asked for: the page says so at once, and its events say how it goes. Answers how
// many events the page had seen, for `noRun`.
function expectRun() {
  activity.running = true;
  showState();
  return page.seen;
}

// The server did not take the run: unless the stream brought events meanwhile (a run of
// someone else's, which made it busy), nothing runs.
function noRun(seen) {
  if (page.seen !== seen) return;
  activity.running = false;
  showState();
}

async function schemaOf(name) {
  try {
    page.tools ||= apiJSON("/v1/inspect/tools");
    const tools = await page.tools;
    return tools.find((t) => t.name === name)?.parameters || null;
  } catch {
    page.tools = null;
    return null;
  }
}

async function stop() {
  if (!activity.running || !page.sessionId) return;
  activity.stopping = true;
  showState();
  try {
    await api(`${session(page.sessionId)}/cancel`, { method: "POST" });
  } catch (error) {
    activity.stopping = false;
    if (error instanceof ApiError && error.status === 404) activity.running = false; // it had ended already
    else chat.showError(`could not stop the run: ${error.message}`);
    showState();
  }
}

// Fork the session (an edit of an earlier message, or at any event: `{at_seq}`) and run the fork.
async function fork(edit) {
  if (activity.running) {
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
  const gen = await select(created.id);
  if (gen !== page.gen) return;
  const seen = expectRun();
  try {
    if (!(await startRun(`${session(created.id)}/resume`, { approvals: {} }, page.requests.signal))) noRun(seen);
  } catch (error) {
    if (error.name === "AbortError") return;
    noRun(seen);
    // A fork whose log ends with an answer has nothing to run (409 nothing_paused): it waits for a prompt.
    if (!(error instanceof ApiError && error.code === "nothing_paused")) chat.showError(error.message);
  }
}

// Regenerate an answer: a fork holding the log before it, run again.
function regenerate(seq) {
  return fork({ at_seq: seq });
}

// ---- the page's frame: run state, problems, panels, drawers -------------------------------------

function showState() {
  const label = $("run-state");
  const running = activity.running && page.sessionId !== null;
  label.textContent = page.stream === "reconnecting" ? "Reconnecting..." : activity.label;
  label.classList.toggle("busy", running);
  label.classList.toggle("waiting", !running && approvals.count > 0);
  if (!running && $("stop") === document.activeElement) $("prompt").focus();
  $("stop").hidden = !running;
  $("stop").disabled = activity.stopping;
  $("save-case").disabled = !page.sessionId;
  document.title = approvals.count ? `(${approvals.count}) waiting for approval · hookline` : "hookline";
  if (page.sessionId) sessions.live(page.sessionId, { running, waiting: approvals.count, ended: activity.ended });
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
  box.dataset.message = message;
  box.hidden = false;
}

// Hide the problem shown (only `message`, when given).
function clearProblem(message = null) {
  const box = $("send-problem");
  if (message !== null && box.dataset.message !== message) return;
  if (box.contains(document.activeElement)) $("prompt").focus();
  box.hidden = true;
  box.replaceChildren();
  delete box.dataset.message;
}

function refreshPanels() {
  if (!page.sessionId || !document.body.classList.contains("inspecting")) return;
  const id = page.sessionId;
  const loads = { events: () => inspector.reload(), timeline: () => trace.load(id), state: () => stateView.load(id) };
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

function toggleInspector(open = !document.body.classList.contains("inspecting"), refresh = true) {
  document.body.classList.toggle("inspecting", open);
  $("toggle-inspector").setAttribute("aria-expanded", String(open));
  localStorage.setItem(PANEL_KEY, open ? "open" : "closed");
  if (open && refresh) refreshPanels();
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
  attachments.wire();
  $("stop").addEventListener("click", stop);
  $("new-session").addEventListener("click", createSession);
  $("toggle-sessions").addEventListener("click", () => openDrawer($("sessions").classList.contains("open") ? null : "sessions"));
  $("toggle-inspector").addEventListener("click", () => toggleInspector());
  $("save-case").addEventListener("click", () => { if (page.sessionId) saveCase(page.sessionId); });
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
    } else if (activity.running) stop();
  });
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    auth.save($("token-input").value.trim());
    $("token-input").value = "";
    loadSessions();
  });
  $("forget-token").addEventListener("click", () => {
    auth.forget();
    leave();
    page.sessionId = null;
    inspector.reset(null);
    $("session-list").replaceChildren();
    showTokenPanel();
  });
  addEventListener("online", () => follower.nudge());
  document.addEventListener("visibilitychange", () => { if (!document.hidden) follower.nudge(); });
}

auth.onMissing = showTokenPanel;
wire();
setupPanes();
toggleInspector(localStorage.getItem(PANEL_KEY) ? localStorage.getItem(PANEL_KEY) === "open" : innerWidth >= 1200);
showTab("events");
loadSessions();
