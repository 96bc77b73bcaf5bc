// What the open session is doing, read from its events as they come: whether a run is going
// on, which calls wait for a human's approval, and how the last run ended. The facts are the
// log's own data: a run's last line carries `metadata.run_end`, a paused call is a status line
// with `metadata.interrupted`, a decision one with `metadata.approval`, an answered call a
// tool result. A fork's copied events and its note start no run.

// The note a run's own request gets when it fails (`metadata.error` with `http_status`), which
// followers get too: never stored, it says the run is over, and the log holds the reason.
export const failureNote = (event) => (event.seq === null || event.seq === undefined)
  && Boolean(event.metadata?.http_status && event.metadata?.error);

export class Activity {
  constructor() {
    this.reset();
  }

  // The run is over, whatever the log says next.
  over() {
    this.running = false;
    this.stopping = false;
  }

  reset() {
    this.running = false;
    this.stopping = false;
    this.ended = null;             // how the last run ended: completed, interrupted, failed, ...
    this.waiting = new Map();      // call_id -> the paused call ({call_id, name, arguments, reason, ...})
  }

  apply(event) {
    if (event.partial) return;
    const meta = event.metadata || {};
    if (meta.copied_from || meta.forked_from) return;

    if (meta.run_end) {
      this.running = false;
      this.stopping = false;
      this.ended = meta.run_end;
      return;
    }
    if (event.kind === "marker") return;
    this.running = true;
    this.ended = null;
    if (meta.interrupted) this.waiting.set(meta.interrupted.call_id, meta.interrupted);
    if (meta.approval) this.waiting.delete(meta.approval.call_id);
    for (const part of event.parts || []) if (part.type === "tool_result") this.waiting.delete(part.call_id);
  }

  // What the top bar says.
  get label() {
    if (this.stopping) return "Stopping...";
    if (this.running) return "Running...";
    if (this.waiting.size) return `Waiting for approval (${this.waiting.size})`;
    return "Ready";
  }
}
