// The one stream the page reads: the open session's events, followed across runs
// (`GET .../events/stream?follow=true`). Whoever starts a run (this page, another tab, the CLI,
// another server process), its events come here; the page's own runs, approvals and Stop are
// plain POSTs whose effects come here too, so no event arrives twice.
//
// The stream starts after the last stored event the page holds (`Last-Event-ID`). When it
// drops, it comes back with the same header: the server sends the stored events after it,
// then everything not stored yet (an answer's deltas from its first word), so the page first
// drops what it holds without a seq (`onOpen`).

import { ApiError, NetworkError, api, readEvents, session } from "./api.js";

const BACKOFF_MS = [250, 500, 1000, 2000, 4000];

export class Follower {
  // handlers: {lastSeq() (the last stored event held), onOpen(), onEvent(event, type),
  //            onState("following" | "reconnecting"), onGone(message) (the session is deleted)}
  constructor(handlers) {
    this.handlers = handlers;
    this.controller = null;
    this.wake = null;
  }

  start(sessionId) {
    this.stop();
    const controller = new AbortController();
    this.controller = controller;
    this.loop(sessionId, controller.signal);
  }

  stop() {
    if (this.controller) this.controller.abort();
    this.controller = null;
  }

  // Reconnect now (the network came back, the tab was woken) rather than after the backoff.
  nudge() {
    if (this.wake) this.wake();
  }

  async loop(sessionId, signal) {
    for (let attempt = 0; !signal.aborted; attempt += 1) {
      try {
        const response = await api(`${session(sessionId)}/events/stream?follow=true`, {
          headers: { Accept: "text/event-stream", "Last-Event-ID": String(this.handlers.lastSeq()) }, signal,
        });
        attempt = 0;
        this.handlers.onOpen();
        this.handlers.onState("following");
        await readEvents(response, (event, type) => { if (!signal.aborted) this.handlers.onEvent(event, type); });
      } catch (error) {
        if (signal.aborted || error.name === "AbortError") return;
        if (error instanceof ApiError && error.status === 404) {
          this.handlers.onGone(error.message);
          return;
        }
        if (!(error instanceof NetworkError) && !(error instanceof ApiError && error.status >= 500)) {
          this.handlers.onState("stopped", error.message);
          return;
        }
      }
      if (signal.aborted) return;
      this.handlers.onState("reconnecting");
      await this.pause(BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)], signal);
    }
  }

  pause(ms, signal) {
    return new Promise((resolve) => {
      const done = () => { clearTimeout(timer); this.wake = null; signal.removeEventListener("abort", done); resolve(); };
      const timer = setTimeout(done, ms);
      this.wake = done;
      signal.addEventListener("abort", done);
    });
  }
}
